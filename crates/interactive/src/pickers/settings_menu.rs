//! `/settings`: a searchable list of settings, each with its current value. Enter or Space
//! on an item cycles it to its next value; items with many values (thinking level, theme)
//! open a list to pick from. Every change goes to the app at once (the menu stays open), so
//! it takes effect while the menu is still on screen; Esc closes the menu. Like the
//! reference's settings selector.

use std::convert::Infallible;

use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::KeyCode;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::fuzzy::fuzzy_filter_indices;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::width::truncate_to_width;
use knightcode_tui::width::visible_width;

use super::PickerOutcome;
use super::common::DEFAULT_MAX_ROWS;
use super::common::border;
use super::common::cursor_style;
use super::common::fit;
use super::common::is_release;
use super::common::push_window;
use super::common::wrap_step;
use super::common::wrapped;
use super::line_input::LineInput;

/// How an item changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingKind {
    /// Enter/Space moves to the next value, wrapping around.
    Cycle(Vec<String>),
    /// Enter opens a list of these (value, description) to pick from; moving in a list
    /// with `preview` asks the app to show the value under the cursor (themes).
    Pick {
        title: String,
        description: String,
        options: Vec<(String, String)>,
        preview: bool,
    },
}

/// One row of the menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingItem {
    /// What the app knows the setting by.
    pub id: &'static str,
    pub label: &'static str,
    pub description: String,
    pub value: String,
    pub kind: SettingKind,
}

/// What the menu asks of the app while it stays open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsRequest {
    /// The user changed `id` to `value`: apply and save it.
    Change { id: &'static str, value: String },
    /// Show `value` for `id` without saving it (a theme under the cursor, or the one to
    /// go back to when the list is left with Esc).
    Preview { id: &'static str, value: String },
}

/// The list of values an item with [`SettingKind::Pick`] opened.
struct Submenu {
    item: usize,
    selected: usize,
}

pub struct SettingsMenu {
    theme: Theme,
    items: Vec<SettingItem>,
    /// Indices into `items` that match the search, in order.
    filtered: Vec<usize>,
    selected: usize,
    search: LineInput,
    submenu: Option<Submenu>,
    max_rows: usize,
    cursor_style: Style,
}

impl SettingsMenu {
    pub fn new(items: Vec<SettingItem>, theme: Theme) -> Self {
        let filtered = (0..items.len()).collect();
        Self {
            cursor_style: cursor_style(&theme),
            theme,
            items,
            filtered,
            selected: 0,
            search: LineInput::new(),
            submenu: None,
            max_rows: DEFAULT_MAX_ROWS,
        }
    }

    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.clamp(1, DEFAULT_MAX_ROWS);
    }

    /// A new theme: the menu is drawn in the colours being previewed.
    pub fn set_theme(&mut self, theme: Theme) {
        self.cursor_style = cursor_style(&theme);
        self.theme = theme;
    }

    pub fn handle_paste(&mut self, text: &str) {
        if self.submenu.is_none() {
            self.search.insert(&text.replace(' ', ""));
            self.refilter();
        }
    }

    pub fn handle_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<Infallible, SettingsRequest> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        if self.submenu.is_some() {
            return self.submenu_key(key, bindings);
        }
        let len = self.filtered.len();
        let space = key.code == KeyCode::Char(' ') && key.modifiers.is_empty();
        if bindings.matches("tui.select.up", key) {
            self.selected = wrap_step(self.selected, len, false);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = wrap_step(self.selected, len, true);
        } else if bindings.matches("tui.select.confirm", key) || space {
            return self.activate();
        } else if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        } else if self.search.handle_key(key, bindings) {
            self.refilter();
        }
        PickerOutcome::Pending
    }

    fn activate(&mut self) -> PickerOutcome<Infallible, SettingsRequest> {
        let Some(&index) = self.filtered.get(self.selected) else {
            return PickerOutcome::Pending;
        };
        let item = &mut self.items[index];
        match &item.kind {
            SettingKind::Cycle(values) if !values.is_empty() => {
                let next = values
                    .iter()
                    .position(|v| *v == item.value)
                    .map_or(0, |at| (at + 1) % values.len());
                item.value.clone_from(&values[next]);
                PickerOutcome::Request(SettingsRequest::Change {
                    id: item.id,
                    value: item.value.clone(),
                })
            }
            SettingKind::Cycle(_) => PickerOutcome::Pending,
            SettingKind::Pick { options, .. } => {
                let selected = options
                    .iter()
                    .position(|(v, _)| *v == item.value)
                    .unwrap_or(0);
                self.submenu = Some(Submenu {
                    item: index,
                    selected,
                });
                PickerOutcome::Pending
            }
        }
    }

    fn submenu_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<Infallible, SettingsRequest> {
        let Some(submenu) = &mut self.submenu else {
            return PickerOutcome::Pending;
        };
        let item = &mut self.items[submenu.item];
        let SettingKind::Pick {
            options, preview, ..
        } = &item.kind
        else {
            return PickerOutcome::Pending;
        };
        let len = options.len();
        let moved = if bindings.matches("tui.select.up", key) {
            submenu.selected = wrap_step(submenu.selected, len, false);
            true
        } else if bindings.matches("tui.select.down", key) {
            submenu.selected = wrap_step(submenu.selected, len, true);
            true
        } else {
            false
        };
        if moved {
            return match options.get(submenu.selected) {
                Some((value, _)) if *preview => PickerOutcome::Request(SettingsRequest::Preview {
                    id: item.id,
                    value: value.clone(),
                }),
                _ => PickerOutcome::Pending,
            };
        }
        if bindings.matches("tui.select.confirm", key) {
            let Some((value, _)) = options.get(submenu.selected) else {
                return PickerOutcome::Pending;
            };
            item.value.clone_from(value);
            self.submenu = None;
            return PickerOutcome::Request(SettingsRequest::Change {
                id: item.id,
                value: item.value.clone(),
            });
        }
        if bindings.matches("tui.select.cancel", key) {
            let back = *preview;
            self.submenu = None;
            // Whatever was previewed gives way to the value the setting still has.
            if back {
                return PickerOutcome::Request(SettingsRequest::Preview {
                    id: item.id,
                    value: item.value.clone(),
                });
            }
        }
        PickerOutcome::Pending
    }

    fn refilter(&mut self) {
        let labels = self.items.iter().map(|item| item.label);
        self.filtered = fuzzy_filter_indices(labels, self.search.text());
        self.selected = 0;
    }

    /// The value shown for `id` (tests, and the app after a change it refused).
    pub fn value(&self, id: &str) -> Option<&str> {
        self.items
            .iter()
            .find(|item| item.id == id)
            .map(|item| item.value.as_str())
    }

    /// Sets the shown value of `id` (a change made elsewhere, or one the app refused).
    pub fn set_value(&mut self, id: &str, value: &str) {
        if let Some(item) = self.items.iter_mut().find(|item| item.id == id) {
            value.clone_into(&mut item.value);
        }
    }

    fn render_list(&self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![fit(
            &format!(
                "{}{}",
                theme.accent.paint("> "),
                self.search
                    .render(usize::from(width).saturating_sub(2), self.cursor_style)
            ),
            width,
        )];
        lines.push(String::new());
        if self.filtered.is_empty() {
            lines.push(fit(&theme.dim.paint("  No matching settings"), width));
        }
        // Labels line up on the widest one (at most 30 columns), as in the reference.
        let label_width = self
            .items
            .iter()
            .map(|item| visible_width(item.label))
            .max()
            .unwrap_or(0)
            .min(30);
        push_window(
            &mut lines,
            theme,
            (self.selected, self.filtered.len(), self.max_rows),
            width,
            |position, lines| {
                let item = &self.items[self.filtered[position]];
                let selected = position == self.selected;
                let label = format!(
                    "{}{}",
                    item.label,
                    " ".repeat(label_width.saturating_sub(visible_width(item.label)))
                );
                let room = usize::from(width).saturating_sub(2 + label_width + 2 + 2);
                let value = truncate_to_width(&item.value, room, "");
                let line = if selected {
                    format!(
                        "{}{}  {}",
                        theme.accent.paint("→ "),
                        theme.accent.paint(&label),
                        theme.accent.paint(&value)
                    )
                } else {
                    format!("  {label}  {}", theme.muted.paint(&value))
                };
                lines.push(fit(&line, width));
            },
        );
        if let Some(item) = self.filtered.get(self.selected).map(|&i| &self.items[i]) {
            lines.push(String::new());
            let text_width = width.saturating_sub(4).max(1);
            for line in wrapped(&item.description, text_width) {
                lines.push(fit(&theme.dim.paint(&format!("  {line}")), width));
            }
        }
        lines.push(String::new());
        lines.push(fit(
            &theme
                .dim
                .paint("  Type to search · Enter/Space to change · Esc to cancel"),
            width,
        ));
        lines
    }

    fn render_submenu(&self, submenu: &Submenu, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let item = &self.items[submenu.item];
        let SettingKind::Pick {
            title,
            description,
            options,
            ..
        } = &item.kind
        else {
            return Vec::new();
        };
        let mut lines = vec![fit(&theme.accent.bold().paint(title), width)];
        if !description.is_empty() {
            lines.push(String::new());
            lines.push(fit(&theme.muted.paint(description), width));
        }
        lines.push(String::new());
        // The reference's submenu keeps the value column between 12 and 32 columns.
        let column = options
            .iter()
            .map(|(value, _)| visible_width(value) + 2)
            .max()
            .unwrap_or(0)
            .clamp(12, 32);
        push_window(
            &mut lines,
            theme,
            (submenu.selected, options.len(), self.max_rows),
            width,
            |index, lines| {
                let (value, about) = &options[index];
                let selected = index == submenu.selected;
                let gap = " ".repeat(column.saturating_sub(visible_width(value)).max(1));
                let about = if about.is_empty() || width <= 40 {
                    String::new()
                } else {
                    format!("{gap}{about}")
                };
                let line = if selected {
                    format!(
                        "{}{}{}",
                        theme.accent.paint("→ "),
                        theme.accent.paint(value),
                        theme.accent.paint(&about)
                    )
                } else {
                    format!("  {value}{}", theme.muted.paint(&about))
                };
                lines.push(fit(&line, width));
            },
        );
        lines.push(String::new());
        lines.push(fit(
            &theme.dim.paint("  Enter to select · Esc to go back"),
            width,
        ));
        lines
    }
}

impl Component for SettingsMenu {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut lines = vec![border(&self.theme, width)];
        match &self.submenu {
            Some(submenu) => lines.extend(self.render_submenu(submenu, width)),
            None => lines.extend(self.render_list(width)),
        }
        lines.push(border(&self.theme, width));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> Key {
        Key::new(code, knightcode_tui::Modifiers::NONE)
    }

    fn menu() -> SettingsMenu {
        SettingsMenu::new(
            vec![
                SettingItem {
                    id: "a",
                    label: "Auto-compact",
                    description: "Compact when full".to_owned(),
                    value: "true".to_owned(),
                    kind: SettingKind::Cycle(vec!["true".to_owned(), "false".to_owned()]),
                },
                SettingItem {
                    id: "theme",
                    label: "Theme",
                    description: "Colours".to_owned(),
                    value: "dark".to_owned(),
                    kind: SettingKind::Pick {
                        title: "Theme".to_owned(),
                        description: "Select color theme".to_owned(),
                        options: vec![
                            ("dark".to_owned(), String::new()),
                            ("light".to_owned(), String::new()),
                        ],
                        preview: true,
                    },
                },
            ],
            Theme::plain(),
        )
    }

    #[test]
    fn enter_cycles_and_reports_the_change() {
        let bindings = Keybindings::defaults();
        let mut menu = menu();
        let outcome = menu.handle_key(&key(KeyCode::Enter), &bindings);
        assert_eq!(
            outcome,
            PickerOutcome::Request(SettingsRequest::Change {
                id: "a",
                value: "false".to_owned()
            })
        );
        assert_eq!(menu.value("a"), Some("false"));
        let screen = menu.render(60).join("\n");
        assert!(screen.contains("→ Auto-compact  false"), "{screen}");
        assert!(screen.contains("Compact when full"), "{screen}");
    }

    #[test]
    fn a_pick_list_previews_and_escape_goes_back_to_the_saved_value() {
        let bindings = Keybindings::defaults();
        let mut menu = menu();
        menu.handle_key(&key(KeyCode::Down), &bindings);
        assert_eq!(
            menu.handle_key(&key(KeyCode::Enter), &bindings),
            PickerOutcome::Pending
        );
        assert!(menu.render(60).join("\n").contains("Select color theme"));
        assert_eq!(
            menu.handle_key(&key(KeyCode::Down), &bindings),
            PickerOutcome::Request(SettingsRequest::Preview {
                id: "theme",
                value: "light".to_owned()
            })
        );
        assert_eq!(
            menu.handle_key(&key(KeyCode::Escape), &bindings),
            PickerOutcome::Request(SettingsRequest::Preview {
                id: "theme",
                value: "dark".to_owned()
            })
        );
        assert_eq!(menu.value("theme"), Some("dark"));
        assert_eq!(
            menu.handle_key(&key(KeyCode::Escape), &bindings),
            PickerOutcome::Cancel
        );
    }

    #[test]
    fn typing_filters_by_label() {
        let bindings = Keybindings::defaults();
        let mut menu = menu();
        for c in "them".chars() {
            menu.handle_key(&key(KeyCode::Char(c)), &bindings);
        }
        let screen = menu.render(60).join("\n");
        assert!(screen.contains("→ Theme"), "{screen}");
        assert!(!screen.contains("Auto-compact"), "{screen}");
    }
}
