//! Extensions' autocomplete providers (`ctx.ui.addAutocompleteProvider`). Their chain runs
//! on the JS thread, so it is asked after a key has changed the editor's text or cursor
//! and answers later; our own completion keeps answering at once. When the extensions'
//! chain hands the text back to the built-in provider (`current.getSuggestions`), nothing
//! changes; when it has suggestions of its own for the text still before the cursor, they
//! open in the same popup and are applied like ours (the prefix replaced by the value).

use knightcode_tui::editor::CompletionItem;
use knightcode_tui::editor::Completions;
use serde_json::Value;

use crate::app::ui::Ui;

/// What the extensions were last asked about.
#[derive(Debug, Default)]
pub struct ExtensionCompletion {
    /// An extension has added a provider.
    pub active: bool,
    next_id: u64,
    /// The request whose answer counts, and the editor state it was about.
    asked: Option<(u64, Asked)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Asked {
    lines: Vec<String>,
    cursor: (usize, usize),
}

impl Ui {
    /// After a key reached our editor: asks the extensions' providers about the text
    /// before the cursor if it changed since they were last asked.
    pub(in crate::app) fn ask_extension_completions(&mut self) {
        let ext_ui = &mut self.ext_ui;
        let completion = &mut ext_ui.completion;
        if !completion.active {
            return;
        }
        let Some(channel) = &ext_ui.channel else {
            return;
        };
        let editor = &self.screen.editor;
        let now = Asked {
            lines: editor.lines().to_vec(),
            cursor: editor.cursor(),
        };
        if completion
            .asked
            .as_ref()
            .is_some_and(|(_, asked)| *asked == now)
        {
            return;
        }
        completion.next_id += 1;
        let id = completion.next_id;
        if editor.applied_completion() {
            // A suggestion was just applied: nothing is asked until the next edit, and an
            // answer still on its way (about the text before) no longer counts.
            completion.asked = Some((id, now));
            return;
        }
        let (line, col) = now.cursor;
        // JS indexes strings in UTF-16 units.
        let js_col = now
            .lines
            .get(line)
            .map_or(0, |text| text[..col.min(text.len())].encode_utf16().count());
        channel.complete(id, &now.lines, line, js_col);
        completion.asked = Some((id, now));
    }

    /// A provider was added (often after an `await` in `session_start`, so text may be
    /// typed already): it is asked about what is there.
    pub(super) fn extension_completion_added(&mut self) {
        self.ext_ui.completion.active = true;
        self.ext_ui.completion.asked = None;
        if !self.screen.editor.is_empty() {
            self.ask_extension_completions();
        }
    }

    /// `{"op": "completions", "id", "builtin": true}` or `{…, "prefix", "items"}`.
    pub(super) fn on_extension_completions(&mut self, message: &Value) {
        let id = message.get("id").and_then(Value::as_u64);
        let Some((asked_id, asked)) = &self.ext_ui.completion.asked else {
            return;
        };
        let editor = &self.screen.editor;
        // An answer about text that has changed since is stale.
        let current = id == Some(*asked_id)
            && editor.cursor() == asked.cursor
            && editor.lines() == asked.lines.as_slice();
        if !current || message.get("builtin").and_then(Value::as_bool) == Some(true) {
            return;
        }
        let items: Vec<CompletionItem> = message
            .get("items")
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(item).collect())
            .unwrap_or_default();
        if items.is_empty() {
            return;
        }
        let prefix = message
            .get("prefix")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        self.screen
            .editor
            .show_completions(Completions { items, prefix });
        self.mark_dirty();
    }
}

/// One suggestion: `value` is required; `label` defaults to it.
fn item(value: &Value) -> Option<CompletionItem> {
    let text = |key: &str| value.get(key).and_then(Value::as_str);
    let completion = text("value")?.to_owned();
    Some(CompletionItem {
        label: text("label").unwrap_or(&completion).to_owned(),
        description: text("description").map(str::to_owned),
        value: completion,
    })
}
