//! The support module of this crate's tests: keys, sessions, entries, token usage, plain
//! rendering.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use knightcode_protocol::SessionEntry;
use knightcode_runtime::sessions::SessionInfo;
use knightcode_runtime::sessions::SessionTree;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::KeyCode;
use knightcode_tui::Modifiers;
use knightcode_tui::width::visible_width;
use serde_json::Value;
use serde_json::json;

/// 2026-03-10T12:00:00Z: every age and label time in the tests is relative to this.
pub const NOW: i64 = 1_773_144_000_000;
pub const MINUTE: i64 = 60_000;
pub const HOUR: i64 = 60 * MINUTE;
pub const DAY: i64 = 24 * HOUR;

pub fn plain(code: KeyCode) -> Key {
    Key::plain(code)
}

pub fn ctrl(c: char) -> Key {
    Key::ctrl(c)
}

pub fn ch(c: char) -> Key {
    Key::plain(KeyCode::Char(c))
}

pub fn with(code: KeyCode, modifiers: Modifiers) -> Key {
    Key::new(code, modifiers)
}

/// The keys that type `text`.
pub fn typing(text: &str) -> Vec<Key> {
    text.chars().map(ch).collect()
}

/// Renders and checks the component contract: no line wider than the width, no breaks.
pub fn render(component: &mut dyn Component, width: u16) -> String {
    let lines = component.render(width);
    for line in &lines {
        assert!(
            visible_width(line) <= usize::from(width),
            "line wider than {width}: {line:?}"
        );
        assert!(!line.contains('\n'), "line with a break: {line:?}");
    }
    lines.join("\n")
}

/// A session of `/home/user/proj` last active `age_ms` before [`NOW`].
pub fn session(
    id: &str,
    name: Option<&str>,
    first_message: &str,
    age_ms: i64,
    message_count: usize,
) -> SessionInfo {
    SessionInfo {
        path: session_path(id),
        id: id.to_owned(),
        cwd: "/home/user/proj".to_owned(),
        name: name.map(str::to_owned),
        parent_session_path: None,
        created: "2026-03-01T10:00:00.000Z".to_owned(),
        modified: NOW - age_ms,
        message_count,
        first_message: first_message.to_owned(),
        all_messages_text: first_message.to_owned(),
    }
}

pub fn session_path(id: &str) -> PathBuf {
    PathBuf::from(format!(
        "/home/user/.knightcode/agent/sessions/--home-user-proj--/2026-03-01_{id}.jsonl"
    ))
}

/// An assistant message's `usage` with these token counts, free of cost.
pub fn usage(input: u64, output: u64) -> Value {
    json!({
        "input": input, "output": output, "cacheRead": 0, "cacheWrite": 0,
        "totalTokens": input + output,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    })
}

/// Entry timestamps one minute apart, ordered by the number in the id.
fn timestamp(n: u32) -> String {
    format!("2026-03-10T{:02}:{:02}:00.000Z", 10 + n / 60, n % 60)
}

pub fn entry(value: Value) -> SessionEntry {
    serde_json::from_value(value).expect("a valid entry")
}

pub struct Entries {
    pub entries: Vec<SessionEntry>,
    counter: u32,
}

impl Entries {
    pub fn new() -> Self {
        Self {
            entries: Vec::new(),
            counter: 0,
        }
    }

    fn base(&mut self, id: &str, parent: Option<&str>) -> serde_json::Map<String, Value> {
        self.counter += 1;
        let mut map = serde_json::Map::new();
        map.insert("id".into(), json!(id));
        map.insert("parentId".into(), json!(parent));
        map.insert("timestamp".into(), json!(timestamp(self.counter)));
        map
    }

    fn push(&mut self, kind: &str, mut map: serde_json::Map<String, Value>) -> &mut Self {
        map.insert("type".into(), json!(kind));
        self.entries.push(entry(Value::Object(map)));
        self
    }

    pub fn user(&mut self, id: &str, parent: Option<&str>, text: &str) -> &mut Self {
        let mut map = self.base(id, parent);
        map.insert(
            "message".into(),
            json!({"role": "user", "content": text, "timestamp": NOW}),
        );
        self.push("message", map)
    }

    pub fn assistant(
        &mut self,
        id: &str,
        parent: Option<&str>,
        text: &str,
        calls: &[(&str, &str, Value)],
    ) -> &mut Self {
        let mut content = Vec::new();
        if !text.is_empty() {
            content.push(json!({"type": "text", "text": text}));
        }
        for (call_id, name, args) in calls {
            content
                .push(json!({"type": "toolCall", "id": call_id, "name": name, "arguments": args}));
        }
        let stop = if calls.is_empty() { "stop" } else { "toolUse" };
        let mut map = self.base(id, parent);
        map.insert(
            "message".into(),
            json!({
                "role": "assistant", "content": content, "api": "anthropic-messages",
                "provider": "anthropic", "model": "claude", "usage": usage(0, 0),
                "stopReason": stop, "timestamp": NOW
            }),
        );
        self.push("message", map)
    }

    pub fn tool_result(
        &mut self,
        id: &str,
        parent: Option<&str>,
        call_id: &str,
        name: &str,
        output: &str,
    ) -> &mut Self {
        let mut map = self.base(id, parent);
        map.insert(
            "message".into(),
            json!({
                "role": "toolResult", "toolCallId": call_id, "toolName": name,
                "content": [{"type": "text", "text": output}], "isError": false, "timestamp": NOW
            }),
        );
        self.push("message", map)
    }

    pub fn model_change(&mut self, id: &str, parent: Option<&str>, model: &str) -> &mut Self {
        let mut map = self.base(id, parent);
        map.insert("provider".into(), json!("anthropic"));
        map.insert("modelId".into(), json!(model));
        self.push("model_change", map)
    }

    pub fn label(
        &mut self,
        id: &str,
        parent: Option<&str>,
        target: &str,
        label: &str,
    ) -> &mut Self {
        let mut map = self.base(id, parent);
        map.insert("targetId".into(), json!(target));
        map.insert("label".into(), json!(label));
        self.push("label", map)
    }

    pub fn compaction(&mut self, id: &str, parent: Option<&str>, tokens: u64) -> &mut Self {
        let mut map = self.base(id, parent);
        map.insert("summary".into(), json!("Earlier work"));
        map.insert("firstKeptEntryId".into(), json!(id));
        map.insert("tokensBefore".into(), json!(tokens));
        self.push("compaction", map)
    }

    pub fn branch_summary(&mut self, id: &str, parent: Option<&str>, summary: &str) -> &mut Self {
        let mut map = self.base(id, parent);
        map.insert("fromId".into(), json!("x"));
        map.insert("summary".into(), json!(summary));
        self.push("branch_summary", map)
    }

    /// The tree with its leaf on `leaf` (the last entry when `None`).
    pub fn tree(&self, leaf: Option<&str>) -> SessionTree {
        let mut warnings = Vec::new();
        let mut tree = SessionTree::from_entries(self.entries.clone(), &mut warnings);
        assert!(warnings.is_empty(), "{warnings:?}");
        if let Some(leaf) = leaf {
            let index = tree.index_of(leaf).expect("leaf exists");
            tree.set_leaf(Some(index));
        }
        tree
    }
}
