#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Every line the reference agent wrote survives parse -> serialize byte for byte.

use std::path::PathBuf;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::AssistantMessageEvent;
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

/// pi writes `toolcall_end.toolCall` as the finished content block, `type` first. Our events
/// carry no `partial` snapshot (json.md), so the comparison is of pi's event without it.
#[test]
fn toolcall_end_matches_the_reference_byte_for_byte() {
    let files = fixture_files(|name| name == "events.jsonl" || name == "rpc-out.jsonl");
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let mut event = value["assistantMessageEvent"].clone();
            if event["type"] != "toolcall_end" {
                continue;
            }
            let at = format!("{}:{}", file.display(), number + 1);
            // The block exactly as pi's bytes have it, not a re-serialisation of ours.
            let tool_call = serde_json::to_string(&event["toolCall"]).unwrap();
            assert!(tool_call.starts_with(r#"{"type":"toolCall","id":"#), "{at}");
            assert!(line.contains(&format!(r#""toolCall":{tool_call}"#)), "{at}");
            event.as_object_mut().unwrap().shift_remove("partial");
            let expected = serde_json::to_string(&event).unwrap();

            let parsed: AssistantMessageEvent = serde_json::from_str(&expected).unwrap();
            let AssistantMessageEvent::ToolcallEnd { tool_call, .. } = &parsed else {
                panic!("{at}: parsed as {parsed:?}");
            };
            assert!(tool_call.extra.is_empty(), "{at}: {:?}", tool_call.extra);
            assert_eq!(serde_json::to_string(&parsed).unwrap(), expected, "{at}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} toolcall_end events checked");
}

/// Streams written before the tag was added still read, and are written back with it.
#[test]
fn toolcall_end_without_the_tag_still_reads() {
    let old = r#"{"type":"toolcall_end","contentIndex":0,"toolCall":{"id":"call_1","name":"read","arguments":{"path":"a"}}}"#;
    let parsed: AssistantMessageEvent = serde_json::from_str(old).unwrap();
    let tagged: AssistantMessageEvent = serde_json::from_str(
        r#"{"type":"toolcall_end","contentIndex":0,"toolCall":{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a"}}}"#,
    )
    .unwrap();
    assert_eq!(parsed, tagged);
    assert_eq!(
        serde_json::to_string(&parsed).unwrap(),
        r#"{"type":"toolcall_end","contentIndex":0,"toolCall":{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a"}}}"#
    );
}

/// A block of another kind is not a tool call.
#[test]
fn toolcall_end_with_another_block_type_is_an_error() {
    let error = serde_json::from_str::<AssistantMessageEvent>(
        r#"{"type":"toolcall_end","contentIndex":0,"toolCall":{"type":"text","text":"hi"}}"#,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains(r#"expected "toolCall""#),
        "{error}"
    );
}
