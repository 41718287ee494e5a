//! Export of a 10,000-entry session to HTML (issue 13: under one second). Prints the median
//! of several runs; `scripts/bench/export.sh` runs it beside the reference agent's export.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::Instant;

use knightcode_export::ExportColors;
use knightcode_export::SessionData;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;
use serde_json::json;

/// `entries` entries: user / assistant-with-a-tool-call / tool result turns with some code.
pub fn session(entries: usize) -> (SessionHeader, Vec<SessionEntry>) {
    let header = serde_json::from_value(json!({"type": "session", "version": 3,
        "id": "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "timestamp": "2026-12-01T10:00:00.000Z",
        "cwd": "/home/user/project"}))
    .unwrap();
    let usage = json!({"input": 1200, "output": 80, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1280,
        "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}});
    let mut out = Vec::with_capacity(entries);
    let mut parent = serde_json::Value::Null;
    for i in 0..entries {
        let id = format!("{i:08x}");
        let message = match i % 3 {
            0 => {
                json!({"role": "user", "content": [{"type": "text", "text": format!("Step {i}: please look at src/lib.rs and fix the failing test")}], "timestamp": 1764583200000_u64})
            }
            1 => json!({"role": "assistant", "content": [
                {"type": "text", "text": "Reading the file first.\n\n```rust\nfn main() { println!(\"hi\"); }\n```"},
                {"type": "toolCall", "id": format!("call_{i}"), "name": "read", "arguments": {"path": "src/lib.rs"}}],
                "api": "openai-completions", "provider": "mock", "model": "mock-model", "usage": usage,
                "stopReason": "toolUse", "timestamp": 1764583201000_u64}),
            _ => {
                json!({"role": "toolResult", "toolCallId": format!("call_{}", i - 1), "toolName": "read",
                "content": [{"type": "text", "text": "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n".repeat(8)}],
                "isError": false, "timestamp": 1764583202000_u64})
            }
        };
        let entry = json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": "2026-12-01T10:00:00.000Z", "message": message});
        out.push(serde_json::from_value(entry).unwrap());
        parent = id.into();
    }
    (header, out)
}

fn main() {
    let (header, entries) = session(10_000);
    let dir = std::env::temp_dir().join(format!("knightcode-export-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session.html");
    let data = SessionData {
        header: &header,
        entries: &entries,
        leaf_id: entries.last().map(SessionEntry::id),
        system_prompt: None,
        tools: None,
        rendered_tools: None,
    };
    let mut times = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        knightcode_export::write_html(&path, &data, &ExportColors::default()).unwrap();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let size = std::fs::metadata(&path).unwrap().len();
    println!(
        "export_html 10000 entries: median {:.1} ms (min {:.1}, max {:.1}) over {} runs, {:.1} MB",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        times.len(),
        size as f64 / 1e6
    );
    std::fs::remove_dir_all(&dir).ok();
}
