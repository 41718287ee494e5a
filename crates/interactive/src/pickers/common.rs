//! Pieces every picker draws with: borders, hint lines, the scrolling window, ages, paths.

use std::ops::Range;

use knightcode_tui::Key;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::keys::KeyKind;
use knightcode_tui::width::truncate_to_width;
use knightcode_tui::width::visible_width;
use knightcode_tui::width::wrap_text_with_ansi;

/// List rows shown until the app says otherwise (the reference's selectors show ten).
pub(crate) const DEFAULT_MAX_ROWS: usize = 10;

/// A full-width rule.
pub(crate) fn border(theme: &Theme, width: u16) -> String {
    theme.border.paint(&"─".repeat(usize::from(width.max(1))))
}

/// Cuts a styled line to the width, marking the cut with an ellipsis.
pub(crate) fn fit(line: &str, width: u16) -> String {
    truncate_to_width(line, usize::from(width), "…")
}

/// A styled paragraph word-wrapped to the width (explanations that must not be cut off).
pub(crate) fn wrapped(text: &str, width: u16) -> Vec<String> {
    wrap_text_with_ansi(text, usize::from(width))
}

/// `left` and `right` on one line with `right` flush against the right edge. When both do
/// not fit, `left` (the title) stays whole and `right` is cut, or dropped when too little
/// of it would remain.
pub(crate) fn left_right(left: &str, right: &str, width: u16) -> String {
    let width = usize::from(width);
    let left_width = visible_width(left);
    let right_width = visible_width(right);
    if right_width == 0 {
        return truncate_to_width(left, width, "…");
    }
    if left_width + 1 + right_width <= width {
        let gap = width - left_width - right_width;
        return format!("{left}{}{right}", " ".repeat(gap));
    }
    let room = width.saturating_sub(left_width + 1);
    if room < 8 {
        return truncate_to_width(left, width, "…");
    }
    format!("{left} {}", truncate_to_width(right, room, "…"))
}

/// The rows to show so that `selected` stays visible, centred where the list allows (as
/// the reference's selectors scroll).
pub(crate) fn scroll_window(selected: usize, len: usize, max: usize) -> Range<usize> {
    let max = max.max(1);
    if len <= max {
        return 0..len;
    }
    let start = selected.saturating_sub(max / 2).min(len - max);
    start..start + max
}

/// The row after (`down`) or before `selected` in a list of `len` rows, wrapping around at
/// either end; 0 for an empty list.
pub(crate) fn wrap_step(selected: usize, len: usize, down: bool) -> usize {
    match len {
        0 => 0,
        _ if down => (selected + 1) % len,
        _ => (selected + len - 1) % len,
    }
}

/// The items of a list around `selected` (at most `max` of them, each drawn by `item`
/// onto the lines), and `  (3/20)` under them when the list does not fit.
pub(crate) fn push_window(
    lines: &mut Vec<String>,
    theme: &Theme,
    (selected, len, max): (usize, usize, usize),
    width: u16,
    mut item: impl FnMut(usize, &mut Vec<String>),
) {
    let window = scroll_window(selected, len, max);
    let scrolled = window.start > 0 || window.end < len;
    for index in window {
        item(index, lines);
    }
    if scrolled {
        lines.push(theme.muted.paint(&truncate_to_width(
            &format!("  ({}/{len})", selected + 1),
            usize::from(width),
            "",
        )));
    }
}

/// How long ago, in the reference's short form: `now`, `5m`, `2h`, `3d`, `2w`, `4mo`, `1y`.
pub(crate) fn relative_age(now_ms: i64, then_ms: i64) -> String {
    let diff = now_ms.saturating_sub(then_ms).max(0);
    let minutes = diff / 60_000;
    let hours = diff / 3_600_000;
    let days = diff / 86_400_000;
    if minutes < 1 {
        "now".to_owned()
    } else if minutes < 60 {
        format!("{minutes}m")
    } else if hours < 24 {
        format!("{hours}h")
    } else if days < 7 {
        format!("{days}d")
    } else if days < 30 {
        format!("{}w", days / 7)
    } else if days < 365 {
        format!("{}mo", days / 30)
    } else {
        format!("{}y", days / 365)
    }
}

/// Text squeezed onto one line: control characters (newlines, tabs, escapes) and runs of
/// whitespace become single spaces, so a message can never break a row or inject styles.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(512));
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    out
}

/// `style` made to stand out like the theme's selection: bold unless the theme has no
/// attributes at all.
pub(crate) fn strong(theme: &Theme, style: Style) -> Style {
    if theme.selected.bold {
        style.bold()
    } else {
        style
    }
}

/// The text cursor of search and input fields: reverse video, or nothing at all when the
/// theme has no attributes (plain terminals, snapshots).
pub(crate) fn cursor_style(theme: &Theme) -> Style {
    if theme.selected.is_plain() && theme.accent.is_plain() {
        Style::new()
    } else {
        Style::new().inverse()
    }
}

/// Kitty reports key releases too; pickers act on presses and repeats only.
pub(crate) fn is_release(key: &Key) -> bool {
    key.kind == KeyKind::Release
}

/// The key bound to an action as the user would type it (`ctrl+s`), so hints follow
/// `keybindings.json`. Only the first key: hints have little room, and the first is the
/// one people use.
pub(crate) fn key_text(bindings: &Keybindings, action: &str) -> String {
    bindings
        .keys_for(action)
        .first()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The first keys of several actions, with a shared modifier written once:
/// `ctrl+d/t/u/l/a`, `ctrl+left/right`.
pub(crate) fn keys_text(bindings: &Keybindings, actions: &[&str]) -> String {
    let keys: Vec<String> = actions
        .iter()
        .map(|action| key_text(bindings, action))
        .filter(|key| !key.is_empty())
        .collect();
    let Some(first) = keys.first() else {
        return String::new();
    };
    let modifiers = first.rfind('+').map_or("", |at| &first[..=at]);
    let mut text = first.clone();
    for key in &keys[1..] {
        text.push('/');
        match key.strip_prefix(modifiers) {
            Some(rest) if !modifiers.is_empty() && !rest.contains('+') => text.push_str(rest),
            _ => text.push_str(key),
        }
    }
    text
}

/// One `key description` hint.
pub(crate) fn hint(theme: &Theme, keys: &str, description: &str) -> String {
    format!(
        "{} {}",
        theme.dim.paint(keys),
        theme.muted.paint(description)
    )
}

/// Hints for actions, skipping those the user unbound.
pub(crate) struct Hints<'a> {
    theme: &'a Theme,
    bindings: &'a Keybindings,
    parts: Vec<String>,
}

impl<'a> Hints<'a> {
    pub(crate) fn new(theme: &'a Theme, bindings: &'a Keybindings) -> Self {
        Self {
            theme,
            bindings,
            parts: Vec::new(),
        }
    }

    /// Adds the hint for a bound action (nothing when the action has no key).
    pub(crate) fn action(mut self, action: &str, description: &str) -> Self {
        let keys = key_text(self.bindings, action);
        if !keys.is_empty() {
            self.parts.push(hint(self.theme, &keys, description));
        }
        self
    }

    /// Adds a hint for keys that are not configurable (`j/k`, typing).
    pub(crate) fn raw(mut self, keys: &str, description: &str) -> Self {
        self.parts.push(hint(self.theme, keys, description));
        self
    }

    /// Adds muted text without a key.
    pub(crate) fn note(mut self, text: &str) -> Self {
        self.parts.push(self.theme.muted.paint(text));
        self
    }

    /// The hints that fit in `width`, in order: one that does not fit is left out whole
    /// (with those after it) rather than cut in the middle; the first is always shown.
    pub(crate) fn line(self, width: u16) -> String {
        let separator = self.theme.muted.paint(" · ");
        let mut line = String::new();
        for (i, part) in self.parts.iter().enumerate() {
            let candidate = if i == 0 {
                part.clone()
            } else {
                format!("{line}{separator}{part}")
            };
            if i > 0 && visible_width(&candidate) > usize::from(width) {
                break;
            }
            line = candidate;
        }
        fit(&line, width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_use_the_largest_whole_unit() {
        let now = 1_000_000_000_000;
        assert_eq!(relative_age(now, now - 30_000), "now");
        assert_eq!(relative_age(now, now - 5 * 60_000), "5m");
        assert_eq!(relative_age(now, now - 2 * 3_600_000), "2h");
        assert_eq!(relative_age(now, now - 3 * 86_400_000), "3d");
        assert_eq!(relative_age(now, now - 15 * 86_400_000), "2w");
        assert_eq!(relative_age(now, now - 65 * 86_400_000), "2mo");
        assert_eq!(relative_age(now, now - 800 * 86_400_000), "2y");
        // A clock that went backwards still gives an age.
        assert_eq!(relative_age(now, now + 60_000), "now");
    }

    #[test]
    fn window_keeps_the_selection_centred_and_in_range() {
        assert_eq!(scroll_window(0, 3, 10), 0..3);
        assert_eq!(scroll_window(0, 30, 10), 0..10);
        assert_eq!(scroll_window(15, 30, 10), 10..20);
        assert_eq!(scroll_window(29, 30, 10), 20..30);
    }

    #[test]
    fn one_line_removes_breaks_and_escapes() {
        assert_eq!(one_line("  fix\n\tthe \x1b[31mbug  "), "fix the [31mbug");
    }

    #[test]
    fn left_right_keeps_the_right_part() {
        assert_eq!(left_right("left", "right", 12), "left   right");
        assert_eq!(
            left_right("title", "a long right part", 16),
            "title a long ri…"
        );
        assert_eq!(left_right("title", "a long right part", 10), "title");
    }

    #[test]
    fn shared_modifiers_are_written_once() {
        let bindings = Keybindings::defaults();
        assert_eq!(
            keys_text(
                &bindings,
                &[
                    "app.tree.filter.default",
                    "app.tree.filter.noTools",
                    "app.tree.filter.all"
                ]
            ),
            "ctrl+d/t/a"
        );
        assert_eq!(
            keys_text(
                &bindings,
                &[
                    "app.tree.filter.cycleForward",
                    "app.tree.filter.cycleBackward"
                ]
            ),
            "ctrl+o/shift+ctrl+o"
        );
        assert_eq!(key_text(&bindings, "tui.select.cancel"), "escape");
    }
}
