//! Searching the fullscreen transcript, as the reference's alternate-screen search does:
//! `tui.altScreen.search` (ctrl+shift+f; ctrl+f on Windows and WSL) opens a field at the
//! top right of the screen and takes the keys while it is open. Every match in view is
//! underlined, the current one in bold reverse video; the field says `2/7` or
//! `No matches`. Typing picks the first match at or below the one picked before (or the
//! top of the view), `searchNext`/`searchPrevious` (enter, shift+enter) move through them
//! round the ends, and a match out of view is brought to a third of the way down. The
//! scrolling keys still scroll; `searchClose` (escape), or the search key again, closes
//! it and leaves the view where it is. Letters match whatever their case; the text is
//! what the rows show (see `knightcode_tui::search`).
//!
//! The index of the transcript's text outlives the search: the screen keeps it up to date
//! on every frame with the lines laid out since the last (`Screen::search_index`), and
//! lends it to the search while it is open, so that opening a search or typing its first
//! key reads no line of the transcript.

use std::ops::Range;

use knightcode_tui::Key;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::composite::splice;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::keys::MouseEvent;
use knightcode_tui::search::SearchIndex;
use knightcode_tui::search::Segment;
use knightcode_tui::search::emphasize;
use knightcode_tui::viewport::Viewport;
use knightcode_tui::width::truncate_to_width;
use knightcode_tui::width::visible_width;

use super::ui::Ui;
use crate::pickers::line_input::LineInput;

const PLACEHOLDER: &str = "Find in transcript";
/// A match in view, and the current one (the reference's default styles).
const MATCH: (&str, &str) = ("\x1b[4m", "\x1b[24m");
const CURRENT: (&str, &str) = ("\x1b[1;7m", "\x1b[22;27m");
/// The box is two fifths of the screen wide, at least this many columns.
const MIN_BOX_WIDTH: usize = 32;

/// Which match the next frame picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
    /// The query changed: the first match at or below the anchor line.
    Query,
    /// The same match as before, if the lines still have it.
    Retain,
    Next,
    Previous,
}

/// An open search: the field, the matches and the one picked.
#[derive(Debug)]
pub(super) struct TranscriptSearch {
    input: LineInput,
    index: SearchIndex,
    /// The query has more than white space (else nothing is searched or highlighted).
    active: bool,
    selected: Option<usize>,
    /// Where the picked match was, to find it again when the lines change under it.
    selected_key: Option<(Segment, Segment)>,
    anchor: usize,
    pick: Pick,
    /// The box's lower edge names the keys: `↑ Shift+Enter`, `↓ Enter`.
    previous_label: String,
    next_label: String,
    /// Where the box's ↑ and ↓ were drawn: screen row and the columns of each.
    buttons: Option<(usize, Range<usize>, Range<usize>)>,
}

impl TranscriptSearch {
    fn new(anchor: usize, bindings: &Keybindings, index: SearchIndex) -> Self {
        let label = |action: &str| {
            bindings
                .keys_for(action)
                .first()
                .map_or_else(|| "Unbound".to_owned(), |key| key_label(&key.to_string()))
        };
        Self {
            input: LineInput::new(),
            index,
            active: false,
            selected: None,
            selected_key: None,
            anchor,
            pick: Pick::Query,
            previous_label: format!("↑ {}", label("tui.altScreen.searchPrevious")),
            next_label: format!("↓ {}", label("tui.altScreen.searchNext")),
            buttons: None,
        }
    }

    fn navigate(&mut self, forward: bool) {
        if self.active {
            self.pick = if forward { Pick::Next } else { Pick::Previous };
        }
    }

    /// An editing key for the field; `top` is the view's first line, where a new query
    /// starts looking when nothing was picked.
    fn edit(&mut self, key: &Key, bindings: &Keybindings, top: usize) {
        let before = self.input.text().to_owned();
        self.input.handle_key(key, bindings);
        if self.input.text() != before {
            self.query_changed(top);
        }
    }

    fn paste(&mut self, text: &str, top: usize) {
        self.input.insert(text);
        self.query_changed(top);
    }

    fn query_changed(&mut self, top: usize) {
        self.anchor = self.selected.map_or(top, |i| self.index.first_line(i));
        self.pick = Pick::Query;
    }

    /// The index, for the screen to keep while no search is open.
    pub(super) fn into_index(self) -> SearchIndex {
        self.index
    }

    /// Brings the index up to date with `lines` (the transcript as `viewport` shows it;
    /// the first `unchanged` are as they were at the last call), finds the query in them
    /// and picks a match; the line to bring to the top of the view when the pick is out of
    /// view.
    pub(super) fn refresh(
        &mut self,
        lines: &[String],
        unchanged: usize,
        viewport: &Viewport,
    ) -> Option<usize> {
        self.index.sync(lines, unchanged);
        self.active = !self.input.text().trim().is_empty();
        if !self.active {
            self.selected = None;
            self.selected_key = None;
            self.pick = Pick::Retain;
            return None;
        }
        let reveal = self.pick != Pick::Retain;
        let changed = self.index.find(self.input.text());
        if !changed && !reveal {
            return None;
        }
        let count = self.index.len();
        let exact = if changed {
            self.selected_key.and_then(|key| self.index.find_key(key))
        } else {
            self.selected
        };
        let base = exact.or(self.selected.map(|i| i.min(count.saturating_sub(1))));
        self.selected = (count > 0).then(|| match self.pick {
            Pick::Query => self.index.first_at_or_after(self.anchor).unwrap_or(0),
            Pick::Next => base.map_or(0, |i| (i + 1) % count),
            Pick::Previous => base.map_or(count - 1, |i| (i + count - 1) % count),
            Pick::Retain => base.unwrap_or(0),
        });
        self.selected_key = self.selected.and_then(|i| self.index.key(i));
        self.pick = Pick::Retain;
        let picked = self.selected.filter(|_| reveal)?;
        let (first, last) = (self.index.first_line(picked), self.index.last_line(picked));
        let top = viewport.first_line();
        let bottom = top + viewport.content_rows().max(1) - 1;
        (first < top || last > bottom).then(|| first.saturating_sub(viewport.page() / 3))
    }

    /// Underlines the matches on the viewport's rows of `rows`, the current one in bold
    /// reverse video.
    pub(super) fn highlight(&self, rows: &mut [String], viewport: &Viewport) {
        let shown = viewport.content_rows().min(rows.len());
        if !self.active || shown == 0 {
            return;
        }
        let first = viewport.first_line();
        let last = first + shown - 1;
        for index in self.index.in_lines(first, last) {
            let (open, close) = if Some(index) == self.selected {
                CURRENT
            } else {
                MATCH
            };
            for segment in self.index.segments(index) {
                if (first..=last).contains(&segment.line) {
                    let row = &mut rows[segment.line - first];
                    *row = emphasize(row, segment.from, segment.to, open, close);
                }
            }
        }
    }

    /// Draws the box over the top right of `rows` (the screen, `width` columns): a frame
    /// around the field and the result, the keys to move on its lower edge.
    pub(super) fn draw_box(&mut self, rows: &mut [String], width: usize, theme: &Theme) {
        self.buttons = None;
        if width < 8 || rows.len() < 4 {
            return;
        }
        let box_width = (width * 2 / 5).max(MIN_BOX_WIDTH).min(width - 2);
        let inner = box_width - 2;
        let result = match self.selected {
            _ if !self.active => String::new(),
            Some(index) => format!("{}/{}", index + 1, self.index.len()),
            None => "No matches".to_owned(),
        };
        let result = truncate_to_width(&result, inner.saturating_sub(3), "");
        let result = if result.is_empty() {
            result
        } else {
            theme.dim.paint(&format!(" {result} "))
        };
        let field_width = inner - visible_width(&result);
        let cursor = Style::new().inverse();
        let field = if self.input.is_empty() {
            let (first, rest) = PLACEHOLDER.split_at(1);
            format!("{}{}", cursor.paint(first), theme.dim.paint(rest))
        } else {
            self.input
                .render(field_width.saturating_sub(1).max(1), cursor)
        };
        let field = truncate_to_width(&format!(" {field}"), field_width, "");
        let padding = " ".repeat(field_width.saturating_sub(visible_width(&field)));

        let (mut previous, mut next, mut separator) = (
            self.previous_label.as_str(),
            self.next_label.as_str(),
            " · ",
        );
        let room = inner.saturating_sub(3);
        let controls =
            |p: &str, s: &str, n: &str| visible_width(p) + visible_width(s) + visible_width(n);
        if controls(previous, separator, next) > room {
            (previous, next, separator) = ("↑", "↓", " ");
        }
        let controls_width = controls(previous, separator, next);
        let show = controls_width <= room;
        let (used, gaps) = if show { (controls_width, 2) } else { (0, 0) };
        let right_rule = usize::from(show && inner > used + gaps);
        let left_rule = inner - used - gaps - right_rule;
        let edge = if show {
            format!(" {previous}{separator}{next} ")
        } else {
            String::new()
        };
        let lines = [
            format!("┌{}┐", "─".repeat(inner)),
            format!("│{field}{padding}{result}│"),
            format!(
                "└{}{edge}{}┘",
                "─".repeat(left_rule),
                "─".repeat(right_rule)
            ),
        ];
        let col = width - 1 - box_width;
        for (offset, line) in lines.iter().enumerate() {
            let row = &mut rows[1 + offset];
            *row = splice(row, line, col, box_width, width);
        }
        if show {
            let start = col + 2 + left_rule;
            let end = start + visible_width(previous);
            let next_start = end + visible_width(separator);
            self.buttons = Some((3, start..end, next_start..next_start + visible_width(next)));
        }
    }

    /// The direction of the box's ↑ or ↓ under a screen cell, if one is there.
    fn button_at(&self, row: usize, col: usize) -> Option<bool> {
        let (at, previous, next) = self.buttons.as_ref()?;
        if row != *at {
            return None;
        }
        if previous.contains(&col) {
            Some(false)
        } else if next.contains(&col) {
            Some(true)
        } else {
            None
        }
    }
}

/// `shift+enter` as the reference names it on the box: `Shift+Enter`.
fn key_label(key: &str) -> String {
    key.split('+')
        .map(|part| {
            if cfg!(target_os = "macos") && part == "alt" {
                return "Option".to_owned();
            }
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect::<String>()
            })
        })
        .collect::<Vec<_>>()
        .join("+")
}

impl Ui {
    /// Opens the search (fullscreen, nothing in the editor's place); true when it did.
    pub(super) fn open_search(&mut self) -> bool {
        let Some(viewport) = &self.screen.viewport else {
            return false;
        };
        if self.screen.overlay.is_some() {
            return false;
        }
        let index = std::mem::take(&mut self.screen.search_index);
        let search = TranscriptSearch::new(viewport.first_line(), self.prefs.bindings(), index);
        self.screen.search = Some(search);
        self.screen.editor.set_focused(false);
        self.mark_urgent();
        true
    }

    pub(super) fn close_search(&mut self) {
        if let Some(search) = self.screen.search.take() {
            self.screen.search_index = search.into_index();
            self.screen.editor.set_focused(true);
            self.mark_urgent();
        }
    }

    /// A key while the search is open: it takes them all. False when it is not open.
    pub(super) fn search_key(&mut self, key: &Key) -> bool {
        if self.screen.search.is_none() {
            return false;
        }
        let b = self.prefs.bindings();
        if b.matches("tui.altScreen.search", key) || b.matches("tui.altScreen.searchClose", key) {
            self.close_search();
            return true;
        }
        let forward = if b.matches("tui.altScreen.searchNext", key) {
            Some(true)
        } else if b.matches("tui.altScreen.searchPrevious", key) {
            Some(false)
        } else {
            None
        };
        if forward.is_none() && self.fullscreen_scroll(key, true) {
            return true;
        }
        let top = self
            .screen
            .viewport
            .as_ref()
            .map_or(0, Viewport::first_line);
        let b = self.prefs.bindings();
        if let Some(search) = &mut self.screen.search {
            match forward {
                Some(forward) => search.navigate(forward),
                None => search.edit(key, b, top),
            }
        }
        self.mark_urgent();
        true
    }

    /// Pasted text goes into the open search's field; false when none is open.
    pub(super) fn search_paste(&mut self, text: &str) -> bool {
        let top = self
            .screen
            .viewport
            .as_ref()
            .map_or(0, Viewport::first_line);
        let Some(search) = &mut self.screen.search else {
            return false;
        };
        search.paste(text, top);
        self.mark_urgent();
        true
    }

    /// A press on the box's ↑ or ↓ moves to the previous or next match; true when it was
    /// on one.
    pub(super) fn search_click(&mut self, mouse: &MouseEvent) -> bool {
        let Some(search) = &mut self.screen.search else {
            return false;
        };
        let Some(forward) = search.button_at(usize::from(mouse.row), usize::from(mouse.column))
        else {
            return false;
        };
        search.navigate(forward);
        self.mark_urgent();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_named_as_the_box_shows_them() {
        assert_eq!(key_label("shift+enter"), "Shift+Enter");
        assert_eq!(key_label("ctrl+shift+g"), "Ctrl+Shift+G");
        assert_eq!(key_label("enter"), "Enter");
    }
}

#[cfg(test)]
mod flow_tests {
    use knightcode_tui::KeyCode;
    use knightcode_tui::Modifiers;

    use super::*;

    #[test]
    fn typing_picks_and_next_moves_round() {
        let bindings = Keybindings::defaults();
        let lines: Vec<String> = (0..60)
            .map(|i| {
                if i % 20 == 10 {
                    format!("row {i} Needle")
                } else {
                    format!("row {i}")
                }
            })
            .collect();
        let mut viewport = Viewport::new();
        let mut out = Vec::new();
        let bottom = vec!["editor".to_owned()];
        viewport.compose(&lines, &bottom, 31, |_| String::new(), &mut out);
        let mut search =
            TranscriptSearch::new(viewport.first_line(), &bindings, SearchIndex::new());
        for c in "needle".chars() {
            search.edit(
                &Key::new(KeyCode::Char(c), Modifiers::NONE),
                &bindings,
                viewport.first_line(),
            );
            assert_eq!(search.refresh(&lines, lines.len(), &viewport), None);
        }
        assert_eq!(search.selected, Some(1));
        search.navigate(true);
        assert_eq!(search.refresh(&lines, lines.len(), &viewport), None);
        assert_eq!(search.selected, Some(2));
        search.navigate(true);
        assert_eq!(search.refresh(&lines, lines.len(), &viewport), Some(0));
        assert_eq!(search.selected, Some(0));
    }
}
