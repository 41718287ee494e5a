//! Drawing the editor: rules above and below, the visible rows with the cursor as a
//! reverse-video cell, and the autocomplete popup underneath.

use super::CURSOR_MARKER;
use super::Editor;
use super::layout::find_row;
use crate::component::Component;
use crate::style::RESET;
use crate::width::{truncate_to_width, visible_width};

const REVERSE: &str = "\x1b[7m";
const RULE: &str = "─";

impl Editor {
    /// Rows of text shown at most: 30% of the terminal, at least 5.
    pub(super) fn max_visible_rows(&self) -> usize {
        (usize::from(self.terminal_rows) * 3 / 10).max(5)
    }

    pub(super) fn render_lines(&mut self, width: usize) -> Vec<String> {
        if width == 0 {
            return Vec::new();
        }
        let padding = self.padding_x.min((width - 1) / 2);
        let content_width = width.saturating_sub(padding * 2).max(1);
        // Without padding one column stays free for the cursor at a row's end.
        let layout_width = content_width
            .saturating_sub(if padding > 0 { 0 } else { 1 })
            .max(1);
        self.layout_width = layout_width;
        let rows = self.rows();
        let cursor_row = find_row(&rows, self.state.line, self.state.col);
        let visible = self.max_visible_rows();
        if cursor_row < self.scroll {
            self.scroll = cursor_row;
        } else if cursor_row >= self.scroll + visible {
            self.scroll = cursor_row + 1 - visible;
        }
        self.scroll = self.scroll.min(rows.len().saturating_sub(visible));
        let end = (self.scroll + visible).min(rows.len());
        let pad = " ".repeat(padding);
        let show_marker = self.focused && self.popup.is_none();

        let mut out = Vec::with_capacity(end - self.scroll + 2);
        out.push(self.rule(width, self.scroll, '↑'));
        for (index, row) in rows.iter().enumerate().take(end).skip(self.scroll) {
            let text = &self.state.lines[row.line][row.start..row.end];
            let (body, body_width) = if index == cursor_row {
                if self.state.is_empty()
                    && let Some(placeholder) = self.placeholder.as_deref()
                {
                    self.placeholder_row(placeholder, content_width, show_marker)
                } else {
                    let at = self.state.col.clamp(row.start, row.end) - row.start;
                    self.cursor_row(text, at, show_marker)
                }
            } else {
                (text.to_owned(), visible_width(text))
            };
            let fill = content_width.saturating_sub(body_width);
            // A cursor past the last column takes a column of the right padding.
            let right = if body_width > content_width && padding > 0 {
                &pad[1..]
            } else {
                pad.as_str()
            };
            out.push(format!("{pad}{body}{}{right}", " ".repeat(fill)));
        }
        out.push(self.rule(width, rows.len() - end, '↓'));

        if let Some(popup) = self.popup.as_mut() {
            let list_width = u16::try_from(content_width).unwrap_or(u16::MAX);
            for line in popup.list.render(list_width) {
                let fill = content_width.saturating_sub(visible_width(&line));
                out.push(format!("{pad}{line}{}{pad}", " ".repeat(fill)));
            }
        }
        out
    }

    /// A rule, or `─── ↑ 3 more ───…` when rows are hidden on that side.
    fn rule(&self, width: usize, hidden: usize, arrow: char) -> String {
        if hidden == 0 {
            return self.border.paint(&RULE.repeat(width));
        }
        let label = format!("{} {arrow} {hidden} more ", RULE.repeat(3));
        let used = visible_width(&label);
        let line = if used <= width {
            format!("{label}{}", RULE.repeat(width - used))
        } else {
            truncate_to_width(&label, width, "")
        };
        self.border.paint(&line)
    }

    /// `text` with the cursor drawn on the segment at byte `at` (or after the text), and
    /// the row's width.
    fn cursor_row(&self, text: &str, at: usize, marker: bool) -> (String, usize) {
        let marker = if marker { CURSOR_MARKER } else { "" };
        let (before, after) = text.split_at(at);
        let width = visible_width(text);
        if after.is_empty() {
            return (format!("{before}{marker}{REVERSE} {RESET}"), width + 1);
        }
        // The whole segment under the cursor is highlighted: a wide character, an emoji,
        // a paste marker (as much of it as is on this row).
        let line = self.state.current();
        let row_start = self.state.col - at;
        let end = self
            .segments(line)
            .iter()
            .find(|s| s.start <= self.state.col && s.end > self.state.col)
            .map_or(after.len(), |s| (s.end - row_start).min(text.len()) - at);
        let (under, rest) = after.split_at(end.max(1).min(after.len()));
        (
            format!("{before}{marker}{REVERSE}{under}{RESET}{rest}"),
            width,
        )
    }

    /// The empty editor's row: the placeholder, dimmed, with the cursor on its first
    /// character.
    fn placeholder_row(&self, placeholder: &str, width: usize, marker: bool) -> (String, usize) {
        let marker = if marker { CURSOR_MARKER } else { "" };
        let text = truncate_to_width(placeholder, width.saturating_sub(1).max(1), "");
        let mut chars = text.chars();
        let Some(first) = chars.next() else {
            return (format!("{marker}{REVERSE} {RESET}"), 1);
        };
        let rest: String = chars.collect();
        let shown = format!(
            "{marker}{REVERSE}{first}{RESET}{}",
            self.theme.muted.paint(&rest)
        );
        (shown, visible_width(&text))
    }
}
