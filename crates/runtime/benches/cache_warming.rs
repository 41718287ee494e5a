#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Cache warming's cost on the request path: what every real request pays for the warmer
//! to take it up (a copy of the request when its cache is worth keeping), and the check
//! after each change of the session.
//!
//! Run with `cargo bench -p knightcode-runtime --bench cache_warming`. Medians over several
//! runs; see docs/perf.md.

use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use knightcode_ai::Api;
use knightcode_ai::Context;
use knightcode_ai::Model;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ToolDeclaration;
use knightcode_runtime::cache_warming::CacheWarming;
use knightcode_runtime::cache_warming::CacheWarmingMode;
use serde_json::json;

const RUNS: usize = 7;
const CALLS: u32 = 2_000;

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// A conversation of `turns` user/assistant pairs of a few hundred characters each, and
/// the seven built-in tools' worth of schemas.
fn request(provider: &str, turns: usize) -> StreamRequest {
    let text = "a line of a conversation about some code ".repeat(10);
    let mut messages = Vec::new();
    for _ in 0..turns {
        messages.push(Arc::new(
            serde_json::from_value::<AgentMessage>(
                json!({"role": "user", "content": text, "timestamp": 0}),
            )
            .unwrap(),
        ));
        messages.push(Arc::new(
            serde_json::from_value::<AgentMessage>(json!({
                "role": "assistant", "content": [{"type": "text", "text": text}],
                "api": "anthropic-messages", "provider": provider, "model": "m",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                    "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0,
                    "cacheWrite": 0, "total": 0}},
                "stopReason": "stop", "timestamp": 0
            }))
            .unwrap(),
        ));
    }
    let tools = (0..7)
        .map(|i| {
            serde_json::from_value::<ToolDeclaration>(json!({
                "name": format!("tool{i}"),
                "description": "Reads a file. ".repeat(30),
                "parameters": {"type": "object", "properties": {
                    "path": {"type": "string", "description": "Path of the file to read"},
                    "offset": {"type": "number", "description": "Line to start at"},
                    "limit": {"type": "number", "description": "Lines to read at most"}
                }, "required": ["path"]}
            }))
            .unwrap()
        })
        .collect();
    StreamRequest {
        model: Model::new(provider, "m", Api::AnthropicMessages, "https://x"),
        context: Context {
            system_prompt: Some("You are a coding agent. ".repeat(400)),
            messages,
            tools,
        },
        options: StreamOptions::default(),
    }
}

fn per_call(f: impl Fn()) -> Duration {
    let runs = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..CALLS {
                f();
            }
            started.elapsed() / CALLS
        })
        .collect();
    median(runs)
}

fn main() {
    let clock: Arc<dyn knightcode_agent::Clock> = Arc::new(knightcode_ai::SystemClock::new());
    for turns in [20, 200] {
        let kept = request("anthropic", turns);
        let unknown = request("mock", turns);
        let warming = CacheWarming::new(Arc::clone(&clock), CacheWarmingMode::Streaming);
        let off = CacheWarming::new(Arc::clone(&clock), CacheWarmingMode::Off);
        println!(
            "{turns} turns: start, Anthropic model (request copied): {:?}",
            per_call(|| warming.start(&kept))
        );
        println!(
            "{turns} turns: start, model without a cache lifetime: {:?}",
            per_call(|| warming.start(&unknown))
        );
        println!(
            "{turns} turns: start, cacheWarming off: {:?}",
            per_call(|| off.start(&kept))
        );
        warming.start(&kept);
        let model = kept.model.clone();
        let messages = kept.context.messages.clone();
        println!(
            "{turns} turns: check_context (conversation unchanged): {:?}",
            per_call(|| warming.check_context(&model, &messages))
        );
    }
}
