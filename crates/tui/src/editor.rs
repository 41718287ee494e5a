//! The prompt editor: a multi-line text buffer with a cursor, word-wrapped between two
//! horizontal rules, with Emacs-style editing, prompt history, collapsed large pastes and
//! an autocomplete popup.
//!
//! The app drives it with keys ([`Editor::handle_key`]) and pastes
//! ([`Editor::handle_paste`]), and draws it with [`Component::render`]. Keys the editor
//! does not use come back as [`EditorOutcome::Ignored`]; Enter returns
//! [`EditorOutcome::Submit`] with the text, large pastes expanded, and empties the editor
//! (the app then calls [`Editor::add_to_history`]).
//!
//! Like the reference's custom editor, the app checks its own `app.*` bindings before
//! handing a key over, with two exceptions: `app.interrupt` (Escape) goes to the editor
//! while [`Editor::is_showing_completions`] (it closes the popup), and `app.exit`
//! (Ctrl+D) only applies to an empty editor (otherwise it deletes forward).

mod buffer;
mod completion;
mod editing;
mod layout;
mod paste;
mod render;
mod ring;
#[cfg(test)]
mod tests;

use std::sync::Arc;

pub use crate::renderer::CURSOR_MARKER;
pub use completion::{CompletionItem, CompletionProvider, Completions};

use crate::component::Component;
use crate::keybindings::{KeyBinding, Keybindings};
use crate::keys::{InputEvent, Key, KeyCode, KeyKind, Modifiers};
use crate::style::{Style, Theme};
use buffer::State;
use completion::Popup;
use paste::Pastes;
use ring::{KillRing, UndoStack};

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorOutcome {
    /// Enter: the text to send (pastes expanded, trimmed). The editor is now empty.
    Submit(String),
    /// The editor used the key.
    Handled,
    /// Not an editor key; the app may use it.
    Ignored,
}

/// What the previous edit was, for undo coalescing, kill accumulation and yank-pop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastAction {
    None,
    TypeWord,
    Kill,
    Yank,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// Prompt history keeps this many entries (the reference's limit).
const HISTORY_LIMIT: usize = 100;
/// Default popup height, as the reference's `autocompleteMaxVisible`.
const DEFAULT_POPUP_ROWS: usize = 5;

pub struct Editor {
    state: State,
    pastes: Pastes,
    /// Submitted prompts, most recent first.
    history: Vec<String>,
    /// Which history entry is shown while browsing.
    history_index: Option<usize>,
    /// What was in the editor when browsing started, restored when browsing back past the
    /// newest entry.
    draft: Option<State>,
    kill_ring: KillRing,
    undo: UndoStack,
    last_action: LastAction,
    jump: Option<Direction>,
    /// The column vertical motions aim for after passing a shorter line.
    preferred_column: Option<usize>,
    /// First row shown when the text is taller than the editor.
    scroll: usize,
    /// Wrapping width of the last render, which vertical motions follow.
    layout_width: usize,
    terminal_rows: u16,
    padding_x: usize,
    focused: bool,
    border: Style,
    theme: Theme,
    placeholder: Option<String>,
    provider: Option<Box<dyn CompletionProvider + Send>>,
    popup: Option<Popup>,
    popup_rows: usize,
    submit_enabled: bool,
    /// Bindings for input arriving through [`Component::handle_input`].
    keybindings: Arc<Keybindings>,
    /// Text submitted through [`Component::handle_input`], until taken.
    submitted: Option<String>,
    /// The last key applied a suggestion (see [`Editor::applied_completion`]).
    applied_completion: bool,
}

impl Editor {
    pub fn new(theme: &Theme) -> Self {
        Self {
            state: State::default(),
            pastes: Pastes::default(),
            history: Vec::new(),
            history_index: None,
            draft: None,
            kill_ring: KillRing::default(),
            undo: UndoStack::default(),
            last_action: LastAction::None,
            applied_completion: false,
            jump: None,
            preferred_column: None,
            scroll: 0,
            layout_width: 80,
            terminal_rows: 24,
            padding_x: 0,
            focused: true,
            border: theme.border_muted,
            theme: theme.clone(),
            placeholder: None,
            provider: None,
            popup: None,
            popup_rows: DEFAULT_POPUP_ROWS,
            submit_enabled: true,
            keybindings: Arc::new(Keybindings::defaults()),
            submitted: None,
        }
    }

    /// The style of the two rules (the app colours them by thinking level).
    pub fn set_border_style(&mut self, style: Style) {
        self.border = style;
    }

    /// The popup's styles come from the theme.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
    }

    /// The editor shows at most 30% of the terminal's rows of text (at least 5).
    pub fn set_terminal_rows(&mut self, rows: u16) {
        self.terminal_rows = rows;
    }

    /// Blank columns left and right of the text (`editorPaddingX`).
    pub fn set_padding_x(&mut self, padding: usize) {
        self.padding_x = padding;
    }

    /// Only a focused editor marks where the terminal cursor goes.
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// Dim text shown while the editor is empty.
    pub fn set_placeholder(&mut self, placeholder: Option<String>) {
        self.placeholder = placeholder;
    }

    /// Rows the autocomplete popup shows at most (3-20, like the reference's setting).
    pub fn set_autocomplete_max_visible(&mut self, rows: usize) {
        self.popup_rows = rows.clamp(3, 20);
    }

    pub fn set_completion_provider(&mut self, provider: Box<dyn CompletionProvider + Send>) {
        self.popup = None;
        self.provider = Some(provider);
    }

    /// With submit disabled, Enter does nothing (while a command that must not be
    /// interrupted runs).
    pub fn set_submit_enabled(&mut self, enabled: bool) {
        self.submit_enabled = enabled;
    }

    /// Bindings used for input arriving through [`Component::handle_input`].
    pub fn set_keybindings(&mut self, keybindings: Arc<Keybindings>) {
        self.keybindings = keybindings;
    }

    /// The text as shown, paste markers included.
    pub fn text(&self) -> String {
        self.state.text()
    }

    /// The text with paste markers expanded (for the external editor).
    pub fn expanded_text(&self) -> String {
        self.pastes.expand(&self.state.text())
    }

    /// What Enter would submit: the expanded text, trimmed.
    pub fn text_for_submit(&self) -> String {
        self.expanded_text().trim().to_owned()
    }

    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    pub fn lines(&self) -> &[String] {
        &self.state.lines
    }

    /// The cursor as line index and byte offset in that line.
    pub fn cursor(&self) -> (usize, usize) {
        (self.state.line, self.state.col)
    }

    /// Replaces the text (an undoable change); the cursor goes to the end.
    pub fn set_text(&mut self, text: &str) {
        self.popup = None;
        self.last_action = LastAction::None;
        self.leave_history();
        let normalized = normalize(text);
        if self.state.text() != normalized {
            self.undo.push(&self.state);
        }
        self.replace_state(State::from_text(&normalized));
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Inserts `text` at the cursor as one undoable change.
    pub fn insert_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.popup = None;
        self.undo.push(&self.state);
        self.last_action = LastAction::None;
        self.leave_history();
        self.state.insert(&normalize(text));
        self.preferred_column = None;
    }

    /// Remembers a submitted prompt for Up/Down (trimmed; consecutive repeats once).
    pub fn add_to_history(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() || self.history.first().is_some_and(|h| h == text) {
            return;
        }
        self.history.insert(0, text.to_owned());
        self.history.truncate(HISTORY_LIMIT);
    }

    /// True while the autocomplete popup is open (Escape then closes it rather than
    /// interrupting).
    pub fn is_showing_completions(&self) -> bool {
        self.popup.is_some()
    }

    /// Opens the popup with suggestions that came from elsewhere (an extension's
    /// autocomplete provider, answering later), unless they are empty or their prefix is
    /// not what is before the cursor any more.
    pub fn show_completions(&mut self, completions: Completions) {
        if completions.items.is_empty()
            || !self.state.before_cursor().ends_with(&completions.prefix)
        {
            return;
        }
        self.popup = Some(Popup::new(completions, false, self.popup_rows, &self.theme));
    }

    pub fn cancel_completions(&mut self) {
        self.popup = None;
    }

    /// Text submitted through [`Component::handle_input`].
    pub fn take_submitted(&mut self) -> Option<String> {
        self.submitted.take()
    }

    /// Handles a key with `bindings` deciding what it means.
    /// Whether the last key handled applied a suggestion from the popup. The text changed,
    /// but nothing was typed: as in the reference, completion is not asked again until the
    /// next edit (the applied value would otherwise match itself and reopen the popup).
    pub fn applied_completion(&self) -> bool {
        self.applied_completion
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> EditorOutcome {
        use EditorOutcome::{Handled, Ignored};
        if key.kind == KeyKind::Release {
            return Ignored;
        }
        self.applied_completion = false;
        let is = |action: &str| bindings.matches(action, key);
        if let Some(direction) = self.jump.take() {
            if is("tui.editor.jumpForward") || is("tui.editor.jumpBackward") {
                return Handled;
            }
            if let Some(c) = typed_char(key) {
                self.jump_to_char(c, direction);
                return Handled;
            }
            // Any other key cancels the jump and does what it normally does.
        }
        // Ctrl+C belongs to the app (clear, exit).
        if is("tui.input.copy") {
            return Ignored;
        }
        if is("tui.editor.undo") {
            self.undo();
            return Handled;
        }
        if let Some(popup) = self.popup.as_mut() {
            if is("tui.select.cancel") {
                self.popup = None;
                return Handled;
            }
            if is("tui.select.up") {
                popup.list.select_prev();
                return Handled;
            }
            if is("tui.select.down") {
                popup.list.select_next();
                return Handled;
            }
            if is("tui.input.tab") {
                self.accept_completion();
                return Handled;
            }
            // Enter accepts; on a slash command it also submits, as in the reference.
            if is("tui.select.confirm") && !self.accept_completion() {
                return Handled;
            }
        }
        if is("tui.input.tab") {
            self.tab_completion();
            return Handled;
        }
        let action: Option<fn(&mut Self)> = if is("tui.editor.deleteToLineEnd") {
            Some(Self::delete_to_line_end)
        } else if is("tui.editor.deleteToLineStart") {
            Some(Self::delete_to_line_start)
        } else if is("tui.editor.deleteWordBackward") {
            Some(Self::delete_word_backward)
        } else if is("tui.editor.deleteWordForward") {
            Some(Self::delete_word_forward)
        } else if is("tui.editor.deleteCharBackward") || is_shifted(key, KeyCode::Backspace) {
            Some(Self::backspace)
        } else if is("tui.editor.deleteCharForward") || is_shifted(key, KeyCode::Delete) {
            Some(Self::delete_forward)
        } else if is("tui.editor.yank") {
            Some(Self::yank)
        } else if is("tui.editor.yankPop") {
            Some(Self::yank_pop)
        } else if is("tui.editor.cursorLineStart") {
            Some(Self::move_to_line_start)
        } else if is("tui.editor.cursorLineEnd") {
            Some(Self::move_to_line_end)
        } else if is("tui.editor.cursorWordLeft") {
            Some(Self::move_word_left)
        } else if is("tui.editor.cursorWordRight") {
            Some(Self::move_word_right)
        } else {
            None
        };
        if let Some(action) = action {
            // Deleting keeps the popup in step with the text; other edits and motions
            // close it, as its prefix would no longer be before the cursor.
            let deleting = is("tui.editor.deleteCharBackward")
                || is("tui.editor.deleteCharForward")
                || is_shifted(key, KeyCode::Backspace)
                || is_shifted(key, KeyCode::Delete);
            if !deleting {
                self.popup = None;
            }
            action(self);
            return Handled;
        }
        // Terminals without a distinct Shift+Enter send these for it.
        if is("tui.input.newLine") || matches!(key.raw.as_str(), "\n" | "\x1b\r" | "\x1b[13;2~") {
            if self.backslash_enter_submits(key, bindings) {
                self.backspace();
                return self.submit();
            }
            self.new_line();
            return Handled;
        }
        if is("tui.input.submit") {
            if !self.submit_enabled {
                return Handled;
            }
            // A trailing backslash asks for a newline instead (for terminals where
            // Shift+Enter cannot be told from Enter).
            if self.state.before_cursor().ends_with('\\') {
                self.backspace();
                self.new_line();
                return Handled;
            }
            return self.submit();
        }
        let movement: Option<fn(&mut Self)> = if is("tui.editor.cursorUp") {
            Some(Self::up)
        } else if is("tui.editor.cursorDown") {
            Some(Self::down)
        } else if is("tui.editor.historyPrevious") {
            Some(|e: &mut Self| e.navigate_history(true))
        } else if is("tui.editor.historyNext") {
            Some(|e: &mut Self| e.navigate_history(false))
        } else if is("tui.editor.cursorRight") {
            Some(Self::move_right)
        } else if is("tui.editor.cursorLeft") {
            Some(Self::move_left)
        } else if is("tui.editor.pageUp") {
            Some(|e: &mut Self| e.page(false))
        } else if is("tui.editor.pageDown") {
            Some(|e: &mut Self| e.page(true))
        } else if is("tui.editor.jumpForward") {
            Some(|e: &mut Self| e.jump = Some(Direction::Forward))
        } else if is("tui.editor.jumpBackward") {
            Some(|e: &mut Self| e.jump = Some(Direction::Backward))
        } else {
            None
        };
        if let Some(movement) = movement {
            self.popup = None;
            movement(self);
            return Handled;
        }
        match typed_char(key) {
            Some(c) => {
                self.insert_char(c);
                Handled
            }
            None => Ignored,
        }
    }

    /// When submit is bound to Shift+Enter (and newline to Enter), a trailing backslash
    /// before Enter submits, mirroring the usual backslash-newline.
    fn backslash_enter_submits(&self, key: &Key, bindings: &Keybindings) -> bool {
        let shift_enter = KeyBinding::new(KeyCode::Enter, Modifiers::SHIFT);
        self.submit_enabled
            && KeyBinding::new(KeyCode::Enter, Modifiers::NONE).matches(key)
            && bindings.keys_for("tui.input.submit").contains(&shift_enter)
            && self.state.before_cursor().ends_with('\\')
    }

    fn submit(&mut self) -> EditorOutcome {
        EditorOutcome::Submit(self.take_for_submit())
    }

    /// Takes the text as Enter would (expanded, trimmed) and empties the editor, paste
    /// store and undo history included (for the follow-up key, which sends without Enter).
    pub fn take_for_submit(&mut self) -> String {
        self.popup = None;
        let text = self.text_for_submit();
        self.state = State::default();
        self.pastes.clear();
        self.history_index = None;
        self.draft = None;
        self.scroll = 0;
        self.undo.clear();
        self.last_action = LastAction::None;
        self.preferred_column = None;
        text
    }

    fn replace_state(&mut self, state: State) {
        self.state = state;
        self.preferred_column = None;
        self.scroll = 0;
    }

    /// Any edit ends history browsing; the entry shown becomes the text being edited.
    fn leave_history(&mut self) {
        self.history_index = None;
        self.draft = None;
    }
}

/// The character a key types, if it types one.
fn typed_char(key: &Key) -> Option<char> {
    match key.code {
        KeyCode::Char(c) if Modifiers::SHIFT.contains(key.modifiers) && !c.is_control() => Some(c),
        _ => None,
    }
}

/// Shift+Backspace and Shift+Delete act like the plain keys.
fn is_shifted(key: &Key, code: KeyCode) -> bool {
    key.code == code && key.modifiers == Modifiers::SHIFT
}

/// Line endings to `\n`, tabs to four spaces (how the editor stores text).
fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ")
}

impl Component for Editor {
    fn render(&mut self, width: u16) -> Vec<String> {
        self.render_lines(usize::from(width))
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        match event {
            InputEvent::Key(key) => {
                let bindings = Arc::clone(&self.keybindings);
                match self.handle_key(key, &bindings) {
                    EditorOutcome::Submit(text) => {
                        self.submitted = Some(text);
                        true
                    }
                    EditorOutcome::Handled => true,
                    EditorOutcome::Ignored => false,
                }
            }
            InputEvent::Paste(text) => {
                self.handle_paste(text);
                true
            }
            InputEvent::Other(_) => false,
        }
    }
}
