//! [`TerminalIo`]: the terminal the app draws on and reads from, and when it draws. It owns
//! the frame's timing (a change marks the frame dirty; a keystroke draws at once, streamed
//! output at the next frame slot), the lone-escape timeout, the spinner's clock, the window
//! title and the tab's busy indicator, so nothing else writes to the terminal.

use std::time::Instant;

use knightcode_runtime::shutdown::TerminationSignals;
use knightcode_tui::InputEvent;
use knightcode_tui::keys::InputParser;
use knightcode_tui::renderer::Renderer;
use knightcode_tui::terminal::InputReaderHandle;
use knightcode_tui::terminal::Terminal;
use tokio::signal::unix::Signal;
use tokio::signal::unix::SignalKind;
use tokio::sync::mpsc;

use super::ESCAPE_TIMEOUT;
use super::FRAME_INTERVAL;
use super::SPINNER_INTERVAL;
use super::screen::Screen;
use super::ui::Wake;
use crate::error::InteractiveError;

/// OSC 9;4 indeterminate progress, and its end (the reference's sequences).
const PROGRESS_ACTIVE: &[u8] = b"\x1b]9;4;3\x07";
const PROGRESS_CLEAR: &[u8] = b"\x1b]9;4;0;\x07";

pub struct TerminalIo {
    term: Terminal,
    reader: Option<InputReaderHandle>,
    input: mpsc::UnboundedReceiver<Vec<u8>>,
    parser: InputParser,
    renderer: Renderer,
    winch: Signal,
    /// SIGTERM / SIGHUP, as the exit code they mean.
    termination: TerminationSignals,
    /// Something changed since the last frame.
    dirty: bool,
    /// Draw at once (a keystroke), not at the next frame slot.
    urgent: bool,
    last_frame: Instant,
    frames_drawn: u64,
    next_spinner: Option<Instant>,
    escape_deadline: Option<Instant>,
    /// The window title last set.
    title: String,
    /// When the OSC 9;4 progress was last sent (`terminal.showTerminalProgress`), while
    /// the working indicator shows.
    progress_sent: Option<Instant>,
    /// An extension has handed the terminal to a program (`tui.stop()`).
    lent: bool,
}

/// The terminal's size after a resize, and whether its width changed (which lays every
/// line out again).
pub struct Resized {
    pub width: u16,
    pub height: u16,
    pub width_changed: bool,
}

impl TerminalIo {
    /// Takes over the terminal: raw mode, bracketed paste, hidden cursor, input thread;
    /// with `fullscreen` also the alternate screen and mouse reporting.
    pub fn enter(fullscreen: bool) -> Result<Self, InteractiveError> {
        let mut term = Terminal::enter_with(fullscreen)?;
        term.restore_on_panic();
        let (width, height) = term.size()?;
        let (tx, input) = mpsc::unbounded_channel();
        // An empty chunk means the terminal went away; it reaches the loop as a closed input.
        let reader = term.spawn_input_reader(move |bytes: Vec<u8>| {
            if bytes.is_empty() {
                return false;
            }
            tx.send(bytes).is_ok()
        })?;
        let mut renderer = Renderer::new(width, height);
        // Unknown start row: assume the last, which is never wrong, only cautious. The
        // alternate screen starts cleared, with the cursor home.
        let start_row = if fullscreen {
            Some(0)
        } else {
            term.start_row()
        };
        renderer.set_start_row(start_row.unwrap_or(height.saturating_sub(1)));
        let mut parser = InputParser::new();
        parser.set_kitty_active(term.kitty_active());
        Ok(Self {
            term,
            reader: Some(reader),
            input,
            parser,
            renderer,
            winch: tokio::signal::unix::signal(SignalKind::window_change())?,
            termination: TerminationSignals::install()?,
            dirty: true,
            urgent: true,
            last_frame: Instant::now(),
            frames_drawn: 0,
            next_spinner: None,
            escape_deadline: None,
            title: String::new(),
            progress_sent: None,
            lent: false,
        })
    }

    /// The terminal's size now, if it can be read.
    pub fn size(&self) -> Option<(u16, u16)> {
        self.term.size().ok()
    }

    /// The width the last frame was laid out for.
    pub fn width(&self) -> u16 {
        self.renderer.width()
    }

    /// The height the renderer was given last.
    pub fn height(&self) -> u16 {
        self.renderer.height()
    }

    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Draw at the next opportunity without waiting for the frame slot.
    pub fn mark_urgent(&mut self) {
        self.dirty = true;
        self.urgent = true;
    }

    /// The next frame reprints everything (the transcript was rebuilt, the theme changed).
    pub fn request_full_redraw(&mut self) {
        self.renderer.request_full_redraw();
    }

    /// `showHardwareCursor`: the terminal's cursor stays visible at the editor's cursor.
    pub fn set_show_hardware_cursor(&mut self, show: bool) {
        self.renderer.set_show_hardware_cursor(show);
    }

    /// Signals, input and resizes, in that order of priority. Cancel-safe.
    pub async fn next(&mut self) -> Wake {
        tokio::select! {
            biased;
            code = self.termination.recv() => Wake::Signal(code),
            bytes = self.input.recv() => match bytes {
                Some(bytes) => Wake::Input(bytes),
                None => Wake::InputClosed,
            },
            _ = self.winch.recv() => Wake::Resize,
        }
    }

    /// While a reply streams, session events are collected once per frame rather than one
    /// wake-up each (a fast stream sends a thousand a second); keys still wake the loop.
    pub fn batches_events(&self, running: bool) -> bool {
        running && self.last_frame.elapsed() < FRAME_INTERVAL
    }

    /// When the loop must wake even if nothing arrives: a pending escape, a frame slot, the
    /// spinner, and while events are batched the end of the frame.
    pub fn deadline(&self, batch_events: bool) -> Option<Instant> {
        let frame = (self.dirty && !self.urgent).then(|| self.last_frame + FRAME_INTERVAL);
        let next = [self.escape_deadline, frame, self.next_spinner]
            .into_iter()
            .flatten()
            .min();
        if batch_events {
            let frame_due = self.last_frame + FRAME_INTERVAL;
            Some(next.map_or(frame_due, |at| at.min(frame_due)))
        } else {
            next
        }
    }

    /// Turns raw input into events, handling the escape timeout.
    pub fn parse_input(&mut self, bytes: &[u8]) -> Vec<InputEvent> {
        let events = self.parser.feed(bytes);
        self.escape_deadline = self
            .parser
            .has_pending()
            .then(|| Instant::now() + ESCAPE_TIMEOUT);
        events
    }

    /// A lone escape whose timeout has passed, as a key.
    pub fn flush_escape(&mut self, now: Instant) -> Vec<InputEvent> {
        match self.escape_deadline {
            Some(at) if at <= now => {
                self.escape_deadline = None;
                self.parser.flush_pending()
            }
            _ => Vec::new(),
        }
    }

    /// The spinner turns from now on (if it does not already).
    pub fn start_spinner(&mut self) {
        if self.next_spinner.is_none() {
            self.next_spinner = Some(Instant::now() + SPINNER_INTERVAL);
        }
    }

    pub fn stop_spinner(&mut self) {
        self.next_spinner = None;
    }

    /// Whether the spinner's next frame is due; if so, the one after is scheduled.
    pub fn spinner_due(&mut self, now: Instant) -> bool {
        if self.next_spinner.is_some_and(|at| at <= now) {
            self.next_spinner = Some(now + SPINNER_INTERVAL);
            return true;
        }
        false
    }

    /// `terminal.showTerminalProgress`: the tab's busy indicator (OSC 9;4;3), sent again
    /// every second as the reference does (terminals drop it after a while).
    pub fn keep_progress(&mut self, enabled: bool) {
        const KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(1);
        if !enabled
            || self
                .progress_sent
                .is_some_and(|at| at.elapsed() < KEEPALIVE)
        {
            return;
        }
        self.progress_sent = Some(Instant::now());
        self.write_raw(PROGRESS_ACTIVE);
    }

    /// Ends the busy indicator, if one was sent.
    pub fn clear_progress(&mut self) {
        if self.progress_sent.take().is_some() {
            self.write_raw(PROGRESS_CLEAR);
        }
    }

    /// Sets the window title, unless it is already the one shown.
    pub fn set_title(&mut self, title: String) {
        if title != self.title {
            let _ = self.term.set_title(&title);
            self.title = title;
        }
    }

    /// Takes up the terminal's new size; `None` if it cannot be read. A drag-resize sends
    /// many signals: the frame is drawn at the frame rate, not per signal (a width change
    /// reprints the whole transcript).
    pub fn resize(&mut self) -> Option<Resized> {
        let (width, height) = self.size()?;
        let width_changed = width != self.renderer.width();
        self.renderer.resize(width, height);
        self.mark_dirty();
        Some(Resized {
            width,
            height,
            width_changed,
        })
    }

    /// Lends the terminal to a program (`tui.stop()`) or takes it back; false when it
    /// already was so. While it is lent nothing is drawn (input still arrives but the
    /// program reads the terminal first).
    pub fn lend(&mut self, lend: bool) -> bool {
        if lend == self.lent {
            return false;
        }
        self.lent = lend;
        if lend {
            let _ = self.term.suspend();
        } else {
            let _ = self.term.resume();
        }
        true
    }

    /// Draws `screen` now if anything changed.
    pub fn draw(&mut self, screen: &mut Screen) {
        if !self.dirty || self.lent {
            return;
        }
        let lines = screen.render(self.renderer.width());
        let mut out = Vec::with_capacity(4096);
        self.renderer.render(lines, &mut out);
        if !out.is_empty() {
            // A terminal that cannot be written to leaves nothing to show; the loop ends
            // when its input closes.
            let _ = self.term.write_frame(&out);
        }
        self.dirty = false;
        self.urgent = false;
        self.last_frame = Instant::now();
        self.frames_drawn += 1;
    }

    /// Draws if a keystroke asked for it or the frame slot has come.
    pub fn draw_if_due(&mut self, screen: &mut Screen) {
        if self.dirty && (self.urgent || self.last_frame.elapsed() >= FRAME_INTERVAL) {
            self.draw(screen);
        }
    }

    /// Writes raw bytes between frames (OSC 52 clipboard, OSC 9;4 progress).
    pub fn write_raw(&mut self, bytes: &[u8]) {
        let _ = self.term.write_frame(bytes);
    }

    /// Hands the terminal to `f` (a child process) and takes it back. With `back_to_shell`
    /// the frame is finished first, as the shell prints below it, and everything is drawn
    /// afresh after; otherwise (an editor on the alternate screen) the screen is repainted,
    /// as the program may have written on it (an editor that failed to start prints its
    /// error there; some run without the alternate screen). The caller takes up the size.
    pub fn released<T>(&mut self, back_to_shell: bool, f: impl FnOnce() -> T) -> T {
        if back_to_shell {
            let mut out = Vec::new();
            self.renderer.finish(&mut out);
            let _ = self.term.write_frame(&out);
        }
        let _ = self.term.suspend();
        let result = f();
        let _ = self.term.resume();
        if back_to_shell {
            self.renderer.request_full_redraw();
        } else {
            self.renderer.request_screen_repaint();
        }
        self.mark_urgent();
        result
    }

    /// Restores the terminal with the last frame left in the scrollback, followed by
    /// `farewell` (already styled). If nothing was ever drawn (the session could not
    /// start) the screen stays as it was, so the error printed next stands alone.
    ///
    /// In the fullscreen mode the main screen comes back as it was, and gets the header and
    /// transcript (with `transcript`, `fullscreenExitOutput`) and `farewell` printed on it.
    pub fn leave(&mut self, screen: &mut Screen, farewell: Option<String>, transcript: bool) {
        self.clear_progress();
        if self.term.is_fullscreen() {
            let mut out = Vec::new();
            if transcript && self.frames_drawn > 0 {
                screen.render(self.renderer.width());
                for line in screen.transcript_lines() {
                    let line = knightcode_tui::width::without_wrap_marks(line);
                    out.extend_from_slice(line.as_bytes());
                    out.extend_from_slice(b"\x1b[0m\r\n");
                }
            }
            if let Some(farewell) = farewell {
                out.extend_from_slice(farewell.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            if let Some(reader) = self.reader.take() {
                reader.stop();
            }
            // Back on the main screen (and out of raw mode) before anything is printed.
            let _ = self.term.suspend();
            let _ = self.term.write_frame(&out);
            return;
        }
        if self.frames_drawn > 0 {
            self.dirty = true;
            self.draw(screen);
            let mut out = Vec::new();
            self.renderer.finish(&mut out);
            if let Some(farewell) = farewell {
                out.extend_from_slice(farewell.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            let _ = self.term.write_frame(&out);
        }
        if let Some(reader) = self.reader.take() {
            reader.stop();
        }
    }
}
