//! Writes a session with every entry type through the public API, for checking that other
//! readers (the reference TypeScript agent) load what we write:
//! `cargo run -p knightcode-session --example write_sample_session -- DIR` prints the path.

#![allow(clippy::expect_used, clippy::print_stdout)]

use std::path::Path;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_protocol::ToolCall;
use knightcode_protocol::ToolResultMessage;
use knightcode_protocol::TurnEnd;
use knightcode_protocol::TurnErrorKind;
use knightcode_protocol::Usage;
use knightcode_protocol::plan;
use knightcode_protocol::plan::PLAN_MODE;
use knightcode_protocol::plan::PlanDraft;
use knightcode_protocol::plan::PlanMessageKind;
use knightcode_protocol::plan::PlanMode;
use knightcode_protocol::plan::PlanState;
use knightcode_protocol::plan::RecoveryStatus;
use knightcode_session::NewCompaction;
use knightcode_session::NewSession;
use knightcode_session::SessionStore;

fn assistant(content: Vec<ContentBlock>, stop: StopReason) -> AgentMessage {
    AgentMessage::Assistant(Box::new(AssistantMessage {
        content: Blocks(content),
        api: "openai-completions".into(),
        provider: "mock".into(),
        model: "mock-model".into(),
        stop_reason: stop.into(),
        timestamp: Millis(1_764_000_000_000),
        ..AssistantMessage::default()
    }))
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: write_sample_session DIR");
    let store = SessionStore::default();
    let mut s = store
        .create(Path::new(&dir), Path::new("/tmp"), NewSession::default())
        .expect("create");
    s.append_model_change("mock", "mock-model").expect("append");
    s.append_thinking_level_change("medium").expect("append");
    s.append_turn_marker().expect("append");
    let q1 = s
        .append_message(AgentMessage::user(
            Content::Blocks(vec![ContentBlock::text("Read notes.txt")]),
            Millis(1_764_000_000_000),
        ))
        .expect("append");
    let call = ToolCall {
        id: "call_1".into(),
        name: "read".into(),
        arguments: serde_json::json!({"path": "notes.txt"}),
        ..ToolCall::default()
    };
    s.append_message(assistant(
        vec![
            ContentBlock::text("Reading it."),
            ContentBlock::ToolCall(call),
        ],
        StopReason::ToolUse,
    ))
    .expect("append");
    s.append_message(AgentMessage::ToolResult(Box::new(ToolResultMessage {
        tool_call_id: "call_1".into(),
        tool_name: "read".into(),
        content: Blocks(vec![ContentBlock::text("alpha\nbeta\n")]),
        is_error: false,
        timestamp: Millis(1_764_000_000_001),
        ..ToolResultMessage::default()
    })))
    .expect("append");
    s.append_message(assistant(
        vec![ContentBlock::text("It has two lines.")],
        StopReason::Stop,
    ))
    .expect("append");
    s.append_turn_end(&TurnEnd::completed()).expect("append");
    s.set_label(&q1, Some("start")).expect("append");
    s.set_session_name("Sample from knightcode-rs")
        .expect("append");
    s.append_custom_entry("kc-sample", Some(serde_json::json!({"n": 1})))
        .expect("append");
    s.append_custom_message(
        "kc-sample",
        Content::Text("Injected context.".into()),
        true,
        None,
    )
    .expect("append");
    s.branch_with_summary(
        Some(&q1),
        "Explored reading the file.",
        None,
        None,
        Some(false),
    )
    .expect("append");
    // Plan mode: entering writes a snapshot and the hidden instructions; a submission a
    // snapshot with the draft.
    s.append_plan_state(&PlanState {
        mode: PlanMode::Planning,
        ..PlanState::default()
    })
    .expect("append");
    s.append_custom_message(
        PLAN_MODE,
        Content::Text("<plan_mode>Plan only.</plan_mode>".into()),
        false,
        Some(plan::message_details(PlanMessageKind::Instructions, None)),
    )
    .expect("append");
    s.append_plan_state(&PlanState {
        mode: PlanMode::Planning,
        draft: Some(PlanDraft {
            revision: 1,
            markdown: "# Changes\n- notes.txt".into(),
        }),
        approved: None,
    })
    .expect("append");
    s.append_turn_marker().expect("append");
    let retry = s
        .append_message(AgentMessage::user(
            "Try another way",
            Millis(1_764_000_000_002),
        ))
        .expect("append");
    s.append_message(assistant(
        vec![ContentBlock::text("Another answer.")],
        StopReason::Stop,
    ))
    .expect("append");
    s.append_turn_end(&TurnEnd::failed(
        "Too many requests",
        TurnErrorKind::RateLimit,
    ))
    .expect("append");
    s.append_usage(
        "cache_warm",
        "mock",
        "mock-model",
        Usage::default(),
        Some("extension override"),
    )
    .expect("append");
    let kept = retry;
    s.append_compaction(NewCompaction {
        summary: "Read notes.txt; it has two lines.".into(),
        first_kept_entry_id: Some(kept),
        tokens_before: 1234,
        details: Some(serde_json::json!({"readFiles": ["notes.txt"], "modifiedFiles": []})),
        from_hook: Some(false),
        ..NewCompaction::default()
    })
    .expect("append");
    let compaction = s.leaf_id().expect("compaction").to_owned();
    s.append_custom_message(
        PLAN_MODE,
        Content::Text("<plan_mode>Plan only. Draft:\n# Changes</plan_mode>".into()),
        false,
        Some(plan::message_details(
            PlanMessageKind::Recovery,
            Some((&compaction, Some(1), RecoveryStatus::Planning)),
        )),
    )
    .expect("append");
    // A turn that never ended (a killed run): reads as interrupted.
    s.append_turn_marker().expect("append");
    s.append_message(AgentMessage::user(
        "After compaction",
        Millis(1_764_000_000_003),
    ))
    .expect("append");
    s.append_message(assistant(
        vec![ContentBlock::text("Done.")],
        StopReason::Stop,
    ))
    .expect("append");
    println!("{}", s.session_file().expect("persisted").display());
    // The conversation: the compaction's system checkpoint is ours (pi does not read it).
    let conversation = s
        .build_context()
        .messages
        .iter()
        .filter(|m| !matches!(*m.message, AgentMessage::System(_)))
        .count();
    println!("context messages: {conversation}");
}
