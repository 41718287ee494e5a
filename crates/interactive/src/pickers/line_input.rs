//! A one-line text field for picker searches, renames and labels: typing, cursor movement
//! and deletion through the editor's keybinding ids, horizontal scrolling when the text is
//! wider than the field.

use knightcode_tui::Key;
use knightcode_tui::KeyCode;
use knightcode_tui::Modifiers;
use knightcode_tui::Style;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::width::grapheme_width;
use unicode_segmentation::UnicodeSegmentation;

#[derive(Debug, Clone, Default)]
pub(crate) struct LineInput {
    text: String,
    /// Byte offset, always on a grapheme boundary.
    cursor: usize,
}

impl LineInput {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn with_text(text: &str) -> Self {
        let text = single_line(text);
        Self {
            cursor: text.len(),
            text,
        }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The field with every character shown as `•` (a key typed in), the cursor in place.
    pub(crate) fn masked(&self) -> Self {
        let before = self.text[..self.cursor].graphemes(true).count();
        let total = self.text.graphemes(true).count();
        let dot = '•';
        Self {
            text: std::iter::repeat_n(dot, total).collect(),
            cursor: before * dot.len_utf8(),
        }
    }

    /// Inserts pasted text at the cursor (line breaks become spaces: the field is one line).
    pub(crate) fn insert(&mut self, text: &str) {
        let text = single_line(text);
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
    }

    pub(crate) fn delete_word_backward(&mut self) {
        let start = self.word_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Applies an editing key. Returns true when the key was an editing key (whether or not
    /// the text changed), false when the caller should treat it otherwise.
    pub(crate) fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> bool {
        if bindings.matches("tui.editor.deleteCharBackward", key) {
            if let Some(start) = self.previous_boundary() {
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
        } else if bindings.matches("tui.editor.deleteCharForward", key) {
            if let Some(end) = self.next_boundary() {
                self.text.replace_range(self.cursor..end, "");
            }
        } else if bindings.matches("tui.editor.deleteWordBackward", key) {
            self.delete_word_backward();
        } else if bindings.matches("tui.editor.deleteWordForward", key) {
            let end = self.word_end();
            self.text.replace_range(self.cursor..end, "");
        } else if bindings.matches("tui.editor.deleteToLineStart", key) {
            self.text.replace_range(..self.cursor, "");
            self.cursor = 0;
        } else if bindings.matches("tui.editor.deleteToLineEnd", key) {
            self.text.truncate(self.cursor);
        } else if bindings.matches("tui.editor.cursorLeft", key) {
            if let Some(start) = self.previous_boundary() {
                self.cursor = start;
            }
        } else if bindings.matches("tui.editor.cursorRight", key) {
            if let Some(end) = self.next_boundary() {
                self.cursor = end;
            }
        } else if bindings.matches("tui.editor.cursorWordLeft", key) {
            self.cursor = self.word_start();
        } else if bindings.matches("tui.editor.cursorWordRight", key) {
            self.cursor = self.word_end();
        } else if bindings.matches("tui.editor.cursorLineStart", key) {
            self.cursor = 0;
        } else if bindings.matches("tui.editor.cursorLineEnd", key) {
            self.cursor = self.text.len();
        } else if let Some(c) = typed_char(key) {
            self.text.insert(self.cursor, c);
            self.cursor += c.len_utf8();
        } else {
            return false;
        }
        true
    }

    /// The field at `width` columns, with the character under the cursor drawn in
    /// `cursor_style` (a space past the end). Scrolls so the cursor stays visible.
    pub(crate) fn render(&self, width: usize, cursor_style: Style) -> String {
        let width = width.max(1);
        let graphemes: Vec<(usize, &str)> = self.text.grapheme_indices(true).collect();
        let cursor_index = graphemes
            .iter()
            .position(|(offset, _)| *offset >= self.cursor)
            .unwrap_or(graphemes.len());
        let widths: Vec<usize> = graphemes.iter().map(|(_, g)| grapheme_width(g)).collect();
        // Room for the cursor cell past the end.
        let total: usize = widths.iter().sum::<usize>() + 1;
        let mut start = 0;
        if total > width {
            // Keep the cursor in the right half once the text scrolls.
            let mut used: usize = widths[..cursor_index].iter().sum::<usize>() + 1;
            let target = width - width / 2;
            while used > target && start < cursor_index {
                used -= widths[start];
                start += 1;
            }
        }
        let mut out = String::new();
        let mut used = 0;
        for (index, (_, grapheme)) in graphemes.iter().enumerate().skip(start) {
            let w = widths[index];
            if used + w > width {
                break;
            }
            used += w;
            if index == cursor_index {
                out.push_str(&cursor_style.paint(grapheme));
            } else {
                out.push_str(grapheme);
            }
        }
        if cursor_index == graphemes.len() && used < width {
            out.push_str(&cursor_style.paint(" "));
        }
        out
    }

    fn previous_boundary(&self) -> Option<usize> {
        self.text[..self.cursor]
            .grapheme_indices(true)
            .next_back()
            .map(|(offset, _)| offset)
    }

    fn next_boundary(&self) -> Option<usize> {
        self.text[self.cursor..]
            .graphemes(true)
            .next()
            .map(|g| self.cursor + g.len())
    }

    /// Start of the word before the cursor (skipping spaces first), as editors do.
    fn word_start(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        match trimmed.rfind(char::is_whitespace) {
            Some(space) => space + trimmed[space..].chars().next().map_or(1, char::len_utf8),
            None => 0,
        }
    }

    fn word_end(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skipped = after.len() - after.trim_start().len();
        let rest = &after[skipped..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.cursor + skipped + word
    }
}

/// The character a key types, if it types one: no ctrl/alt/super held.
pub(crate) fn typed_char(key: &Key) -> Option<char> {
    let KeyCode::Char(c) = key.code else {
        return None;
    };
    let held = key.modifiers.without(Modifiers::SHIFT);
    if !held.is_empty() || c.is_control() {
        return None;
    }
    if key.modifiers.contains(Modifiers::SHIFT) {
        return c.to_uppercase().next();
    }
    Some(c)
}

fn single_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bindings() -> Keybindings {
        Keybindings::defaults()
    }

    fn typed(input: &mut LineInput, text: &str) {
        for c in text.chars() {
            assert!(input.handle_key(&Key::plain(KeyCode::Char(c)), &bindings()));
        }
    }

    #[test]
    fn typing_and_deleting() {
        let mut input = LineInput::new();
        typed(&mut input, "hello wörld");
        assert_eq!(input.text(), "hello wörld");
        input.handle_key(&Key::plain(KeyCode::Backspace), &bindings());
        assert_eq!(input.text(), "hello wörl");
        input.handle_key(&Key::ctrl('w'), &bindings());
        assert_eq!(input.text(), "hello ");
        input.handle_key(&Key::plain(KeyCode::Home), &bindings());
        input.handle_key(&Key::plain(KeyCode::Delete), &bindings());
        assert_eq!(input.text(), "ello ");
        input.handle_key(&Key::ctrl('k'), &bindings());
        assert_eq!(input.text(), "");
    }

    #[test]
    fn control_keys_are_not_typed() {
        let mut input = LineInput::new();
        assert!(!input.handle_key(&Key::ctrl('s'), &bindings()));
        assert!(!input.handle_key(&Key::plain(KeyCode::Enter), &bindings()));
        assert!(input.is_empty());
    }

    #[test]
    fn render_scrolls_to_keep_the_cursor_visible() {
        let mut input = LineInput::new();
        typed(&mut input, "abcdefghij");
        let plain = Style::new();
        assert_eq!(input.render(20, plain), "abcdefghij ");
        let shown = input.render(6, plain);
        assert!(shown.ends_with("j "), "{shown:?}");
        input.handle_key(&Key::plain(KeyCode::Home), &bindings());
        assert_eq!(input.render(6, plain), "abcdef");
    }

    #[test]
    fn a_masked_field_shows_dots_with_the_cursor_in_place() {
        let mut input = LineInput::with_text("sk-ab");
        input.handle_key(&Key::plain(KeyCode::Left), &bindings());
        let masked = input.masked();
        assert_eq!(masked.text(), "•••••");
        assert_eq!(masked.render(20, Style::new()), "•••••");
    }

    #[test]
    fn pasted_breaks_become_spaces() {
        let mut input = LineInput::with_text("a");
        input.insert("b\nc");
        assert_eq!(input.text(), "ab c");
    }
}
