//! Compaction preparation at scale, for `scripts/bench/compaction.sh`: a 100,000-entry
//! session in memory (user prompts, assistant replies with tool calls, tool results), then
//! the work a compaction does before it asks the model — token estimate, cut point, the
//! messages to summarise, their serialization — and the footer's per-message context figure.
//! Prints one JSON object of medians.
//!
//!   cargo run --release -p knightcode-runtime --example compaction_bench -- [ENTRIES]

#![allow(clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::Instant;

use knightcode_ai::ContextMeter;
use knightcode_clock::SystemClock;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_protocol::Tokens;
use knightcode_protocol::ToolCall;
use knightcode_protocol::ToolResultMessage;
use knightcode_runtime::compaction::prepare;
use knightcode_session::SessionManager;

const RUNS: usize = 7;

/// Entry `i` of the synthetic session: a turn is a prompt, a reply with a tool call, its
/// result and a closing reply.
fn message(i: usize) -> AgentMessage {
    let timestamp = Millis(1_764_000_000_000 + i as i64);
    let assistant = |content: Vec<ContentBlock>, stop: StopReason, tokens: u64| {
        let mut message = AssistantMessage {
            content: Blocks(content),
            api: "openai-completions".into(),
            provider: "mock".into(),
            model: "mock-model".into(),
            stop_reason: stop.into(),
            timestamp,
            ..AssistantMessage::default()
        };
        message.usage.input = Tokens(tokens);
        AgentMessage::Assistant(Box::new(message))
    };
    match i % 4 {
        0 => AgentMessage::user(
            format!("turn {i}: please look at src/module_{i}.rs and fix the failing test"),
            timestamp,
        ),
        1 => assistant(
            vec![
                ContentBlock::text("Reading the file first."),
                ContentBlock::ToolCall(ToolCall {
                    id: format!("call_{i}"),
                    name: "read".into(),
                    arguments: serde_json::json!({"path": format!("src/module_{i}.rs")}),
                    ..ToolCall::default()
                }),
            ],
            StopReason::ToolUse,
            (i as u64) * 40,
        ),
        2 => AgentMessage::ToolResult(Box::new(ToolResultMessage {
            tool_call_id: format!("call_{}", i - 1),
            tool_name: "read".into(),
            content: vec![ContentBlock::text(
                "fn main() { println!(\"hi\"); }\n".repeat(20),
            )]
            .into(),
            is_error: false,
            timestamp,
            ..ToolResultMessage::default()
        })),
        _ => assistant(
            vec![ContentBlock::text(
                "The test failed because the parser skipped the last token; fixed it.",
            )],
            StopReason::Stop,
            (i as u64) * 40,
        ),
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let entries: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("ENTRIES is a number"))
        .unwrap_or(100_000);
    let messages: Vec<AgentMessage> = (0..entries).map(message).collect();
    let mut session = SessionManager::in_memory(
        std::path::Path::new("/tmp"),
        None,
        Arc::new(SystemClock::new()),
    );
    for message in &messages {
        session.append_message(message.clone()).expect("append");
    }

    let mut prepare_ms = Vec::new();
    let mut summarised = 0;
    let mut chars = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        // Preparation serializes what it summarises as it goes (the messages are not copied).
        let preparation = prepare(&session, 20_000, false).expect("something to compact");
        let prepared = start.elapsed();
        prepare_ms.push(prepared.as_secs_f64() * 1000.0);
        summarised = preparation.history_count;
        chars = preparation.history_text.len();
    }

    let mut context_ms = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let context = session.build_context();
        let branch = session.branch(None).expect("branch");
        std::hint::black_box((context.messages.len(), branch.len()));
        context_ms.push(start.elapsed().as_secs_f64() * 1000.0);
    }

    let mut serialize_ms = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let text = knightcode_runtime::compaction::summary::serialize_conversation(&messages);
        std::hint::black_box(text.len());
        serialize_ms.push(start.elapsed().as_secs_f64() * 1000.0);
    }

    let mut meter_ns = Vec::new();
    for _ in 0..RUNS {
        let mut meter = ContextMeter::default();
        let start = Instant::now();
        for message in &messages {
            meter.push(message);
        }
        std::hint::black_box(meter.tokens());
        meter_ns.push(start.elapsed().as_secs_f64() * 1e9 / messages.len() as f64);
    }

    let prepare = median(prepare_ms);
    println!(
        "{}",
        serde_json::json!({
            "entries": entries,
            "summarised_messages": summarised,
            "serialized_chars": chars,
            "total_ms": prepare,
            "of_which_context_build_ms": median(context_ms),
            "of_which_serialization_ms": median(serialize_ms),
            "context_meter_ns_per_message": median(meter_ns),
        })
    );
}
