//! An extension's dialog in the editor's place (`ctx.ui.select`, `confirm`, `input`,
//! `editor`): a list of options, yes/no, a one-line field or a multi-line editor. The
//! answer is what the subprotocol carries back (`UiReply`); Escape cancels.

use knightcode_protocol::rpc::UiReply;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Theme;
use knightcode_tui::editor::Editor;
use knightcode_tui::editor::EditorOutcome;
use knightcode_tui::keybindings::Keybindings;

use super::ConfirmPrompt;
use super::PickerOutcome;
use super::common::Hints;
use super::common::border;
use super::common::cursor_style;
use super::common::fit;
use super::common::is_release;
use super::line_input::LineInput;

enum Body {
    /// `select` (the options) or `confirm` (Yes / No).
    Choice {
        prompt: ConfirmPrompt,
        options: Vec<String>,
        confirm: bool,
    },
    Text {
        title: String,
        placeholder: Option<String>,
        field: LineInput,
    },
    Editor {
        title: String,
        editor: Box<Editor>,
    },
}

pub struct ExtensionDialog {
    theme: Theme,
    bindings: Keybindings,
    body: Body,
}

impl ExtensionDialog {
    pub fn select(title: &str, options: Vec<String>, theme: Theme, bindings: &Keybindings) -> Self {
        let prompt = ConfirmPrompt::new(title, "", options.clone(), theme.clone(), bindings);
        Self::new(
            theme,
            bindings,
            Body::Choice {
                prompt,
                options,
                confirm: false,
            },
        )
    }

    pub fn confirm(title: &str, message: &str, theme: Theme, bindings: &Keybindings) -> Self {
        let options = vec!["Yes".to_owned(), "No".to_owned()];
        let prompt = ConfirmPrompt::new(title, message, options.clone(), theme.clone(), bindings);
        Self::new(
            theme,
            bindings,
            Body::Choice {
                prompt,
                options,
                confirm: true,
            },
        )
    }

    pub fn input(
        title: &str,
        placeholder: Option<String>,
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        let body = Body::Text {
            title: title.to_owned(),
            placeholder,
            field: LineInput::new(),
        };
        Self::new(theme, bindings, body)
    }

    pub fn editor(title: &str, prefill: &str, theme: Theme, bindings: &Keybindings) -> Self {
        let mut editor = Editor::new(&theme);
        editor.set_text(prefill);
        let body = Body::Editor {
            title: title.to_owned(),
            editor: Box::new(editor),
        };
        Self::new(theme, bindings, body)
    }

    fn new(theme: Theme, bindings: &Keybindings, body: Body) -> Self {
        Self {
            theme,
            bindings: bindings.clone(),
            body,
        }
    }

    pub fn handle_paste(&mut self, text: &str) {
        match &mut self.body {
            Body::Text { field, .. } => field.insert(text),
            Body::Editor { editor, .. } => editor.handle_paste(text),
            Body::Choice { .. } => {}
        }
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> PickerOutcome<UiReply> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        match &mut self.body {
            Body::Choice {
                prompt,
                options,
                confirm,
            } => match prompt.handle_key(key, bindings) {
                PickerOutcome::Done(index) if *confirm => {
                    PickerOutcome::Done(UiReply::Confirmed(index == 0))
                }
                PickerOutcome::Done(index) => match options.get(index) {
                    Some(option) => PickerOutcome::Done(UiReply::Value(option.clone())),
                    None => PickerOutcome::Cancel,
                },
                PickerOutcome::Cancel => PickerOutcome::Cancel,
                PickerOutcome::Pending => PickerOutcome::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            Body::Text { field, .. } => {
                if bindings.matches("tui.select.cancel", key) {
                    PickerOutcome::Cancel
                } else if bindings.matches("tui.input.submit", key) {
                    PickerOutcome::Done(UiReply::Value(field.text().to_owned()))
                } else {
                    field.handle_key(key, bindings);
                    PickerOutcome::Pending
                }
            }
            Body::Editor { editor, .. } => {
                if bindings.matches("tui.select.cancel", key) && !editor.is_showing_completions() {
                    return PickerOutcome::Cancel;
                }
                match editor.handle_key(key, bindings) {
                    EditorOutcome::Submit(text) => PickerOutcome::Done(UiReply::Value(text)),
                    EditorOutcome::Handled | EditorOutcome::Ignored => PickerOutcome::Pending,
                }
            }
        }
    }
}

impl Component for ExtensionDialog {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        match &mut self.body {
            Body::Choice { prompt, .. } => prompt.render(width),
            Body::Text {
                title,
                placeholder,
                field,
            } => {
                let mut lines = vec![
                    border(theme, width),
                    fit(&theme.tool_title.paint(title), width),
                    String::new(),
                ];
                let room = usize::from(width).saturating_sub(2);
                let shown = if field.is_empty() {
                    let hint = placeholder.as_deref().unwrap_or("");
                    format!(
                        "{}{}",
                        cursor_style(theme).paint(" "),
                        theme.dim.paint(hint)
                    )
                } else {
                    field.render(room, cursor_style(theme))
                };
                lines.push(fit(&format!("> {shown}"), width));
                lines.push(String::new());
                lines.push(border(theme, width));
                lines.push(
                    Hints::new(theme, &self.bindings)
                        .action("tui.input.submit", "submit")
                        .action("tui.select.cancel", "cancel")
                        .line(width),
                );
                lines
            }
            Body::Editor { title, editor } => {
                let mut lines = vec![fit(&theme.tool_title.paint(title), width)];
                lines.extend(editor.render(width));
                lines.push(
                    Hints::new(theme, &self.bindings)
                        .action("tui.input.submit", "submit")
                        .action("tui.input.newLine", "new line")
                        .action("tui.select.cancel", "cancel")
                        .line(width),
                );
                lines
            }
        }
    }
}
