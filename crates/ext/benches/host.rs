#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
//! What the extension host adds per call: `cargo bench -p knightcode-ext --bench host`.
//!
//! * a JS tool call (`hello`, whose body only builds its result), Rust → JS thread → Rust;
//! * an event with one trivial handler (`turn_end`, a notification) and a result-bearing
//!   event (`tool_call`, one handler that returns nothing);
//! * an event nobody listens to (answered without a cross-thread message).
//!
//! Each figure is the median of 30 batches of 2,000 sequential calls; these machines are
//! noisy.

use std::time::Duration;
use std::time::Instant;

use knightcode_agent::AgentHooks as _;
use knightcode_agent::PendingToolCall;
use knightcode_agent::ToolContext;
use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const BATCHES: usize = 30;
const CALLS: usize = 2_000;

const EXTENSION: &str = r#"
import { Type } from "@knightcode/ai";
export default function (pi) {
  pi.registerTool({
    name: "hello", label: "Hello", description: "Greets",
    parameters: Type.Object({ name: Type.String() }),
    async execute(_id, params) {
      return { content: [{ type: "text", text: `Hello, ${params.name}!` }], details: {} };
    },
  });
  pi.on("turn_end", () => {});
  pi.on("tool_call", () => undefined);
}
"#;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

async fn per_call<F, Fut>(mut call: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..200 {
        call().await;
    }
    let mut batches = Vec::with_capacity(BATCHES);
    for _ in 0..BATCHES {
        let start = Instant::now();
        for _ in 0..CALLS {
            call().await;
        }
        batches.push(start.elapsed() / CALLS as u32);
    }
    median(batches)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bench.ts");
        std::fs::write(&path, EXTENSION).unwrap();
        let started = Instant::now();
        let host = ExtensionHost::load(HostConfig {
            paths: vec![path],
            cwd: dir.path().to_path_buf(),
            mode: "print".to_owned(),
            flags: serde_json::Map::new(),
            memory_limit: None,
        })
        .await
        .unwrap();
        println!(
            "load (JS runtime start, bootstrap, one extension): {:?}",
            started.elapsed()
        );
        let tool = host.tools().into_iter().next().unwrap();
        let cancel = CancellationToken::new();
        let tool_call = per_call(|| {
            let context = ToolContext::new("call_1", dir.path(), cancel.clone());
            let tool = &tool;
            async move {
                tool.execute(json!({ "name": "Ada" }), context)
                    .await
                    .unwrap();
            }
        })
        .await;
        println!("JS tool call (hello), round trip: {tool_call:?}");
        let notification = per_call(|| async {
            host.dispatch("turn_end", json!({ "turnIndex": 0 })).await;
        })
        .await;
        println!("notification event, one trivial handler: {notification:?}");
        let arguments = json!({ "command": "ls" });
        let gate = per_call(|| {
            let call = PendingToolCall {
                tool_call_id: "call_1",
                tool_name: "bash",
                arguments: &arguments,
            };
            let host = &host;
            let cancel = &cancel;
            async move {
                host.before_tool_call(call, cancel).await;
            }
        })
        .await;
        println!("tool_call event, one handler returning nothing: {gate:?}");
        load_costs().await;
        let unheard = per_call(|| async {
            host.dispatch("session_tree", json!({})).await;
        })
        .await;
        println!("event nobody listens to: {unheard:?}");
    });
}

/// Where loading goes, with the reference's examples when they are installed
/// (`scripts/pi`, `npm ci`): stripping TypeScript (oxc) against a whole host load of the
/// same files (JS runtime start, bootstrap, strip, evaluate, factories).
async fn load_costs() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/pi/node_modules/@mariozechner/pi-coding-agent/examples/extensions");
    let names = [
        "hello.ts",
        "pirate.ts",
        "permission-gate.ts",
        "protected-paths.ts",
        "todo.ts",
        "tools.ts",
        "commands.ts",
        "event-bus.ts",
        "truncated-tool.ts",
        "status-line.ts",
    ];
    let paths: Vec<_> = names.iter().map(|n| examples.join(n)).collect();
    if !paths.iter().all(|p| p.exists()) {
        println!("(the reference's examples are not installed: npm ci in scripts/pi)");
        return;
    }
    let sources: Vec<String> = paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let mut strips = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        for (path, source) in paths.iter().zip(&sources) {
            knightcode_ext::transpile::strip(path, source).unwrap();
        }
        strips.push(start.elapsed());
    }
    println!("strip the ten examples' files: {:?}", median(strips));
    let empty = tempfile::tempdir().unwrap();
    let mut bare = Vec::new();
    let mut loads = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        let host = ExtensionHost::load(HostConfig {
            paths: Vec::new(),
            cwd: empty.path().to_path_buf(),
            mode: "rpc".to_owned(),
            flags: serde_json::Map::new(),
            memory_limit: None,
        })
        .await
        .unwrap();
        bare.push(start.elapsed());
        drop(host);
        let start = Instant::now();
        let host = ExtensionHost::load(HostConfig {
            paths: paths.clone(),
            cwd: empty.path().to_path_buf(),
            mode: "rpc".to_owned(),
            flags: serde_json::Map::new(),
            memory_limit: None,
        })
        .await
        .unwrap();
        loads.push(start.elapsed());
        drop(host);
    }
    println!(
        "JS runtime start and bootstrap, no extension: {:?}",
        median(bare)
    );
    println!("host load with the ten examples: {:?}", median(loads));
}
