//! Tools declared on demand through the real binary: MCP tools with `deferred` exposure stay
//! out of the model's tool list, `tool_search` (activated for them) finds one and declares it
//! for the next request, the model calls it, and the activation is a `toolsAdded` system
//! message that a resumed session declares again. A server with 500 deferred tools leaves
//! the first request's list to the declared tools.

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

use crate::common::Sandbox;
use crate::oneshot_common::knightcode;
use crate::oneshot_common::offered_tools;
use crate::oneshot_common::sandbox;
use crate::suite::mcp::fixture_entry;
use crate::suite::mcp::write_config;

fn deferred_fixture(sandbox: &Sandbox, extra_tools: usize) {
    let mut entry = fixture_entry(sandbox);
    entry["exposure"] = json!("deferred");
    entry["env"] = json!({"FIXTURE_EXTRA_TOOLS": extra_tools.to_string()});
    write_config(sandbox, json!({"fixture": entry}));
}

fn search_then_call() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::tool_call("call_1", "tool_search", r#"{"query":"echo message back"}"#),
        ScriptedReply::tool_call("call_2", "mcp__fixture__echo", r#"{"message":"hi"}"#),
        ScriptedReply::text("Echoed."),
    ]
}

/// The last message of a recorded request (the tool result it sends back).
fn last_message(body: &Value) -> Value {
    body["messages"].as_array().unwrap().last().unwrap().clone()
}

fn mcp_tools(offered: &[String]) -> Vec<&String> {
    offered.iter().filter(|n| n.starts_with("mcp__")).collect()
}

/// Checks the three requests of [`search_then_call`]: nothing of the server's declared at
/// first, `tool_search` found `echo`, the model called it.
fn assert_search_then_call(server: &MockServer) {
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "one request per turn");
    let first = offered_tools(&requests[0].body);
    assert!(first.iter().any(|n| n == "tool_search"), "{first:?}");
    assert!(mcp_tools(&first).is_empty(), "{first:?}");
    let found = last_message(&requests[1].body);
    assert_eq!(found["tool_call_id"], "call_1");
    let text = found["content"].to_string();
    assert!(
        text.contains("Loaded") && text.contains("mcp__fixture__echo: Echoes the message back"),
        "{text}"
    );
    let second = offered_tools(&requests[1].body);
    assert!(
        second.iter().any(|n| n == "mcp__fixture__echo"),
        "{second:?}"
    );
    let called = last_message(&requests[2].body);
    assert_eq!(called["tool_call_id"], "call_2");
    assert!(
        called["content"].to_string().contains("echo: hi"),
        "{called}"
    );
}

#[test]
fn tool_search_declares_a_deferred_mcp_tool_the_model_then_calls_and_a_resume_keeps_it() {
    let mut replies = search_then_call();
    replies.push(ScriptedReply::text("Still here."));
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
    let sandbox = sandbox(&server);
    deferred_fixture(&sandbox, 0);
    let run = knightcode(&sandbox, &["-p", "echo hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stdout.contains("Echoed."), "{}", run.stdout);
    assert_search_then_call(&server);

    // The activation is a tool-set change in the session file.
    let files = sandbox.session_files();
    let entries = crate::common::read_jsonl(&files[0]);
    let added: Vec<&Value> = entries
        .iter()
        .filter(|e| e["message"]["role"] == "system")
        .filter_map(|e| e["message"]["toolsAdded"].as_array())
        .flatten()
        .filter(|t| t["name"] == "mcp__fixture__echo")
        .collect();
    assert_eq!(added.len(), 1, "{entries:#?}");
    assert_eq!(added[0]["description"], "Echoes the message back");

    // A resumed session declares it from its first request.
    let run = knightcode(&sandbox, &["--continue", "-p", "still there?"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    let resumed = offered_tools(&requests[3].body);
    assert_eq!(mcp_tools(&resumed), ["mcp__fixture__echo"], "{resumed:?}");
}

#[test]
fn tool_search_in_json_mode_reports_the_search_and_the_call() {
    let server =
        MockServer::start_blocking(WireFormat::OpenAiCompletions, search_then_call()).unwrap();
    let sandbox = sandbox(&server);
    deferred_fixture(&sandbox, 0);
    let run = knightcode(&sandbox, &["--mode", "json", "echo hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_search_then_call(&server);
    let ends: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    let names: Vec<&str> = ends
        .iter()
        .map(|e| e["toolName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tool_search", "mcp__fixture__echo"]);
    assert_eq!(
        ends[0]["result"]["details"],
        json!({"query": "echo message back", "tools": ["mcp__fixture__echo"]})
    );
}

#[test]
fn five_hundred_deferred_tools_leave_the_first_request_to_the_declared_tools() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call(
                "call_1",
                "tool_search",
                r#"{"query":"extra tool number 417"}"#,
            ),
            ScriptedReply::text("Found it."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    deferred_fixture(&sandbox, 500);
    let run = knightcode(&sandbox, &["-p", "find 417"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    let first = offered_tools(&requests[0].body);
    assert_eq!(first, ["read", "bash", "edit", "write", "tool_search"]);
    let found = last_message(&requests[1].body)["content"].to_string();
    assert!(found.contains("mcp__fixture__extra_417"), "{found}");
    let second = offered_tools(&requests[1].body);
    assert!(
        second.iter().any(|n| n == "mcp__fixture__extra_417"),
        "{second:?}"
    );
    assert!(mcp_tools(&second).len() <= 8, "{second:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_search_in_rpc_mode_declares_the_tool_the_model_then_calls() {
    crate::rpc_common::watchdog(async {
        let mut rpc = crate::rpc_common::Rpc::start_prepared(search_then_call(), &[], |sandbox| {
            deferred_fixture(sandbox, 0);
        })
        .await;
        rpc.client.prompt("echo hi").await.unwrap();
        let events = rpc.settled().await;
        let ends: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                knightcode_protocol::AgentEvent::ToolExecutionEnd { tool_name, .. } => {
                    Some(tool_name.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(ends, ["tool_search", "mcp__fixture__echo"]);
        assert_search_then_call(&rpc.server);
        rpc.shutdown().await;
    })
    .await;
}

/// The system prompt of a recorded request (OpenAI completions: the first message).
fn system_prompt(body: &Value) -> String {
    let first = &body["messages"][0];
    assert_eq!(first["role"], "system", "{first}");
    first["content"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn undeclared_servers_are_listed_in_the_mcp_servers_section_and_direct_ones_are_not() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Noted.")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let mut deferred = fixture_entry(&sandbox);
    deferred["exposure"] = json!("deferred");
    deferred["description"] = json!("Issue tracker\nsecond line is left out");
    let mut scripted = fixture_entry(&sandbox);
    scripted["exposure"] = json!("codemode");
    let direct = fixture_entry(&sandbox);
    write_config(
        &sandbox,
        json!({"tracker": deferred, "scripts-box": scripted, "plain": direct}),
    );
    let run = knightcode(&sandbox, &["-p", "hello"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let prompt = system_prompt(&server.requests()[0].body);
    let expected = "<mcp_servers>\n\
        MCP servers whose tools are not declared to you. Call the tools of `codemode` servers from codemode scripts. Load the tools of `tool_search` servers with `tool_search`.\n\
        - mcp__scripts_box (codemode): The test fixture\n\
        - mcp__tracker (tool_search): Issue tracker\n\
        </mcp_servers>";
    assert!(prompt.ends_with(expected), "{prompt}");
    assert!(!prompt.contains("mcp__plain"), "{prompt}");
}
