//! Helpers: an editor with plain styles, keys as a terminal sends them, readable renders.

use crate::editor::{
    CURSOR_MARKER, CompletionItem, CompletionProvider, Completions, Editor, EditorOutcome,
};
use crate::keybindings::Keybindings;
use crate::keys::{InputEvent, InputParser, Key};
use crate::style::Theme;

pub fn editor() -> Editor {
    Editor::new(&Theme::plain())
}

/// The keys a terminal sends as `bytes`.
pub fn keys(bytes: &[u8]) -> Vec<Key> {
    let mut parser = InputParser::new();
    let mut events = parser.feed(bytes);
    events.extend(parser.flush_pending());
    events
        .into_iter()
        .map(|event| match event {
            InputEvent::Key(key) => key,
            other => panic!("not a key: {other:?}"),
        })
        .collect()
}

/// Sends the keys of `bytes` with the default bindings; returns the last outcome.
pub fn press(editor: &mut Editor, bytes: &[u8]) -> EditorOutcome {
    press_with(editor, bytes, &Keybindings::defaults())
}

pub fn press_with(editor: &mut Editor, bytes: &[u8], bindings: &Keybindings) -> EditorOutcome {
    let mut outcome = EditorOutcome::Ignored;
    for key in keys(bytes) {
        outcome = editor.handle_key(&key, bindings);
    }
    outcome
}

/// Types `text` key by key.
pub fn type_text(editor: &mut Editor, text: &str) {
    for c in text.chars() {
        let outcome = press(editor, c.to_string().as_bytes());
        assert_eq!(outcome, EditorOutcome::Handled, "typing {c:?}");
    }
}

/// An editor holding `text` with the cursor at the end.
pub fn with_text(text: &str) -> Editor {
    let mut editor = editor();
    editor.set_text(text);
    editor
}

/// The text with `|` at the cursor.
pub fn at_cursor(editor: &Editor) -> String {
    let (line, col) = editor.cursor();
    let mut lines = editor.lines().to_vec();
    lines[line].insert(col, '|');
    lines.join("\n")
}

/// Rendered lines made readable: the reverse-video cursor cell as `⟦…⟧`, the hardware
/// cursor marker as `‸`, each line ended with `¶` so trailing spaces show.
pub fn show(lines: &[String]) -> String {
    lines
        .iter()
        .map(|line| {
            let line = line
                .replace(CURSOR_MARKER, "‸")
                .replace("\x1b[7m", "⟦")
                .replace("\x1b[0m", "⟧");
            format!("{line}¶")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Commands, files and directories to complete, like the app's provider.
pub struct FakeProvider {
    pub commands: Vec<(&'static str, &'static str)>,
    pub files: Vec<&'static str>,
}

impl FakeProvider {
    pub fn boxed() -> Box<Self> {
        Box::new(Self {
            commands: vec![
                ("model", "Select model"),
                ("mcp", "Manage MCP servers"),
                ("new", "Start a new session"),
                ("name", "Set session name"),
                ("quit", "Quit"),
            ],
            files: vec![
                "src/",
                "src/main.rs",
                "src/lib.rs",
                "README.md",
                "Cargo.toml",
            ],
        })
    }
}

impl CompletionProvider for FakeProvider {
    fn complete(&self, before: &str, force: bool) -> Option<Completions> {
        if !force && before.starts_with('/') && !before.contains(' ') {
            let typed = &before[1..];
            let items: Vec<CompletionItem> = self
                .commands
                .iter()
                .filter(|(name, _)| name.starts_with(typed))
                .map(|(name, description)| {
                    CompletionItem::new(*name)
                        .with_label(*name)
                        .with_description(*description)
                })
                .collect();
            return (!items.is_empty()).then(|| Completions {
                items,
                prefix: before.to_owned(),
            });
        }
        let token = before.rsplit([' ', '\t']).next().unwrap_or("");
        let (at, query) = match token.strip_prefix('@') {
            Some(query) => (true, query),
            None if force || token.contains('/') || token.starts_with('.') => (false, token),
            None => return None,
        };
        let items: Vec<CompletionItem> = self
            .files
            .iter()
            .filter(|f| f.starts_with(query))
            .map(|f| {
                let value = if at { format!("@{f}") } else { (*f).to_owned() };
                CompletionItem::new(value).with_label(*f)
            })
            .collect();
        (!items.is_empty()).then(|| Completions {
            items,
            prefix: token.to_owned(),
        })
    }
}
