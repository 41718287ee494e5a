//! A question with a few answers in the editor's place (a session another process owns:
//! continue it in a fork, or keep the current session).

use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

use super::PickerOutcome;
use super::common::Hints;
use super::common::border;
use super::common::fit;
use super::common::is_release;
use super::common::strong;
use super::common::wrap_step;
use super::common::wrapped;

pub struct ConfirmPrompt {
    theme: Theme,
    bindings: Keybindings,
    title: String,
    message: String,
    answers: Vec<String>,
    selected: usize,
}

impl ConfirmPrompt {
    /// The first answer is selected; Enter gives its index, Escape cancels.
    pub fn new(
        title: impl Into<String>,
        message: impl Into<String>,
        answers: Vec<String>,
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        Self {
            theme,
            bindings: bindings.clone(),
            title: title.into(),
            message: message.into(),
            answers,
            selected: 0,
        }
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> PickerOutcome<usize> {
        if is_release(key) || self.answers.is_empty() {
            return PickerOutcome::Pending;
        }
        let len = self.answers.len();
        if bindings.matches("tui.select.up", key) {
            self.selected = wrap_step(self.selected, len, false);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = wrap_step(self.selected, len, true);
        } else if bindings.matches("tui.select.confirm", key) {
            return PickerOutcome::Done(self.selected);
        } else if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        }
        PickerOutcome::Pending
    }
}

impl Component for ConfirmPrompt {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![
            border(theme, width),
            fit(&theme.tool_title.paint(&self.title), width),
        ];
        for line in wrapped(&self.message, width) {
            lines.push(theme.muted.paint(&line));
        }
        lines.push(String::new());
        for (index, answer) in self.answers.iter().enumerate() {
            let line = if index == self.selected {
                strong(theme, theme.selected).paint(&format!("→ {answer}"))
            } else {
                format!("  {answer}")
            };
            lines.push(fit(&line, width));
        }
        lines.push(border(theme, width));
        lines.push(
            Hints::new(theme, &self.bindings)
                .raw("↑/↓", "move")
                .action("tui.select.confirm", "choose")
                .action("tui.select.cancel", "cancel")
                .line(width),
        );
        lines
    }
}
