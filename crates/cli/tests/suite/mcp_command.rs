//! The built-in `/mcp` command outside the terminal menu: `knightcode -p /mcp` reports each
//! server (those needing attention first) on stderr without asking the model, and over RPC
//! `/mcp reconnect <server>` takes up a server fixed after the session started, whose tools
//! the model can then call.

use knightcode_headless::rpc::RpcEvent;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_protocol::rpc::UiRequestKind;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::json;

use crate::oneshot_common::knightcode;
use crate::oneshot_common::sandbox;
use crate::rpc_common::Rpc;
use crate::rpc_common::watchdog;
use crate::suite::mcp::fixture_entry;
use crate::suite::mcp::returned_result;
use crate::suite::mcp::write_config;

#[test]
fn mcp_in_print_mode_reports_every_server_without_asking_the_model() {
    let model =
        knightcode_testkit::MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![])
            .unwrap();
    let sandbox = sandbox(&model);
    write_config(
        &sandbox,
        json!({
            "fixture": fixture_entry(&sandbox),
            "missing": {"command": "/nonexistent/mcp-server"},
        }),
    );
    let run = knightcode(&sandbox, &["-p", "/mcp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let report = &run.stderr[run.stderr.find("MCP servers:\n").expect(&run.stderr)..];
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[1], "missing: failed (stdio, codemode, global)");
    assert!(
        lines[2].starts_with("  MCP server \"missing\" failed to connect: "),
        "{report}"
    );
    assert_eq!(
        lines[3],
        "fixture: connected, 9 tools (stdio, direct, global)"
    );
    assert!(model.requests().is_empty(), "the model was not asked");

    let run = knightcode(&sandbox, &["-p", "/mcp reconnect"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("Which server? /mcp reconnect <server>, one of: fixture, missing"),
        "{}",
        run.stderr
    );
    let run = knightcode(&sandbox, &["--no-mcp", "-p", "/mcp"]);
    assert!(
        run.stderr
            .contains("MCP is off in this session (--no-mcp)."),
        "{}",
        run.stderr
    );
    assert!(model.requests().is_empty(), "the model was not asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_reconnect_takes_up_a_server_fixed_after_the_session_started() {
    watchdog(async {
        let replies = vec![
            ScriptedReply::tool_call("call_1", "mcp__late__echo", r#"{"message":"hi"}"#),
            ScriptedReply::text("Echoed."),
        ];
        let mut rpc = Rpc::start_prepared(replies, &[], |sandbox| {
            // The server's script is not there yet: it fails to start.
            let mut entry = fixture_entry(sandbox);
            let script = sandbox.root.path().join("late-server.js");
            let written = entry["args"][0].as_str().unwrap().to_owned();
            std::fs::rename(&written, &script).unwrap();
            std::fs::write(sandbox.root.path().join("late-path"), &written).unwrap();
            entry["args"] = json!([written]);
            write_config(sandbox, json!({ "late": entry }));
        })
        .await;
        // Fixed: the script is where the config says.
        let written = std::fs::read_to_string(rpc.sandbox.root.path().join("late-path")).unwrap();
        std::fs::rename(rpc.sandbox.root.path().join("late-server.js"), &written).unwrap();

        let disposition = rpc.client.prompt("/mcp reconnect late").await.unwrap();
        assert_eq!(disposition, Some(PromptDisposition::Handled));
        let notice = loop {
            if let RpcEvent::UiRequest(request) = rpc.next().await
                && let UiRequestKind::Notify { message, .. } = &request.kind
                && message.contains("late")
            {
                break message.clone();
            }
        };
        assert_eq!(
            notice,
            "MCP server \"late\" reconnected: 9 tools; they are offered from the next prompt."
        );

        rpc.client.prompt("echo hi").await.unwrap();
        rpc.settled().await;
        let last = returned_result(&rpc.server);
        assert!(last["content"].to_string().contains("hi"), "{last}");
        rpc.shutdown().await;
    })
    .await;
}

#[test]
fn mcp_reconnect_in_the_terminal_says_what_happened_as_a_notice() {
    let sandbox = crate::tui_common::sandbox(vec![ScriptedReply::text("an answer")]);
    write_config(
        &sandbox,
        json!({
            "fixture": fixture_entry(&sandbox),
            "missing": {"command": "/nonexistent/mcp-server"},
        }),
    );
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    // The first prompt waits for the servers to settle.
    tui.submit("hello");
    tui.wait_for_answer("an answer");
    // (`/mcp` alone is a menu there: tui_mcp.rs.)
    tui.submit("/mcp reconnect fixture");
    tui.wait_for_text("MCP server \"fixture\" reconnected: 9 tools");
    tui.submit("/mcp reconnect missing");
    tui.wait_for_text("MCP server \"missing\" could not reconnect");
}

/// The servers start once the front end has shown itself (after its first command); an RPC
/// client that only listens still gets them, a moment after the session started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rpc_client_that_sends_nothing_still_gets_its_servers_started() {
    watchdog(async {
        let rpc = Rpc::start_prepared(vec![], &[], |sandbox| {
            let mut entry = fixture_entry(sandbox);
            let script = entry["args"][0].as_str().unwrap().to_owned();
            let started = sandbox.root.path().join("started");
            let made = std::process::Command::new("mkfifo")
                .arg(&started)
                .status()
                .unwrap();
            assert!(made.success(), "mkfifo");
            // The server says it started through the pipe, then runs as usual.
            entry["command"] = json!("sh");
            entry["args"] = json!([
                "-c",
                r#"echo started > "$1" && exec node "$2""#,
                "sh",
                started,
                script
            ]);
            write_config(sandbox, json!({ "fixture": entry }));
        })
        .await;
        // Opening the pipe waits for the server to open its end.
        let said = tokio::fs::read_to_string(rpc.sandbox.root.path().join("started"))
            .await
            .unwrap();
        assert_eq!(said, "started\n", "the server started with no command sent");
        rpc.shutdown().await;
    })
    .await;
}
