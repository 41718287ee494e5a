//! The real terminal: raw mode and size through crossterm, the protocol modes the UI needs
//! (bracketed paste, the kitty keyboard protocol, a hidden cursor), and a thread that reads
//! raw input bytes for our own key parser ([`crate::keys::InputParser`]).
//!
//! An app loop drives it together with the [`crate::renderer::Renderer`]:
//!
//! ```no_run
//! # fn main() -> Result<(), knightcode_tui::TuiError> {
//! use knightcode_tui::renderer::Renderer;
//! use knightcode_tui::terminal::Terminal;
//!
//! let mut terminal = Terminal::enter()?;
//! terminal.restore_on_panic();
//! let (width, height) = terminal.size()?;
//! let mut renderer = Renderer::new(width, height);
//! renderer.set_start_row(terminal.start_row().unwrap_or(height - 1));
//! let (tx, rx) = std::sync::mpsc::channel();
//! let _reader = terminal.spawn_input_reader(move |bytes| tx.send(bytes).is_ok())?;
//! let mut frame = Vec::new();
//! # let lines: Vec<String> = Vec::new();
//! // Each time something changed (input, agent events, a resize):
//! frame.clear();
//! renderer.render(&lines, &mut frame);
//! terminal.write_frame(&frame)?;
//! // On exit:
//! frame.clear();
//! renderer.finish(&mut frame);
//! terminal.write_frame(&frame)?;
//! drop(terminal);
//! # drop(rx);
//! # Ok(())
//! # }
//! ```

use std::fs::File;
use std::io::{IsTerminal as _, Read as _, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::error::TuiError;

/// Kitty keyboard protocol flags pushed when the terminal supports it, as the reference
/// does: disambiguate escape codes (1), report press/repeat/release (2), report alternate
/// keys so shortcuts work on non-Latin layouts (4).
pub const KITTY_FLAGS: u8 = 7;

/// How long `enter` waits for the terminal to answer its queries. Terminals answer the
/// device-attributes query at once, which ends the wait; the limit only matters for a
/// terminal that ignores it.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// How long pausing or stopping the input reader waits for the thread to acknowledge;
/// only reached when the callback blocks.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(2);

/// Queries sent on entry: kitty keyboard flags, cursor position, then primary device
/// attributes, which every terminal answers and so marks the end of the replies.
const PROBE_QUERIES: &[u8] = b"\x1b[?u\x1b[6n\x1b[c";

/// State the panic hook shares with the terminal.
struct Shared {
    out: File,
    /// The terminal is in our modes and must be restored.
    active: AtomicBool,
    kitty: bool,
    /// The window title was set (the terminal's own was pushed and must be popped).
    titled: AtomicBool,
    /// The UI is on the alternate screen with mouse reporting on (the fullscreen mode).
    fullscreen: bool,
}

/// Saves the terminal's window title on its title stack (xterm's `CSI 22 t`), then sets
/// ours. Control characters are left out: they would end the sequence early.
fn title_bytes(title: &str) -> Vec<u8> {
    let clean: String = title.chars().filter(|c| !c.is_control()).collect();
    format!("\x1b[22;0t\x1b]0;{clean}\x07").into_bytes()
}

/// Brings back the title saved by [`title_bytes`].
const TITLE_RESTORE: &[u8] = b"\x1b[23;0t";

impl Shared {
    fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut out = &self.out;
        out.write_all(bytes)?;
        out.flush()
    }
}

/// The alternate screen (cleared, cursor home) and SGR mouse reporting of buttons, the
/// wheel and motion while a button is held (1002: drags, for selecting text). Entered
/// before the keyboard modes: kitty keeps a keyboard-mode stack per screen.
const FULLSCREEN_ON: &[u8] = b"\x1b[?1049h\x1b[H\x1b[2J\x1b[?1002h\x1b[?1006h";
/// Mouse reporting off, back to the main screen (and the cursor saved with it).
const FULLSCREEN_OFF: &[u8] = b"\x1b[?1006l\x1b[?1002l\x1b[?1049l";

fn setup_bytes(kitty: bool, fullscreen: bool) -> Vec<u8> {
    let mut bytes = Vec::new();
    if fullscreen {
        bytes.extend_from_slice(FULLSCREEN_ON);
    }
    bytes.extend_from_slice(b"\x1b[?2004h");
    if kitty {
        bytes.extend_from_slice(format!("\x1b[>{KITTY_FLAGS}u").as_bytes());
    } else {
        // Without the kitty protocol, xterm's modifyOtherKeys still tells Shift+Enter and
        // friends apart (tmux forwards it even when it does not answer the kitty query).
        bytes.extend_from_slice(b"\x1b[>4;2m");
    }
    bytes.extend_from_slice(b"\x1b[?25l");
    bytes
}

fn restore_bytes(kitty: bool, fullscreen: bool) -> Vec<u8> {
    let mut bytes = Vec::new();
    if kitty {
        bytes.extend_from_slice(b"\x1b[<u");
    } else {
        bytes.extend_from_slice(b"\x1b[>4;0m");
    }
    bytes.extend_from_slice(b"\x1b[?2004l\x1b[?25h");
    if fullscreen {
        bytes.extend_from_slice(FULLSCREEN_OFF);
    }
    bytes
}

/// The terminal in the UI's modes. Dropping it restores the terminal.
pub struct Terminal {
    shared: Arc<Shared>,
    input: File,
    /// Input typed while `enter` waited for the terminal's answers, delivered first by the
    /// input reader.
    pending: Vec<u8>,
    start_row: Option<u16>,
    reader: Option<Arc<Control>>,
    /// The window title set, put back after a suspension.
    title: Option<String>,
}

impl Terminal {
    /// Puts the terminal into raw mode with bracketed paste, the kitty keyboard protocol
    /// when the terminal supports it, and a hidden cursor. Fails when standard input or
    /// output is not a terminal.
    pub fn enter() -> Result<Self, TuiError> {
        Self::enter_with(false)
    }

    /// [`Terminal::enter`], and with `fullscreen` also the alternate screen and SGR mouse
    /// reporting (buttons and wheel), which every restore (suspend, drop, panic) undoes:
    /// the main screen comes back as it was.
    pub fn enter_with(fullscreen: bool) -> Result<Self, TuiError> {
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        if !stdin.is_terminal() || !stdout.is_terminal() {
            return Err(TuiError::Io(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "standard input and output must be a terminal for the interactive mode; \
                 use -p or --mode json when piping",
            )));
        }
        let input = File::from(stdin.as_fd().try_clone_to_owned()?);
        let out = File::from(stdout.as_fd().try_clone_to_owned()?);
        crossterm::terminal::enable_raw_mode()?;
        let probe = match probe(&input, &out, PROBE_TIMEOUT) {
            Ok(probe) => probe,
            Err(err) => {
                // Best effort: the original error is the one worth reporting.
                let _ = crossterm::terminal::disable_raw_mode();
                return Err(err);
            }
        };
        let terminal = Self {
            shared: Arc::new(Shared {
                out,
                active: AtomicBool::new(true),
                kitty: probe.kitty_flags.is_some(),
                titled: AtomicBool::new(false),
                fullscreen,
            }),
            input,
            pending: probe.rest,
            start_row: probe.cursor.map(|(row, _)| row),
            reader: None,
            title: None,
        };
        // On failure, dropping `terminal` undoes what was set up.
        terminal
            .shared
            .write(&setup_bytes(terminal.shared.kitty, fullscreen))?;
        Ok(terminal)
    }

    /// Whether the kitty keyboard protocol is on (tell the key parser).
    pub fn kitty_active(&self) -> bool {
        self.shared.kitty
    }

    /// Whether the UI is on the alternate screen (see [`Terminal::enter_with`]).
    pub fn is_fullscreen(&self) -> bool {
        self.shared.fullscreen
    }

    /// The screen row (0-based) the cursor was on when the UI started, if the terminal
    /// said; pass it to [`crate::renderer::Renderer::set_start_row`].
    pub fn start_row(&self) -> Option<u16> {
        self.start_row
    }

    /// Columns and rows.
    pub fn size(&self) -> Result<(u16, u16), TuiError> {
        let (width, height) = crossterm::terminal::size()?;
        if width == 0 || height == 0 {
            return Ok((80, 24));
        }
        Ok((width, height))
    }

    /// Writes one frame in one go. An empty frame costs nothing.
    pub fn write_frame(&mut self, bytes: &[u8]) -> Result<(), TuiError> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.shared.write(bytes)?;
        Ok(())
    }

    /// Sets the window title (the session's name or folder, as other agents do); the
    /// terminal's own title comes back when the UI suspends or ends.
    pub fn set_title(&mut self, title: &str) -> Result<(), TuiError> {
        let mut bytes = Vec::new();
        // Each title is pushed once: pop the one before, so the stack does not grow.
        if self.shared.titled.swap(true, Ordering::SeqCst) {
            bytes.extend_from_slice(TITLE_RESTORE);
        }
        bytes.extend_from_slice(&title_bytes(title));
        self.title = Some(title.to_owned());
        self.shared.write(&bytes)?;
        Ok(())
    }

    /// Starts the thread that reads standard input and hands raw byte chunks to
    /// `on_bytes` until it returns false. An empty chunk means the input ended (the
    /// terminal went away); the thread stops after it. `on_bytes` must not wait for the
    /// thread that suspends or drops the terminal.
    pub fn spawn_input_reader(
        &mut self,
        on_bytes: impl FnMut(Vec<u8>) -> bool + Send + 'static,
    ) -> Result<InputReaderHandle, TuiError> {
        let input = self.input.as_fd().try_clone_to_owned()?;
        let handle = spawn_reader(input, std::mem::take(&mut self.pending), on_bytes)?;
        if let Some(old) = self.reader.replace(Arc::clone(&handle.control)) {
            old.request(Mode::Stop);
        }
        Ok(handle)
    }

    /// Hands the terminal to a child process (external editor) or to the shell (Ctrl+Z):
    /// stops reading input and restores the terminal's normal modes. Call
    /// [`Terminal::resume`] afterwards.
    pub fn suspend(&mut self) -> Result<(), TuiError> {
        if let Some(reader) = &self.reader {
            reader.request(Mode::Pause);
        }
        if self.shared.active.swap(false, Ordering::SeqCst) {
            let mut bytes = restore_bytes(self.shared.kitty, self.shared.fullscreen);
            if self.shared.titled.swap(false, Ordering::SeqCst) {
                bytes.extend_from_slice(TITLE_RESTORE);
            }
            self.shared.write(&bytes)?;
            crossterm::terminal::disable_raw_mode()?;
        }
        Ok(())
    }

    /// Takes the terminal back after [`Terminal::suspend`], with the cursor hidden (tell
    /// the renderer: `cursor_was_hidden`). The size may have changed meanwhile, and a
    /// shell may have printed below the UI: check the size, and after a Ctrl+Z request a
    /// full redraw from the renderer.
    pub fn resume(&mut self) -> Result<(), TuiError> {
        if !self.shared.active.swap(true, Ordering::SeqCst) {
            crossterm::terminal::enable_raw_mode()?;
            let mut bytes = setup_bytes(self.shared.kitty, self.shared.fullscreen);
            if let Some(title) = &self.title {
                self.shared.titled.store(true, Ordering::SeqCst);
                bytes.extend_from_slice(&title_bytes(title));
            }
            self.shared.write(&bytes)?;
        }
        if let Some(reader) = &self.reader {
            reader.request(Mode::Run);
        }
        Ok(())
    }

    /// Installs a panic hook that restores the terminal before the panic message is
    /// printed (the previous hook then runs as before), so a crash does not leave the
    /// shell in raw mode without a cursor.
    pub fn restore_on_panic(&self) {
        let shared = Arc::clone(&self.shared);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if shared.active.swap(false, Ordering::SeqCst) {
                // End a frame that may have been cut short, then put the prompt's line
                // below whatever was drawn.
                let mut bytes = b"\x1b[?2026l".to_vec();
                bytes.extend_from_slice(&restore_bytes(shared.kitty, shared.fullscreen));
                if shared.titled.swap(false, Ordering::SeqCst) {
                    bytes.extend_from_slice(TITLE_RESTORE);
                }
                bytes.extend_from_slice(b"\r\n");
                let _ = shared.write(&bytes);
                let _ = crossterm::terminal::disable_raw_mode();
            }
            previous(info);
        }));
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        // Stop reading first, so the reader cannot take keystrokes meant for the shell.
        if let Some(reader) = self.reader.take() {
            reader.request(Mode::Stop);
        }
        if self.shared.active.swap(false, Ordering::SeqCst) {
            let mut bytes = restore_bytes(self.shared.kitty, self.shared.fullscreen);
            if self.shared.titled.swap(false, Ordering::SeqCst) {
                bytes.extend_from_slice(TITLE_RESTORE);
            }
            let _ = self.shared.write(&bytes);
            let _ = crossterm::terminal::disable_raw_mode();
        }
    }
}

/// What the terminal answered on entry.
#[derive(Debug, Default, PartialEq, Eq)]
struct Probe {
    kitty_flags: Option<u32>,
    /// Cursor row and column, 0-based.
    cursor: Option<(u16, u16)>,
    /// The device-attributes answer arrived: no more answers are coming.
    done: bool,
    /// Everything that was not an answer (keys typed meanwhile), in order.
    rest: Vec<u8>,
}

fn probe(input: &File, out: &File, timeout: Duration) -> Result<Probe, TuiError> {
    let mut writer = out;
    writer.write_all(PROBE_QUERIES)?;
    writer.flush()?;
    let deadline = Instant::now() + timeout;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let replies = parse_replies(&buf);
        let now = Instant::now();
        if replies.done || now >= deadline {
            return Ok(replies);
        }
        if !wait_readable(input, deadline - now)? {
            continue;
        }
        let mut reader = input;
        match reader.read(&mut chunk) {
            Ok(0) => return Ok(replies),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(err) if retryable(&err) => {}
            Err(err) => return Err(err.into()),
        }
    }
}

fn retryable(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
    )
}

/// Waits until `fd` is readable (or hung up); false on timeout.
fn wait_readable(fd: &impl AsFd, timeout: Duration) -> Result<bool, TuiError> {
    let timeout = Timespec::try_from(timeout).unwrap_or(Timespec {
        tv_sec: 1,
        tv_nsec: 0,
    });
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    match poll(&mut fds, Some(&timeout)) {
        Ok(n) => Ok(n > 0),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(err) => Err(std::io::Error::from(err).into()),
    }
}

/// Splits the bytes read after the queries into the terminal's answers and other input.
fn parse_replies(buf: &[u8]) -> Probe {
    let mut probe = Probe::default();
    let mut i = 0;
    while i < buf.len() {
        if buf[i] == 0x1b
            && buf.get(i + 1) == Some(&b'[')
            && let Some((len, reply)) = parse_reply(&buf[i + 2..])
        {
            let taken = match reply {
                Reply::Kitty(flags) if probe.kitty_flags.is_none() => {
                    probe.kitty_flags = Some(flags);
                    true
                }
                // Only before the device attributes: a later `CSI 1;5R` is Ctrl+F3.
                Reply::Cursor(row, col) if probe.cursor.is_none() && !probe.done => {
                    probe.cursor = Some((row.saturating_sub(1), col.saturating_sub(1)));
                    true
                }
                Reply::DeviceAttributes if !probe.done => {
                    probe.done = true;
                    true
                }
                _ => false,
            };
            if taken {
                i += 2 + len;
                continue;
            }
        }
        probe.rest.push(buf[i]);
        i += 1;
    }
    probe
}

enum Reply {
    Kitty(u32),
    Cursor(u16, u16),
    DeviceAttributes,
}

/// Parses the part of a CSI sequence after `ESC [`; returns its length and meaning.
fn parse_reply(s: &[u8]) -> Option<(usize, Reply)> {
    let private = s.first() == Some(&b'?');
    let start = usize::from(private);
    let end = start
        + s[start..]
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'))?;
    let params = std::str::from_utf8(&s[start..end]).ok()?;
    let reply = match (private, s[end]) {
        (true, b'u') => Reply::Kitty(params.parse().ok()?),
        (true, b'c') => Reply::DeviceAttributes,
        (false, b'R') => {
            let (row, col) = params.split_once(';')?;
            Reply::Cursor(row.parse().ok()?, col.parse().ok()?)
        }
        _ => return None,
    };
    Some((end + 1, reply))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Pause,
    Stop,
}

struct ControlState {
    wanted: Mode,
    /// What the thread is doing, as it last acknowledged.
    current: Mode,
    finished: bool,
}

/// How the reader thread is told to pause or stop: a flag, and a byte down a pipe to
/// wake it from poll(2).
struct Control {
    state: Mutex<ControlState>,
    changed: Condvar,
    wake: std::io::PipeWriter,
}

impl Control {
    fn lock(&self) -> MutexGuard<'_, ControlState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the thread to switch to `mode` and waits until it has; false when the thread
    /// has ended or did not answer in time.
    fn request(&self, mode: Mode) -> bool {
        let mut state = self.lock();
        if state.finished {
            return false;
        }
        state.wanted = mode;
        // A full pipe already holds a wake-up, so a failed write changes nothing.
        let _ = (&self.wake).write(&[1]);
        let deadline = Instant::now() + CONTROL_TIMEOUT;
        while !state.finished && state.current != mode {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
        state.current == mode
    }
}

/// The input reader thread. Dropping the handle stops the thread without waiting.
pub struct InputReaderHandle {
    control: Arc<Control>,
    thread: Option<JoinHandle<()>>,
}

impl InputReaderHandle {
    /// Stops reading until [`InputReaderHandle::resume`]; returns once the thread will not
    /// read again (false if it has ended).
    pub fn pause(&self) -> bool {
        self.control.request(Mode::Pause)
    }

    pub fn resume(&self) -> bool {
        self.control.request(Mode::Run)
    }

    /// Whether the thread has ended (callback returned false, input ended, or stopped).
    pub fn is_finished(&self) -> bool {
        self.control.lock().finished
    }

    /// Stops the thread and waits for it.
    pub fn stop(mut self) {
        self.control.request(Mode::Stop);
        if let Some(thread) = self.thread.take()
            && self.is_finished()
        {
            let _ = thread.join();
        }
    }
}

impl Drop for InputReaderHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.control.request(Mode::Stop);
        }
    }
}

/// Starts an input reader on any readable descriptor (the terminal uses standard input;
/// tests use a pipe). See [`Terminal::spawn_input_reader`].
pub fn spawn_input_reader_on(
    input: OwnedFd,
    on_bytes: impl FnMut(Vec<u8>) -> bool + Send + 'static,
) -> Result<InputReaderHandle, TuiError> {
    spawn_reader(input, Vec::new(), on_bytes)
}

fn spawn_reader(
    input: OwnedFd,
    first: Vec<u8>,
    on_bytes: impl FnMut(Vec<u8>) -> bool + Send + 'static,
) -> Result<InputReaderHandle, TuiError> {
    let (wake_rx, wake_tx) = std::io::pipe()?;
    let control = Arc::new(Control {
        state: Mutex::new(ControlState {
            wanted: Mode::Run,
            current: Mode::Run,
            finished: false,
        }),
        changed: Condvar::new(),
        wake: wake_tx,
    });
    let thread_control = Arc::clone(&control);
    let thread = std::thread::Builder::new()
        .name("terminal-input".to_owned())
        .spawn(move || {
            read_loop(
                File::from(input),
                &wake_rx,
                &thread_control,
                first,
                on_bytes,
            );
            thread_control.lock().finished = true;
            thread_control.changed.notify_all();
        })?;
    Ok(InputReaderHandle {
        control,
        thread: Some(thread),
    })
}

fn read_loop(
    input: File,
    wake: &std::io::PipeReader,
    control: &Control,
    first: Vec<u8>,
    mut on_bytes: impl FnMut(Vec<u8>) -> bool,
) {
    if !first.is_empty() && !on_bytes(first) {
        return;
    }
    let mut buf = vec![0u8; 4096];
    loop {
        let mode = {
            let mut state = control.lock();
            if state.current != state.wanted {
                state.current = state.wanted;
                control.changed.notify_all();
            }
            state.current
        };
        let (woken, readable) = match mode {
            Mode::Stop => return,
            Mode::Pause => {
                let mut fds = [PollFd::new(wake, PollFlags::IN)];
                match poll(&mut fds, None) {
                    Ok(_) => (true, false),
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => return,
                }
            }
            Mode::Run => {
                let mut fds = [
                    PollFd::new(wake, PollFlags::IN),
                    PollFd::new(&input, PollFlags::IN),
                ];
                match poll(&mut fds, None) {
                    Ok(_) => (!fds[0].revents().is_empty(), !fds[1].revents().is_empty()),
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => return,
                }
            }
        };
        if woken {
            // The wake-up may carry a new mode, which must be seen before reading input.
            let mut drain = [0u8; 64];
            let _ = (&*wake).read(&mut drain);
            continue;
        }
        if readable {
            match (&input).read(&mut buf) {
                Ok(0) => {
                    on_bytes(Vec::new());
                    return;
                }
                Ok(n) => {
                    if !on_bytes(buf[..n].to_vec()) {
                        return;
                    }
                }
                Err(err) if retryable(&err) => {}
                Err(_) => {
                    on_bytes(Vec::new());
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_separated_from_typed_input() {
        let probe = parse_replies(b"\x1b[?1ux\x1b[5;1R\x1b[?62;22cy");
        assert_eq!(probe.kitty_flags, Some(1));
        assert_eq!(probe.cursor, Some((4, 0)));
        assert!(probe.done);
        assert_eq!(probe.rest, b"xy");
    }

    #[test]
    fn a_terminal_without_kitty_answers_only_the_rest() {
        let probe = parse_replies(b"\x1b[12;40R\x1b[?1;2c");
        assert_eq!(probe.kitty_flags, None);
        assert_eq!(probe.cursor, Some((11, 39)));
        assert!(probe.done);
        assert!(probe.rest.is_empty());
    }

    #[test]
    fn incomplete_and_foreign_sequences_stay_input() {
        let probe = parse_replies(b"\x1b[A\x1b[?6");
        assert!(!probe.done);
        assert_eq!(probe.rest, b"\x1b[A\x1b[?6");
        // After the device attributes, a cursor-report-shaped sequence is a key.
        let probe = parse_replies(b"\x1b[?62c\x1b[1;5R");
        assert_eq!(probe.cursor, None);
        assert_eq!(probe.rest, b"\x1b[1;5R");
    }

    #[test]
    fn setup_and_restore_undo_each_other() {
        assert_eq!(setup_bytes(true, false), b"\x1b[?2004h\x1b[>7u\x1b[?25l");
        assert_eq!(restore_bytes(true, false), b"\x1b[<u\x1b[?2004l\x1b[?25h");
        assert_eq!(setup_bytes(false, false), b"\x1b[?2004h\x1b[>4;2m\x1b[?25l");
        assert_eq!(
            restore_bytes(false, false),
            b"\x1b[>4;0m\x1b[?2004l\x1b[?25h"
        );
        // The alternate screen comes first and goes last; kitty keeps its keyboard modes
        // per screen.
        let setup = setup_bytes(true, true);
        assert!(setup.starts_with(FULLSCREEN_ON));
        assert!(setup.ends_with(b"\x1b[>7u\x1b[?25l"));
        let restore = restore_bytes(true, true);
        assert!(restore.starts_with(b"\x1b[<u"));
        assert!(restore.ends_with(FULLSCREEN_OFF));
    }
}
