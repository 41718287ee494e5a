//! `/thinking`: the levels the current model supports, each with what it means.

use knightcode_ai::ThinkingLevel;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::width::truncate_to_width;
use knightcode_tui::width::visible_width;

use super::PickerOutcome;
use super::common::Hints;
use super::common::border;
use super::common::fit;
use super::common::is_release;
use super::common::strong;
use super::common::wrap_step;

/// The level picked with Enter (or the save key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkingChoice {
    pub level: ThinkingLevel,
    /// Picked with `app.thinking.save`: also make it the startup default.
    pub save_default: bool,
}

/// The reference's descriptions.
fn description(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "No reasoning",
        ThinkingLevel::Minimal => "Very brief reasoning (~1k tokens)",
        ThinkingLevel::Low => "Light reasoning (~2k tokens)",
        ThinkingLevel::Medium => "Moderate reasoning (~8k tokens)",
        ThinkingLevel::High => "Deep reasoning (~16k tokens)",
        ThinkingLevel::Xhigh => "Maximum reasoning (~32k tokens)",
        ThinkingLevel::Max => "The provider's highest effort",
    }
}

/// The reference's select list keeps the level column between 12 and 32 columns.
const MIN_COLUMN: usize = 12;
const MAX_COLUMN: usize = 32;

pub struct ThinkingPicker {
    theme: Theme,
    bindings: Keybindings,
    levels: Vec<ThinkingLevel>,
    current: ThinkingLevel,
    selected: usize,
}

impl ThinkingPicker {
    /// `levels`: the ones the model supports, lowest first. The cursor starts on `current`.
    pub fn new(
        levels: Vec<ThinkingLevel>,
        current: ThinkingLevel,
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        let selected = levels.iter().position(|l| *l == current).unwrap_or(0);
        Self {
            theme,
            bindings: bindings.clone(),
            levels,
            current,
            selected,
        }
    }

    /// The list always shows every level (there are at most seven).
    pub fn set_max_rows(&mut self, _rows: usize) {}

    pub fn selected_level(&self) -> Option<ThinkingLevel> {
        self.levels.get(self.selected).copied()
    }

    pub fn handle_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<ThinkingChoice> {
        if is_release(key) || self.levels.is_empty() {
            return if bindings.matches("tui.select.cancel", key) {
                PickerOutcome::Cancel
            } else {
                PickerOutcome::Pending
            };
        }
        let len = self.levels.len();
        if bindings.matches("tui.select.up", key) {
            self.selected = wrap_step(self.selected, len, false);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = wrap_step(self.selected, len, true);
        } else if bindings.matches("tui.select.confirm", key) {
            return self.choose(false);
        } else if bindings.matches("app.thinking.save", key) {
            return self.choose(true);
        } else if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        }
        PickerOutcome::Pending
    }

    fn choose(&self, save_default: bool) -> PickerOutcome<ThinkingChoice> {
        match self.selected_level() {
            Some(level) => PickerOutcome::Done(ThinkingChoice {
                level,
                save_default,
            }),
            None => PickerOutcome::Pending,
        }
    }
}

impl Component for ThinkingPicker {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![
            border(theme, width),
            fit(&theme.tool_title.paint("Thinking Level"), width),
        ];
        let widest = self
            .levels
            .iter()
            .map(|l| l.as_str().len() + 2)
            .max()
            .unwrap_or(0);
        let column = widest.clamp(MIN_COLUMN, MAX_COLUMN);
        for (index, level) in self.levels.iter().enumerate() {
            let selected = index == self.selected;
            let cursor = if selected { "→ " } else { "  " };
            let mark = if *level == self.current { " ✓" } else { "" };
            let name = format!("{}{mark}", level.as_str());
            let gap = column.saturating_sub(visible_width(&name)).max(1);
            let room = usize::from(width).saturating_sub(2 + visible_width(&name) + gap + 2);
            // Like the reference's select list: descriptions only where they fit.
            let (gap, description) = if usize::from(width) > 40 && room > 10 {
                (gap, truncate_to_width(description(*level), room, ""))
            } else {
                (0, String::new())
            };
            let line = if selected {
                strong(theme, theme.selected)
                    .paint(&format!("{cursor}{name}{}{description}", " ".repeat(gap)))
            } else {
                let mark = if mark.is_empty() {
                    String::new()
                } else {
                    theme.success.paint(mark)
                };
                format!(
                    "{cursor}{}{mark}{}",
                    level.as_str(),
                    theme
                        .muted
                        .paint(&format!("{}{description}", " ".repeat(gap)))
                )
            };
            lines.push(fit(&line, width));
        }
        lines.push(border(theme, width));
        lines.push(
            Hints::new(theme, &self.bindings)
                .raw("↑/↓", "move")
                .action("tui.select.confirm", "use")
                .action("app.thinking.save", "use as default")
                .action("tui.select.cancel", "cancel")
                .line(width),
        );
        lines
    }
}
