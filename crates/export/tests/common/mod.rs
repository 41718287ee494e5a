//! Sessions built for export tests, and headless Chromium to render their pages.

#![allow(dead_code)]

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use knightcode_export::ExportColors;
use knightcode_export::SessionData;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;
use knightcode_protocol::ToolDeclaration;
use serde_json::Value;
use serde_json::json;

/// A 1x1 PNG.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

pub fn usage(input: u64, output: u64) -> Value {
    json!({"input": input, "output": output, "cacheRead": 0, "cacheWrite": 0,
        "totalTokens": input + output,
        "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}})
}

pub struct Builder {
    pub header: SessionHeader,
    pub entries: Vec<SessionEntry>,
    next: u32,
}

impl Builder {
    pub fn new() -> Self {
        let header = serde_json::from_value(json!({
            "type": "session", "version": 3, "id": "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/home/user/project"
        }))
        .unwrap();
        Self {
            header,
            entries: Vec::new(),
            next: 0,
        }
    }

    /// Appends an entry (its `id`, `parentId` and `timestamp` filled in) and returns its id.
    pub fn add(&mut self, parent: Option<&str>, mut fields: Value) -> String {
        self.next += 1;
        let id = format!("{:08x}", 0xa000_0000_u32 + self.next);
        let object = fields.as_object_mut().unwrap();
        let mut entry = serde_json::Map::new();
        entry.insert("type".into(), object.remove("type").unwrap());
        entry.insert("id".into(), id.clone().into());
        entry.insert("parentId".into(), parent.map_or(Value::Null, |p| p.into()));
        entry.insert(
            "timestamp".into(),
            format!(
                "2026-12-01T10:{:02}:{:02}.000Z",
                self.next / 60 % 60,
                self.next % 60
            )
            .into(),
        );
        entry.extend(std::mem::take(object));
        self.entries
            .push(serde_json::from_value(Value::Object(entry)).unwrap());
        id
    }

    pub fn message(&mut self, parent: Option<&str>, message: Value) -> String {
        self.add(parent, json!({"type": "message", "message": message}))
    }

    pub fn user(&mut self, parent: Option<&str>, text: &str) -> String {
        self.message(
            parent,
            json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1764583200000_u64}),
        )
    }

    pub fn assistant(&mut self, parent: Option<&str>, content: Value) -> String {
        self.message(
            parent,
            json!({"role": "assistant", "content": content, "api": "openai-completions",
                "provider": "mock", "model": "mock-model", "usage": usage(1200, 80),
                "stopReason": "stop", "timestamp": 1764583201000_u64}),
        )
    }

    pub fn tool_result(
        &mut self,
        parent: &str,
        call: &str,
        tool: &str,
        text: &str,
        details: Value,
        error: bool,
    ) -> String {
        self.message(
            Some(parent),
            json!({"role": "toolResult", "toolCallId": call, "toolName": tool,
                "content": [{"type": "text", "text": text}], "details": details,
                "isError": error, "timestamp": 1764583202000_u64}),
        )
    }

    pub fn data<'a>(
        &'a self,
        leaf: Option<&'a str>,
        prompt: Option<&'a str>,
        tools: Option<&'a [ToolDeclaration]>,
    ) -> SessionData<'a> {
        SessionData {
            header: &self.header,
            entries: &self.entries,
            leaf_id: leaf,
            system_prompt: prompt,
            tools,
            rendered_tools: None,
        }
    }

    pub fn jsonl(&self) -> String {
        let mut out = serde_json::to_string(&self.header).unwrap();
        for entry in &self.entries {
            out.push('\n');
            out.push_str(&serde_json::to_string(entry).unwrap());
        }
        out.push('\n');
        out
    }
}

/// A session with every entry type, every message role, each built-in tool and a fork: two
/// answers to the second question. Returns the builder and the two leaves (first, second).
pub fn every_entry_type() -> (Builder, String, String) {
    let mut b = Builder::new();
    let model = b.add(
        None,
        json!({"type": "model_change", "provider": "mock", "modelId": "mock-model"}),
    );
    let thinking = b.add(
        Some(&model),
        json!({"type": "thinking_level_change", "thinkingLevel": "high"}),
    );
    let system = b.message(
        Some(&thinking),
        json!({"role": "system", "content": [{"type": "text", "text": "You are KnightCode, a careful coding agent."}],
            "replace": true, "timestamp": 1764583200000_u64}),
    );
    let user = b.message(
        Some(&system),
        json!({"role": "user", "content": [
            {"type": "text", "text": "Please fix notes.txt and look at this screenshot"},
            {"type": "image", "data": PNG, "mimeType": "image/png"}], "timestamp": 1764583200000_u64}),
    );
    let assistant = b.assistant(
        Some(&user),
        json!([
            {"type": "thinking", "thinking": "The user wants notes.txt changed; read it first."},
            {"type": "text", "text": "## Plan\n\nI'll **read** the file, then `edit` it:\n\n```rust\nfn main() { let answer = 42; }\n```\n\n- first step\n- second step"},
            {"type": "toolCall", "id": "call_read", "name": "read", "arguments": {"path": "notes.txt"}},
            {"type": "toolCall", "id": "call_edit", "name": "edit", "arguments": {"path": "notes.txt", "oldText": "beta", "newText": "BETA"}},
            {"type": "toolCall", "id": "call_bash", "name": "bash", "arguments": {"command": "cargo test --quiet"}},
            {"type": "toolCall", "id": "call_write", "name": "write", "arguments": {"path": "src/new.rs", "content": "pub fn created() -> u32 {\n    7\n}\n"}},
            {"type": "toolCall", "id": "call_custom", "name": "weather", "arguments": {"city": "Lisbon"}}
        ]),
    );
    let read = b.tool_result(
        &assistant,
        "call_read",
        "read",
        "alpha\nbeta\ngamma",
        json!({}),
        false,
    );
    let edit = b.tool_result(
        &read,
        "call_edit",
        "edit",
        "Successfully replaced text in notes.txt.",
        json!({"diff": " 1 alpha\n-2 beta\n+2 BETA\n 3 gamma", "firstChangedLine": 2}),
        false,
    );
    let bash = b.tool_result(
        &edit,
        "call_bash",
        "bash",
        "error[E0425]: cannot find value `x`\nCommand exited with code 101",
        json!({}),
        true,
    );
    let write = b.tool_result(
        &bash,
        "call_write",
        "write",
        "Successfully wrote 30 bytes to src/new.rs",
        json!({}),
        false,
    );
    let custom = b.tool_result(
        &write,
        "call_custom",
        "weather",
        "Sunny, 21°C in Lisbon",
        json!({}),
        false,
    );
    let shell = b.message(
        Some(&custom),
        json!({"role": "bashExecution", "command": "ls -la", "output": "total 8\nnotes.txt", "exitCode": 0,
            "cancelled": false, "truncated": false, "timestamp": 1764583203000_u64}),
    );
    let custom_role = b.message(
        Some(&shell),
        json!({"role": "custom", "customType": "reminder", "content": "Remember the changelog", "display": true,
            "timestamp": 1764583203000_u64}),
    );
    let custom_message = b.add(
        Some(&custom_role),
        json!({"type": "custom_message", "customType": "plan-mode",
        "content": "Plan mode is on", "display": true}),
    );
    let custom_entry = b.add(
        Some(&custom_message),
        json!({"type": "custom", "customType": "todo-state", "data": {"open": 2}}),
    );
    let usage_entry = b.add(
        Some(&custom_entry),
        json!({"type": "usage", "kind": "summary", "provider": "mock",
        "model": "mock-model", "usage": usage(300, 40)}),
    );
    let compaction = b.add(
        Some(&usage_entry),
        json!({"type": "compaction", "summary": "Earlier the user asked to fix notes.txt",
        "firstKeptEntryId": user, "tokensBefore": 48213}),
    );
    let info = b.add(
        Some(&compaction),
        json!({"type": "session_info", "name": "Fix the notes"}),
    );
    let edit_entry = b.add(
        Some(&info),
        json!({"type": "context_edit", "targetId": read, "replacement": "[read output elided]"}),
    );
    let future = b.add(
        Some(&edit_entry),
        json!({"type": "future_thing", "payload": "from a newer writer"}),
    );
    let failed = b.message(
        Some(&future),
        json!({"role": "assistant", "content": [], "api": "openai-completions", "provider": "mock", "model": "mock-model",
            "usage": usage(0, 0), "stopReason": "error", "errorMessage": "upstream overloaded (529)",
            "timestamp": 1764583204000_u64}),
    );
    let question = b.user(Some(&failed), "Which branch is this?");
    let first = b.assistant(
        Some(&question),
        json!([{"type": "text", "text": "This is the FIRST-BRANCH answer."}]),
    );
    let label = b.add(
        Some(&first),
        json!({"type": "label", "targetId": first, "label": "good answer"}),
    );
    let summary = b.add(
        Some(&question),
        json!({"type": "branch_summary", "fromId": label,
        "summary": "The first branch answered the question one way."}),
    );
    let second = b.assistant(
        Some(&summary),
        json!([{"type": "text", "text": "This is the SECOND-BRANCH answer."}]),
    );
    (b, label, second)
}

pub fn tools() -> Vec<ToolDeclaration> {
    serde_json::from_value(json!([
        {"name": "read", "description": "Read a file from disk", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "bash", "description": "Run a shell command", "parameters": {"type": "object"}}
    ]))
    .unwrap()
}

pub fn write_page(dir: &Path, name: &str, data: &SessionData<'_>) -> PathBuf {
    let path = dir.join(name);
    knightcode_export::write_html(&path, data, &ExportColors::default()).unwrap();
    path
}

/// The Chromium binary: `KNIGHTCODE_CHROMIUM`, else `chromium` or `chromium-browser` on
/// `PATH`. Missing is a failure, never a skip: these tests are how the page is checked.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("KNIGHTCODE_CHROMIUM") {
        return PathBuf::from(path);
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "headless Chromium is needed to check exported pages and was not found on PATH \
         (looked for chromium, chromium-browser, google-chrome). Install it with \
         `apt-get install -y chromium` (.ci/run does this when it runs as root), or point \
         KNIGHTCODE_CHROMIUM at a Chromium binary."
    );
}

/// Chromium under coreutils' `timeout`: a browser that hangs fails the test instead of
/// hanging it (a watchdog, not a timing assertion: a page takes well under a second).
fn browser(profile: &Path) -> Command {
    let mut command = Command::new("timeout");
    command
        .arg("120")
        .arg(chromium())
        .arg("--headless")
        .arg("--no-sandbox")
        .arg("--disable-gpu")
        .arg("--no-first-run")
        .arg("--disable-extensions")
        .arg("--disable-dev-shm-usage")
        .arg(format!("--user-data-dir={}", profile.display()))
        .env("HOME", profile);
    command
}

fn url(page: &Path, fragment: Option<&str>) -> String {
    let mut url = format!("file://{}", page.display());
    if let Some(fragment) = fragment {
        url.push('#');
        url.push_str(fragment);
    }
    url
}

/// The DOM after the page's scripts ran (`--dump-dom`), without the page's own two scripts
/// (the session data and the renderer), so what is checked is what the page drew.
pub fn dump_dom(page: &Path, fragment: Option<&str>) -> String {
    let profile = tempfile::tempdir().unwrap();
    let output = browser(profile.path())
        .arg("--virtual-time-budget=3000")
        .arg("--dump-dom")
        .arg(url(page, fragment))
        .output_within(PROCESS_LIMIT, "chromium")
        .unwrap();
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let dom = String::from_utf8(output.stdout).unwrap();
    let scripts = dom
        .find("<script id=\"session-data\"")
        .expect("the page keeps its data element");
    dom[..scripts].to_owned()
}

/// A PNG screenshot of the page at `width`x`height`.
pub fn screenshot(page: &Path, out: &Path, width: u32, height: u32, fragment: Option<&str>) {
    let profile = tempfile::tempdir().unwrap();
    let output = browser(profile.path())
        .arg("--virtual-time-budget=3000")
        .arg("--hide-scrollbars")
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", out.display()))
        .arg(url(page, fragment))
        .output_within(PROCESS_LIMIT, "chromium")
        .unwrap();
    assert!(
        output.status.success() && out.is_file(),
        "chromium screenshot failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
