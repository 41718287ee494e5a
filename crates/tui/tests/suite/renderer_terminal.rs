//! The real terminal layer: the input reader over a pipe, and `Terminal` itself in a child
//! process whose standard streams are a pseudo-terminal this test plays the terminal for.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use knightcode_tui::Terminal;
use knightcode_tui::terminal::spawn_input_reader_on;
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::termios::{LocalModes, Winsize, tcgetattr, tcsetwinsize};

/// Long enough to never trigger on a loaded machine; only a hung child reaches it.
const PATIENCE: Duration = Duration::from_secs(60);

fn recv(rx: &mpsc::Receiver<Vec<u8>>) -> Vec<u8> {
    rx.recv_timeout(PATIENCE)
        .expect("input reader delivered nothing")
}

#[test]
fn the_input_reader_delivers_chunks_and_leaves_input_alone_while_paused() {
    let (read_end, mut write_end) = std::io::pipe().unwrap();
    let read_end = OwnedFd::from(read_end);
    // A second handle on the same pipe, to see what the reader left unread. Non-blocking,
    // so bytes the reader took fail the test instead of hanging it (the reader treats
    // "would block" as nothing to read).
    let mut ours = File::from(read_end.try_clone().unwrap());
    rustix::fs::fcntl_setfl(&ours, rustix::fs::OFlags::NONBLOCK).unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = spawn_input_reader_on(read_end, move |bytes| {
        let stop = bytes == b"stop";
        tx.send(bytes).unwrap();
        !stop
    })
    .unwrap();

    write_end.write_all(b"abc").unwrap();
    assert_eq!(recv(&rx), b"abc");

    assert!(reader.pause());
    write_end.write_all(b"for the editor").unwrap();
    let mut taken = [0u8; 14];
    ours.read_exact(&mut taken).unwrap();
    assert_eq!(&taken, b"for the editor");

    assert!(reader.resume());
    write_end.write_all(b"xyz").unwrap();
    assert_eq!(recv(&rx), b"xyz");

    // The callback ends the reader by returning false.
    write_end.write_all(b"stop").unwrap();
    assert_eq!(recv(&rx), b"stop");
    reader.stop();
    write_end.write_all(b"late").unwrap();
    let mut late = [0u8; 4];
    ours.read_exact(&mut late).unwrap();
    assert_eq!(&late, b"late");
}

#[test]
fn the_input_reader_reports_the_end_of_input_with_an_empty_chunk() {
    let (read_end, write_end) = std::io::pipe().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader =
        spawn_input_reader_on(read_end.into(), move |bytes| tx.send(bytes).is_ok()).unwrap();
    drop(write_end);
    assert_eq!(recv(&rx), b"");
    reader.stop();
}

#[test]
fn a_stopped_reader_can_still_be_paused_and_dropped() {
    let (read_end, _write_end) = std::io::pipe().unwrap();
    let reader = spawn_input_reader_on(read_end.into(), |_| true).unwrap();
    assert!(!reader.is_finished());
    assert!(reader.pause());
    drop(reader);
}

/// The pseudo-terminal's controlling side: what the child writes arrives here.
struct Pty {
    master: File,
    slave: File,
    output: Vec<u8>,
    /// How far `wait_for` has consumed `output`.
    seen: usize,
}

impl Pty {
    fn open(cols: u16, rows: u16) -> Self {
        use rustix::fs::{Mode, OFlags};
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master =
            openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let slave = rustix::fs::open(
            name.as_c_str(),
            OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        tcsetwinsize(
            &master,
            Winsize {
                ws_row: rows,
                ws_col: cols,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .unwrap();
        Self {
            master: File::from(master),
            slave: File::from(slave),
            output: Vec::new(),
            seen: 0,
        }
    }

    /// Runs this test binary's `child_process_entry` in `mode` on the pseudo-terminal.
    fn spawn_child(&self, mode: &str) -> Child {
        let stdio = || Stdio::from(self.slave.try_clone().unwrap());
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                child_entry_test_name().as_str(),
                "--nocapture",
                "--test-threads=1",
            ])
            .env("KC_TERMINAL_CHILD", mode)
            .env("RUST_BACKTRACE", "0")
            .stdin(stdio())
            .stdout(stdio())
            .stderr(stdio())
            .spawn()
            .unwrap()
    }

    /// Reads until `needle` appears after what earlier calls consumed; returns the output
    /// from there up to and including the needle.
    fn wait_for(&mut self, needle: &[u8]) -> Vec<u8> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(at) = find(&self.output[self.seen..], needle) {
                let end = self.seen + at + needle.len();
                let part = self.output[self.seen..end].to_vec();
                self.seen = end;
                return part;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no {:?} in {:?}",
                String::from_utf8_lossy(needle),
                String::from_utf8_lossy(&self.output)
            );
            let timeout = Timespec::try_from(left).unwrap();
            let mut fds = [PollFd::new(&self.master, PollFlags::IN)];
            if poll(&mut fds, Some(&timeout)).unwrap_or(0) == 0 {
                continue;
            }
            let mut chunk = [0u8; 4096];
            match self.master.read(&mut chunk) {
                Ok(0) => panic!("pty closed: {:?}", String::from_utf8_lossy(&self.output)),
                Ok(n) => self.output.extend_from_slice(&chunk[..n]),
                // EIO: every slave handle is closed (the child exited).
                Err(err) => panic!(
                    "pty read failed ({err}): {:?}",
                    String::from_utf8_lossy(&self.output)
                ),
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
    }

    fn canonical(&self) -> bool {
        tcgetattr(self.slave.as_fd())
            .unwrap()
            .local_modes
            .contains(LocalModes::ICANON)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    find(haystack, needle).is_some()
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    child.wait().unwrap()
}

#[test]
fn the_terminal_sets_up_suspends_resumes_and_restores() {
    let mut pty = Pty::open(100, 30);
    assert!(pty.canonical());
    let mut child = pty.spawn_child("session");
    let queries = pty.wait_for(b"\x1b[c");
    assert!(contains(&queries, b"\x1b[?u\x1b[6n\x1b[c"));
    // A kitty-capable terminal with the cursor on row 5; the user types `x` meanwhile.
    pty.send(b"\x1b[?0ux\x1b[5;1R\x1b[?62;22c");
    let setup = pty.wait_for(b"ENTERED");
    assert!(contains(&setup, b"\x1b[?2004h\x1b[>7u\x1b[?25l"));
    assert_eq!(
        String::from_utf8_lossy(&pty.wait_for(b"\r\n")),
        " kitty=true row=Some(4) size=100x30\r\n"
    );
    assert!(!pty.canonical(), "raw mode is on");
    // Typed-ahead input comes first, then what is typed now.
    pty.wait_for(b"GOT 78\r\n");
    pty.send(b"s");
    pty.wait_for(b"GOT 73\r\n");

    // Suspended: normal modes, and the child's own read gets the next line, not the
    // paused input reader.
    let suspended = pty.wait_for(b"SUSPENDED");
    assert!(contains(&suspended, b"\x1b[<u\x1b[?2004l\x1b[?25h"));
    assert!(pty.canonical());
    pty.send(b"hello editor\n");
    pty.wait_for(b"EDITOR GOT hello editor");

    let resumed = pty.wait_for(b"RESUMED");
    assert!(contains(&resumed, b"\x1b[?2004h\x1b[>7u\x1b[?25l"));
    assert!(!pty.canonical());
    pty.send(b"q");
    pty.wait_for(b"GOT 71\r\n");
    let restored = pty.wait_for(b"DONE");
    assert!(contains(&restored, b"\x1b[<u\x1b[?2004l\x1b[?25h"));
    assert!(pty.canonical(), "raw mode is off again");
    assert!(wait_exit(&mut child).success());
}

#[test]
fn a_terminal_that_does_not_answer_gets_modify_other_keys() {
    let mut pty = Pty::open(80, 24);
    let mut child = pty.spawn_child("session");
    pty.wait_for(b"\x1b[c");
    // No answer: `enter` gives up waiting and carries on.
    let setup = pty.wait_for(b"ENTERED");
    assert!(contains(&setup, b"\x1b[?2004h\x1b[>4;2m\x1b[?25l"));
    assert_eq!(
        String::from_utf8_lossy(&pty.wait_for(b"\r\n")),
        " kitty=false row=None size=80x24\r\n"
    );
    pty.send(b"q");
    let restored = pty.wait_for(b"DONE");
    assert!(contains(&restored, b"\x1b[>4;0m\x1b[?2004l\x1b[?25h"));
    assert!(pty.canonical());
    assert!(wait_exit(&mut child).success());
}

#[test]
fn a_panic_restores_the_terminal_before_the_message() {
    let mut pty = Pty::open(80, 24);
    let mut child = pty.spawn_child("panic");
    pty.wait_for(b"\x1b[c");
    pty.send(b"\x1b[?1u\x1b[1;1R\x1b[?62c");
    pty.wait_for(b"PANICKING");
    let before_message = pty.wait_for(b"boom on purpose");
    let restore =
        find(&before_message, b"\x1b[?2026l\x1b[<u\x1b[?2004l\x1b[?25h").expect("restore sequence");
    let message = find(&before_message, b"panicked").expect("panic message");
    assert!(restore < message);
    assert!(pty.canonical());
    assert!(!wait_exit(&mut child).success());
}

#[test]
fn entering_without_a_terminal_says_what_to_do() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            child_entry_test_name().as_str(),
            "--nocapture",
            "--test-threads=1",
        ])
        .env("KC_TERMINAL_CHILD", "not_a_tty")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("ERROR terminal I/O failed: standard input and output must be a terminal"),
        "{stdout}"
    );
    assert!(stdout.contains("use -p or --mode json"), "{stdout}");
}

/// Not a test of its own: the child side of the tests above, run in a separate process
/// when `KC_TERMINAL_CHILD` says which part to play.
#[test]
fn child_process_entry() {
    let Ok(mode) = std::env::var("KC_TERMINAL_CHILD") else {
        return;
    };
    match mode.as_str() {
        "session" => child_session(),
        "panic" => child_panic(),
        "not_a_tty" => {
            let message = match Terminal::enter() {
                Ok(_) => "entered".to_owned(),
                Err(err) => format!("ERROR {err}"),
            };
            std::io::stdout().write_all(message.as_bytes()).unwrap();
        }
        other => panic!("unknown child mode {other}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn child_session() {
    // Leave the test runner's terminal (if any), so the size comes from the pty.
    rustix::process::setsid().unwrap();
    let mut term = Terminal::enter().unwrap();
    let (width, height) = term.size().unwrap();
    let report = format!(
        "ENTERED kitty={} row={:?} size={width}x{height}\r\n",
        term.kitty_active(),
        term.start_row()
    );
    term.write_frame(report.as_bytes()).unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = term
        .spawn_input_reader(move |bytes| tx.send(bytes).is_ok())
        .unwrap();
    loop {
        let bytes = rx.recv().unwrap();
        term.write_frame(format!("GOT {}\r\n", hex(&bytes)).as_bytes())
            .unwrap();
        if bytes.contains(&b's') {
            term.suspend().unwrap();
            term.write_frame(b"SUSPENDED\r\n").unwrap();
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).unwrap();
            term.write_frame(format!("EDITOR GOT {}\r\n", line.trim()).as_bytes())
                .unwrap();
            term.resume().unwrap();
            term.write_frame(b"RESUMED\r\n").unwrap();
        }
        if bytes.contains(&b'q') {
            break;
        }
    }
    reader.stop();
    drop(term);
    std::io::stdout().write_all(b"DONE\r\n").unwrap();
}

fn child_panic() {
    rustix::process::setsid().unwrap();
    let mut term = Terminal::enter().unwrap();
    term.restore_on_panic();
    term.write_frame(b"\x1b[?2026hPANICKING\r\n").unwrap();
    panic!("boom on purpose");
}

/// `child_process_entry`'s name as the test harness knows it (its module path without the binary's
/// crate name), so that `--exact` runs only it.
fn child_entry_test_name() -> String {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, path)| path);
    format!("{module}::child_process_entry")
}
