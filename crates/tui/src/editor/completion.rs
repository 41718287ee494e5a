//! Autocomplete: the provider the app plugs in, and the popup list under the editor.

use crate::components::{SelectItem, SelectList};
use crate::style::Theme;

use super::buffer::State;

/// One suggestion. `value` replaces the completion's prefix; `label` is shown (a label
/// ending in `/` marks a directory, after which no space is added); the description is
/// shown dimmed beside it. For slash commands the value is the command name without the
/// slash, as in the reference.
pub type CompletionItem = SelectItem;

/// Suggestions for the text before the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completions {
    pub items: Vec<CompletionItem>,
    /// The text just before the cursor that accepting an item replaces (`/mo`, `@src/`,
    /// `./ta`).
    pub prefix: String,
}

/// Where suggestions come from: slash commands, `@` file references, paths.
pub trait CompletionProvider {
    /// Suggestions for `line_before_cursor` (the cursor's line up to the cursor), or
    /// `None`. `force` is set for Tab, which asks for path completion wherever the cursor
    /// is; without it, only text that looks completable (`/cmd`, `@file`, `./path`) should
    /// get suggestions.
    fn complete(&self, line_before_cursor: &str, force: bool) -> Option<Completions>;
}

/// The popup while it is open.
pub(super) struct Popup {
    pub list: SelectList,
    pub prefix: String,
    /// Opened by Tab; updates while typing keep asking for paths.
    pub forced: bool,
}

/// Slash-command completion keeps its label column narrower than the default.
const SLASH_COLUMN: (usize, usize) = (12, 32);

impl Popup {
    pub fn new(completions: Completions, forced: bool, max_visible: usize, theme: &Theme) -> Self {
        let best = best_match(&completions.items, &completions.prefix);
        let mut list = SelectList::new(completions.items, max_visible, theme);
        if completions.prefix.starts_with('/') {
            list = list.with_primary_column_width(SLASH_COLUMN.0, SLASH_COLUMN.1);
        }
        if let Some(best) = best {
            list.set_selected_index(best);
        }
        Self {
            list,
            prefix: completions.prefix,
            forced,
        }
    }

    pub fn selected(&self) -> Option<&CompletionItem> {
        self.list.selected()
    }
}

/// The item to preselect: an exact match of the prefix, else the first item starting with
/// it.
fn best_match(items: &[CompletionItem], prefix: &str) -> Option<usize> {
    if prefix.is_empty() {
        return None;
    }
    items
        .iter()
        .position(|item| item.value == prefix)
        .or_else(|| items.iter().position(|item| item.value.starts_with(prefix)))
}

/// True when accepting a completion with this prefix completes a slash command's name (at
/// the start of the line, not a path like `/usr/`).
pub(super) fn is_slash_command(state: &State, prefix: &str) -> bool {
    let before = state.before_cursor();
    let Some(before_prefix) = before.strip_suffix(prefix) else {
        return false;
    };
    prefix.starts_with('/') && before_prefix.trim().is_empty() && !prefix[1..].contains('/')
}

/// Replaces `prefix` before the cursor with `item`, the way the reference does: a slash
/// command gets its `/` and a trailing space, an `@` reference a trailing space unless it
/// is a directory, anything else is replaced as is. A closing quote the item brings is
/// not doubled.
pub(super) fn apply(state: &mut State, item: &CompletionItem, prefix: &str) {
    let line = state.current().to_owned();
    let col = state.col.min(line.len());
    let prefix = if line[..col].ends_with(prefix) {
        prefix
    } else {
        ""
    };
    let before_prefix = &line[..col - prefix.len()];
    let mut after = &line[col..];
    let quoted = prefix.starts_with('"') || prefix.starts_with("@\"");
    if quoted && item.value.ends_with('"') && after.starts_with('"') {
        after = &after[1..];
    }
    let directory = item.label.ends_with('/');
    // A directory inside quotes leaves the cursor before the closing quote.
    let value_cursor = if directory && item.value.ends_with('"') {
        item.value.len() - 1
    } else {
        item.value.len()
    };
    let (new_line, cursor) = if is_slash_command(state, prefix) {
        let name = item.value.strip_prefix('/').unwrap_or(&item.value);
        (
            format!("{before_prefix}/{name} {after}"),
            before_prefix.len() + name.len() + 2,
        )
    } else if prefix.starts_with('@') {
        let suffix = if directory { "" } else { " " };
        (
            format!("{before_prefix}{}{suffix}{after}", item.value),
            before_prefix.len() + value_cursor + suffix.len(),
        )
    } else {
        (
            format!("{before_prefix}{}{after}", item.value),
            before_prefix.len() + value_cursor,
        )
    };
    let cursor = cursor.min(new_line.len());
    state.lines[state.line] = new_line;
    state.col = cursor;
}
