//! Harness of the interactive-mode tests: the real binary in a real pseudo-terminal, its
//! output fed into a terminal emulator (vt100) whose screen and scrollback the tests read,
//! and the scripted model server behind it, in a [`Sandbox`] of the support module.
#![allow(dead_code, unused_imports)]

pub use crate::common::Models;
pub use crate::common::Sandbox;
pub use crate::common::WATCHDOG;
pub use crate::common::read_jsonl;

use std::io::Read as _;
use std::io::Write as _;
use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;
use std::time::Instant;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use portable_pty::CommandBuilder;
use portable_pty::MasterPty;
use portable_pty::PtySize;

/// Lines of scrollback the emulator keeps (more than any test produces).
const SCROLLBACK: usize = 20_000;

/// The sandbox of the terminal tests: [`Models::WithReasoner`] served by a server of its
/// own that answers with `replies`.
pub fn sandbox(replies: Vec<ScriptedReply>) -> Sandbox {
    let server = MockServer::builder(WireFormat::OpenAiCompletions)
        .replies(replies)
        .start_blocking()
        .unwrap();
    Sandbox::with_models(&server, Models::WithReasoner).owning(server)
}

/// The sandbox's `models.json` with the mock provider's key taken out: its models exist
/// but none is usable.
pub fn without_credentials(sandbox: &Sandbox) {
    let path = sandbox.agent.join("models.json");
    let mut models: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    models["providers"]["mock"]
        .as_object_mut()
        .unwrap()
        .remove("apiKey");
    std::fs::write(&path, models.to_string()).unwrap();
}

impl Sandbox {
    /// Starts `knightcode` with `args` in a `cols`×`rows` terminal.
    pub fn spawn(&self, args: &[&str], cols: u16, rows: u16) -> Tui {
        Tui::spawn(self, args, &[], cols, rows)
    }

    /// Like [`Sandbox::spawn`] with extra environment variables.
    pub fn spawn_with_env(&self, args: &[&str], env: &[(&str, &str)], cols: u16, rows: u16) -> Tui {
        Tui::spawn(self, args, env, cols, rows)
    }
}

struct Screen {
    parser: vt100::Parser,
    /// Bytes the program wrote, in total.
    bytes: usize,
    /// Everything it wrote (for what the emulator does not keep, such as window titles).
    output: Vec<u8>,
    exited: bool,
}

/// The program in its pseudo-terminal.
pub struct Tui {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn std::io::Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    state: Arc<(Mutex<Screen>, Condvar)>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Tui {
    fn spawn(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)], cols: u16, rows: u16) -> Self {
        let pty = portable_pty::native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_knightcode"));
        command.args(args);
        command.cwd(&sandbox.project);
        command.env_clear();
        for (key, value) in sandbox.env() {
            command.env(key, value);
        }
        command.env("TERM", "xterm-256color");
        for (key, value) in env {
            command.env(key, value);
        }
        let child = pair.slave.spawn_command(command).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let state = Arc::new((
            Mutex::new(Screen {
                parser: vt100::Parser::new(rows, cols, SCROLLBACK),
                bytes: 0,
                output: Vec::new(),
                exited: false,
            }),
            Condvar::new(),
        ));
        let shared = Arc::clone(&state);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let (lock, changed) = &*shared;
                        // A failed test poisons the lock; keep the emulator going anyway.
                        let mut screen = lock.lock().unwrap_or_else(|e| e.into_inner());
                        screen.parser.process(&buf[..n]);
                        screen.bytes += n;
                        screen.output.extend_from_slice(&buf[..n]);
                        changed.notify_all();
                    }
                }
            }
            let (lock, changed) = &*shared;
            lock.lock().unwrap_or_else(|e| e.into_inner()).exited = true;
            changed.notify_all();
        });
        let mut tui = Self {
            master: pair.master,
            writer,
            child,
            state,
            reader: Some(reader),
        };
        tui.answer_probes();
        tui
    }

    /// The terminal layer asks for the cursor position and kitty support at start; a
    /// real terminal answers, the emulator does not, so answer like a plain xterm would:
    /// cursor at the top, no kitty protocol (it waits for the device-attributes reply).
    fn answer_probes(&mut self) {
        self.wait_for_bytes(|bytes| bytes > 0);
        self.send("\x1b[1;1R\x1b[?62;22c");
    }

    fn wait_for_bytes(&self, pred: impl Fn(usize) -> bool) {
        let (lock, changed) = &*self.state;
        let deadline = Instant::now() + WATCHDOG;
        let mut screen = lock.lock().unwrap();
        while !pred(screen.bytes) && !screen.exited {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "the program wrote nothing");
            screen = changed.wait_timeout(screen, left).unwrap().0;
        }
    }

    pub fn send(&mut self, text: &str) {
        self.writer.write_all(text.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Pastes text the way a terminal does with bracketed paste on.
    pub fn paste(&mut self, text: &str) {
        self.send(&format!("\x1b[200~{text}\x1b[201~"));
    }

    /// Types text and presses Enter.
    pub fn submit(&mut self, text: &str) {
        self.send(text);
        self.send("\r");
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        {
            let (lock, _) = &*self.state;
            lock.lock()
                .unwrap()
                .parser
                .screen_mut()
                .set_size(rows, cols);
        }
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    /// The visible screen as text, one line per row, trailing spaces trimmed.
    pub fn screen(&self) -> String {
        let (lock, _) = &*self.state;
        lock.lock().unwrap().parser.screen().contents()
    }

    /// Whether the program has the terminal on its alternate screen.
    pub fn alternate_screen(&self) -> bool {
        let (lock, _) = &*self.state;
        lock.lock().unwrap().parser.screen().alternate_screen()
    }

    /// The mouse reporting the program asked for: (mode, encoding).
    pub fn mouse_reporting(&self) -> (vt100::MouseProtocolMode, vt100::MouseProtocolEncoding) {
        let (lock, _) = &*self.state;
        let guard = lock.lock().unwrap();
        let screen = guard.parser.screen();
        (
            screen.mouse_protocol_mode(),
            screen.mouse_protocol_encoding(),
        )
    }

    /// The visible screen, one string per row (all rows, trailing spaces trimmed).
    pub fn rows(&self) -> Vec<String> {
        let (lock, _) = &*self.state;
        let guard = lock.lock().unwrap();
        let screen = guard.parser.screen();
        let (_, cols) = screen.size();
        screen
            .rows(0, cols)
            .map(|row| row.trim_end().to_owned())
            .collect()
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> usize {
        let (lock, _) = &*self.state;
        lock.lock().unwrap().bytes
    }

    /// Everything the program wrote so far, as text (escape sequences included).
    pub fn output(&self) -> String {
        let (lock, _) = &*self.state;
        String::from_utf8_lossy(&lock.lock().unwrap().output).into_owned()
    }

    /// Waits until the program has written `needle` (escape sequences included).
    pub fn wait_for_output(&self, needle: &str) {
        let (lock, changed) = &*self.state;
        let deadline = Instant::now() + WATCHDOG;
        let mut screen = lock.lock().unwrap();
        while !String::from_utf8_lossy(&screen.output).contains(needle) {
            assert!(
                !screen.exited,
                "the program exited before writing {needle:?}"
            );
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out waiting for output {needle:?}");
            screen = changed.wait_timeout(screen, left).unwrap().0;
        }
    }

    /// Scrollback and screen, oldest line first.
    pub fn history(&self) -> Vec<String> {
        let (lock, _) = &*self.state;
        let mut screen = lock.lock().unwrap();
        let (_, cols) = screen.parser.screen().size();
        screen.parser.screen_mut().set_scrollback(usize::MAX);
        let depth = screen.parser.screen().scrollback();
        let mut lines = Vec::new();
        // Scrolled back by `offset`, the top row is line `depth - offset` of the whole.
        for offset in (1..=depth).rev() {
            screen.parser.screen_mut().set_scrollback(offset);
            lines.extend(screen.parser.screen().rows(0, cols).take(1));
        }
        screen.parser.screen_mut().set_scrollback(0);
        lines.extend(screen.parser.screen().rows(0, cols));
        lines.iter().map(|l| l.trim_end().to_owned()).collect()
    }

    /// Waits until the screen satisfies `pred`; fails with the screen when the watchdog
    /// fires or the program exits first.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let (lock, changed) = &*self.state;
        let deadline = Instant::now() + WATCHDOG;
        let mut screen = lock.lock().unwrap();
        loop {
            let contents = screen.parser.screen().contents();
            if pred(&contents) {
                return contents;
            }
            if screen.exited {
                panic!("the program exited before {what}; screen:\n{contents}");
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!("timed out waiting for {what}; screen:\n{contents}");
            }
            screen = changed.wait_timeout(screen, left).unwrap().0;
        }
    }

    /// The foreground colour of the first character of `needle` on the screen, if shown.
    pub fn color_of(&self, needle: &str) -> Option<vt100::Color> {
        let (lock, _) = &*self.state;
        let screen = lock.lock().unwrap();
        color_on(screen.parser.screen(), needle)
    }

    /// Waits until the first character of `needle` is drawn in `color` (a redraw that
    /// nothing on screen announces, such as a theme file edited).
    pub fn wait_for_color(&self, needle: &str, color: vt100::Color) {
        self.wait_for_colour_that(needle, &format!("{color:?}"), |c| c == Some(color));
    }

    /// Waits until the colour of the first character of `needle` satisfies `pred`
    /// (`what` names the colour in the failure).
    pub fn wait_for_colour_that(
        &self,
        needle: &str,
        what: &str,
        pred: impl Fn(Option<vt100::Color>) -> bool,
    ) {
        let (lock, changed) = &*self.state;
        let deadline = Instant::now() + WATCHDOG;
        let mut screen = lock.lock().unwrap();
        loop {
            if pred(color_on(screen.parser.screen(), needle)) {
                return;
            }
            let contents = screen.parser.screen().contents();
            if screen.exited {
                panic!("the program exited before {needle:?} turned {what}; screen:\n{contents}");
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!("timed out waiting for {needle:?} to turn {what}; screen:\n{contents}");
            }
            screen = changed.wait_timeout(screen, left).unwrap().0;
        }
    }

    /// Waits until the emulator's screen satisfies `pred` (for cells' attributes, which
    /// the text does not show).
    pub fn wait_for_cells(&self, what: &str, pred: impl Fn(&vt100::Screen) -> bool) {
        let (lock, changed) = &*self.state;
        let deadline = Instant::now() + WATCHDOG;
        let mut screen = lock.lock().unwrap();
        loop {
            if pred(screen.parser.screen()) {
                return;
            }
            let contents = screen.parser.screen().contents();
            if screen.exited {
                panic!("the program exited before {what}; screen:\n{contents}");
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!("timed out waiting for {what}; screen:\n{contents}");
            }
            screen = changed.wait_timeout(screen, left).unwrap().0;
        }
    }

    pub fn wait_for_text(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?}"), |s| s.contains(text))
    }

    /// Waits for a reply's text with the run over: the text streams in before the run
    /// settles, and commands such as `/undo` refuse while it runs.
    pub fn wait_for_answer(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?} with the run settled"), |s| {
            s.contains(text) && !s.contains("Working…")
        })
    }

    /// The program's process id (to read its threads under /proc).
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("the program runs")
    }

    /// Sends a signal (`-TERM`, `-HUP`) to the program.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.process_id().expect("the program runs");
        let status = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to end and returns its exit code. A program that never exits
    /// fails the test (with its screen) at the watchdog instead of hanging the suite.
    pub fn wait_exit(&mut self) -> u32 {
        {
            let (lock, changed) = &*self.state;
            let deadline = Instant::now() + WATCHDOG;
            let mut screen = lock.lock().unwrap();
            while !screen.exited {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    let contents = screen.parser.screen().contents();
                    drop(screen);
                    let _ = self.child.kill();
                    panic!("timed out waiting for the program to exit; screen:\n{contents}");
                }
                screen = changed.wait_timeout(screen, left).unwrap().0;
            }
        }
        let status = self.child.wait().unwrap();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        status.exit_code()
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// The foreground colour of the first character of `needle` on `screen`, if shown.
fn color_on(screen: &vt100::Screen, needle: &str) -> Option<vt100::Color> {
    let (rows, cols) = screen.size();
    for row in 0..rows {
        let mut text = String::new();
        let mut starts = Vec::new();
        for col in 0..cols {
            let cell = screen.cell(row, col)?;
            starts.push((text.len(), col));
            text.push_str(if cell.has_contents() {
                cell.contents()
            } else {
                " "
            });
        }
        if let Some(at) = text.find(needle) {
            let col = starts.iter().find(|(byte, _)| *byte == at)?.1;
            return screen.cell(row, col).map(vt100::Cell::fgcolor);
        }
    }
    None
}

/// The text drawn in reverse video (a selection), one string per row that has any.
pub fn reversed(screen: &vt100::Screen) -> Vec<String> {
    let (rows, cols) = screen.size();
    let mut out = Vec::new();
    for row in 0..rows {
        let text: String = (0..cols)
            .filter_map(|col| screen.cell(row, col))
            .filter(|cell| cell.inverse())
            .map(|cell| {
                if cell.has_contents() {
                    cell.contents().to_owned()
                } else {
                    " ".to_owned()
                }
            })
            .collect();
        if !text.is_empty() {
            out.push(text);
        }
    }
    out
}
