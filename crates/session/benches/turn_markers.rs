#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! What turn markers and compaction checkpoints add per turn (issue 34, budget 0.1 ms):
//! appending a turn's `knightcode.turn` + `knightcode.turnEnd` to a session file, building a
//! request's context after a compaction with a checkpoint (the checkpoint is cloned into every
//! context) against one without, and writing the checkpoint itself (once per compaction).
//!
//! Run with `cargo bench -p knightcode-session --bench turn_markers`; see docs/perf.md.

use std::path::Path;
use std::time::Instant;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::CompactionEntry;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::SectionPatch;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::StopReason;
use knightcode_protocol::SystemMessage;
use knightcode_protocol::Tokens;
use knightcode_protocol::ToolDeclaration;
use knightcode_protocol::TurnEnd;
use knightcode_session::NewCompaction;
use knightcode_session::SessionManager;
use knightcode_session::SessionStore;

const ROUNDS: usize = 7;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// A prompt the size of ours: ten sections (~12 KB) and seven tools with schemas.
fn system_prompt() -> AgentMessage {
    let mut sections = SectionPatch::new();
    for i in 0..10 {
        sections.set(
            format!("section{i}"),
            "You are a careful assistant. ".repeat(40),
        );
    }
    let tools = (0..7)
        .map(|i| ToolDeclaration {
            name: format!("tool{i}"),
            description: "Reads a file and returns its lines. ".repeat(8),
            parameters: serde_json::json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The file to read"},
                "offset": {"type": "number"}, "limit": {"type": "number"}},
                "required": ["path"]}),
            constrained_sampling: None,
            extra: Default::default(),
        })
        .collect();
    AgentMessage::System(Box::new(SystemMessage {
        content: "".into(),
        sections: Some(sections),
        tools_added: Some(tools),
        ..SystemMessage::default()
    }))
}

fn assistant(text: &str) -> AgentMessage {
    AgentMessage::Assistant(Box::new(AssistantMessage {
        content: Blocks(vec![ContentBlock::text(text)]),
        api: "openai-completions".into(),
        provider: "mock".into(),
        model: "mock-model".into(),
        stop_reason: StopReason::Stop.into(),
        timestamp: Millis(2),
        ..AssistantMessage::default()
    }))
}

/// A session of `turns` prompt/answer pairs after a system prompt, compacted halfway.
fn compacted(session: &mut SessionManager, turns: usize, checkpoint: bool) {
    session.append_message(system_prompt()).unwrap();
    let mut kept = None;
    for i in 0..turns {
        let id = session
            .append_message(AgentMessage::user(
                "Please refactor the module ".repeat(10),
                Millis(1),
            ))
            .unwrap();
        if i == turns / 2 {
            kept = Some(id);
        }
        session
            .append_message(assistant(&"Done: the module is refactored. ".repeat(20)))
            .unwrap();
    }
    let kept = kept.unwrap();
    if checkpoint {
        session
            .append_compaction(NewCompaction {
                summary: "summary ".repeat(200),
                first_kept_entry_id: Some(kept),
                tokens_before: 1000,
                ..NewCompaction::default()
            })
            .unwrap();
    } else {
        let parent = session.leaf_id().map(Into::into);
        session
            .append_entry(SessionEntry::Compaction(Box::new(CompactionEntry {
                id: "c0mpact1".into(),
                parent_id: parent,
                timestamp: "2026-01-01T00:00:00.000Z".into(),
                summary: "summary ".repeat(200),
                first_kept_entry_id: kept,
                tokens_before: Tokens(1000),
                ..CompactionEntry::default()
            })))
            .unwrap();
        // Without a checkpoint the next request declares the prompt again.
        session.append_message(system_prompt()).unwrap();
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::default();

    // 1. Appending a turn's two markers to a file on disk, against one message append.
    let mut session = store
        .create(dir.path(), Path::new("/w"), Default::default())
        .unwrap();
    compacted(&mut session, 200, true);
    const TURNS: usize = 500;
    let mut markers = Vec::new();
    let mut messages = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..TURNS {
            session.append_turn_marker().unwrap();
            session.append_turn_end(&TurnEnd::completed()).unwrap();
        }
        markers.push(start.elapsed().as_secs_f64() * 1e6 / TURNS as f64);
        let start = Instant::now();
        for _ in 0..TURNS {
            session.append_message(assistant("ok")).unwrap();
        }
        messages.push(start.elapsed().as_secs_f64() * 1e6 / TURNS as f64);
    }
    println!(
        "turn markers (both) per turn: {:.1} µs; one short message append: {:.1} µs",
        median(markers),
        median(messages)
    );

    // 2. A request's context after a compaction, with and without the checkpoint.
    for turns in [20, 200] {
        let mut with = store.in_memory(Path::new("/w"));
        compacted(&mut with, turns, true);
        let mut without = store.in_memory(Path::new("/w"));
        compacted(&mut without, turns, false);
        let time = |session: &SessionManager| {
            let runs = 200;
            let samples: Vec<f64> = (0..ROUNDS)
                .map(|_| {
                    let start = Instant::now();
                    for _ in 0..runs {
                        std::hint::black_box(session.build_context());
                    }
                    start.elapsed().as_secs_f64() * 1e6 / runs as f64
                })
                .collect();
            median(samples)
        };
        println!(
            "build_context, {turns} turns compacted: with checkpoint {:.1} µs, without {:.1} µs",
            time(&with),
            time(&without)
        );
    }

    // 3. Writing the checkpoint (once per compaction): the branch's system state replayed.
    let mut big = store.in_memory(Path::new("/w"));
    compacted(&mut big, 2000, true);
    let samples: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            let state = knightcode_session::context::system_state(big.tree(), big.tree().leaf());
            std::hint::black_box(state.checkpoint(Millis(0)));
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    println!(
        "checkpoint of a 4,000-message branch: {:.1} µs",
        median(samples)
    );
}
