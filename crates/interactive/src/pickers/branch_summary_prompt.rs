//! The question `/tree` asks before leaving a branch (`spec/compaction.md` §8): go without
//! a summary, summarise it, or summarise it with your own instructions.

use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

use super::PickerOutcome;
use super::common::Hints;
use super::common::border;
use super::common::cursor_style;
use super::common::fit;
use super::common::is_release;
use super::common::strong;
use super::common::wrapped;
use super::line_input::LineInput;
use super::line_input::typed_char;

/// How to leave the branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchSummaryChoice {
    NoSummary,
    Summarize,
    /// With these instructions added as the summary's focus.
    Custom(String),
}

const OPTIONS: [&str; 3] = ["No summary", "Summarize", "Summarize with custom prompt"];

pub struct BranchSummaryPrompt {
    theme: Theme,
    bindings: Keybindings,
    /// The entry the navigation goes to.
    pub entry_id: String,
    selected: usize,
    /// Typing the custom prompt (after picking the third option).
    custom: Option<LineInput>,
}

impl BranchSummaryPrompt {
    pub fn new(entry_id: String, theme: Theme, bindings: &Keybindings) -> Self {
        Self {
            theme,
            bindings: bindings.clone(),
            entry_id,
            selected: 0,
            custom: None,
        }
    }

    pub fn handle_paste(&mut self, text: &str) {
        if let Some(input) = &mut self.custom {
            input.insert(text);
        }
    }

    pub fn handle_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<BranchSummaryChoice> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        if let Some(input) = &mut self.custom {
            if bindings.matches("tui.select.confirm", key) {
                let text = input.text().trim().to_owned();
                return PickerOutcome::Done(if text.is_empty() {
                    BranchSummaryChoice::Summarize
                } else {
                    BranchSummaryChoice::Custom(text)
                });
            }
            if bindings.matches("tui.select.cancel", key) {
                // Back to the three options.
                self.custom = None;
                return PickerOutcome::Pending;
            }
            if !input.handle_key(key, bindings)
                && let Some(c) = typed_char(key)
            {
                input.insert(&c.to_string());
            }
            return PickerOutcome::Pending;
        }
        let typed = typed_char(key);
        let len = OPTIONS.len();
        if bindings.matches("tui.select.up", key) || typed == Some('k') {
            self.selected = (self.selected + len - 1) % len;
        } else if bindings.matches("tui.select.down", key) || typed == Some('j') {
            self.selected = (self.selected + 1) % len;
        } else if bindings.matches("tui.select.confirm", key) {
            return match self.selected {
                0 => PickerOutcome::Done(BranchSummaryChoice::NoSummary),
                1 => PickerOutcome::Done(BranchSummaryChoice::Summarize),
                _ => {
                    self.custom = Some(LineInput::new());
                    PickerOutcome::Pending
                }
            };
        } else if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        }
        PickerOutcome::Pending
    }
}

impl Component for BranchSummaryPrompt {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![border(theme, width)];
        lines.push(fit(
            &theme
                .tool_title
                .paint("Summarize the branch you are leaving?"),
            width,
        ));
        lines.extend(wrapped(
            &theme
                .muted
                .paint("A summary carries what was done there into the conversation you go to."),
            width,
        ));
        lines.push(String::new());
        if let Some(input) = &self.custom {
            lines.push(fit("Focus for the summary (enter to start):", width));
            let room = usize::from(width).saturating_sub(2).max(1);
            lines.push(format!(
                "{}{}",
                theme.accent.paint("> "),
                input.render(room, cursor_style(theme))
            ));
            lines.push(border(theme, width));
            lines.push(
                Hints::new(theme, &self.bindings)
                    .action("tui.select.confirm", "summarize")
                    .action("tui.select.cancel", "back")
                    .line(width),
            );
            return lines;
        }
        for (index, option) in OPTIONS.iter().enumerate() {
            let line = if index == self.selected {
                format!(
                    "{}{}",
                    theme.accent.paint("→ "),
                    strong(theme, theme.accent).paint(option)
                )
            } else {
                format!("  {option}")
            };
            lines.push(fit(&line, width));
        }
        lines.push(border(theme, width));
        lines.push(
            Hints::new(theme, &self.bindings)
                .raw("↑/↓ j/k", "move")
                .action("tui.select.confirm", "select")
                .action("tui.select.cancel", "stay on this branch")
                .line(width),
        );
        lines
    }
}

#[cfg(test)]
mod tests {
    use knightcode_tui::KeyCode;
    use knightcode_tui::Modifiers;

    use super::*;

    fn key(code: KeyCode) -> Key {
        Key::new(code, Modifiers::default())
    }

    #[test]
    fn the_third_option_asks_for_a_focus() {
        let bindings = Keybindings::default();
        let mut prompt = BranchSummaryPrompt::new("e1".into(), Theme::plain(), &bindings);
        assert!(prompt.render(60).join("\n").contains("→ No summary"));
        prompt.handle_key(&key(KeyCode::Down), &bindings);
        prompt.handle_key(&key(KeyCode::Down), &bindings);
        assert!(matches!(
            prompt.handle_key(&key(KeyCode::Enter), &bindings),
            PickerOutcome::Pending
        ));
        assert!(
            prompt
                .render(60)
                .join("\n")
                .contains("Focus for the summary")
        );
        prompt.handle_paste("the parser");
        assert_eq!(
            prompt.handle_key(&key(KeyCode::Enter), &bindings),
            PickerOutcome::Done(BranchSummaryChoice::Custom("the parser".into()))
        );
    }

    #[test]
    fn escape_stays_on_the_branch() {
        let bindings = Keybindings::default();
        let mut prompt = BranchSummaryPrompt::new("e1".into(), Theme::plain(), &bindings);
        assert_eq!(
            prompt.handle_key(&key(KeyCode::Escape), &bindings),
            PickerOutcome::Cancel
        );
    }
}
