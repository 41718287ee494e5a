//! The differential renderer: turns each frame's lines into the fewest terminal bytes.
//!
//! The terminal keeps its native scrollback (no alternate screen), so the renderer models
//! the screen as a window onto the content: `top` is the content line shown on screen row 0
//! (negative while the content starts below row 0, under the shell prompt it was started
//! from). Lines above `top` have scrolled into the terminal's scrollback and can no longer be
//! changed in place; lines inside the window are rewritten with relative cursor moves when
//! they change, and new lines are appended with `\r\n`, which scrolls the screen so the top
//! lines fall into scrollback by themselves.
//!
//! The renderer is pure: it appends bytes to a buffer and never touches the terminal, so it
//! can be tested against a terminal emulator byte for byte.

use crate::style::RESET;
use crate::width::{TAB_WIDTH, truncate_to_width, visible_width, without_wrap_marks};

/// Put this (a zero-width APC sequence) into a line where the terminal's own cursor belongs,
/// for example at the editor's insertion point, so input methods place their candidate
/// window there. The renderer strips it from the output.
pub const CURSOR_MARKER: &str = "\x1b_kc:c\x07";

const SYNC_BEGIN: &[u8] = b"\x1b[?2026h";
const SYNC_END: &[u8] = b"\x1b[?2026l";
/// Clear the screen, go home, then clear the scrollback (after the screen, so terminals that
/// save a cleared screen into scrollback lose that copy too).
const CLEAR_ALL: &[u8] = b"\x1b[2J\x1b[H\x1b[3J";
const CLEAR_LINE: &[u8] = b"\x1b[2K";
const CLEAR_BELOW: &[u8] = b"\x1b[J";
const HIDE_CURSOR: &[u8] = b"\x1b[?25l";
const SHOW_CURSOR: &[u8] = b"\x1b[?25h";
/// Closes an OSC 8 hyperlink left open by a line, so it cannot spill into the next one.
const LINK_RESET: &str = "\x1b]8;;\x07";

/// What one call to [`Renderer::render`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameStats {
    /// Bytes appended to the output buffer.
    pub bytes: usize,
    /// Lines written (rewritten, appended or, for a redraw, repainted).
    pub lines_rewritten: usize,
    /// The screen and scrollback were cleared and everything was written again.
    pub full_redraw: bool,
}

/// One line as the caller gave it and as it was written.
struct Line {
    raw: String,
    /// The written text when it differs from `raw` (clipped, tabs expanded, marker removed,
    /// reset added); most lines are written as given, so this is usually `None`.
    shown: Option<String>,
    /// Column of the cursor marker, if the line had one.
    cursor_col: Option<usize>,
}

impl Line {
    fn new(raw: &str, width: usize) -> Self {
        let (shown, cursor_col) = prepare(raw, width);
        Self {
            raw: raw.to_owned(),
            shown,
            cursor_col,
        }
    }

    /// Re-prepares in place, reusing the `raw` allocation.
    fn update(&mut self, raw: &str, width: usize) {
        self.raw.clear();
        self.raw.push_str(raw);
        let (shown, cursor_col) = prepare(raw, width);
        self.shown = shown;
        self.cursor_col = cursor_col;
    }

    fn text(&self) -> &str {
        self.shown.as_deref().unwrap_or(&self.raw)
    }
}

/// Makes a line safe to write on one terminal row of `width` columns. Returns the text to
/// write when it differs from `raw`, and the column of the cursor marker.
fn prepare(raw: &str, width: usize) -> (Option<String>, Option<usize>) {
    let needs_cleanup = raw.contains(['\t', '\r', '\n']);
    // Each column takes at least one byte once tabs are expanded, so a short plain line
    // can be written as it is without measuring it.
    if !needs_cleanup && raw.len() <= width && !raw.contains('\x1b') {
        return (None, None);
    }
    let mut text = if needs_cleanup {
        // A tab counts as TAB_WIDTH columns in the width functions; the terminal would jump
        // to its next tab stop instead. A stray line break would move the cursor to a row
        // the renderer does not know about.
        let mut s = String::with_capacity(raw.len() + 8);
        for c in raw.chars() {
            match c {
                '\t' => s.extend(std::iter::repeat_n(' ', TAB_WIDTH)),
                '\r' | '\n' => s.push(' '),
                c => s.push(c),
            }
        }
        s
    } else {
        raw.to_owned()
    };
    let mut cursor_col = None;
    if let Some(at) = text.find(CURSOR_MARKER) {
        cursor_col = Some(visible_width(&text[..at]));
        text = text.replace(CURSOR_MARKER, "");
    }
    // The wrap's marks are for copying text, not for the terminal.
    if let std::borrow::Cow::Owned(unmarked) = without_wrap_marks(&text) {
        text = unmarked;
    }
    if text.len() > width && visible_width(&text) > width {
        text = truncate_to_width(&text, width, "");
    }
    if text.contains('\x1b') {
        if !text.ends_with(RESET) {
            text.push_str(RESET);
        }
        if text.contains("\x1b]8;") && !text.ends_with(LINK_RESET) {
            text.push_str(LINK_RESET);
        }
    }
    let cursor_col = cursor_col.map(|col| col.min(width.saturating_sub(1)));
    if text == raw {
        (None, cursor_col)
    } else {
        (Some(text), cursor_col)
    }
}

/// Appends `ESC [ n <final>`.
fn csi(out: &mut Vec<u8>, n: usize, final_byte: u8) {
    out.extend_from_slice(b"\x1b[");
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
    out.push(final_byte);
}

/// Draws frames of lines onto a terminal that keeps its own scrollback. See the module
/// documentation for the model.
pub struct Renderer {
    width: u16,
    height: u16,
    /// Size the last frame was drawn at.
    drawn_width: u16,
    drawn_height: u16,
    /// The last frame's lines. Entries above `top` are not kept up to date: they are in
    /// the terminal's scrollback, where a change could not be shown anyway.
    lines: Vec<Line>,
    /// Content line on screen row 0; negative while the content starts lower down.
    top: i64,
    /// Content line the terminal cursor is on (always on screen).
    cursor: usize,
    /// Screen row the first frame starts on.
    start_row: u16,
    /// Nothing drawn since creation, `clear` or `finish`.
    fresh: bool,
    full_redraw_requested: bool,
    /// Repaint every screen row next frame (another program may have written on it).
    repaint_requested: bool,
    show_hardware_cursor: bool,
    /// Whether the terminal cursor is visible, and where it was put.
    cursor_shown: bool,
    cursor_at: Option<(usize, usize)>,
}

/// The output of one frame: opens the synchronized-output bracket on the first byte, so a
/// frame with nothing to do writes nothing.
struct Frame<'a> {
    out: &'a mut Vec<u8>,
    started: bool,
    hid_cursor: bool,
    lines_rewritten: usize,
}

impl Frame<'_> {
    fn bytes(&mut self) -> &mut Vec<u8> {
        if !self.started {
            self.started = true;
            self.out.extend_from_slice(SYNC_BEGIN);
        }
        self.out
    }
}

impl Renderer {
    /// A renderer for a terminal of `width` x `height` whose cursor is on a fresh line at
    /// the top of the screen; see [`Renderer::set_start_row`] otherwise.
    pub fn new(width: u16, height: u16) -> Self {
        Self {
            width: width.max(1),
            height: height.max(1),
            drawn_width: 0,
            drawn_height: 0,
            lines: Vec::new(),
            top: 0,
            cursor: 0,
            start_row: 0,
            fresh: true,
            full_redraw_requested: false,
            repaint_requested: false,
            show_hardware_cursor: false,
            cursor_shown: false,
            cursor_at: None,
        }
    }

    pub fn width(&self) -> u16 {
        self.width
    }

    pub fn height(&self) -> u16 {
        self.height
    }

    /// The screen row (0-based) the cursor is on before the first frame. The renderer has
    /// to know it to tell which lines are still on screen while the content is shorter
    /// than the screen; when unknown, pass the last row, which is never wrong, only
    /// cautious.
    pub fn set_start_row(&mut self, row: u16) {
        if self.fresh {
            self.start_row = row.min(self.height - 1);
        }
    }

    /// The terminal's new size; the next frame adapts (see [`Renderer::render`]).
    pub fn resize(&mut self, width: u16, height: u16) {
        self.width = width.max(1);
        self.height = height.max(1);
        if self.fresh {
            self.start_row = self.start_row.min(self.height - 1);
        }
    }

    /// The next frame clears screen and scrollback and writes every line again: for changes
    /// to lines already in scrollback that the user asked for (expanding a tool result).
    pub fn request_full_redraw(&mut self) {
        self.full_redraw_requested = true;
    }

    /// The next frame repaints every row of the screen, leaving scrollback alone: after a
    /// program that shared the terminal (an external editor that failed to start, or one
    /// without an alternate screen) wrote over it.
    pub fn request_screen_repaint(&mut self) {
        self.repaint_requested = true;
    }

    /// Show the terminal cursor at the [`CURSOR_MARKER`] (for input methods) instead of
    /// keeping it hidden.
    pub fn set_show_hardware_cursor(&mut self, show: bool) {
        self.show_hardware_cursor = show;
    }

    /// Tells the renderer the terminal cursor was hidden behind its back (by
    /// `Terminal::resume` after a child process), so the next frame shows it again at the
    /// marker even if nothing else changed.
    pub fn cursor_was_hidden(&mut self) {
        self.cursor_shown = false;
        self.cursor_at = None;
    }

    /// Appends the bytes that turn the previous frame into `lines`.
    ///
    /// - The first frame writes every line from the cursor's row down.
    /// - A width change or a requested redraw clears screen and scrollback and writes
    ///   everything, since wrapping changed or lines in scrollback must change.
    /// - A height change repaints the screen rows without touching scrollback.
    /// - Otherwise only changed lines on screen are rewritten, new lines are appended, and
    ///   rows left over by a shorter frame are cleared. A change to a line in scrollback is
    ///   not shown (that would need a full redraw). A frame equal to the last writes nothing.
    pub fn render(&mut self, lines: &[String], out: &mut Vec<u8>) -> FrameStats {
        let start = out.len();
        let mut frame = Frame {
            out,
            started: false,
            hid_cursor: false,
            lines_rewritten: 0,
        };
        let mut full_redraw = false;
        if self.full_redraw_requested
            || (!self.fresh && (self.width != self.drawn_width || (lines.len() as i64) < self.top))
        {
            // The last case: the content shrank so far that none of it would be on screen.
            // A request counts even right after `finish`: back from Ctrl+Z, the shell has
            // printed below a transcript that must not appear twice.
            full_redraw = true;
            self.fresh = false;
            self.draw_everything(lines, &mut frame);
        } else if self.fresh {
            self.top = -i64::from(self.start_row);
            self.cursor = 0;
            self.lines.clear();
            self.fresh = false;
            self.draw_changes(lines, &mut frame);
        } else if self.height != self.drawn_height || self.repaint_requested {
            self.draw_after_height_change(lines, &mut frame);
        } else {
            self.draw_changes(lines, &mut frame);
        }
        self.full_redraw_requested = false;
        self.repaint_requested = false;
        self.drawn_width = self.width;
        self.drawn_height = self.height;
        self.place_cursor(&mut frame);
        let lines_rewritten = frame.lines_rewritten;
        if frame.started {
            frame.out.extend_from_slice(SYNC_END);
        }
        FrameStats {
            bytes: out.len() - start,
            lines_rewritten,
            full_redraw,
        }
    }

    /// Moves the cursor under the content and shows it, so a shell prompt printed next
    /// starts below the transcript. The next frame starts afresh from there.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if !self.fresh {
            let len = self.lines.len();
            if len == 0 || (len as i64) <= self.top {
                // The row where the next line would go is on screen and empty already.
                self.move_to(len.max(self.first_on_screen()), out);
            } else {
                self.move_to(len - 1, out);
                out.extend_from_slice(b"\r\n");
                self.after_newline(len);
            }
            self.start_row = self.row_of(self.cursor);
        }
        out.extend_from_slice(SHOW_CURSOR);
        self.reset();
    }

    /// Clears screen and scrollback; the next frame starts afresh at the top.
    pub fn clear(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(CLEAR_ALL);
        self.reset();
        self.start_row = 0;
    }

    fn reset(&mut self) {
        self.fresh = true;
        self.lines.clear();
        self.top = 0;
        self.cursor = 0;
        self.cursor_shown = false;
        self.cursor_at = None;
    }

    fn width_usize(&self) -> usize {
        usize::from(self.width)
    }

    fn first_on_screen(&self) -> usize {
        self.top.max(0) as usize
    }

    fn bottom(&self) -> i64 {
        self.top + i64::from(self.height) - 1
    }

    fn row_of(&self, line: usize) -> u16 {
        let row = (line as i64 - self.top).clamp(0, i64::from(self.height) - 1);
        u16::try_from(row).unwrap_or(0)
    }

    /// Moves the cursor to column 0 of content line `target`, which must be on screen or
    /// below it (then the screen scrolls).
    fn move_to(&mut self, target: usize, out: &mut Vec<u8>) {
        let cur = self.cursor as i64;
        let to = target as i64;
        debug_assert!(to >= self.top, "line {target} is above the screen");
        let bottom = self.bottom();
        if to < cur {
            csi(out, (cur - to) as usize, b'A');
            out.push(b'\r');
        } else if to == cur {
            out.push(b'\r');
        } else if to == cur + 1 {
            out.extend_from_slice(b"\r\n");
        } else if to <= bottom {
            csi(out, (to - cur) as usize, b'B');
            out.push(b'\r');
        } else {
            // Cursor-down stops at the last row; only a newline scrolls.
            if bottom > cur {
                csi(out, (bottom - cur) as usize, b'B');
            }
            for _ in 0..(to - bottom.max(cur)) {
                out.extend_from_slice(b"\r\n");
            }
        }
        self.after_newline(target);
    }

    /// Records that the cursor is now on `line`, scrolling the window if it went past the
    /// last row.
    fn after_newline(&mut self, line: usize) {
        self.cursor = line;
        let past = line as i64 - self.bottom();
        if past > 0 {
            self.top += past;
        }
    }

    fn write_line(&mut self, index: usize, frame: &mut Frame<'_>) {
        let out = frame.bytes();
        out.extend_from_slice(CLEAR_LINE);
        out.extend_from_slice(self.lines[index].text().as_bytes());
        frame.lines_rewritten += 1;
    }

    fn begin(&self, frame: &mut Frame<'_>) {
        if !frame.started && self.cursor_shown {
            // Keeps the cursor from flickering across the screen on terminals without
            // synchronized output; `place_cursor` shows it again.
            frame.bytes().extend_from_slice(HIDE_CURSOR);
            frame.hid_cursor = true;
        }
    }

    /// The normal frame: rewrite changed lines on screen, append new lines, clear rows a
    /// shorter frame left behind.
    fn draw_changes(&mut self, new: &[String], frame: &mut Frame<'_>) {
        let width = self.width_usize();
        let old_len = self.lines.len();
        let first = self.first_on_screen();
        let kept = old_len.min(new.len());
        for (i, raw) in new.iter().enumerate().take(kept).skip(first) {
            if self.lines[i].raw != *raw {
                self.lines[i].update(raw, width);
                self.begin(frame);
                self.move_to(i, frame.bytes());
                self.write_line(i, frame);
            }
        }
        if new.len() > old_len {
            self.lines.reserve(new.len() - old_len);
            for (i, raw) in new.iter().enumerate().skip(old_len) {
                self.lines.push(Line::new(raw, width));
                self.begin(frame);
                self.move_to(i, frame.bytes());
                self.write_line(i, frame);
            }
        } else if new.len() < old_len {
            self.lines.truncate(new.len());
            // Rows from the first removed line down are on screen (the caller made sure
            // the content still reaches the screen), so clear them in one go.
            let from = new.len().max(first);
            self.begin(frame);
            self.move_to(from, frame.bytes());
            frame.bytes().extend_from_slice(CLEAR_BELOW);
        }
    }

    /// Clears screen and scrollback and writes every line.
    fn draw_everything(&mut self, new: &[String], frame: &mut Frame<'_>) {
        let width = self.width_usize();
        self.begin(frame);
        frame.bytes().extend_from_slice(CLEAR_ALL);
        self.lines.clear();
        self.lines.reserve(new.len());
        for (i, raw) in new.iter().enumerate() {
            self.lines.push(Line::new(raw, width));
            let out = frame.bytes();
            if i > 0 {
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(self.lines[i].text().as_bytes());
            frame.lines_rewritten += 1;
        }
        self.top = (new.len() as i64 - i64::from(self.height)).max(0);
        self.cursor = new.len().saturating_sub(1);
    }

    /// Repaints the screen after the height changed, leaving scrollback alone.
    ///
    /// Terminals keep the cursor's line in place across a resize, but differ in what they
    /// do with the rest: when shrinking, most push the top rows into scrollback; when
    /// growing, some add blank rows at the bottom and others pull rows back out of
    /// scrollback. The cursor's screen row is therefore unknown, so the screen is repainted
    /// from its home position. Shrinking keeps the lines that were already in scrollback
    /// there; growing shows as many lines as fit, which on terminals that add blank rows
    /// repeats a few lines that are also in scrollback, rather than losing lines on
    /// terminals that pull them back.
    fn draw_after_height_change(&mut self, new: &[String], frame: &mut Frame<'_>) {
        let width = self.width_usize();
        let len = new.len() as i64;
        let height = i64::from(self.height);
        let shrunk = self.height < self.drawn_height;
        self.top = if shrunk || self.top < 0 {
            (len - height).max(self.top)
        } else {
            (len - height).max(0)
        };
        let first = self.first_on_screen();
        // Lines above the new window may be stale; they are never shown again unless a
        // full redraw rebuilds them.
        self.lines.truncate(new.len());
        for (i, raw) in new.iter().enumerate() {
            if i >= self.lines.len() {
                self.lines.push(Line::new(raw, width));
            } else if i >= first && self.lines[i].raw != *raw {
                self.lines[i].update(raw, width);
            }
        }
        self.begin(frame);
        frame.bytes().extend_from_slice(b"\x1b[H");
        if self.top < 0 {
            csi(frame.bytes(), self.top.unsigned_abs() as usize, b'B');
        }
        for i in first..new.len() {
            if i > first {
                frame.bytes().extend_from_slice(b"\r\n");
            }
            self.write_line(i, frame);
        }
        frame.bytes().extend_from_slice(CLEAR_BELOW);
        self.cursor = first.max(new.len().saturating_sub(1));
    }

    /// Puts the terminal cursor at the marker and shows it, or keeps it hidden.
    fn place_cursor(&mut self, frame: &mut Frame<'_>) {
        let wanted = if self.show_hardware_cursor {
            let first = self.first_on_screen();
            (first..self.lines.len())
                .rev()
                .find_map(|i| self.lines[i].cursor_col.map(|col| (i, col)))
        } else {
            None
        };
        match wanted {
            Some((line, col)) => {
                if frame.started || !self.cursor_shown || self.cursor_at != wanted {
                    self.begin(frame);
                    if line != self.cursor {
                        // Moving to another row; the column is set absolutely below.
                        self.move_to(line, frame.bytes());
                    }
                    csi(frame.bytes(), col + 1, b'G');
                    frame.bytes().extend_from_slice(SHOW_CURSOR);
                    self.cursor_shown = true;
                    self.cursor_at = wanted;
                }
            }
            None => {
                if self.cursor_shown && !frame.hid_cursor {
                    frame.bytes().extend_from_slice(HIDE_CURSOR);
                }
                self.cursor_shown = false;
                self.cursor_at = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_short_lines_are_written_as_given() {
        assert_eq!(prepare("hello", 10), (None, None));
    }

    #[test]
    fn lines_are_cleaned_clipped_and_reset() {
        assert_eq!(prepare("a\tb", 10).0.as_deref(), Some("a   b"));
        assert_eq!(prepare("a\nb", 10).0.as_deref(), Some("a b"));
        assert_eq!(prepare("abcdefgh", 4).0.as_deref(), Some("abcd"));
        assert_eq!(
            prepare("\x1b[1mab", 10).0.as_deref(),
            Some("\x1b[1mab\x1b[0m")
        );
        assert_eq!(prepare("\x1b[1mab\x1b[0m", 10).0, None);
        let (text, col) = prepare(&format!("ab{CURSOR_MARKER}c"), 10);
        assert_eq!(text.as_deref(), Some("abc"));
        assert_eq!(col, Some(2));
        let (text, _) = prepare(
            &format!(
                "  {}brown {}fox",
                crate::width::SOFT_WRAP,
                crate::width::SOFT_BREAK
            ),
            20,
        );
        assert_eq!(text.as_deref(), Some("  brown fox"));
    }

    #[test]
    fn csi_writes_numbers() {
        let mut out = Vec::new();
        csi(&mut out, 0, b'A');
        csi(&mut out, 1234, b'B');
        assert_eq!(out, b"\x1b[0A\x1b[1234B");
    }
}
