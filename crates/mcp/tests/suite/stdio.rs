//! A stdio server (the Node fixture of `common`): listing, calls, progress, roots, errors,
//! a crash mid-call, timeouts, aborts and reconnecting.

use std::time::Duration;

use knightcode_mcp::McpError;
use knightcode_mcp::ServerState;
use knightcode_protocol::ContentBlock;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::common;

fn text(output: &knightcode_mcp::CallOutput) -> String {
    match output.content.first() {
        Some(ContentBlock::Text(block)) => block.text.clone(),
        other => panic!("no text: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_every_page_and_calls_a_tool() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::fixture_server(dir.path(), "fixture", Duration::from_secs(30));
    let manager = common::started(vec![server], dir.path()).await;
    let status = &manager.statuses()[0];
    assert_eq!(status.state, ServerState::Connected, "{:?}", status.error);
    let names: Vec<&str> = status.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "echo", "crash", "hang", "progress", "roots", "fail", "big", "shrink", "upper"
        ]
    );
    assert_eq!(
        status.tools[0].description.as_deref(),
        Some("Echoes the message back")
    );
    assert_eq!(status.tools[0].input_schema["type"], "object");

    let cancel = CancellationToken::new();
    let output = manager
        .call("fixture", "echo", json!({"message": "hi"}), &cancel, None)
        .await
        .unwrap();
    assert_eq!(text(&output), "echo: hi");
    assert!(!output.is_error);
    assert_eq!(output.structured["content"][0]["text"], "echo: hi");

    let failed = manager
        .call("fixture", "fail", json!({}), &cancel, None)
        .await
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(text(&failed), "MCP tool fixture/fail returned an error");

    let big = manager
        .call("fixture", "big", json!({}), &cancel, None)
        .await
        .unwrap();
    assert!(
        text(&big).starts_with("Warning: truncated output"),
        "{}",
        &text(&big)[..100]
    );
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_folder_is_the_one_root() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::fixture_server(dir.path(), "fixture", Duration::from_secs(30));
    let manager = common::started(vec![server], dir.path()).await;
    let output = manager
        .call(
            "fixture",
            "roots",
            json!({}),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
    let roots: serde_json::Value = serde_json::from_str(&text(&output)).unwrap();
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        roots,
        json!([{"uri": format!("file://{}", dir.path().display()), "name": name}])
    );
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_renews_the_timeout_is_reported_and_silence_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    // Four steps 400 ms apart take longer than the 1 s timeout; each step renews it.
    let server = common::fixture_server(dir.path(), "fixture", Duration::from_secs(1));
    let manager = common::started(vec![server], dir.path()).await;
    let cancel = CancellationToken::new();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    let progress: knightcode_mcp::ProgressSink =
        std::sync::Arc::new(move |text| sink.lock().unwrap().push(text));
    let output = manager
        .call(
            "fixture",
            "progress",
            json!({"steps": 4, "ms": 400}),
            &cancel,
            Some(progress),
        )
        .await
        .unwrap();
    assert_eq!(text(&output), "done after 4 steps");
    // rmcp hands notifications to the handler on tasks of their own, so the last one can
    // lose the race with the answer (which ends the call); the earlier ones came 400 ms ahead.
    let seen: Vec<String> = seen.lock().unwrap().clone();
    let seen: Vec<&str> = seen.iter().map(String::as_str).collect();
    let all = [
        "Progress 1/4",
        "Progress 2/4",
        "Progress 3/4",
        "Progress 4/4",
    ];
    assert!(!seen.is_empty() && all.starts_with(&seen), "{seen:?}");
    let error = manager
        .call("fixture", "hang", json!({}), &cancel, None)
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Timeout { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("MCP server \"fixture\" did not answer hang within 1 s"),
        "{error}"
    );
    // The server is still there.
    let output = manager
        .call(
            "fixture",
            "echo",
            json!({"message": "after"}),
            &cancel,
            None,
        )
        .await
        .unwrap();
    assert_eq!(text(&output), "echo: after");
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_cancels_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::fixture_server(dir.path(), "fixture", Duration::from_secs(60));
    let manager = common::started(vec![server], dir.path()).await;
    let cancel = CancellationToken::new();
    let call = manager.call("fixture", "hang", json!({}), &cancel, None);
    cancel.cancel();
    let error = call.await.unwrap_err();
    assert!(matches!(error, McpError::Aborted), "{error}");
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_call_is_an_error_with_stderr_and_the_next_call_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::fixture_server(dir.path(), "fixture", Duration::from_secs(30));
    let manager = common::started(vec![server], dir.path()).await;
    let cancel = CancellationToken::new();
    let error = manager
        .call("fixture", "crash", json!({}), &cancel, None)
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("MCP server \"fixture\": Connection closed"),
        "{message}"
    );
    assert!(
        message.contains("fixture: crashing on purpose"),
        "{message}"
    );
    assert_eq!(manager.statuses()[0].state, ServerState::Disconnected);
    let output = manager
        .call(
            "fixture",
            "echo",
            json!({"message": "again"}),
            &cancel,
            None,
        )
        .await
        .unwrap();
    assert_eq!(text(&output), "echo: again");
    assert_eq!(manager.statuses()[0].state, ServerState::Connected);
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_fails_with_what_it_said() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("broken.js");
    std::fs::write(
        &script,
        "process.stderr.write('missing API key\\n'); process.exit(1);",
    )
    .unwrap();
    let mut server = common::fixture_server(dir.path(), "broken", Duration::from_secs(30));
    server.transport = knightcode_mcp::Transport::Stdio {
        command: "node".into(),
        args: vec![script.display().to_string()],
        env: Vec::new(),
        cwd: None,
    };
    let mut missing = common::fixture_server(dir.path(), "missing", Duration::from_secs(30));
    missing.transport = knightcode_mcp::Transport::Stdio {
        command: "/nonexistent/knightcode-mcp-server".into(),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
    };
    let manager = common::started(vec![server, missing], dir.path()).await;
    let statuses = manager.statuses();
    assert_eq!(statuses[0].state, ServerState::Failed);
    let error = statuses[0].error.clone().unwrap();
    assert!(
        error.starts_with("MCP server \"broken\" failed to connect: "),
        "{error}"
    );
    assert!(error.ends_with("\nmissing API key"), "{error}");
    assert_eq!(statuses[1].state, ServerState::Failed);
    let error = statuses[1].error.clone().unwrap();
    assert!(
        error.starts_with("MCP server \"missing\" failed to connect: cannot start /nonexistent/knightcode-mcp-server: "),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_values_are_resolved_when_the_server_starts() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("env.js");
    std::fs::write(
        &script,
        format!(
            "{}\nprocess.stderr.write('A=' + process.env.A + ' B=' + process.env.B + '\\n');",
            common::SERVER_JS
        ),
    )
    .unwrap();
    let mut server = common::fixture_server(dir.path(), "env", Duration::from_secs(30));
    server.transport = knightcode_mcp::Transport::Stdio {
        command: "node".into(),
        args: vec![script.display().to_string()],
        env: vec![
            ("A".into(), "x-${KNIGHTCODE_MCP_TEST_VAR}-y".into()),
            ("B".into(), "!echo from-a-command".into()),
        ],
        cwd: None,
    };
    let mut options = common::options(dir.path());
    options.env =
        std::sync::Arc::new(|name| (name == "KNIGHTCODE_MCP_TEST_VAR").then(|| "value".to_owned()));
    let manager = knightcode_mcp::McpManager::new(vec![server], options);
    manager.start();
    assert!(manager.wait_settled(Duration::from_secs(30)).await);
    // The server quotes its environment on stderr; a crash shows the tail.
    let error = manager
        .call("env", "crash", json!({}), &CancellationToken::new(), None)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("A=x-value-y B=from-a-command"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_is_listed_again() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::fixture_server(dir.path(), "fixture", Duration::from_secs(30));
    let manager = common::started(vec![server], dir.path()).await;
    let mut changes = manager.changes();
    let output = manager
        .call(
            "fixture",
            "shrink",
            json!({}),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(text(&output), "crash withdrawn");
    let withdrawn = async {
        loop {
            manager.refresh_changed_tools().await;
            let tools = manager.statuses()[0].tools.clone();
            if tools.iter().all(|t| t.name != "crash") {
                return tools.len();
            }
            changes.changed().await.unwrap();
        }
    };
    let left = tokio::time::timeout(Duration::from_secs(30), withdrawn)
        .await
        .expect("the withdrawn tool was still listed after 30 s");
    assert_eq!(left, 8);
    manager.stop().await;
}
