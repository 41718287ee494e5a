//! The login dialog in the editor's place (`/login`): the address to open, what to do, the
//! progress of the login, and a field for a pasted code or a typed API key (shown as dots).
//! Escape cancels at every step; the app stops the login and writes nothing.

use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::width::visible_width;

use super::PickerOutcome;
use super::common::Hints;
use super::common::border;
use super::common::cursor_style;
use super::common::fit;
use super::common::is_release;
use super::common::wrapped;
use super::line_input::LineInput;

/// One paragraph of the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// An address, broken at the width (never cut: it is copied from the screen) and linked.
    Url(String),
    /// Dim text linked to an address.
    Link {
        url: String,
        text: String,
    },
    Text(String),
    Dim(String),
    Warning(String),
}

/// The field at the bottom.
struct Field {
    prompt: String,
    input: LineInput,
    /// A secret: shown as dots.
    masked: bool,
}

pub struct LoginDialog {
    theme: Theme,
    bindings: Keybindings,
    cursor_style: Style,
    title: String,
    parts: Vec<Part>,
    field: Option<Field>,
}

impl LoginDialog {
    /// `Login to <provider name>`, empty until the login says more.
    pub fn new(provider_name: &str, theme: Theme, bindings: &Keybindings) -> Self {
        Self {
            cursor_style: cursor_style(&theme),
            theme,
            bindings: bindings.clone(),
            title: format!("Login to {provider_name}"),
            parts: Vec::new(),
            field: None,
        }
    }

    /// The address to open in a browser, and what to do there.
    pub fn show_auth(&mut self, url: &str, instructions: Option<&str>) {
        self.parts.push(Part::Url(url.to_owned()));
        let click = if cfg!(target_os = "macos") {
            "Cmd+click to open"
        } else {
            "Ctrl+click to open"
        };
        self.parts.push(Part::Link {
            url: url.to_owned(),
            text: click.to_owned(),
        });
        if let Some(text) = instructions {
            self.parts.push(Part::Warning(text.to_owned()));
        }
    }

    pub fn show_text(&mut self, text: &str) {
        self.parts.push(Part::Text(text.to_owned()));
    }

    pub fn show_progress(&mut self, text: &str) {
        self.parts.push(Part::Dim(text.to_owned()));
    }

    /// A field to type into; `masked` shows what is typed as dots.
    pub fn ask(&mut self, prompt: &str, masked: bool) {
        self.field = Some(Field {
            prompt: prompt.to_owned(),
            input: LineInput::new(),
            masked,
        });
    }

    /// The field is gone (its text was taken).
    pub fn stop_asking(&mut self) {
        self.field = None;
    }

    pub fn is_asking(&self) -> bool {
        self.field.is_some()
    }

    pub fn handle_paste(&mut self, text: &str) {
        if let Some(field) = &mut self.field {
            field.input.insert(text);
        }
    }

    /// Enter gives the field's text (the field stays until the app takes it away).
    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> PickerOutcome<String> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        }
        let Some(field) = &mut self.field else {
            return PickerOutcome::Pending;
        };
        if bindings.matches("tui.select.confirm", key) {
            return PickerOutcome::Done(field.input.text().to_owned());
        }
        field.input.handle_key(key, bindings);
        PickerOutcome::Pending
    }
}

/// `url` in lines of `width` columns, each a link to the whole address.
fn url_lines(url: &str, width: usize, style: Style) -> Vec<String> {
    let chars: Vec<char> = url.chars().collect();
    chars
        .chunks(width.max(1))
        .map(|chunk| {
            let text: String = chunk.iter().collect();
            format!("\x1b]8;;{url}\x07{}\x1b]8;;\x07", style.paint(&text))
        })
        .collect()
}

impl Component for LoginDialog {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![
            border(theme, width),
            fit(&theme.tool_title.paint(&self.title), width),
        ];
        for part in &self.parts {
            // The link's hint goes right under the address, as the reference shows it.
            if !matches!(part, Part::Link { .. }) {
                lines.push(String::new());
            }
            match part {
                // ASCII: a character is a column.
                Part::Url(url) if url.is_ascii() => {
                    lines.extend(url_lines(url, usize::from(width), theme.accent));
                }
                Part::Url(text) | Part::Text(text) => {
                    lines.extend(wrapped(text, width));
                }
                Part::Link { url, text } => {
                    let shown = fit(&theme.dim.paint(text), width);
                    lines.push(format!("\x1b]8;;{url}\x07{shown}\x1b]8;;\x07"));
                }
                Part::Dim(text) => {
                    lines.extend(wrapped(text, width).iter().map(|l| theme.dim.paint(l)));
                }
                Part::Warning(text) => {
                    lines.extend(wrapped(text, width).iter().map(|l| theme.warning.paint(l)));
                }
            }
        }
        let mut hints = Hints::new(theme, &self.bindings);
        if let Some(field) = &self.field {
            lines.push(String::new());
            lines.extend(wrapped(&field.prompt, width));
            let shown = if field.masked {
                field.input.masked()
            } else {
                field.input.clone()
            };
            let prefix = theme.accent.paint("> ");
            let room = usize::from(width).saturating_sub(visible_width(&prefix));
            lines.push(fit(
                &format!("{prefix}{}", shown.render(room, self.cursor_style)),
                width,
            ));
            hints = hints.action("tui.select.confirm", "submit");
        }
        lines.push(border(theme, width));
        lines.push(hints.action("tui.select.cancel", "cancel").line(width));
        lines
    }
}

#[cfg(test)]
mod tests {
    use knightcode_tui::KeyCode;

    use super::*;

    #[test]
    fn a_key_is_shown_as_dots_and_submitted_as_typed() {
        let bindings = Keybindings::defaults();
        let mut dialog = LoginDialog::new("OpenAI", Theme::plain(), &bindings);
        dialog.ask("Enter API key:", true);
        for c in "sk-123".chars() {
            dialog.handle_key(&Key::plain(KeyCode::Char(c)), &bindings);
        }
        let screen = dialog.render(60).join("\n");
        assert!(screen.contains("Login to OpenAI"), "{screen}");
        assert!(screen.contains("> ••••••"), "{screen}");
        assert!(!screen.contains("sk-123"), "{screen}");
        assert_eq!(
            dialog.handle_key(&Key::plain(KeyCode::Enter), &bindings),
            PickerOutcome::Done("sk-123".to_owned())
        );
        assert_eq!(
            dialog.handle_key(&Key::plain(KeyCode::Escape), &bindings),
            PickerOutcome::Cancel
        );
    }

    #[test]
    fn a_long_address_is_broken_not_cut() {
        let bindings = Keybindings::defaults();
        let mut dialog = LoginDialog::new("Anthropic", Theme::plain(), &bindings);
        let url = format!("https://example.com/authorize?{}", "x".repeat(100));
        dialog.show_auth(&url, Some("Complete login in your browser."));
        let lines = dialog.render(40);
        // The text between the link's opening and closing sequences.
        let text = |line: &String| -> String {
            line.split('\x07')
                .nth(1)
                .unwrap_or_default()
                .replace("\x1b]8;;", "")
        };
        let joined: String = lines
            .iter()
            .filter(|l| l.starts_with("\x1b]8;;"))
            .map(text)
            .filter(|t| !t.contains("click to open"))
            .collect();
        assert_eq!(joined, url);
    }
}
