//! The terminal's own question picker (a plan's review, `ask_user`): numbered choices with
//! their descriptions, a row that takes a typed answer, and a note that Tab adds to a
//! choice. Enter answers, a digit picks a choice at once, Escape dismisses.

use knightcode_runtime::dialogs::Question;
use knightcode_runtime::dialogs::QuestionAnswer;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::KeyCode;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

use super::PickerOutcome;
use super::common::Hints;
use super::common::border;
use super::common::cursor_style;
use super::common::fit;
use super::common::is_release;
use super::common::strong;
use super::common::wrap_step;
use super::common::wrapped;
use super::line_input::LineInput;

/// Columns before a choice's label (`→ 1. `), where descriptions and notes line up.
const INDENT: usize = 5;

pub struct QuestionPicker {
    theme: Theme,
    bindings: Keybindings,
    question: Question,
    /// A choice's index, or `choices.len()` for the typed-answer row.
    selected: usize,
    typed: LineInput,
    /// The note being typed for the selected choice (Tab opened it).
    note: Option<LineInput>,
}

impl QuestionPicker {
    pub fn new(question: Question, theme: Theme, bindings: &Keybindings) -> Self {
        Self {
            theme,
            bindings: bindings.clone(),
            question,
            selected: 0,
            typed: LineInput::new(),
            note: None,
        }
    }

    fn rows(&self) -> usize {
        self.question.choices.len() + usize::from(self.question.typed_answer.is_some())
    }

    fn on_typed_row(&self) -> bool {
        self.selected >= self.question.choices.len()
    }

    pub fn handle_paste(&mut self, text: &str) {
        if let Some(note) = &mut self.note {
            note.insert(text);
        } else if self.on_typed_row() {
            self.typed.insert(text);
        }
    }

    pub fn handle_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<QuestionAnswer> {
        if is_release(key) || self.rows() == 0 {
            return PickerOutcome::Pending;
        }
        if let Some(note) = &mut self.note {
            if bindings.matches("tui.select.confirm", key) {
                let note = note.text().trim().to_owned();
                return PickerOutcome::Done(QuestionAnswer::Choice {
                    index: self.selected,
                    note: (!note.is_empty()).then_some(note),
                });
            }
            // Escape or Tab again puts the note away; the choice stays highlighted.
            if bindings.matches("tui.select.cancel", key) || bindings.matches("tui.input.tab", key)
            {
                self.note = None;
            } else {
                note.handle_key(key, bindings);
            }
            return PickerOutcome::Pending;
        }
        if bindings.matches("tui.select.up", key) {
            self.selected = wrap_step(self.selected, self.rows(), false);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = wrap_step(self.selected, self.rows(), true);
        } else if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        } else if self.on_typed_row() {
            if bindings.matches("tui.select.confirm", key) {
                let typed = self.typed.text().trim();
                if !typed.is_empty() {
                    return PickerOutcome::Done(QuestionAnswer::Typed(typed.to_owned()));
                }
            } else {
                self.typed.handle_key(key, bindings);
            }
        } else if bindings.matches("tui.select.confirm", key) {
            return PickerOutcome::Done(QuestionAnswer::Choice {
                index: self.selected,
                note: None,
            });
        } else if bindings.matches("tui.input.tab", key) {
            if self.question.choices[self.selected].takes_note {
                self.note = Some(LineInput::new());
            }
        } else if let Some(index) = digit(key).filter(|i| *i < self.question.choices.len()) {
            return PickerOutcome::Done(QuestionAnswer::Choice { index, note: None });
        }
        PickerOutcome::Pending
    }

    /// `→ 1. label` (or two spaces for rows not selected), fitted to the width.
    fn row(&self, index: usize, label: &str, width: u16) -> String {
        let theme = &self.theme;
        let number = format!("{}. ", index + 1);
        if index == self.selected {
            fit(
                &strong(theme, theme.selected).paint(&format!("→ {number}{label}")),
                width,
            )
        } else {
            fit(&format!("  {}{label}", theme.muted.paint(&number)), width)
        }
    }

    fn field(&self, field: &LineInput, placeholder: &str, room: usize) -> String {
        let theme = &self.theme;
        if field.is_empty() {
            format!(
                "{}{}",
                cursor_style(theme).paint(" "),
                theme.dim.paint(placeholder)
            )
        } else {
            field.render(room, cursor_style(theme))
        }
    }

    fn hints(&self, width: u16) -> String {
        let hints = Hints::new(&self.theme, &self.bindings);
        if self.note.is_some() {
            return hints
                .action("tui.select.confirm", "choose with the note")
                .action("tui.select.cancel", "drop the note")
                .line(width);
        }
        let hints = hints.raw("↑/↓", "move");
        let hints = if self.on_typed_row() {
            hints
                .raw("type", "your answer")
                .action("tui.select.confirm", "send")
        } else {
            let hints = hints.action("tui.select.confirm", "choose");
            match self.question.choices[self.selected].takes_note {
                true => hints.action("tui.input.tab", "add a note"),
                false => hints,
            }
        };
        hints.action("tui.select.cancel", "dismiss").line(width)
    }
}

/// `1`…`9` typed without modifiers, as a choice's index.
fn digit(key: &Key) -> Option<usize> {
    match key.code {
        KeyCode::Char(c @ '1'..='9') if key.modifiers.is_empty() => Some(c as usize - '1' as usize),
        _ => None,
    }
}

impl Component for QuestionPicker {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let inner = width.saturating_sub(INDENT as u16).max(10);
        let room = usize::from(width).saturating_sub(INDENT + 8).max(4);
        let mut lines = vec![border(theme, width)];
        for line in wrapped(&theme.tool_title.paint(&self.question.title), width) {
            lines.push(line);
        }
        lines.push(String::new());
        let pad = " ".repeat(INDENT);
        for (index, choice) in self.question.choices.iter().enumerate() {
            lines.push(self.row(index, &choice.label, width));
            if let Some(description) = &choice.description {
                for line in wrapped(description, inner) {
                    lines.push(format!("{pad}{}", theme.muted.paint(&line)));
                }
            }
            if index == self.selected
                && let Some(note) = &self.note
            {
                let shown = self.field(note, "a note to send with it", room);
                lines.push(fit(
                    &format!("{pad}{} {shown}", theme.accent.paint("note:")),
                    width,
                ));
            }
        }
        if let Some(label) = &self.question.typed_answer {
            let index = self.question.choices.len();
            if self.on_typed_row() {
                let shown = self.field(&self.typed, "type here", room);
                let head =
                    strong(theme, theme.selected).paint(&format!("→ {}. {label}:", index + 1));
                lines.push(fit(&format!("{head} {shown}"), width));
            } else {
                lines.push(self.row(index, label, width));
            }
        }
        lines.push(String::new());
        lines.push(border(theme, width));
        lines.push(self.hints(width));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use knightcode_runtime::dialogs::QuestionChoice;
    use knightcode_tui::Modifiers;

    fn review() -> QuestionPicker {
        let question = Question {
            title: "Plan revision 2".to_owned(),
            choices: vec![
                QuestionChoice::new("Implement").with_note(),
                QuestionChoice::new("Exit planning").described(Some("Keeps the draft".into())),
            ],
            typed_answer: Some("Revise the plan".to_owned()),
        };
        QuestionPicker::new(question, Theme::plain(), &Keybindings::default())
    }

    fn press(picker: &mut QuestionPicker, code: KeyCode) -> PickerOutcome<QuestionAnswer> {
        let key = Key::new(code, Modifiers::NONE);
        picker.handle_key(&key, &Keybindings::default())
    }

    fn type_text(picker: &mut QuestionPicker, text: &str) {
        for c in text.chars() {
            assert_eq!(press(picker, KeyCode::Char(c)), PickerOutcome::Pending);
        }
    }

    #[test]
    fn tab_adds_a_note_that_goes_with_the_choice() {
        let mut picker = review();
        press(&mut picker, KeyCode::Tab);
        type_text(&mut picker, "add tests");
        assert!(
            picker
                .render(60)
                .iter()
                .any(|l| l.contains("note: add tests"))
        );
        assert_eq!(
            press(&mut picker, KeyCode::Enter),
            PickerOutcome::Done(QuestionAnswer::Choice {
                index: 0,
                note: Some("add tests".to_owned())
            })
        );
    }

    #[test]
    fn the_typed_row_takes_text_and_digits_pick_elsewhere() {
        let mut picker = review();
        press(&mut picker, KeyCode::Up);
        type_text(&mut picker, "use 2 files");
        assert_eq!(
            press(&mut picker, KeyCode::Enter),
            PickerOutcome::Done(QuestionAnswer::Typed("use 2 files".to_owned()))
        );
        let mut other = review();
        assert_eq!(
            press(&mut other, KeyCode::Char('2')),
            PickerOutcome::Done(QuestionAnswer::Choice {
                index: 1,
                note: None
            })
        );
    }

    #[test]
    fn escape_drops_a_note_first_then_dismisses() {
        let mut picker = review();
        press(&mut picker, KeyCode::Tab);
        assert_eq!(press(&mut picker, KeyCode::Escape), PickerOutcome::Pending);
        assert_eq!(press(&mut picker, KeyCode::Escape), PickerOutcome::Cancel);
    }
}
