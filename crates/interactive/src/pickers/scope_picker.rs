//! `/scoped-models`: which models Ctrl+P cycles through, and in what order. Enabled models
//! are listed first, in their cycling order, then the rest; typing filters. Enter toggles a
//! model, `ctrl+a` / `ctrl+x` enable / clear every listed model, `ctrl+p` toggles the
//! selected model's provider, `alt+up/down` move an enabled model; `escape` applies the
//! change to this session, `ctrl+s` also saves it as `enabledModels` in the settings.

use knightcode_ai::Model;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::fuzzy::fuzzy_filter_indices;
use knightcode_tui::keybindings::Keybindings;

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

/// The scope when the picker closes with a change: models as (provider, id), in cycling
/// order (empty: no scope, every model cycles).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeChoice {
    pub models: Vec<(String, String)>,
    /// Closed with `app.models.save`: also write `enabledModels` to the settings.
    pub save: bool,
}

pub struct ScopePicker {
    theme: Theme,
    bindings: Keybindings,
    cursor_style: Style,
    models: Vec<Model>,
    /// Indexes into `models`, in cycling order.
    enabled: Vec<usize>,
    changed: bool,
    search: LineInput,
    /// What is listed: enabled first, then the others, narrowed by the search.
    listed: Vec<usize>,
    selected: usize,
    max_rows: usize,
}

impl ScopePicker {
    /// `enabled`: the current scope as (provider, id); models not in `models` are dropped.
    pub fn new(
        models: Vec<Model>,
        enabled: &[(String, String)],
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        let enabled = enabled
            .iter()
            .filter_map(|(p, id)| models.iter().position(|m| m.provider == *p && m.id == *id))
            .collect();
        let mut picker = Self {
            cursor_style: cursor_style(&theme),
            theme,
            bindings: bindings.clone(),
            models,
            enabled,
            changed: false,
            search: LineInput::new(),
            listed: Vec::new(),
            selected: 0,
            max_rows: DEFAULT_MAX_ROWS,
        };
        picker.relist();
        picker
    }

    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(1);
    }

    pub fn handle_paste(&mut self, text: &str) {
        self.search.insert(text);
        self.relist();
        self.selected = 0;
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> PickerOutcome<ScopeChoice> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        let len = self.listed.len();
        let current = self.listed.get(self.selected).copied();
        if bindings.matches("tui.select.up", key) {
            self.selected = wrap_step(self.selected, len, false);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = wrap_step(self.selected, len, true);
        } else if bindings.matches("tui.select.confirm", key) {
            if let Some(index) = current {
                self.toggle(&[index], !self.enabled.contains(&index));
            }
        } else if bindings.matches("app.models.save", key) {
            return PickerOutcome::Done(self.choice(true));
        } else if bindings.matches("app.models.enableAll", key) {
            let listed = self.listed.clone();
            self.toggle(&listed, true);
        } else if bindings.matches("app.models.clearAll", key) {
            let listed = self.listed.clone();
            self.toggle(&listed, false);
        } else if bindings.matches("app.models.toggleProvider", key) {
            if let Some(index) = current {
                let provider = self.models[index].provider.clone();
                let of_provider: Vec<usize> = (0..self.models.len())
                    .filter(|&i| self.models[i].provider == provider)
                    .collect();
                let all_on = of_provider.iter().all(|i| self.enabled.contains(i));
                self.toggle(&of_provider, !all_on);
            }
        } else if bindings.matches("app.models.reorderUp", key) {
            self.reorder(current, true);
        } else if bindings.matches("app.models.reorderDown", key) {
            self.reorder(current, false);
        } else if bindings.matches("tui.select.cancel", key) {
            // One press closes, search typed or not, as the hint says and pi does.
            if self.changed {
                return PickerOutcome::Done(self.choice(false));
            } else {
                return PickerOutcome::Cancel;
            }
        } else if self.search.handle_key(key, bindings) {
            self.relist();
            self.selected = 0;
        }
        PickerOutcome::Pending
    }

    fn choice(&self, save: bool) -> ScopeChoice {
        ScopeChoice {
            models: self
                .enabled
                .iter()
                .map(|&i| (self.models[i].provider.clone(), self.models[i].id.clone()))
                .collect(),
            save,
        }
    }

    /// Turns `indexes` on (appended in order) or off, keeping the cursor on its model.
    fn toggle(&mut self, indexes: &[usize], on: bool) {
        for &index in indexes {
            let present = self.enabled.contains(&index);
            if on && !present {
                self.enabled.push(index);
            } else if !on && present {
                self.enabled.retain(|&i| i != index);
            } else {
                continue;
            }
            self.changed = true;
        }
        self.relist_keeping_cursor();
    }

    fn reorder(&mut self, current: Option<usize>, up: bool) {
        let Some(position) = current.and_then(|c| self.enabled.iter().position(|&i| i == c)) else {
            return;
        };
        let target = if up {
            position.checked_sub(1)
        } else {
            (position + 1 < self.enabled.len()).then_some(position + 1)
        };
        if let Some(target) = target {
            self.enabled.swap(position, target);
            self.changed = true;
            self.relist_keeping_cursor();
        }
    }

    fn relist_keeping_cursor(&mut self) {
        let current = self.listed.get(self.selected).copied();
        self.relist();
        if let Some(at) = current.and_then(|c| self.listed.iter().position(|&i| i == c)) {
            self.selected = at;
        }
    }

    fn relist(&mut self) {
        let others = (0..self.models.len()).filter(|i| !self.enabled.contains(i));
        let order: Vec<usize> = self.enabled.iter().copied().chain(others).collect();
        self.listed = if self.search.is_empty() {
            order
        } else {
            let names: Vec<String> = order
                .iter()
                .map(|&i| format!("{}/{}", self.models[i].provider, self.models[i].id))
                .collect();
            fuzzy_filter_indices(&names, self.search.text())
                .into_iter()
                .map(|at| order[at])
                .collect()
        };
        self.selected = self.selected.min(self.listed.len().saturating_sub(1));
    }
}

impl Component for ScopePicker {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![border(theme, width)];
        let count = if self.enabled.is_empty() {
            "no scope: ctrl+p cycles every model".to_owned()
        } else {
            format!("{} of {} enabled", self.enabled.len(), self.models.len())
        };
        lines.push(left_right(
            &theme.tool_title.paint("Scoped Models"),
            &theme.muted.paint(&count),
            width,
        ));
        lines.push(fit(
            &format!(
                "{} {}",
                theme.muted.paint("Search:"),
                self.search
                    .render(usize::from(width).saturating_sub(8), self.cursor_style)
            ),
            width,
        ));
        if self.listed.is_empty() {
            lines.push(theme.muted.paint("  No matching models"));
        }
        let (selected, len, max) = (self.selected, self.listed.len(), self.max_rows);
        push_window(
            &mut lines,
            theme,
            (selected, len, max),
            width,
            |row, lines| {
                let index = self.listed[row];
                let model = &self.models[index];
                let position = self.enabled.iter().position(|&i| i == index);
                let mark = match position {
                    Some(at) => theme
                        .success
                        .paint(&format!("{:>3}", format!("[{}]", at + 1))),
                    None => theme.muted.paint("[ ]"),
                };
                let name = format!("{}/{}", model.provider, model.id);
                let line = if row == selected {
                    format!(
                        "{} {mark} {}",
                        theme.accent.paint("›"),
                        theme.accent.paint(&name)
                    )
                } else {
                    format!("  {mark} {name}")
                };
                lines.push(fit(&line, width));
            },
        );
        lines.push(border(theme, width));
        lines.push(
            Hints::new(theme, &self.bindings)
                .action("tui.select.confirm", "toggle")
                .action("app.models.enableAll", "all")
                .action("app.models.clearAll", "none")
                .action("app.models.toggleProvider", "provider")
                .line(width),
        );
        lines.push(
            Hints::new(theme, &self.bindings)
                .raw("alt+↑/↓", "order")
                .action("app.models.save", "save")
                .action("tui.select.cancel", "apply to this session")
                .line(width),
        );
        lines
    }
}
