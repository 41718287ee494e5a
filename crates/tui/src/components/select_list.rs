//! A scrolling list to pick one item from, laid out like the reference's `SelectList`:
//! `→ ` marks the selected row (drawn in the selection style), descriptions line up in a
//! second column in the muted style, and `(3/20)` shows the position when not every item
//! fits. Typing narrows the list with fuzzy matching; what Enter and Escape do is up to the
//! app.

use crate::component::Component;
use crate::fuzzy::fuzzy_filter_indices;
use crate::keys::{InputEvent, KeyCode, KeyKind};
use crate::style::Style;
use crate::style::Theme;
use crate::width::{truncate_to_width, visible_width};

/// The label column is at most this wide unless configured otherwise.
const DEFAULT_PRIMARY_COLUMN_WIDTH: usize = 32;
const PRIMARY_COLUMN_GAP: usize = 2;
/// Narrower than this, descriptions are left out rather than cut to nothing.
const MIN_DESCRIPTION_WIDTH: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectItem {
    /// What the app gets back.
    pub value: String,
    /// What is shown; the value when empty.
    pub label: String,
    pub description: Option<String>,
}

impl SelectItem {
    pub fn new(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            label: String::new(),
            description: None,
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The shown text: the label, or the value without one.
    pub fn display(&self) -> &str {
        if self.label.is_empty() {
            &self.value
        } else {
            &self.label
        }
    }
}

#[derive(Debug, Clone)]
pub struct SelectList {
    items: Vec<SelectItem>,
    /// Positions in `items` that pass the filter, best match first.
    filtered: Vec<usize>,
    filter: String,
    /// Position in `filtered`.
    selected: usize,
    max_visible: usize,
    primary_min: usize,
    primary_max: usize,
    selected_style: Style,
    muted: Style,
    empty_message: String,
}

impl SelectList {
    pub fn new(items: Vec<SelectItem>, max_visible: usize, theme: &Theme) -> Self {
        let filtered = (0..items.len()).collect();
        Self {
            items,
            filtered,
            filter: String::new(),
            selected: 0,
            max_visible: max_visible.max(1),
            primary_min: DEFAULT_PRIMARY_COLUMN_WIDTH,
            primary_max: DEFAULT_PRIMARY_COLUMN_WIDTH,
            selected_style: theme.selected,
            muted: theme.muted,
            empty_message: "No matches".to_owned(),
        }
    }

    /// The text shown when nothing matches the filter.
    pub fn with_empty_message(mut self, message: impl Into<String>) -> Self {
        self.empty_message = message.into();
        self
    }

    /// Bounds of the label column's width (it fits the widest label within them).
    pub fn with_primary_column_width(mut self, min: usize, max: usize) -> Self {
        self.primary_min = min.min(max).max(1);
        self.primary_max = min.max(max).max(1);
        self
    }

    pub fn set_items(&mut self, items: Vec<SelectItem>) {
        self.items = items;
        let filter = std::mem::take(&mut self.filter);
        self.set_filter(&filter);
    }

    pub fn items(&self) -> &[SelectItem] {
        &self.items
    }

    /// Keeps the items whose label fuzzily matches `filter`, best first, and selects the
    /// first of them.
    pub fn set_filter(&mut self, filter: &str) {
        self.filter = filter.to_owned();
        self.filtered = fuzzy_filter_indices(self.items.iter().map(SelectItem::display), filter);
        self.selected = 0;
    }

    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// Items passing the filter, in the order shown.
    pub fn visible_items(&self) -> impl Iterator<Item = &SelectItem> {
        self.filtered.iter().filter_map(|&i| self.items.get(i))
    }

    /// How many items pass the filter.
    pub fn len(&self) -> usize {
        self.filtered.len()
    }

    pub fn is_empty(&self) -> bool {
        self.filtered.is_empty()
    }

    pub fn selected(&self) -> Option<&SelectItem> {
        self.filtered
            .get(self.selected)
            .and_then(|&i| self.items.get(i))
    }

    /// Position of the selection among the filtered items.
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    pub fn set_selected_index(&mut self, index: usize) {
        self.selected = index.min(self.filtered.len().saturating_sub(1));
    }

    /// Selects the item with this value, if it passes the filter.
    pub fn select_value(&mut self, value: &str) -> bool {
        let found = self
            .filtered
            .iter()
            .position(|&i| self.items.get(i).is_some_and(|item| item.value == value));
        if let Some(position) = found {
            self.selected = position;
        }
        found.is_some()
    }

    /// Next item; from the last, wraps to the first.
    pub fn select_next(&mut self) {
        let len = self.filtered.len();
        if len > 0 {
            self.selected = (self.selected + 1) % len;
        }
    }

    /// Previous item; from the first, wraps to the last.
    pub fn select_prev(&mut self) {
        let len = self.filtered.len();
        if len > 0 {
            self.selected = (self.selected + len - 1) % len;
        }
    }

    /// One screenful down, stopping at the last item.
    pub fn page_down(&mut self) {
        self.set_selected_index(self.selected + self.max_visible);
    }

    /// One screenful up, stopping at the first item.
    pub fn page_up(&mut self) {
        self.selected = self.selected.saturating_sub(self.max_visible);
    }

    fn primary_column_width(&self) -> usize {
        let widest = self
            .visible_items()
            .map(|item| visible_width(item.display()) + PRIMARY_COLUMN_GAP)
            .max()
            .unwrap_or(0);
        widest.clamp(self.primary_min, self.primary_max)
    }

    fn render_item(
        &self,
        item: &SelectItem,
        selected: bool,
        width: usize,
        primary: usize,
    ) -> String {
        let prefix = if selected { "→ " } else { "  " };
        let prefix_width = 2;
        let description = item
            .description
            .as_deref()
            .map(|d| {
                d.split(['\r', '\n'])
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty());
        if let Some(description) = description.filter(|_| width > 40) {
            let column = primary.min(width - prefix_width - 4).max(1);
            let max_label = column.saturating_sub(PRIMARY_COLUMN_GAP).max(1);
            let label = truncate_to_width(item.display(), max_label, "");
            let label_width = visible_width(&label);
            let spacing = " ".repeat(column.saturating_sub(label_width).max(1));
            let used = prefix_width + label_width + spacing.len();
            let remaining = width.saturating_sub(used + 2);
            if remaining > MIN_DESCRIPTION_WIDTH {
                let description = truncate_to_width(&description, remaining, "");
                if selected {
                    return self
                        .selected_style
                        .paint(&format!("{prefix}{label}{spacing}{description}"));
                }
                return format!(
                    "{prefix}{label}{}",
                    self.muted.paint(&format!("{spacing}{description}"))
                );
            }
        }
        let label = truncate_to_width(item.display(), width.saturating_sub(prefix_width + 2), "");
        if selected {
            self.selected_style.paint(&format!("{prefix}{label}"))
        } else {
            format!("{prefix}{label}")
        }
    }
}

impl Component for SelectList {
    fn render(&mut self, width: u16) -> Vec<String> {
        let width = usize::from(width);
        let len = self.filtered.len();
        if len == 0 {
            let message = truncate_to_width(&format!("  {}", self.empty_message), width, "");
            return vec![self.muted.paint(&message)];
        }
        let primary = self.primary_column_width();
        // Keep the selection in the middle of the window where possible.
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(len.saturating_sub(self.max_visible));
        let end = (start + self.max_visible).min(len);
        let mut lines: Vec<String> = (start..end)
            .filter_map(|i| {
                let item = self.items.get(*self.filtered.get(i)?)?;
                let line = self.render_item(item, i == self.selected, width, primary);
                // The `→ ` marker alone is wider than the narrowest widths.
                Some(if visible_width(&line) > width {
                    truncate_to_width(&line, width, "")
                } else {
                    line
                })
            })
            .collect();
        if start > 0 || end < len {
            let position = format!("  ({}/{len})", self.selected + 1);
            lines.push(self.muted.paint(&truncate_to_width(
                &position,
                width.saturating_sub(2),
                "",
            )));
        }
        lines
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(key) = event else {
            return false;
        };
        if key.kind == KeyKind::Release || !key.modifiers.is_empty() {
            return false;
        }
        match key.code {
            KeyCode::Up => self.select_prev(),
            KeyCode::Down => self.select_next(),
            KeyCode::PageUp => self.page_up(),
            KeyCode::PageDown => self.page_down(),
            _ => return false,
        }
        true
    }
}
