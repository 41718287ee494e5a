//! `/fork`: pick one of the current branch's user messages; the app copies the branch up
//! to that point into a new session. Oldest first, the cursor on the newest. `/undo` uses
//! the same list with its own wording and a line per message saying when it was sent and
//! what an undo to it would restore.

use knightcode_protocol::AgentMessage;
use knightcode_protocol::SessionEntry;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::width::truncate_to_width;

use super::PickerOutcome;
use super::common::DEFAULT_MAX_ROWS;
use super::common::Hints;
use super::common::border;
use super::common::fit;
use super::common::is_release;
use super::common::one_line;
use super::common::push_window;
use super::common::strong;
use super::common::wrap_step;
use super::common::wrapped;

/// One user message that can be forked from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkCandidate {
    pub entry_id: String,
    pub text: String,
}

impl ForkCandidate {
    /// The user messages of a branch (root first), e.g. `SessionTree::branch(leaf)`.
    pub fn from_branch<'a>(branch: impl IntoIterator<Item = &'a SessionEntry>) -> Vec<Self> {
        branch
            .into_iter()
            .filter_map(|entry| match entry.message() {
                Some(AgentMessage::User(user)) => Some(Self {
                    entry_id: entry.id().to_owned(),
                    text: user.content.text(),
                }),
                _ => None,
            })
            .collect()
    }
}

/// Each message takes its text line, a "Message n of m" line and a blank line.
const LINES_PER_ITEM: usize = 3;

pub struct ForkPicker {
    theme: Theme,
    bindings: Keybindings,
    messages: Vec<ForkCandidate>,
    selected: usize,
    max_rows: usize,
    wording: Wording,
    /// The second line of each message (`/undo`); else "Message n of m".
    details: Option<Vec<String>>,
}

/// What the picker is for, in its words.
struct Wording {
    title: &'static str,
    description: &'static str,
    confirm: &'static str,
}

const FORK_WORDING: Wording = Wording {
    title: "Fork from Message",
    description: "Select a user message to copy the active path up to that point into a new session",
    confirm: "fork",
};

const UNDO_WORDING: Wording = Wording {
    title: "Undo to Message",
    description: "Select a user message to go back to before it; its text returns to the editor and the later turns stay in /tree",
    confirm: "undo",
};

impl ForkPicker {
    /// `messages` oldest first. An empty list renders "No user messages found" and any
    /// key cancels; the app had better say so instead of opening the picker.
    pub fn new(messages: Vec<ForkCandidate>, theme: Theme, bindings: &Keybindings) -> Self {
        let selected = messages.len().saturating_sub(1);
        Self {
            theme,
            bindings: bindings.clone(),
            messages,
            selected,
            max_rows: DEFAULT_MAX_ROWS * LINES_PER_ITEM,
            wording: FORK_WORDING,
            details: None,
        }
    }

    /// `/undo`'s list: `details[i]` is the second line of `messages[i]` (time, files).
    pub fn undo(
        messages: Vec<ForkCandidate>,
        details: Vec<String>,
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        Self {
            wording: UNDO_WORDING,
            details: Some(details),
            ..Self::new(messages, theme, bindings)
        }
    }

    /// Lines the list may use (three per message).
    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(LINES_PER_ITEM);
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn selected_id(&self) -> Option<&str> {
        self.messages
            .get(self.selected)
            .map(|m| m.entry_id.as_str())
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> PickerOutcome<String> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        let len = self.messages.len();
        if len == 0 {
            return PickerOutcome::Cancel;
        }
        if bindings.matches("tui.select.up", key) {
            self.selected = wrap_step(self.selected, len, false);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = wrap_step(self.selected, len, true);
        } else if bindings.matches("tui.select.pageUp", key) {
            self.selected = self.selected.saturating_sub(self.visible_items());
        } else if bindings.matches("tui.select.pageDown", key) {
            self.selected = (self.selected + self.visible_items()).min(len - 1);
        } else if bindings.matches("tui.select.confirm", key) {
            return PickerOutcome::Done(self.messages[self.selected].entry_id.clone());
        } else if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        }
        PickerOutcome::Pending
    }

    fn visible_items(&self) -> usize {
        (self.max_rows / LINES_PER_ITEM).max(1)
    }
}

impl Component for ForkPicker {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![
            border(theme, width),
            fit(&theme.tool_title.paint(self.wording.title), width),
        ];
        lines.extend(wrapped(&theme.muted.paint(self.wording.description), width));
        lines.push(String::new());
        let len = self.messages.len();
        if len == 0 {
            lines.push(theme.muted.paint("  No user messages found"));
        }
        push_window(
            &mut lines,
            theme,
            (self.selected, len, self.visible_items()),
            width,
            |index, lines| {
                let text = truncate_to_width(
                    &one_line(&self.messages[index].text),
                    usize::from(width).saturating_sub(2),
                    "…",
                );
                let line = if index == self.selected {
                    format!(
                        "{}{}",
                        theme.accent.paint("› "),
                        strong(theme, theme.text).paint(&text)
                    )
                } else {
                    format!("  {text}")
                };
                lines.push(fit(&line, width));
                let detail = match self.details.as_ref().and_then(|d| d.get(index)) {
                    Some(detail) => format!("  {detail}"),
                    None => format!("  Message {} of {len}", index + 1),
                };
                lines.push(fit(&theme.muted.paint(&detail), width));
                lines.push(String::new());
            },
        );
        lines.push(border(theme, width));
        lines.push(
            Hints::new(theme, &self.bindings)
                .raw("↑/↓", "move")
                .action("tui.select.confirm", self.wording.confirm)
                .action("tui.select.cancel", "cancel")
                .line(width),
        );
        lines
    }
}
