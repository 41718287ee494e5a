//! `/model` and Ctrl+L: the available models with fuzzy search, the current one marked.
//! With scoped models (`--models`, `/scoped-models`) Tab switches between those and all.

use knightcode_ai::Model;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::fuzzy::fuzzy_filter_indices;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::width::visible_width;

use super::PickerOutcome;
use super::common::DEFAULT_MAX_ROWS;
use super::common::Hints;
use super::common::border;
use super::common::cursor_style;
use super::common::fit;
use super::common::is_release;
use super::common::left_right;
use super::common::push_window;
use super::common::wrap_step;
use super::line_input::LineInput;

/// The model picked with Enter (or the save key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// Index into the list the picker was made with.
    pub index: usize,
    pub provider: String,
    pub id: String,
    /// Picked with `app.models.save`: also make it the default for new sessions.
    pub save_default: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    All,
    Scoped,
}

/// The model picker.
pub struct ModelPicker {
    theme: Theme,
    bindings: Keybindings,
    cursor_style: Style,
    models: Vec<Model>,
    current: Option<(String, String)>,
    /// All models, current first, then by provider (the reference's order).
    all: Vec<usize>,
    scoped: Vec<usize>,
    scope: Scope,
    search: LineInput,
    filtered: Vec<usize>,
    selected: usize,
    max_rows: usize,
    error: Option<String>,
}

impl ModelPicker {
    /// `current` is the session's model as (provider, id).
    pub fn new(
        models: Vec<Model>,
        current: Option<(&str, &str)>,
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        let current = current.map(|(p, i)| (p.to_owned(), i.to_owned()));
        let mut all: Vec<usize> = (0..models.len()).collect();
        let is_current = |i: usize| {
            current
                .as_ref()
                .is_some_and(|(p, id)| models[i].provider == *p && models[i].id == *id)
        };
        // Stable: models of one provider keep the catalogue's order.
        all.sort_by(|&a, &b| {
            is_current(b)
                .cmp(&is_current(a))
                .then_with(|| models[a].provider.cmp(&models[b].provider))
        });
        let mut picker = Self {
            cursor_style: cursor_style(&theme),
            theme,
            bindings: bindings.clone(),
            models,
            current,
            all,
            scoped: Vec::new(),
            scope: Scope::All,
            search: LineInput::new(),
            filtered: Vec::new(),
            selected: 0,
            max_rows: DEFAULT_MAX_ROWS,
            error: None,
        };
        picker.refilter();
        picker.select_current();
        picker
    }

    /// Limits the default view to these models (provider, id), in this order; Tab shows
    /// all of them.
    pub fn set_scoped(&mut self, scoped: &[(&str, &str)]) {
        self.scoped = scoped
            .iter()
            .filter_map(|(provider, id)| {
                self.models
                    .iter()
                    .position(|m| m.provider == *provider && m.id == *id)
            })
            .collect();
        self.scope = if self.scoped.is_empty() {
            Scope::All
        } else {
            Scope::Scoped
        };
        self.refilter();
        self.select_current();
    }

    /// Starts with a search (`/model son` opens the picker filtered when nothing matched
    /// exactly).
    pub fn set_search(&mut self, text: &str) {
        self.search = LineInput::with_text(text);
        self.refilter();
        self.selected = 0;
    }

    /// A problem loading the model list (e.g. a broken `models.json`), shown under it.
    pub fn set_error(&mut self, message: &str) {
        self.error = Some(message.to_owned());
    }

    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(1);
    }

    /// Indices (into the list given to `new`) of the listed models, top to bottom.
    pub fn listed(&self) -> &[usize] {
        &self.filtered
    }

    pub fn selected_model(&self) -> Option<&Model> {
        self.filtered.get(self.selected).map(|&i| &self.models[i])
    }

    pub fn handle_paste(&mut self, text: &str) {
        self.search.insert(text);
        self.refilter();
        self.selected = 0;
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> PickerOutcome<ModelChoice> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        let len = self.filtered.len();
        if bindings.matches("tui.input.tab", key) {
            if !self.scoped.is_empty() {
                self.scope = match self.scope {
                    Scope::All => Scope::Scoped,
                    Scope::Scoped => Scope::All,
                };
                self.refilter();
                self.select_current();
            }
        } else if bindings.matches("tui.select.up", key) {
            self.selected = wrap_step(self.selected, len, false);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = wrap_step(self.selected, len, true);
        } else if bindings.matches("tui.select.pageUp", key) {
            self.selected = self.selected.saturating_sub(self.max_rows);
        } else if bindings.matches("tui.select.pageDown", key) {
            self.selected = (self.selected + self.max_rows).min(len.saturating_sub(1));
        } else if bindings.matches("tui.select.confirm", key) {
            return self.choose(false);
        } else if bindings.matches("app.models.save", key) {
            return self.choose(true);
        } else if bindings.matches("tui.select.cancel", key) {
            // As the hint says ("escape cancel") and as pi does: one press closes, filter
            // or not.
            return PickerOutcome::Cancel;
        } else if self.search.handle_key(key, bindings) {
            self.refilter();
            self.selected = 0;
        }
        PickerOutcome::Pending
    }

    fn choose(&self, save_default: bool) -> PickerOutcome<ModelChoice> {
        match self.filtered.get(self.selected) {
            Some(&index) => PickerOutcome::Done(ModelChoice {
                index,
                provider: self.models[index].provider.clone(),
                id: self.models[index].id.clone(),
                save_default,
            }),
            None => PickerOutcome::Pending,
        }
    }

    fn refilter(&mut self) {
        let base = match self.scope {
            Scope::All => &self.all,
            Scope::Scoped => &self.scoped,
        };
        // The reference matches on id and provider in both orders.
        let keys = base.iter().map(|&i| {
            let m = &self.models[i];
            format!(
                "{} {} {}/{} {} {}",
                m.id, m.provider, m.provider, m.id, m.provider, m.id
            )
        });
        self.filtered = fuzzy_filter_indices(keys, self.search.text())
            .into_iter()
            .map(|i| base[i])
            .collect();
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    fn select_current(&mut self) {
        self.selected = self
            .filtered
            .iter()
            .position(|&i| self.is_current(i))
            .unwrap_or(0);
    }

    fn is_current(&self, index: usize) -> bool {
        let model = &self.models[index];
        self.current
            .as_ref()
            .is_some_and(|(p, id)| model.provider == *p && model.id == *id)
    }

    fn row(&self, position: usize, width: u16) -> String {
        let theme = &self.theme;
        let index = self.filtered[position];
        let model = &self.models[index];
        let selected = position == self.selected;
        let mut left = if selected {
            format!(
                "{}{}",
                theme.accent.paint("→ "),
                theme.accent.paint(&model.id)
            )
        } else {
            format!("  {}", model.id)
        };
        left.push(' ');
        left.push_str(&theme.muted.paint(&format!("[{}]", model.provider)));
        if self.is_current(index) {
            left.push_str(&theme.success.paint(" ✓"));
        }
        let mut facts = vec![format!("{} ctx", format_tokens(model.context_window))];
        if model.reasoning {
            facts.push("thinking".to_owned());
        }
        if model.input.iter().any(|kind| kind == "image") {
            facts.push("images".to_owned());
        }
        let right = theme.dim.paint(&facts.join(" · "));
        if visible_width(&left) + visible_width(&right) + 2 > usize::from(width) {
            return fit(&left, width);
        }
        left_right(&left, &right, width)
    }
}

/// `200k`, `1M`, `1.5M`: context windows at a glance.
fn format_tokens(tokens: u64) -> String {
    if tokens >= 1_000_000 {
        let millions = tokens as f64 / 1_000_000.0;
        if (millions.fract()).abs() < 0.05 {
            format!("{millions:.0}M")
        } else {
            format!("{millions:.1}M")
        }
    } else if tokens >= 1000 {
        format!("{}k", (tokens as f64 / 1000.0).round() as u64)
    } else {
        tokens.to_string()
    }
}

impl Component for ModelPicker {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![border(theme, width)];
        let scope = if self.scoped.is_empty() {
            String::new()
        } else {
            let (all, scoped) = match self.scope {
                Scope::All => (theme.accent, theme.muted),
                Scope::Scoped => (theme.muted, theme.accent),
            };
            format!(
                "{}{}{}{}",
                theme.muted.paint("Scope: "),
                all.paint("all"),
                theme.muted.paint(" | "),
                scoped.paint("scoped")
            )
        };
        lines.push(left_right(
            &theme.tool_title.paint("Select Model"),
            &scope,
            width,
        ));
        if self.scoped.is_empty() {
            lines.push(fit(
                &theme.warning.paint(
                    "Only models with credentials are listed (see knightcode --list-models).",
                ),
                width,
            ));
        }
        lines.push(fit(
            &format!(
                "{}{}",
                theme.accent.paint("> "),
                self.search
                    .render(usize::from(width).saturating_sub(2), self.cursor_style)
            ),
            width,
        ));
        push_window(
            &mut lines,
            theme,
            (self.selected, self.filtered.len(), self.max_rows),
            width,
            |position, lines| lines.push(self.row(position, width)),
        );
        if let Some(error) = &self.error {
            for line in error.lines() {
                lines.push(fit(&theme.error.paint(line), width));
            }
        } else if self.filtered.is_empty() {
            lines.push(theme.muted.paint("  No matching models"));
        } else if let Some(model) = self.selected_model() {
            lines.push(fit(
                &theme.muted.paint(&format!("  Model Name: {}", model.name)),
                width,
            ));
        }
        lines.push(border(theme, width));
        let mut hints = Hints::new(theme, &self.bindings)
            .raw("↑/↓", "move")
            .action("tui.select.confirm", "use")
            .action("app.models.save", "use as default");
        if !self.scoped.is_empty() {
            hints = hints.action("tui.input.tab", "scope");
        }
        lines.push(hints.action("tui.select.cancel", "cancel").line(width));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::format_tokens;

    #[test]
    fn token_counts_are_short() {
        assert_eq!(format_tokens(200_000), "200k");
        assert_eq!(format_tokens(1_000_000), "1M");
        assert_eq!(format_tokens(1_048_576), "1M");
        assert_eq!(format_tokens(1_500_000), "1.5M");
        assert_eq!(format_tokens(500), "500");
    }
}
