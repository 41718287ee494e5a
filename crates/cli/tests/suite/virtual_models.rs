//! Virtual models (`pi.registerVirtualModel`, `virtual-models.md`) in the real binary against
//! the mock server: a router extension picks `mock/mock-model` for the first request after a
//! user message and `mock/mock-model-2` for the rest (and for a retry). Requests reach the
//! routed model, `model_change` records the selection, each assistant message the model that
//! answered, the router's state lives on the branch; a router that throws fails the request
//! with its message; a session resumed without the extension falls back to the model that
//! answered last.

use crate::common;
use crate::oneshot_common;

use common::Models;
use common::Sandbox;
use common::read_jsonl;
use common::session_files;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use serde_json::Value;
use serde_json::json;

/// Routes by reason, counts its requests in its state and logs what it was asked to
/// `route.log` (one JSON line per request). Throws when the prompt says "explode".
const ROUTER: &str = r#"
const fs = require("node:fs");
export default function (pi) {
  pi.registerVirtualModel({
    provider: "router", id: "auto", name: "Auto router", contextWindow: 50000, maxTokens: 2000,
    async route(request, ctx) {
      const last = request.messages[request.messages.length - 1];
      const text = typeof last.content === "string" ? last.content : JSON.stringify(last.content);
      fs.appendFileSync("route.log", JSON.stringify({
        reason: request.reason, state: request.state ?? null, thinkingLevel: request.thinkingLevel,
        previous: request.previous ? request.previous.model.id : null,
        failed: request.failed ? { model: request.failed.model.id, message: request.failed.message } : null,
        system: request.messages[0].role,
      }) + "\n");
      if (text.includes("explode")) throw new Error("router exploded");
      const id = request.reason === "user" ? "mock-model" : "mock-model-2";
      const count = (request.state && request.state.count) || 0;
      return { model: ctx.modelRegistry.find("mock", id), thinkingLevel: "off", state: { count: count + 1 } };
    },
  });
}
"#;

fn router_sandbox(server: &MockServer) -> Sandbox {
    let sandbox = Sandbox::with_models(server, Models::Recorded);
    std::fs::write(sandbox.project.join("router.ts"), ROUTER).unwrap();
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"retry": {"baseDelayMs": 1, "maxRetries": 2}}"#,
    )
    .unwrap();
    sandbox
}

fn route_log(sandbox: &Sandbox) -> Vec<Value> {
    std::fs::read_to_string(sandbox.project.join("route.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn assistants(entries: &[Value]) -> Vec<&Value> {
    entries
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "assistant")
        .map(|e| &e["message"])
        .collect()
}

fn states(entries: &[Value]) -> Vec<&Value> {
    entries
        .iter()
        .filter(|e| e["customType"] == "knightcode.virtual-model-state")
        .map(|e| &e["data"])
        .collect()
}

#[test]
fn each_request_goes_to_the_routed_model_and_the_session_records_selection_and_dispatch() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_read", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("It has three lines."),
        ],
    )
    .unwrap();
    let sandbox = router_sandbox(&server);
    let run = knightcode(
        &sandbox,
        &[
            "-e",
            "router.ts",
            "--model",
            "router/auto",
            "-p",
            "Read notes.txt",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "It has three lines.\n");

    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(models, [json!("mock-model"), json!("mock-model-2")]);

    let log = route_log(&sandbox);
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0]["reason"], "user");
    assert_eq!(log[0]["state"], Value::Null);
    assert_eq!(log[0]["previous"], Value::Null);
    assert_eq!(log[0]["system"], "system");
    assert_eq!(log[1]["reason"], "continuation");
    assert_eq!(log[1]["state"], json!({"count": 1}));
    assert_eq!(log[1]["previous"], "mock-model");

    let entries = read_jsonl(&session_files(&sandbox.agent)[0]);
    let change = entries
        .iter()
        .find(|e| e["type"] == "model_change")
        .unwrap();
    assert_eq!(
        (&change["provider"], &change["modelId"]),
        (&json!("router"), &json!("auto"))
    );
    let dispatched: Vec<(&Value, &Value, &Value)> = assistants(&entries)
        .into_iter()
        .map(|m| (&m["provider"], &m["model"], &m["api"]))
        .collect();
    let completions = json!("openai-completions");
    assert_eq!(
        dispatched,
        [
            (&json!("mock"), &json!("mock-model"), &completions),
            (&json!("mock"), &json!("mock-model-2"), &completions),
        ]
    );
    assert_eq!(
        states(&entries),
        [
            &json!({"provider": "router", "modelId": "auto", "state": {"count": 1}}),
            &json!({"provider": "router", "modelId": "auto", "state": {"count": 2}}),
        ]
    );
}
