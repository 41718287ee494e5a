//! A small MCP server written by the tests (Node, newline-delimited JSON-RPC over stdio),
//! and the manager set up against it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use knightcode_mcp::ConnectOptions;
use knightcode_mcp::McpManager;
use knightcode_mcp::Scope;
use knightcode_mcp::ServerConfig;
use knightcode_mcp::Transport;

/// The fixture server. Tools: `echo {message}`; `crash` (writes to stderr, exits 3 mid-call);
/// `hang` (never answers); `progress {steps, ms}` (sends progress every `ms`, then answers);
/// `roots` (asks the client for its roots and returns them); `fail` (`isError` without
/// text); `big` (60,000 characters); `shrink` (withdraws `crash` and says
/// `tools/list_changed`); `upper {message}` (the message in capitals). `tools/list` comes in
/// two pages; `FIXTURE_EXTRA_TOOLS=N` in its environment adds `extra_1` … `extra_N`, and
/// `FIXTURE_RESOURCES=1` offers resources (`fixture://notes`, text; `fixture://data.bin`, a
/// blob) and a template (`fixture://item/{id}`), announcing changes: reading
/// `fixture://add/<name>` adds `fixture://<name>` and `fixture://<name>/{id}` quietly, reading
/// `fixture://announce` says `resources/list_changed`.
pub const SERVER_JS: &str = include_str!("fixture-server.js");

/// Writes the fixture into `dir` and returns a stdio entry that runs it.
pub fn fixture_server(dir: &Path, name: &str, timeout: Duration) -> ServerConfig {
    let script = dir.join("fixture-server.js");
    std::fs::write(&script, SERVER_JS).unwrap();
    ServerConfig {
        name: name.to_owned(),
        scope: Scope::User,
        source: dir.join("mcp.json"),
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
        timeout,
    }
}

pub fn options(cwd: &Path) -> ConnectOptions {
    ConnectOptions {
        cwd: cwd.to_path_buf(),
        home: None,
        env: Arc::new(|name| std::env::var(name).ok()),
        http: None,
        log: None,
        auth: None,
        provider_token: None,
    }
}

/// A manager for `servers`, started, with every server settled (bounded).
pub async fn started(servers: Vec<ServerConfig>, cwd: &Path) -> McpManager {
    let manager = McpManager::new(servers, options(cwd));
    manager.start();
    assert!(
        manager.wait_settled(Duration::from_secs(30)).await,
        "the fixture servers did not connect within 30 s"
    );
    manager
}
