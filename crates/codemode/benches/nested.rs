#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Codemode's cost over the tools it calls: a script making 100 nested calls of a tool that
//! waits 2 ms, one after another and all at once (`Promise.all`), run through the agent loop
//! (nested-call pipeline, events) with an in-process provider. Compared with the calls' own
//! time: the sum of the waits for the sequential script, the longest wait for the parallel
//! one. Issue 30 asks for at most 2x.
//!
//! Run with `cargo bench -p knightcode-codemode --bench nested`; see docs/perf.md.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use knightcode_agent::Agent;
use knightcode_agent::AgentConfig;
use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolDefinition;
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolOutput;
use knightcode_agent::ToolRegistry;
use knightcode_ai::Api;
use knightcode_ai::Model;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::Content;
use knightcode_testkit::FauxProvider;
use knightcode_testkit::FauxReply;
use serde_json::Value;
use serde_json::json;

const RUNS: usize = 9;
const CALLS: usize = 100;
const WAIT: Duration = Duration::from_millis(2);

/// Waits [`WAIT`] and adds what it actually waited to `spent`.
struct Wait {
    definition: ToolDefinition,
    spent: Arc<Mutex<Vec<Duration>>>,
}

impl Tool for Wait {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, _arguments: Value, _context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let start = Instant::now();
            tokio::time::sleep(WAIT).await;
            self.spent.lock().unwrap().push(start.elapsed());
            Ok(ToolOutput::text("waited"))
        })
    }

    fn exposure(&self) -> ToolExposure {
        ToolExposure::Codemode
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// One prompt whose only tool call is the codemode `script`; returns the script's wall time
/// (the codemode call's start to end) and the calls' own time by `own`.
async fn run(script: &str, own: fn(&[Duration]) -> Duration) -> (Duration, Duration) {
    let provider = FauxProvider::new([
        FauxReply::ToolCall {
            id: "call_1".to_owned(),
            name: "codemode".to_owned(),
            arguments: json!({ "code": script }),
        },
        FauxReply::Text("done".to_owned()),
    ]);
    let spent = Arc::new(Mutex::new(Vec::new()));
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(knightcode_codemode::Codemode::new(&[], None)));
    tools.register(Arc::new(Wait {
        definition: ToolDefinition {
            name: "wait".to_owned(),
            label: "wait".to_owned(),
            description: "Waits a moment".to_owned(),
            parameters: json!({"type": "object", "properties": {}}),
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
            execution: knightcode_agent::ExecutionMode::Parallel,
        },
        spent: Arc::clone(&spent),
    }));
    let mut config = AgentConfig::new(Model::new(
        "faux",
        "faux",
        Api::OpenAiCompletions,
        "http://unused",
    ));
    config.tools = tools;
    config.active_tools = Some(vec!["codemode".to_owned()]);
    let (events, mut receiver) =
        knightcode_agent::event_channel(knightcode_agent::DEFAULT_EVENT_CAPACITY);
    let timing = tokio::spawn(async move {
        let mut started = None;
        let mut took = Duration::ZERO;
        while let Some(event) = receiver.recv().await {
            match event {
                knightcode_protocol::AgentEvent::ToolExecutionStart { tool_call_id, .. }
                    if tool_call_id == "call_1" =>
                {
                    started = Some(Instant::now());
                }
                knightcode_protocol::AgentEvent::ToolExecutionEnd { tool_call_id, .. }
                    if tool_call_id == "call_1" =>
                {
                    took = started.map(|s| s.elapsed()).unwrap_or_default();
                }
                _ => {}
            }
        }
        took
    });
    let mut agent = Agent::new(Arc::new(provider), config, events);
    let prompt = AgentMessage::user(Content::Text("go".into()), knightcode_protocol::Millis(0));
    let outcome = agent.prompt(vec![prompt]).await.unwrap();
    let result = outcome
        .messages
        .iter()
        .find_map(|m| match m {
            AgentMessage::ToolResult(r) => {
                Some(knightcode_protocol::content::join_text(&r.content.0))
            }
            _ => None,
        })
        .unwrap();
    assert!(result.starts_with("Script completed"), "{result}");
    drop(agent);
    let took = timing.await.unwrap();
    let spent = spent.lock().unwrap().clone();
    assert_eq!(spent.len(), CALLS);
    (took, own(&spent))
}

fn report(name: &str, runs: Vec<(Duration, Duration)>) {
    let mut sorted: Vec<f64> = runs
        .iter()
        .map(|(took, own)| took.as_secs_f64() / own.as_secs_f64())
        .collect();
    sorted.sort_by(f64::total_cmp);
    let took = median(runs.iter().map(|r| r.0).collect());
    let own = median(runs.iter().map(|r| r.1).collect());
    println!(
        "{name}: script {:.1} ms, calls' own time {:.1} ms, ratio {:.2} (median of {RUNS})",
        took.as_secs_f64() * 1000.0,
        own.as_secs_f64() * 1000.0,
        sorted[sorted.len() / 2]
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let sequential =
        format!("for (let i = 0; i < {CALLS}; i++) await tools.wait({{}});\nreturn 'ok';");
    let parallel = format!(
        "await Promise.all(Array.from({{ length: {CALLS} }}, () => tools.wait({{}})));\nreturn 'ok';"
    );
    runtime.block_on(async {
        run(&sequential, |s| s.iter().sum()).await;
        let mut runs = Vec::new();
        for _ in 0..RUNS {
            runs.push(run(&sequential, |s| s.iter().sum()).await);
        }
        report("100 sequential calls", runs);
        let mut runs = Vec::new();
        for _ in 0..RUNS {
            runs.push(run(&parallel, |s| s.iter().max().copied().unwrap_or_default()).await);
        }
        report("100 parallel calls", runs);
    });
}
