//! The `codemode` tool through the real binary with MCP tools: a server with the default
//! (`codemode`) exposure activates it, its description does not list the server's tools, a
//! script calls two of them with `Promise.all` and filters what they return, the nested
//! calls are reported with `<parent>/<n>` ids and recorded on the result, an extension gate
//! blocks a nested call, and `store()` values persist on the branch.

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

/// The fixture with its default exposure, `codemode`.
fn codemode_fixture(sandbox: &Sandbox) {
    let mut entry = fixture_entry(sandbox);
    entry.as_object_mut().unwrap().remove("exposure");
    write_config(sandbox, json!({"fixture": entry}));
}

fn script_call(id: &str, code: &str) -> ScriptedReply {
    ScriptedReply::tool_call(id, "codemode", json!({ "code": code }).to_string())
}

/// The text of the tool result the request `index` sends back.
fn returned_text(server: &MockServer, index: usize) -> String {
    let body = &server.requests()[index].body;
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "tool", "{last}");
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

const PARALLEL: &str = "const [a, b] = await Promise.all([\n  tools.mcp__fixture__echo({ message: 'one' }),\n  tools.mcp__fixture__upper({ message: 'two' }),\n]);\nreturn [a, b].map((r) => r.content[0].text).filter((t) => t.startsWith('echo'));";

#[test]
fn a_codemode_script_calls_two_mcp_tools_at_once_and_filters_their_output() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            script_call("call_1", PARALLEL),
            ScriptedReply::text("Filtered."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    codemode_fixture(&sandbox);
    let run = knightcode(&sandbox, &["--mode", "json", "echo and shout"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    let first = &server.requests()[0].body;
    let offered = offered_tools(first);
    assert!(offered.iter().any(|n| n == "codemode"), "{offered:?}");
    assert!(
        offered.iter().all(|n| !n.starts_with("mcp__")),
        "{offered:?}"
    );
    let codemode = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "codemode")
        .unwrap();
    let description = codemode["function"]["description"].as_str().unwrap();
    assert!(description.contains("searchTools"), "{description}");
    assert!(!description.contains("mcp__fixture"), "{description}");

    let text = returned_text(&server, 1);
    assert!(text.contains("Script completed"), "{text}");
    assert!(text.contains("echo: one"), "{text}");
    assert!(!text.contains("TWO"), "{text}");

    // The nested calls are events with `<parent>/<n>` ids, and recorded on the result.
    let events: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut nested: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end" && e["parentToolCallId"] == "call_1")
        .map(|e| {
            (
                e["toolCallId"].as_str().unwrap().to_owned(),
                e["toolName"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    nested.sort();
    assert_eq!(
        nested,
        [
            ("call_1/1".to_owned(), "mcp__fixture__echo".to_owned()),
            ("call_1/2".to_owned(), "mcp__fixture__upper".to_owned())
        ]
    );
    let entries = crate::common::read_jsonl(&sandbox.session_files()[0]);
    let result = entries
        .iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .unwrap();
    assert_eq!(result["message"]["toolName"], "codemode");
    let calls = result["message"]["nestedCalls"]["calls"]
        .as_array()
        .unwrap();
    assert_eq!(calls.len(), 2, "{result}");
    assert!(calls.iter().all(|c| c["status"] == "ok"), "{result}");
}

/// Blocks the fixture's `echo`, from scripts too.
const GATE: &str = r#"
export default function (pi) {
  pi.on("tool_call", async (event) => {
    if (event.toolName === "mcp__fixture__echo") {
      return { block: true, reason: "MCP echo blocked by the test's gate" };
    }
  });
}
"#;

#[test]
fn a_blocked_nested_call_rejects_in_the_script() {
    let code = "try {\n  await tools.mcp__fixture__echo({ message: 'x' });\n  return 'not blocked';\n} catch (error) {\n  return 'caught: ' + error.message;\n}";
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![script_call("call_1", code), ScriptedReply::text("Blocked.")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    codemode_fixture(&sandbox);
    std::fs::write(sandbox.project.join("gate.ts"), GATE).unwrap();
    let run = knightcode(&sandbox, &["-e", "gate.ts", "-p", "try echo"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let text = returned_text(&server, 1);
    assert!(
        text.contains("caught: MCP echo blocked by the test's gate"),
        "{text}"
    );
}

#[test]
fn store_values_persist_on_the_branch_and_a_failed_script_keeps_none() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            script_call("call_1", "store('count', { n: 1 });\nreturn 'stored';"),
            script_call("call_2", "store('count', { n: 99 });\nthrow new Error('nope');"),
            script_call("call_3", "const found = await searchTools('upper');\nreturn { count: load('count'), first: found[0].name };"),
            ScriptedReply::text("Done."),
            script_call("call_4", "return load('count');"),
            ScriptedReply::text("Resumed."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    codemode_fixture(&sandbox);
    let run = knightcode(&sandbox, &["-p", "count"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let failed = returned_text(&server, 2);
    assert!(failed.contains("Script failed"), "{failed}");
    assert!(failed.contains("Script error: Error: nope"), "{failed}");
    let loaded = returned_text(&server, 3);
    assert!(loaded.contains(r#""n": 1"#), "{loaded}");
    assert!(loaded.contains("mcp__fixture__upper"), "{loaded}");
    let entries = crate::common::read_jsonl(&sandbox.session_files()[0]);
    let stores: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "custom" && e["customType"] == "codemode-store")
        .collect();
    assert_eq!(stores.len(), 1, "{entries:#?}");
    assert_eq!(
        stores[0]["data"],
        json!({"set": {"count": {"n": 1}}, "delete": []})
    );

    let run = knightcode(&sandbox, &["--continue", "-p", "again"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let resumed = returned_text(&server, 5);
    assert!(resumed.contains(r#""n": 1"#), "{resumed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codemode_script_in_rpc_mode_reports_its_nested_calls() {
    crate::rpc_common::watchdog(async {
        let replies = vec![
            script_call("call_1", PARALLEL),
            ScriptedReply::text("Filtered."),
        ];
        let mut rpc = crate::rpc_common::Rpc::start_prepared(replies, &[], codemode_fixture).await;
        rpc.client.prompt("echo and shout").await.unwrap();
        let events = rpc.settled().await;
        let mut nested: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                knightcode_protocol::AgentEvent::ToolExecutionEnd {
                    tool_call_id,
                    parent_tool_call_id: Some(parent),
                    ..
                } if parent == "call_1" => Some(tool_call_id.as_str()),
                _ => None,
            })
            .collect();
        nested.sort_unstable();
        assert_eq!(nested, ["call_1/1", "call_1/2"]);
        let text = returned_text(&rpc.server, 1);
        assert!(
            text.contains("echo: one") && !text.contains("TWO"),
            "{text}"
        );
        rpc.shutdown().await;
    })
    .await;
}
