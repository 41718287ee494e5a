//! `/login` and `/logout`: the providers to log in to (or out of) with fuzzy search, each
//! with how it is configured now, as the reference's provider selector shows them.

use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::fuzzy::fuzzy_filter_indices;
use knightcode_tui::keybindings::Keybindings;

use super::PickerOutcome;
use super::common::Hints;
use super::common::border;
use super::common::cursor_style;
use super::common::fit;
use super::common::is_release;
use super::common::push_window;
use super::common::wrap_step;
use super::line_input::LineInput;

/// The reference's selector shows eight providers at a time.
const MAX_ROWS: usize = 8;

/// How a provider's credentials stand, shown after its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderStatus {
    /// Nothing configured.
    Unconfigured,
    /// Configured the way this row logs in (`✓ configured`, `✓ env: …`): the text.
    Configured(String),
    /// Stored as the other kind (a subscription where a key is asked for): the text.
    Other(String),
}

/// One row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRow {
    pub id: String,
    pub name: String,
    /// Searched with the name and id (`subscription`, `API key`).
    pub kind: String,
    pub status: ProviderStatus,
}

/// The provider picker.
pub struct ProviderPicker {
    theme: Theme,
    bindings: Keybindings,
    cursor_style: Style,
    title: String,
    /// Shown when there are no rows at all.
    empty: String,
    rows: Vec<ProviderRow>,
    search: LineInput,
    filtered: Vec<usize>,
    selected: usize,
}

impl ProviderPicker {
    pub fn new(
        title: impl Into<String>,
        empty: impl Into<String>,
        rows: Vec<ProviderRow>,
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        let mut picker = Self {
            cursor_style: cursor_style(&theme),
            theme,
            bindings: bindings.clone(),
            title: title.into(),
            empty: empty.into(),
            rows,
            search: LineInput::new(),
            filtered: Vec::new(),
            selected: 0,
        };
        picker.refilter();
        picker
    }

    pub fn handle_paste(&mut self, text: &str) {
        self.search.insert(text);
        self.refilter();
    }

    /// Enter gives the index of the row (into the list given to `new`).
    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> PickerOutcome<usize> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        let len = self.filtered.len();
        if bindings.matches("tui.select.up", key) {
            self.selected = wrap_step(self.selected, len, false);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = wrap_step(self.selected, len, true);
        } else if bindings.matches("tui.select.confirm", key) {
            if let Some(&index) = self.filtered.get(self.selected) {
                return PickerOutcome::Done(index);
            }
        } else if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        } else if self.search.handle_key(key, bindings) {
            self.refilter();
        }
        PickerOutcome::Pending
    }

    fn refilter(&mut self) {
        let keys = self
            .rows
            .iter()
            .map(|row| format!("{} {} {}", row.name, row.id, row.kind));
        self.filtered = fuzzy_filter_indices(keys, self.search.text());
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    fn row(&self, position: usize, width: u16) -> String {
        let theme = &self.theme;
        let row = &self.rows[self.filtered[position]];
        let name = if position == self.selected {
            format!(
                "{}{}",
                theme.accent.paint("→ "),
                theme.accent.paint(&row.name)
            )
        } else {
            format!("  {}", row.name)
        };
        let status = match &row.status {
            ProviderStatus::Unconfigured => theme.muted.paint(" • unconfigured"),
            ProviderStatus::Configured(text) => theme.success.paint(&format!(" ✓ {text}")),
            ProviderStatus::Other(text) => {
                format!("{}{}", theme.muted.paint(" • "), theme.warning.paint(text))
            }
        };
        fit(&format!("{name}{status}"), width)
    }
}

impl Component for ProviderPicker {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![
            border(theme, width),
            fit(&theme.tool_title.paint(&self.title), width),
            fit(
                &format!(
                    "{}{}",
                    theme.accent.paint("> "),
                    self.search
                        .render(usize::from(width).saturating_sub(2), self.cursor_style)
                ),
                width,
            ),
        ];
        push_window(
            &mut lines,
            theme,
            (self.selected, self.filtered.len(), MAX_ROWS),
            width,
            |position, lines| lines.push(self.row(position, width)),
        );
        if self.filtered.is_empty() {
            let message = if self.rows.is_empty() {
                self.empty.as_str()
            } else {
                "No matching providers"
            };
            lines.push(fit(&theme.muted.paint(&format!("  {message}")), width));
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

#[cfg(test)]
mod tests {
    use knightcode_tui::KeyCode;

    use super::*;

    fn row(id: &str, name: &str) -> ProviderRow {
        ProviderRow {
            id: id.to_owned(),
            name: name.to_owned(),
            kind: "API key".to_owned(),
            status: ProviderStatus::Unconfigured,
        }
    }

    #[test]
    fn typing_filters_and_enter_gives_the_row() {
        let bindings = Keybindings::defaults();
        let rows = vec![
            row("openai", "OpenAI"),
            row("xai", "xAI"),
            row("groq", "Groq"),
        ];
        let mut picker = ProviderPicker::new("Pick", "none", rows, Theme::plain(), &bindings);
        for c in "groq".chars() {
            picker.handle_key(&Key::plain(KeyCode::Char(c)), &bindings);
        }
        let screen = picker.render(60).join("\n");
        assert!(screen.contains("→ Groq • unconfigured"), "{screen}");
        assert!(!screen.contains("OpenAI"), "{screen}");
        assert_eq!(
            picker.handle_key(&Key::plain(KeyCode::Enter), &bindings),
            PickerOutcome::Done(2)
        );
        assert_eq!(
            picker.handle_key(&Key::plain(KeyCode::Escape), &bindings),
            PickerOutcome::Cancel
        );
    }

    #[test]
    fn an_empty_list_says_so() {
        let bindings = Keybindings::defaults();
        let mut picker =
            ProviderPicker::new("Pick", "Nothing here", vec![], Theme::plain(), &bindings);
        assert!(picker.render(60).join("\n").contains("Nothing here"));
        assert_eq!(
            picker.handle_key(&Key::plain(KeyCode::Enter), &bindings),
            PickerOutcome::Pending
        );
    }
}
