#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! What an MCP tool call costs over the server's own time: the fixture server's `echo` called
//! through `McpManager::call` (rmcp's client, the progress-renewed timeout, the result's
//! model view) against the same server driven with raw JSON-RPC lines over its pipes (the
//! server's own time plus the bare pipe round trip). Issue 30 asks for at most 1 ms more.
//!
//! Run with `cargo bench -p knightcode-mcp --bench call` (needs `node`); see docs/perf.md.

use std::io::BufRead as _;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use knightcode_mcp::ConnectOptions;
use knightcode_mcp::McpManager;
use knightcode_mcp::Scope;
use knightcode_mcp::ServerConfig;
use knightcode_mcp::Transport;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const SERVER_JS: &str = include_str!("../tests/common/fixture-server.js");
const CALLS: usize = 300;
const RUNS: usize = 7;

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn client_calls(runtime: &tokio::runtime::Runtime, script: &std::path::Path) -> Duration {
    let config = ServerConfig {
        name: "fixture".to_owned(),
        scope: Scope::User,
        source: script.with_file_name("mcp.json"),
        overridden: false,
        transport: Transport::Stdio {
            command: "node".to_owned(),
            args: vec![script.display().to_string()],
            env: Vec::new(),
            cwd: None,
        },
        exposure: knightcode_mcp::Exposure::Direct,
        tool_exposure: Vec::new(),
        description: None,
        enabled: true,
        timeout: Duration::from_secs(30),
    };
    let options = ConnectOptions {
        cwd: script.parent().unwrap().to_path_buf(),
        home: None,
        env: Arc::new(|name| std::env::var(name).ok()),
        http: None,
        log: None,
        auth: None,
        provider_token: None,
    };
    runtime.block_on(async {
        let manager = McpManager::new(vec![config], options);
        manager.start();
        assert!(manager.wait_settled(Duration::from_secs(30)).await);
        let cancel = CancellationToken::new();
        let mut times = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let start = Instant::now();
            let output = manager
                .call("fixture", "echo", json!({"message": "hi"}), &cancel, None)
                .await
                .unwrap();
            times.push(start.elapsed());
            assert!(!output.is_error);
        }
        manager.stop().await;
        median(times)
    })
}

fn raw_calls(script: &std::path::Path) -> Duration {
    let mut child = std::process::Command::new("node")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let send = |message: serde_json::Value, stdin: &mut std::process::ChildStdin| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}),
        &mut stdin,
    );
    stdout.read_line(&mut line).unwrap();
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &mut stdin,
    );
    let mut times = Vec::with_capacity(CALLS);
    for id in 1..=CALLS {
        line.clear();
        let start = Instant::now();
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}}),
            &mut stdin,
        );
        stdout.read_line(&mut line).unwrap();
        times.push(start.elapsed());
        assert!(line.contains("echo: hi"), "{line}");
    }
    drop(stdin);
    let _ = child.wait();
    median(times)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fixture-server.js");
    std::fs::write(&script, SERVER_JS).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut client = Vec::new();
    let mut raw = Vec::new();
    for _ in 0..RUNS {
        raw.push(raw_calls(&script));
        client.push(client_calls(&runtime, &script));
    }
    let client = median(client);
    let raw = median(raw);
    println!(
        "echo call: McpManager {:.1} µs, raw JSON-RPC {:.1} µs, added {:.1} µs (medians of {RUNS} runs of {CALLS} calls)",
        client.as_secs_f64() * 1e6,
        raw.as_secs_f64() * 1e6,
        (client.as_secs_f64() - raw.as_secs_f64()) * 1e6
    );
}
