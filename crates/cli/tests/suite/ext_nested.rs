//! `ctx.executeTool` through the real binary (JSON mode, scripted mock model): a tool runs
//! built-in tools as nested calls, with validation, `tool_call`/`tool_result` handlers and
//! `tool_execution_*` events carrying `parentToolCallId`; the calls never reach the
//! conversation, and their record is `nestedCalls` on the calling tool's result message.

use crate::oneshot_common;
use crate::rpc_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use serde_json::Value;
use serde_json::json;

const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";

export default function (pi) {
  const seen = [];
  pi.on("tool_call", (event) => {
    seen.push(`call ${event.toolCallId} ${event.toolName} parent=${event.parentToolCallId}`);
    if (event.toolName === "bash" && event.input.command.includes("forbidden")) {
      return { block: true, reason: "forbidden commands are blocked" };
    }
  });
  pi.on("tool_result", (event) => {
    seen.push(`result ${event.toolCallId} parent=${event.parentToolCallId}`);
  });
  const usage = (n) => ({ input: n, output: n, cacheRead: 0, cacheWrite: 0, totalTokens: 2 * n, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: n / 100 } });
  pi.registerTool({
    name: "metered", label: "Metered", description: "Makes a model call of its own", parameters: Type.Object({}),
    exposure: "codemode",
    execute: async () => ({ content: [{ type: "text", text: "metered" }], details: {}, usage: usage(10) }),
  });
  pi.registerTool({
    name: "orchestrate",
    label: "Orchestrate",
    description: "Runs other tools",
    parameters: Type.Object({}),
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const summary = (o) => [o.toolCall.id, o.toolCall.name, o.isError, o.result.content.map((c) => c.text).join("").slice(0, 60)];
      const read = await ctx.executeTool("read", { path: "notes.txt" });
      const invalid = await ctx.executeTool("read", { nope: 1 });
      const missing = await ctx.executeTool("missing", {});
      const blocked = await ctx.executeTool("bash", { command: "echo forbidden" });
      let updates = 0;
      const echoed = await ctx.executeTool("bash", { command: "echo nested-hi" }, { onUpdate: () => { updates++; } });
      const controller = new AbortController();
      const pending = ctx.executeTool("bash", { command: "sleep 30; echo late" }, { signal: controller.signal });
      controller.abort();
      const aborted = await pending;
      const metered = await ctx.executeTool("metered", {});
      const report = {
        outcomes: [read, invalid, missing, blocked, echoed, aborted].map(summary),
        durations: typeof read.durationMs,
        tools: ctx.tools.map((t) => t.name),
        updates: updates > 0,
        meteredUsage: metered.result.usage && metered.result.usage.input,
        seen,
      };
      return { content: [{ type: "text", text: JSON.stringify(report) }], details: { ok: true }, usage: usage(1) };
    },
  });
}
"#;

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect()
}

#[test]
fn a_tool_runs_other_tools_through_the_pipeline_and_the_session_keeps_their_record() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "orchestrate", "{}"),
            ScriptedReply::text("Done."),
        ],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("nested.ts"), EXTENSION).unwrap();
    std::fs::write(sb.project.join("notes.txt"), "the notes\n").unwrap();
    let run = knightcode(&sb, &["--mode", "json", "-e", "nested.ts", "go"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    // What the calling tool got back, as the model sees it.
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let messages = requests[1].body["messages"].as_array().unwrap();
    let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(
        results.len(),
        1,
        "nested calls never reach the model: {messages:?}"
    );
    let report: Value = serde_json::from_str(results[0]["content"].as_str().unwrap()).unwrap();
    let outcomes = report["outcomes"].as_array().unwrap();
    assert_eq!(
        outcomes[0],
        json!(["call_1/1", "read", false, "the notes\n"])
    );
    assert_eq!(outcomes[1][0], "call_1/2");
    assert_eq!(outcomes[1][2], true);
    assert!(
        outcomes[1][3]
            .as_str()
            .unwrap()
            .starts_with("Validation failed for tool \"read\""),
        "{report}"
    );
    assert_eq!(
        outcomes[2],
        json!(["call_1/3", "missing", true, "Tool missing not found"])
    );
    assert_eq!(
        outcomes[3],
        json!(["call_1/4", "bash", true, "forbidden commands are blocked"])
    );
    assert_eq!(outcomes[4][0], "call_1/5");
    assert_eq!(outcomes[4][2], false);
    assert!(
        outcomes[4][3].as_str().unwrap().contains("nested-hi"),
        "{report}"
    );
    assert_eq!(outcomes[5][0], "call_1/6");
    assert_eq!(
        outcomes[5][2], true,
        "the aborted call is an error: {report}"
    );
    assert!(
        !outcomes[5][3].as_str().unwrap().contains("late"),
        "{report}"
    );
    assert_eq!(report["durations"], "number");
    assert!(
        report["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "read"),
        "{report}"
    );
    // The `tool_call` handlers saw the nested calls (blocked, invalid and unknown ones
    // stop before them) with their parent; `tool_result` ones the calls that ran.
    let seen: Vec<&str> = report["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        seen.contains(&"call call_1 orchestrate parent=undefined"),
        "{seen:?}"
    );
    assert!(
        seen.contains(&"call call_1/1 read parent=call_1"),
        "{seen:?}"
    );
    assert!(seen.contains(&"result call_1/1 parent=call_1"), "{seen:?}");
    assert!(
        seen.contains(&"call call_1/4 bash parent=call_1"),
        "{seen:?}"
    );
    assert!(
        !seen.iter().any(|s| s.starts_with("result call_1/4")),
        "{seen:?}"
    );
    assert!(!seen.iter().any(|s| s.contains("call_1/2")), "{seen:?}");

    // Front ends see the nested executions, marked with their parent.
    let events = lines(&run.stdout);
    let nested_starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_start" && e["parentToolCallId"] == "call_1")
        .collect();
    assert_eq!(nested_starts.len(), 7, "{nested_starts:?}");
    assert_eq!(nested_starts[0]["toolCallId"], "call_1/1");
    assert!(events.iter().any(|e| e["type"] == "tool_execution_end"
        && e["toolCallId"] == "call_1/5"
        && e["parentToolCallId"] == "call_1"
        && e["isError"] == false));
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "tool_execution_update" && e["parentToolCallId"] == "call_1"),
        "bash's partial output is an update of the nested call"
    );
    assert_eq!(
        report["updates"], true,
        "the caller's onUpdate got them too"
    );

    // The session keeps the record on the calling call's result message, never results.
    let file = rpc_common::session_files(&sb.agent).pop().unwrap();
    let entries = lines(&std::fs::read_to_string(file).unwrap());
    let tool_results: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "toolResult")
        .collect();
    assert_eq!(tool_results.len(), 1, "{tool_results:?}");
    let record = &tool_results[0]["message"]["nestedCalls"];
    assert_eq!(record["complete"], true, "{record}");
    let calls = record["calls"].as_array().unwrap();
    let summary: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["name"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("call_1/1", "read", "ok"),
            ("call_1/2", "read", "error"),
            ("call_1/3", "missing", "error"),
            ("call_1/4", "bash", "error"),
            ("call_1/5", "bash", "ok"),
            ("call_1/6", "bash", "error"),
            ("call_1/7", "metered", "ok"),
        ]
    );
    assert_eq!(calls[0]["arguments"], json!({"path": "notes.txt"}));
    assert!(calls[0]["durationMs"].is_u64(), "{record}");
    assert_eq!(calls[3]["error"], "forbidden commands are blocked");
    assert!(calls[0].get("error").is_none(), "{record}");
    assert!(calls[0].get("result").is_none(), "results are never kept");
    // The nested result's usage is added to the calling tool's own.
    assert_eq!(report["meteredUsage"], 10);
    let usage = &tool_results[0]["message"]["usage"];
    assert_eq!(usage["input"], 11, "{usage}");
    assert_eq!(usage["totalTokens"], 22, "{usage}");
    let keys: Vec<&String> = calls[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["id", "name", "status", "arguments", "durationMs"]);
}

const ABORTING: &str = r#"
import { Type } from "@sinclair/typebox";

export default function (pi) {
  pi.registerTool({
    name: "waiter",
    label: "Waiter",
    description: "Starts a long nested call, then aborts the run",
    parameters: Type.Object({}),
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      // Aborted once the nested bash is surely running: at its first output.
      let aborted = false;
      const stop = () => { if (!aborted) { aborted = true; ctx.abort(); } };
      await ctx.executeTool("bash", { command: "echo started; sleep 30; echo late > late.txt" }, { onUpdate: stop });
      return { content: [{ type: "text", text: "finished" }], details: {} };
    },
  });
}
"#;

#[test]
fn aborting_the_calling_tool_aborts_its_nested_calls() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "waiter", "{}"),
            ScriptedReply::text("never asked"),
        ],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("abort.ts"), ABORTING).unwrap();
    let run = knightcode(&sb, &["--mode", "json", "-e", "abort.ts", "go"]);
    assert_eq!(server.requests().len(), 1, "stderr: {}", run.stderr);
    assert!(
        !sb.project.join("late.txt").exists(),
        "the nested bash was killed"
    );
    let file = rpc_common::session_files(&sb.agent).pop().unwrap();
    let entries = lines(&std::fs::read_to_string(file).unwrap());
    let result = entries
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["role"] == "toolResult")
        .unwrap();
    // Whether the caller's own result is recorded as aborted depends on whether its body
    // returned before the abort reached it (1 run in 10 or so under load it does, and its
    // "finished" stands, as in pi); the nested call is aborted either way.
    let calls = result["message"]["nestedCalls"]["calls"]
        .as_array()
        .unwrap();
    assert_eq!(calls[0]["id"], "call_1/1");
    assert_ne!(calls[0]["status"], "ok", "{calls:?}");
}
