//! Compaction checkpoints (`session-format.md`, CompactionEntry `systemMessage`): every
//! compaction carries the branch's whole prompt and tools, which lead the compacted context;
//! older entries without one keep working.

use std::path::Path;

use crate::common;

use common::*;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::CompactionEntry;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::Tokens;
use knightcode_session::NewCompaction;

/// The seed's compaction example.
const SEED_COMPACTION: &str = r#"{"type":"compaction","id":"f6g7h8i9","parentId":"e5f6g7h8","timestamp":"2024-12-03T14:10:00.000Z","summary":"User discussed X, Y, Z...","firstKeptEntryId":"c3d4e5f6","tokensBefore":50000,"systemMessage":{"role":"system","content":"You are a coding assistant.","toolsAdded":[],"timestamp":1733235000000}}"#;

#[test]
fn the_seed_compaction_round_trips_byte_for_byte() {
    let entry: SessionEntry = serde_json::from_str(SEED_COMPACTION).unwrap();
    let SessionEntry::Compaction(compaction) = &entry else {
        panic!("not a compaction: {entry:?}");
    };
    let checkpoint = compaction.system_message.as_ref().unwrap();
    assert_eq!(checkpoint.content.text(), "You are a coding assistant.");
    assert!(
        checkpoint.extra.is_empty(),
        "the role is not an unknown key"
    );
    assert_eq!(serde_json::to_string(&entry).unwrap(), SEED_COMPACTION);
}

#[test]
fn the_seed_checkpoint_leads_the_compacted_context() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seed.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","id":"a0b1c2d3","parentId":null,"timestamp":"2024-12-03T14:00:00.000Z","message":{"role":"system","content":"","sections":{"preamble":"Old prompt"},"toolsAdded":[{"name":"read","description":"...","parameters":{}}],"timestamp":1733234400000}}"#,
        r#"{"type":"message","id":"a1b2c3d4","parentId":"a0b1c2d3","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Hello","timestamp":1733234401000}}"#,
        r#"{"type":"message","id":"c3d4e5f6","parentId":"a1b2c3d4","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"user","content":"kept","timestamp":1733234403000}}"#,
        r#"{"type":"message","id":"e5f6g7h8","parentId":"c3d4e5f6","timestamp":"2024-12-03T14:00:04.000Z","message":{"role":"system","content":"","sections":{"skills":"S"},"timestamp":1733234404000}}"#,
        SEED_COMPACTION,
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let store = store();
    let session = store.open(&file, Path::new("/w")).unwrap();
    let context = session.build_context();
    let described: Vec<String> = context
        .messages
        .iter()
        .map(|m| describe(&m.message))
        .collect();
    assert_eq!(
        described,
        [
            "system[]",
            "compaction:User discussed X, Y, Z...",
            "user:kept"
        ],
        "the checkpoint leads; the kept range's system message is dropped"
    );
    assert_eq!(context.system.prompt_text(), "You are a coding assistant.");
    assert!(
        context.system.tools.is_empty(),
        "the checkpoint's tools only"
    );
}

#[test]
fn every_compaction_checkpoints_the_replayed_prompt_and_tools() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(system(
        &[("preamble", Some("P")), ("cwd", Some("/w"))],
        &["read", "bash"],
        &[],
    ))
    .unwrap();
    let q1 = s.append_message(user("q1")).unwrap();
    s.append_message(system(
        &[("cwd", None), ("skills", Some("S"))],
        &[],
        &["bash"],
    ))
    .unwrap();
    s.append_message(assistant("a1")).unwrap();
    s.append_compaction(NewCompaction {
        summary: "sum".into(),
        first_kept_entry_id: Some(q1),
        tokens_before: 10,
        ..NewCompaction::default()
    })
    .unwrap();
    let Some(SessionEntry::Compaction(compaction)) = s.leaf_entry() else {
        panic!("no compaction");
    };
    let checkpoint = compaction.system_message.as_ref().unwrap();
    let json = serde_json::to_value(checkpoint).unwrap();
    assert_eq!(json["role"], "system");
    assert_eq!(json["content"], "");
    assert_eq!(
        json["sections"],
        serde_json::json!({"preamble": "P", "skills": "S"})
    );
    let tools: Vec<&str> = json["toolsAdded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read"]);
    assert!(json.get("toolsRemoved").is_none() && json.get("replace").is_none());
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["role", "content", "sections", "toolsAdded", "timestamp"]
    );

    s.append_message(user("q2")).unwrap();
    let context = s.build_context();
    assert_eq!(
        context
            .messages
            .iter()
            .map(|m| describe(&m.message))
            .collect::<Vec<_>>(),
        [
            "system[preamble,skills]",
            "compaction:sum",
            "user:q1",
            "assistant:a1",
            "user:q2"
        ]
    );
    assert_eq!(context.system.prompt_text(), "P\n\nS");
}

#[test]
fn a_forced_prompt_is_checkpointed_as_content() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(AgentMessage::System(Box::new(
        knightcode_protocol::SystemMessage {
            content: "You are a coding assistant.".into(),
            tools_added: Some(Vec::new()),
            ..Default::default()
        },
    )))
    .unwrap();
    s.append_message(user("q1")).unwrap();
    s.append_compaction(NewCompaction {
        summary: "sum".into(),
        first_kept_entry_id: None,
        ..NewCompaction::default()
    })
    .unwrap();
    let Some(SessionEntry::Compaction(compaction)) = s.leaf_entry() else {
        panic!("no compaction");
    };
    let json = serde_json::to_string(compaction.system_message.as_ref().unwrap()).unwrap();
    let timestamp = compaction.system_message.as_ref().unwrap().timestamp.0;
    assert_eq!(
        json,
        format!(
            r#"{{"role":"system","content":"You are a coding assistant.","toolsAdded":[],"timestamp":{timestamp}}}"#
        ),
        "the seed's shape"
    );
}

#[test]
fn an_older_compaction_without_a_checkpoint_still_works() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(system(&[("preamble", Some("P1"))], &["read"], &[]))
        .unwrap();
    s.append_message(user("q1")).unwrap();
    let q2 = s.append_message(user("q2")).unwrap();
    s.append_message(system(&[("skills", Some("S"))], &[], &[]))
        .unwrap();
    let a2 = s.append_message(assistant("a2")).unwrap();
    // Written as an older agent wrote it: no `systemMessage`.
    s.append_entry(SessionEntry::Compaction(Box::new(CompactionEntry {
        id: "c0mpact1".into(),
        parent_id: Some(a2.as_str().into()),
        timestamp: "2026-01-02T03:04:05.100Z".into(),
        summary: "old".into(),
        first_kept_entry_id: q2,
        tokens_before: Tokens(100),
        ..CompactionEntry::default()
    })))
    .unwrap();
    s.append_message(user("q3")).unwrap();
    let context = s.build_context();
    assert_eq!(
        context
            .messages
            .iter()
            .map(|m| describe(&m.message))
            .collect::<Vec<_>>(),
        ["compaction:old", "user:q2", "assistant:a2", "user:q3"],
        "system messages in the kept range are dropped; no checkpoint leads"
    );
    assert_eq!(
        context.system,
        Default::default(),
        "the next request declares the prompt again"
    );
}
