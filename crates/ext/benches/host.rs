#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
//! What the extension host adds per call: `cargo bench -p knightcode-ext --bench host`.
//!
//! * a JS tool call (`hello`, whose body only builds its result), Rust → JS thread → Rust;
//! * an event with one trivial handler (`turn_end`, a notification) and a result-bearing
//!   event (`tool_call`, one handler that returns nothing);
//! * an event nobody listens to (answered without a cross-thread message).
//!
//! Each figure is the median of 30 batches of 2,000 sequential calls; these machines are
//! noisy. `KC_BENCH_EXAMPLES` points at the reference's `examples/extensions` folder when
//! it is not installed in `scripts/pi` (`npm ci` there). A word after the command keeps
//! only the measures whose names contain it (`-- tool_call` to profile one of them).

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

/// CPU time of the whole process so far (every thread), from `/proc/self/stat`; `None`
/// elsewhere. Waiting for a core costs no CPU, so this is the figure a loaded machine
/// measures fairly.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime (fields 14 and 15), in clock ticks of 1/100 s on Linux.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The median wall time per call over the batches, and the CPU time per call over all of
/// them (every thread: the caller's and the JS thread's).
async fn per_call<F, Fut>(mut call: F) -> (Duration, Option<Duration>)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..200 {
        call().await;
    }
    let mut batches = Vec::with_capacity(BATCHES);
    let cpu_before = cpu_time();
    for _ in 0..BATCHES {
        let start = Instant::now();
        for _ in 0..CALLS {
            call().await;
        }
        batches.push(start.elapsed() / CALLS as u32);
    }
    let cpu = cpu_time()
        .zip(cpu_before)
        .map(|(after, before)| (after - before) / (BATCHES * CALLS) as u32);
    (median(batches), cpu)
}

fn show(what: &str, (wall, cpu): (Duration, Option<Duration>)) {
    match cpu {
        Some(cpu) => println!("{what}: {wall:?} (CPU {cpu:?} per call)"),
        None => println!("{what}: {wall:?}"),
    }
}

/// Whether the measure called `name` runs: every one, or those the command line names.
fn wanted(name: &str) -> bool {
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    words.is_empty() || words.iter().any(|w| name.contains(w.as_str()))
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
        let host = ExtensionHost::load_with_cache(
            HostConfig {
                paths: vec![path],
                cwd: dir.path().to_path_buf(),
                mode: "print".to_owned(),
                flags: serde_json::Map::new(),
                memory_limit: None,
            },
            None,
        )
        .await
        .unwrap();
        println!(
            "load (JS runtime start, bootstrap, one extension): {:?}",
            started.elapsed()
        );
        let tool = host.tools().into_iter().next().unwrap();
        let cancel = CancellationToken::new();
        if wanted("JS tool call") {
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
            show("JS tool call (hello), round trip", tool_call);
        }
        if wanted("notification event") {
            let notification = per_call(|| async {
                host.dispatch("turn_end", json!({ "turnIndex": 0 })).await;
            })
            .await;
            show("notification event, one trivial handler", notification);
        }
        if wanted("tool_call event") {
            let arguments = json!({ "command": "ls" });
            let gate = per_call(|| {
                let call = PendingToolCall {
                    tool_call_id: "call_1",
                    tool_name: "bash",
                    arguments: &arguments,
                    parent_tool_call_id: None,
                };
                let host = &host;
                let cancel = &cancel;
                async move {
                    host.before_tool_call(call, cancel).await;
                }
            })
            .await;
            show("tool_call event, one handler returning nothing", gate);
        }
        if wanted("load") {
            load_costs().await;
        }
        if wanted("event nobody listens to") {
            let unheard = per_call(|| async {
                host.dispatch("session_tree", json!({})).await;
            })
            .await;
            show("event nobody listens to", unheard);
        }
    });
}

/// Where loading goes, with the reference's examples when they are installed
/// (`scripts/pi`, `npm ci`): stripping TypeScript (oxc) against a whole host load of the
/// same files (JS runtime start, bootstrap, strip, evaluate, factories).
async fn load_costs() {
    let examples = std::env::var_os("KC_BENCH_EXAMPLES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
                "../../scripts/pi/node_modules/@mariozechner/pi-coding-agent/examples/extensions",
            )
        });
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
    let timed = |paths: Vec<std::path::PathBuf>, cache: Option<std::path::PathBuf>| {
        let cwd = empty.path().to_path_buf();
        async move {
            let start = Instant::now();
            let host = ExtensionHost::load_with_cache(
                HostConfig {
                    paths,
                    cwd,
                    mode: "rpc".to_owned(),
                    flags: serde_json::Map::new(),
                    memory_limit: None,
                },
                cache,
            )
            .await
            .unwrap();
            let elapsed = start.elapsed();
            drop(host);
            elapsed
        }
    };
    // Per round: without a cache; with an empty one (cold: compiles and writes); with the
    // one that filled (warm).
    let mut rows: [(&str, Vec<Duration>); 6] = [
        (
            "JS runtime start and bootstrap, no extension, no cache",
            Vec::new(),
        ),
        (
            "JS runtime start and bootstrap, no extension, cold cache",
            Vec::new(),
        ),
        (
            "JS runtime start and bootstrap, no extension, warm cache",
            Vec::new(),
        ),
        ("host load with the ten examples, no cache", Vec::new()),
        ("host load with the ten examples, cold cache", Vec::new()),
        ("host load with the ten examples, warm cache", Vec::new()),
    ];
    for _ in 0..15 {
        for (offset, files) in [(0, Vec::new()), (3, paths.clone())] {
            let cache = tempfile::tempdir().unwrap();
            let dir = cache.path().join("ext");
            rows[offset].1.push(timed(files.clone(), None).await);
            rows[offset + 1]
                .1
                .push(timed(files.clone(), Some(dir.clone())).await);
            rows[offset + 2].1.push(timed(files, Some(dir)).await);
        }
    }
    for (what, times) in rows {
        println!("{what}: {:?}", median(times));
    }
}
