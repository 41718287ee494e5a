#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Sessions recorded from the reference agent (fixtures/pi, see scripts/pi/record.sh) load
//! cleanly and build the same context the reference agent sent to the model.

use std::path::Path;
use std::path::PathBuf;

use knightcode_protocol::AgentMessage;
use knightcode_session::SessionStore;

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi")
        .join(path)
}

/// The requests the reference agent's model server received, in order.
fn turn_requests(scenario: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(fixture(&format!("{scenario}/requests.jsonl")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["kind"] == "turn")
        .map(|r| r["body"].clone())
        .collect()
}

/// (role on the wire, text, tool call ids) of an OpenAI chat message.
fn wire_view(message: &serde_json::Value) -> (String, String, Vec<String>) {
    let role = message["role"].as_str().unwrap().to_owned();
    let text = match &message["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let calls = message["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default();
    (role, text, calls)
}

/// The same view of one of our context messages, as the provider layer will send it.
fn our_view(message: &AgentMessage) -> Option<(String, String, Vec<String>)> {
    Some(match message {
        AgentMessage::System(_) => return None,
        AgentMessage::User(m) => ("user".into(), m.content.text(), vec![]),
        AgentMessage::Custom(m) => ("user".into(), m.content.text(), vec![]),
        AgentMessage::Assistant(m) => (
            "assistant".into(),
            m.text(),
            m.tool_calls().map(|c| c.id.clone()).collect(),
        ),
        AgentMessage::ToolResult(m) => (
            "tool".into(),
            knightcode_protocol::content::join_text(&m.content),
            vec![],
        ),
        AgentMessage::BranchSummary(m) => ("user".into(), m.summary.clone(), vec![]),
        AgentMessage::CompactionSummary(m) => ("user".into(), m.summary.clone(), vec![]),
        other => panic!("unexpected role {}", other.role()),
    })
}

fn assert_same_context(session_file: &str, leaf_id: &str, request: &serde_json::Value) {
    let store = SessionStore::default();
    let mut session = store.open_read_only(&fixture(session_file)).unwrap();
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
    session.navigate(leaf_id).unwrap();
    let context = session.build_context();
    let ours: Vec<_> = context
        .messages
        .iter()
        .filter_map(|m| our_view(&m.message))
        .collect();
    let theirs: Vec<_> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1) // the system/developer prompt
        .map(wire_view)
        .collect();
    assert_eq!(
        ours.len(),
        theirs.len(),
        "ours {ours:#?}\ntheirs {theirs:#?}"
    );
    for (index, (our, their)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(our.0, their.0, "role of message {index}");
        // Summaries are wrapped in an explanatory preamble on the wire.
        assert!(
            their.1.contains(&our.1),
            "message {index}: {:?} not in {:?}",
            our.1,
            their.1
        );
        assert_eq!(our.2, their.2, "tool calls of message {index}");
    }
}

#[test]
fn continue_rebuilds_the_full_prior_conversation() {
    let requests = turn_requests("continue");
    let session = SessionStore::default()
        .open_read_only(&fixture("continue/session.jsonl"))
        .unwrap();
    // The request for "again" was sent when that user message was the leaf.
    let again = session
        .entries()
        .iter()
        .rev()
        .find(|e| matches!(e.message(), Some(AgentMessage::User(_))))
        .unwrap()
        .id()
        .to_owned();
    assert_same_context("continue/session.jsonl", &again, requests.last().unwrap());
    let context = session.build_context();
    assert_eq!(context.thinking_level, "medium");
    assert_eq!(context.model.unwrap().model_id, "mock-model");
}

#[test]
fn compaction_branch_summary_and_custom_messages_match_the_reference() {
    let requests = turn_requests("rpc-tree");
    // Request 5 answered "After compaction" on the main session file.
    assert_same_context(
        "rpc-tree/session.jsonl",
        "3a727113",
        &requests[requests.len() - 2],
    );
}

#[test]
fn every_recorded_session_loads_without_warnings() {
    let store = SessionStore::default();
    for scenario in ["simple", "tools", "continue", "error", "rpc", "rpc-tree"] {
        for name in ["session.jsonl", "session-2.jsonl"] {
            let path = fixture(&format!("{scenario}/{name}"));
            if !path.exists() {
                continue;
            }
            let session = store.open_read_only(&path).unwrap();
            assert!(
                session.warnings().is_empty(),
                "{}: {:?}",
                path.display(),
                session.warnings()
            );
            assert!(!session.entries().is_empty());
            assert!(!session.build_context().messages.is_empty());
            assert_eq!(session.header().version, Some(3));
            let _ = Path::new(&session.header().cwd);
        }
    }
}
