#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Every line the reference agent wrote survives parse -> serialize byte for byte.

use std::path::PathBuf;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::SessionEntry;

fn fixture_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi")
}

fn fixture_files(name_filter: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![fixture_root()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixtures/pi exists") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if name_filter(&path.file_name().unwrap().to_string_lossy()) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn session_lines_round_trip_byte_for_byte() {
    let files = fixture_files(|name| name.starts_with("session") && name.ends_with(".jsonl"));
    assert!(!files.is_empty(), "no session fixtures found");
    let mut lines = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let entry: SessionEntry = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", file.display(), number + 1));
            if number > 0 {
                assert!(
                    !matches!(entry, SessionEntry::Unknown(_)),
                    "{}:{} parsed as unknown",
                    file.display(),
                    number + 1
                );
            }
            let written = serde_json::to_string(&entry).unwrap();
            assert_eq!(written, line, "{}:{}", file.display(), number + 1);
            lines += 1;
        }
    }
    assert!(lines > 20, "only {lines} lines checked");
}

#[test]
fn json_mode_events_parse() {
    let files = fixture_files(|name| name == "events.jsonl" || name == "rpc-out.jsonl");
    assert!(!files.is_empty());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let kind = value["type"].as_str().unwrap_or_default();
            let is_agent_event = matches!(
                kind,
                "agent_start"
                    | "agent_end"
                    | "turn_start"
                    | "turn_end"
                    | "message_start"
                    | "message_end"
                    | "tool_execution_start"
                    | "tool_execution_end"
            );
            if is_agent_event {
                serde_json::from_value::<AgentEvent>(value)
                    .unwrap_or_else(|e| panic!("{}:{}: {e}", file.display(), number + 1));
            }
        }
    }
}
