//! The editing operations behind the editor's keys.

use std::ops::Range;

use super::buffer::{State, segments, word_end_after, word_start_before};
use super::completion::{Popup, apply, is_slash_command};
use super::layout::{VisualLine, column_of, find_row, max_column, offset_at_column, visual_lines};
use super::paste::{MAX_CHARS, MAX_LINES, clean};
use super::{Direction, Editor, LastAction};

impl Editor {
    /// Segments of `text`: graphemes, with markers of stored pastes as single units.
    pub(super) fn segments(&self, text: &str) -> Vec<Range<usize>> {
        segments(text, &self.pastes.markers(text))
    }

    pub(super) fn rows(&self) -> Vec<VisualLine> {
        visual_lines(&self.state.lines, self.layout_width, |line| {
            self.segments(line)
        })
    }

    fn push_undo(&mut self) {
        self.undo.push(&self.state);
    }

    fn set_col(&mut self, col: usize) {
        self.state.col = col;
        self.preferred_column = None;
    }

    pub(super) fn undo(&mut self) {
        self.leave_history();
        if let Some(state) = self.undo.pop() {
            self.state = state;
            self.last_action = LastAction::None;
            self.preferred_column = None;
        }
    }

    pub(super) fn insert_char(&mut self, c: char) {
        self.leave_history();
        // Fish-style undo: a run of word characters is one step; each space starts a new
        // one (so undo removes a space together with the word typed after it).
        if c.is_whitespace() || self.last_action != LastAction::TypeWord {
            self.push_undo();
        }
        self.last_action = LastAction::TypeWord;
        let mut buf = [0; 4];
        self.state.insert(c.encode_utf8(&mut buf));
        self.preferred_column = None;
        if self.popup.is_some() {
            self.update_completion();
            return;
        }
        let before = self.state.before_cursor();
        let trigger = match c {
            '/' => self.at_start_of_message(),
            '@' | '#' => {
                let mut rest = before.chars().rev().skip(1);
                matches!(rest.next(), None | Some(' ' | '\t'))
            }
            c if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') => {
                self.in_slash_context() || in_symbol_context(before)
            }
            _ => false,
        };
        if trigger {
            self.complete(false, false);
        }
    }

    pub(super) fn new_line(&mut self) {
        self.popup = None;
        self.leave_history();
        self.last_action = LastAction::None;
        self.push_undo();
        self.state.insert("\n");
        self.preferred_column = None;
    }

    pub(super) fn backspace(&mut self) {
        self.leave_history();
        self.last_action = LastAction::None;
        if self.state.col > 0 {
            self.push_undo();
            let line = self.state.current().to_owned();
            let segs = self.segments(&line);
            let start = segs
                .iter()
                .rev()
                .find(|s| s.start < self.state.col)
                .map_or(0, |s| s.start);
            self.state.remove_in_line(start..self.state.col);
        } else if self.state.line > 0 {
            self.push_undo();
            self.state.join_with_previous();
        }
        self.preferred_column = None;
        self.refresh_completion_after_delete();
    }

    pub(super) fn delete_forward(&mut self) {
        self.leave_history();
        self.last_action = LastAction::None;
        let line = self.state.current().to_owned();
        if self.state.col < line.len() {
            self.push_undo();
            let segs = self.segments(&line);
            let end = segs
                .iter()
                .find(|s| s.end > self.state.col)
                .map_or(line.len(), |s| s.end);
            self.state.remove_in_line(self.state.col..end);
        } else if self.state.line + 1 < self.state.lines.len() {
            self.push_undo();
            self.state.join_with_next();
        }
        self.preferred_column = None;
        self.refresh_completion_after_delete();
    }

    /// After a deletion an open popup follows the text; a closed one reopens where typing
    /// would have opened it.
    fn refresh_completion_after_delete(&mut self) {
        if self.popup.is_some() {
            self.update_completion();
        } else if self.in_slash_context() || in_symbol_context(self.state.before_cursor()) {
            self.complete(false, false);
        }
    }

    fn kill(&mut self, text: &str, backward: bool) {
        let accumulate = self.last_action == LastAction::Kill;
        self.kill_ring.push(text, backward, accumulate);
        self.last_action = LastAction::Kill;
    }

    pub(super) fn delete_to_line_end(&mut self) {
        self.leave_history();
        let len = self.state.current().len();
        if self.state.col < len {
            self.push_undo();
            let col = self.state.col;
            let killed = self.state.remove_in_line(col..len);
            self.kill(&killed, false);
        } else if self.state.line + 1 < self.state.lines.len() {
            self.push_undo();
            self.kill("\n", false);
            self.state.join_with_next();
        }
        self.preferred_column = None;
    }

    pub(super) fn delete_to_line_start(&mut self) {
        self.leave_history();
        if self.state.col > 0 {
            self.push_undo();
            let col = self.state.col;
            let killed = self.state.remove_in_line(0..col);
            self.kill(&killed, true);
        } else if self.state.line > 0 {
            self.push_undo();
            self.kill("\n", true);
            self.state.join_with_previous();
        }
        self.preferred_column = None;
    }

    pub(super) fn delete_word_backward(&mut self) {
        self.leave_history();
        if self.state.col == 0 {
            if self.state.line > 0 {
                self.push_undo();
                self.kill("\n", true);
                self.state.join_with_previous();
            }
        } else {
            self.push_undo();
            let line = self.state.current().to_owned();
            let from = word_start_before(&line, &self.segments(&line), self.state.col);
            let killed = self.state.remove_in_line(from..self.state.col);
            self.kill(&killed, true);
        }
        self.preferred_column = None;
    }

    pub(super) fn delete_word_forward(&mut self) {
        self.leave_history();
        let line = self.state.current().to_owned();
        if self.state.col >= line.len() {
            if self.state.line + 1 < self.state.lines.len() {
                self.push_undo();
                self.kill("\n", false);
                self.state.join_with_next();
            }
        } else {
            self.push_undo();
            let to = word_end_after(&line, &self.segments(&line), self.state.col);
            let col = self.state.col;
            let killed = self.state.remove_in_line(col..to);
            self.kill(&killed, false);
        }
        self.preferred_column = None;
    }

    pub(super) fn yank(&mut self) {
        let Some(text) = self.kill_ring.peek().map(str::to_owned) else {
            return;
        };
        self.push_undo();
        self.leave_history();
        self.state.insert(&text);
        self.preferred_column = None;
        self.last_action = LastAction::Yank;
    }

    /// Right after a yank: replaces the yanked text with the kill before it.
    pub(super) fn yank_pop(&mut self) {
        if self.last_action != LastAction::Yank || self.kill_ring.len() <= 1 {
            return;
        }
        self.push_undo();
        if let Some(yanked) = self.kill_ring.peek().map(str::to_owned) {
            self.remove_before_cursor(&yanked);
        }
        self.kill_ring.rotate();
        if let Some(text) = self.kill_ring.peek().map(str::to_owned) {
            self.state.insert(&text);
        }
        self.preferred_column = None;
        self.last_action = LastAction::Yank;
    }

    /// Removes `text`, which was just inserted and ends at the cursor.
    fn remove_before_cursor(&mut self, text: &str) {
        let pieces: Vec<&str> = text.split('\n').collect();
        let first_line = self.state.line + 1 - pieces.len().min(self.state.line + 1);
        let first_len = pieces.first().map_or(0, |p| p.len());
        let start_col = self.state.lines[first_line].len().saturating_sub(first_len);
        let start_col = if pieces.len() == 1 {
            self.state.col.saturating_sub(first_len)
        } else {
            start_col
        };
        let after = self.state.current()[self.state.col..].to_owned();
        let mut head = self.state.lines[first_line].clone();
        head.truncate(start_col);
        head.push_str(&after);
        self.state
            .lines
            .splice(first_line..=self.state.line, std::iter::once(head));
        self.state.line = first_line;
        self.state.col = start_col;
    }

    pub(super) fn move_to_line_start(&mut self) {
        self.last_action = LastAction::None;
        self.set_col(0);
    }

    pub(super) fn move_to_line_end(&mut self) {
        self.last_action = LastAction::None;
        let len = self.state.current().len();
        self.set_col(len);
    }

    pub(super) fn move_word_left(&mut self) {
        self.last_action = LastAction::None;
        if self.state.col == 0 {
            if self.state.line > 0 {
                self.state.line -= 1;
                let len = self.state.current().len();
                self.set_col(len);
            }
            return;
        }
        let line = self.state.current().to_owned();
        let col = word_start_before(&line, &self.segments(&line), self.state.col);
        self.set_col(col);
    }

    pub(super) fn move_word_right(&mut self) {
        self.last_action = LastAction::None;
        let line = self.state.current().to_owned();
        if self.state.col >= line.len() {
            if self.state.line + 1 < self.state.lines.len() {
                self.state.line += 1;
                self.set_col(0);
            }
            return;
        }
        let col = word_end_after(&line, &self.segments(&line), self.state.col);
        self.set_col(col);
    }

    pub(super) fn move_left(&mut self) {
        self.last_action = LastAction::None;
        if self.state.col > 0 {
            let line = self.state.current().to_owned();
            let col = self
                .segments(&line)
                .iter()
                .rev()
                .find(|s| s.start < self.state.col)
                .map_or(0, |s| s.start);
            self.set_col(col);
        } else if self.state.line > 0 {
            self.state.line -= 1;
            let len = self.state.current().len();
            self.set_col(len);
        }
    }

    pub(super) fn move_right(&mut self) {
        self.last_action = LastAction::None;
        let line = self.state.current().to_owned();
        if self.state.col < line.len() {
            let col = self
                .segments(&line)
                .iter()
                .find(|s| s.end > self.state.col)
                .map_or(line.len(), |s| s.end);
            self.set_col(col);
        } else if self.state.line + 1 < self.state.lines.len() {
            self.state.line += 1;
            self.set_col(0);
        }
    }

    /// Up: moves a row up; on the first row it goes to the line start first, then into
    /// the prompt history (the draft is kept and comes back below the newest entry).
    pub(super) fn up(&mut self) {
        let rows = self.rows();
        let row = find_row(&rows, self.state.line, self.state.col);
        if row > 0 {
            self.move_to_row(&rows, row, row - 1);
            self.last_action = LastAction::None;
        } else if self.history_index.is_some() || self.state.is_empty() || self.state.col == 0 {
            self.navigate_history(true);
        } else {
            self.move_to_line_start();
        }
    }

    /// Down: moves a row down; on the last row it goes to the line end, or to newer
    /// history while browsing.
    pub(super) fn down(&mut self) {
        let rows = self.rows();
        let row = find_row(&rows, self.state.line, self.state.col);
        if row + 1 < rows.len() {
            self.move_to_row(&rows, row, row + 1);
            self.last_action = LastAction::None;
        } else if self.history_index.is_some() {
            self.navigate_history(false);
        } else {
            self.move_to_line_end();
        }
    }

    pub(super) fn page(&mut self, down: bool) {
        self.last_action = LastAction::None;
        let rows = self.rows();
        let row = find_row(&rows, self.state.line, self.state.col);
        let page = self.max_visible_rows();
        let target = if down {
            (row + page).min(rows.len().saturating_sub(1))
        } else {
            row.saturating_sub(page)
        };
        self.move_to_row(&rows, row, target);
    }

    /// Moves the cursor to row `to`, keeping its column where the row allows (and
    /// remembering it while passing shorter rows).
    fn move_to_row(&mut self, rows: &[VisualLine], from: usize, to: usize) {
        let (Some(source), Some(target)) = (rows.get(from), rows.get(to)) else {
            return;
        };
        let source_text = self.state.lines[source.line].clone();
        let target_text = self.state.lines[target.line].clone();
        let source_segs = self.segments(&source_text);
        let target_segs = self.segments(&target_text);
        let current = column_of(&source_text, source, self.state.col);
        let source_max = max_column(&source_text, source, &source_segs);
        let target_max = max_column(&target_text, target, &target_segs);
        let column = self.vertical_column(current, source_max, target_max);
        let offset = offset_at_column(&target_text, target, &target_segs, column);
        // A marker continued from the row above would put the cursor back where it came
        // from; going down, skip to the row after the marker.
        if offset < target.start && to > from {
            let skip = rows[to..]
                .iter()
                .position(|r| r.line != target.line || r.start >= offset_end(&target_segs, offset));
            if let Some(skip) = skip.filter(|&s| to + s < rows.len()) {
                self.move_to_row(rows, from, to + skip);
                return;
            }
        }
        self.state.line = target.line;
        self.state.col = offset;
    }

    /// The sticky-column rule of the reference: aim for the remembered column once a
    /// longer row allows it again.
    fn vertical_column(&mut self, current: usize, source_max: usize, target_max: usize) -> usize {
        let in_middle = current < source_max;
        let too_short = target_max < current;
        match self.preferred_column {
            Some(preferred) if !in_middle => {
                if too_short || target_max < preferred {
                    target_max
                } else {
                    self.preferred_column = None;
                    preferred
                }
            }
            _ => {
                if too_short {
                    self.preferred_column = Some(current);
                    target_max
                } else {
                    self.preferred_column = None;
                    current
                }
            }
        }
    }

    pub(super) fn navigate_history(&mut self, older: bool) {
        self.last_action = LastAction::None;
        let next = match (self.history_index, older) {
            (None, true) if !self.history.is_empty() => Some(0),
            (Some(i), true) if i + 1 < self.history.len() => Some(i + 1),
            (Some(i), false) => i.checked_sub(1),
            _ => return,
        };
        if self.history_index.is_none() {
            self.push_undo();
            self.draft = Some(self.state.clone());
        }
        self.popup = None;
        self.history_index = next;
        let state = match next {
            Some(i) => State::from_text(self.history.get(i).map_or("", String::as_str)),
            None => self.draft.take().unwrap_or_default(),
        };
        self.replace_state(state);
    }

    pub(super) fn jump_to_char(&mut self, c: char, direction: Direction) {
        self.last_action = LastAction::None;
        let (line, col) = (self.state.line, self.state.col);
        let found = match direction {
            Direction::Forward => (line..self.state.lines.len()).find_map(|i| {
                let text = &self.state.lines[i];
                let from = if i == line {
                    text[col.min(text.len())..]
                        .chars()
                        .next()
                        .map_or(text.len(), |ch| col + ch.len_utf8())
                } else {
                    0
                };
                text[from..].find(c).map(|at| (i, from + at))
            }),
            Direction::Backward => (0..=line).rev().find_map(|i| {
                let text = &self.state.lines[i];
                let to = if i == line {
                    col.min(text.len())
                } else {
                    text.len()
                };
                text[..to].rfind(c).map(|at| (i, at))
            }),
        };
        if let Some((i, at)) = found {
            self.state.line = i;
            self.set_col(at);
        }
    }

    /// Inserts pasted text; pastes over 10 lines or 1000 characters are shown as a marker
    /// and expanded when submitted. Pasted text always stays text: the app looks at a
    /// paste first if it wants to treat some (an image file's path) differently.
    pub fn handle_paste(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.popup = None;
        self.leave_history();
        self.last_action = LastAction::None;
        self.push_undo();
        let mut text = clean(text);
        // A pasted path right after a word gets a space before it.
        if text.starts_with(['/', '~', '.'])
            && self
                .state
                .before_cursor()
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            text.insert(0, ' ');
        }
        let lines = text.split('\n').count();
        if lines > MAX_LINES || text.chars().count() > MAX_CHARS {
            let marker = self.pastes.add(text);
            self.state.insert(&marker);
        } else {
            self.state.insert(&text);
        }
        self.preferred_column = None;
    }

    /// Slash commands are offered only on the first line.
    fn at_start_of_message(&self) -> bool {
        let before = self.state.before_cursor().trim();
        self.state.line == 0 && (before.is_empty() || before == "/")
    }

    fn in_slash_context(&self) -> bool {
        self.state.line == 0 && self.state.before_cursor().trim_start().starts_with('/')
    }

    /// Tab: completes a slash command's name, otherwise a path (a single match is
    /// inserted at once).
    pub(super) fn tab_completion(&mut self) {
        if self.provider.is_none() {
            return;
        }
        let command_name =
            self.in_slash_context() && !self.state.before_cursor().trim_start().contains(' ');
        if command_name {
            self.complete(false, true);
        } else {
            self.complete(true, true);
        }
    }

    /// Asks the provider and opens, updates or closes the popup.
    pub(super) fn complete(&mut self, force: bool, tab: bool) {
        let Some(provider) = self.provider.as_ref() else {
            return;
        };
        let completions = provider
            .complete(self.state.before_cursor(), force)
            .filter(|c| !c.items.is_empty());
        let Some(completions) = completions else {
            self.popup = None;
            return;
        };
        if force
            && tab
            && let [item] = completions.items.as_slice()
        {
            self.push_undo();
            self.last_action = LastAction::None;
            apply(&mut self.state, item, &completions.prefix);
            self.preferred_column = None;
            self.popup = None;
            return;
        }
        self.popup = Some(Popup::new(completions, force, self.popup_rows, &self.theme));
    }

    fn update_completion(&mut self) {
        let forced = self.popup.as_ref().is_some_and(|p| p.forced);
        self.complete(forced, false);
    }

    /// Applies the selected suggestion and closes the popup. Returns true when it
    /// completed a slash command (Enter then submits).
    pub(super) fn accept_completion(&mut self) -> bool {
        let Some(popup) = self.popup.take() else {
            return false;
        };
        let Some(item) = popup.selected().cloned() else {
            return false;
        };
        self.push_undo();
        self.last_action = LastAction::None;
        self.applied_completion = true;
        let slash = is_slash_command(&self.state, &popup.prefix);
        apply(&mut self.state, &item, &popup.prefix);
        self.preferred_column = None;
        // A folder picked for `@` opens on its contents, so the path can be walked down.
        if popup.prefix.starts_with('@') && item.label.ends_with('/') {
            self.complete(popup.forced, false);
        }
        slash
    }
}

/// `@` or `#` at a word start, then no whitespace: a file reference being typed.
fn in_symbol_context(before: &str) -> bool {
    let token_start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(at, c)| at + c.len_utf8());
    before[token_start..].starts_with(['@', '#'])
}

/// End of the segment starting at `offset`.
fn offset_end(segs: &[Range<usize>], offset: usize) -> usize {
    segs.iter()
        .find(|s| s.start == offset)
        .map_or(offset, |s| s.end)
}
