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
use knightcode_testkit::Fault;
use knightcode_testkit::MockServer;
use knightcode_testkit::MockUsage;
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
        system: request.messages[0].role, roles: request.messages.map((m) => m.role),
      }) + "\n");
      if (text.includes("explode")) throw new Error("router exploded");
      const id = request.reason === "user" ? "mock-model" : "mock-model-2";
      const count = (request.state && request.state.count) || 0;
      return { model: ctx.modelRegistry.find("mock", id), thinkingLevel: "off", state: { count: count + 1 } };
    },
  });
  // An extension's own request with the virtual model: routed as "direct".
  pi.registerCommand("ask", {
    handler: async (_args, ctx) => {
      const model = ctx.modelRegistry.find("router", "auto");
      const reply = await ctx.modelRegistry.complete(model, {
        messages: [{ role: "user", content: "Side question", timestamp: Date.now() }],
      });
      fs.writeFileSync("ask.json", JSON.stringify({ model: reply.model, text: reply.content[0].text }));
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
            ScriptedReply::text("Again three."),
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
    // The whole conversation, the system prompt first.
    assert_eq!(log[0]["roles"], json!(["system", "user"]));
    assert_eq!(
        log[1]["roles"],
        json!(["system", "user", "assistant", "toolResult"])
    );

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

    // Resumed with the extension, the selection is the virtual model again and the router
    // continues from its stored state.
    let resumed = knightcode(&sandbox, &["-e", "router.ts", "--continue", "-p", "Again?"]);
    assert_eq!(resumed.code, 0, "stderr: {}", resumed.stderr);
    assert_eq!(resumed.stdout, "Again three.\n");
    let log = route_log(&sandbox);
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(log[2]["reason"], "user");
    assert_eq!(log[2]["state"], json!({"count": 2}));
    assert_eq!(log[2]["previous"], "mock-model-2");
    assert_eq!(server.requests()[2].body["model"], "mock-model");
}

#[test]
fn a_virtual_model_is_listed_under_its_own_provider_without_credentials() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap();
    let sandbox = router_sandbox(&server);
    let list = knightcode(&sandbox, &["-e", "router.ts", "--list-models"]);
    assert_eq!(list.code, 0, "stderr: {}", list.stderr);
    let line = list
        .stdout
        .lines()
        .find(|l| l.starts_with("router"))
        .unwrap_or_else(|| panic!("no router line in:\n{}", list.stdout));
    assert!(line.contains("auto"), "{line}");
    assert!(line.contains("50K"), "the declared context window: {line}");
}

#[test]
fn a_retry_tells_the_router_what_failed_and_may_go_elsewhere() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::fault(Fault::HttpStatus {
                status: 503,
                retry_after: None,
                body: None,
                headers: Vec::new(),
            }),
            ScriptedReply::text("Recovered."),
        ],
    )
    .unwrap();
    let sandbox = router_sandbox(&server);
    let run = knightcode(
        &sandbox,
        &["-e", "router.ts", "--model", "router/auto", "-p", "Hello"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Recovered.\n");
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(models, [json!("mock-model"), json!("mock-model-2")]);
    let log = route_log(&sandbox);
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[1]["reason"], "retry");
    assert_eq!(log[1]["failed"]["model"], "mock-model");
    assert!(
        !log[1]["failed"]["message"].as_str().unwrap().is_empty(),
        "{log:?}"
    );
}

#[test]
fn a_throwing_router_fails_the_request_with_its_message_and_loses_nothing() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Fine now.")],
    )
    .unwrap();
    let sandbox = router_sandbox(&server);
    let failed = knightcode(
        &sandbox,
        &[
            "-e",
            "router.ts",
            "--model",
            "router/auto",
            "-p",
            "please explode",
        ],
    );
    assert_ne!(failed.code, 0);
    assert!(
        failed
            .stderr
            .contains("Virtual model router/auto: route() failed")
            && failed.stderr.contains("router exploded"),
        "{}",
        failed.stderr
    );
    assert!(server.requests().is_empty(), "nothing was sent");

    let again = knightcode(
        &sandbox,
        &["-e", "router.ts", "--continue", "-p", "Hello again"],
    );
    assert_eq!(again.code, 0, "stderr: {}", again.stderr);
    assert_eq!(again.stdout, "Fine now.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "mock-model");
    let sent = requests[0].body["messages"].to_string();
    assert!(
        sent.contains("please explode"),
        "the first prompt stays: {sent}"
    );

    let entries = read_jsonl(&session_files(&sandbox.agent)[0]);
    let errors: Vec<&Value> = assistants(&entries)
        .into_iter()
        .filter(|m| m["stopReason"] == "error")
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        (&errors[0]["provider"], &errors[0]["model"]),
        (&json!("router"), &json!("auto"))
    );
}

#[test]
fn a_session_resumed_without_the_router_continues_with_the_model_that_answered_last() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_read", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("It has three lines."),
            ScriptedReply::text("Still three."),
        ],
    )
    .unwrap();
    let sandbox = router_sandbox(&server);
    let first = knightcode(
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
    assert_eq!(first.code, 0, "stderr: {}", first.stderr);

    let resumed = knightcode(&sandbox, &["--continue", "-p", "And now?"]);
    assert_eq!(resumed.code, 0, "stderr: {}", resumed.stderr);
    assert_eq!(resumed.stdout, "Still three.\n");
    assert!(
        resumed
            .stderr
            .contains("Virtual model router/auto is no longer registered")
            && resumed.stderr.contains("mock/mock-model-2"),
        "{}",
        resumed.stderr
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].body["model"], "mock-model-2");
}

/// Registers `router/late` from `session_start` (after loading) and drops it with `/drop`.
const LATE_ROUTER: &str = r#"
export default function (pi) {
  pi.on("session_start", () => {
    pi.registerVirtualModel({
      provider: "router", id: "late", thinkingLevels: ["off", "high"],
      route: (request, ctx) => ({ model: ctx.modelRegistry.find("mock", "mock-model-2") }),
    });
  });
  pi.registerCommand("drop", { handler: async () => pi.unregisterVirtualModel("router", "late") });
}
"#;

fn listed(response: &Value) -> Vec<String> {
    response["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}/{}",
                m["provider"].as_str().unwrap(),
                m["id"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_virtual_model_registered_after_loading_can_be_selected_and_unregistered() {
    use crate::rpc_common::Raw;
    use crate::rpc_common::watchdog;
    watchdog(async {
        let server = MockServer::start(
            WireFormat::OpenAiCompletions,
            vec![ScriptedReply::text("late answer")],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::with_models(&server, Models::Recorded);
        std::fs::write(sandbox.project.join("late.ts"), LATE_ROUTER).unwrap();
        let mut raw = Raw::spawn(&sandbox, &["-e", "late.ts"]);
        raw.send(json!({"id": "list", "type": "get_available_models"}))
            .await;
        let models = listed(&raw.response("list").await);
        assert!(models.contains(&"router/late".to_owned()), "{models:?}");
        let late = raw_model(&mut raw, "late").await;
        assert_eq!(late["api"], "knightcode-virtual");
        assert_eq!(late["reasoning"], true);

        raw.send(
            json!({"id": "set", "type": "set_model", "provider": "router", "modelId": "late"}),
        )
        .await;
        let set = raw.response("set").await;
        assert_eq!(set["success"], true, "{set}");
        let prompt = raw.prompt("p", "hi").await;
        assert_eq!(prompt["success"], true, "{prompt}");
        raw.until(|l| l["type"] == "agent_end").await;
        assert_eq!(server.requests()[0].body["model"], "mock-model-2");

        let dropped = raw.prompt("drop", "/drop").await;
        assert_eq!(dropped["success"], true, "{dropped}");
        // The command's handler runs after its prompt is answered; look again (a bounded
        // number of round trips) until the listing has taken the removal.
        let mut models = Vec::new();
        for attempt in 0..200 {
            let id = format!("again{attempt}");
            raw.send(json!({"id": id, "type": "get_available_models"}))
                .await;
            models = listed(&raw.response(&id).await);
            if !models.contains(&"router/late".to_owned()) {
                break;
            }
        }
        assert!(!models.contains(&"router/late".to_owned()), "{models:?}");
    })
    .await;
}

/// The catalog entry RPC reports for `router/<id>`.
async fn raw_model(raw: &mut crate::rpc_common::Raw, id: &str) -> Value {
    raw.send(json!({"id": "find", "type": "get_available_models"}))
        .await;
    let response = raw.response("find").await;
    response["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["provider"] == "router" && m["id"] == id)
        .cloned()
        .unwrap()
}

#[test]
fn an_extensions_own_request_is_routed_as_direct_without_state() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Side answer.")],
    )
    .unwrap();
    let sandbox = router_sandbox(&server);
    let run = knightcode(
        &sandbox,
        &["-e", "router.ts", "--model", "router/auto", "-p", "/ask"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let log = route_log(&sandbox);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["reason"], "direct");
    assert_eq!(log[0]["state"], Value::Null);
    // "direct" is neither "user" nor a retry: the router sends it to its second model.
    assert_eq!(server.requests()[0].body["model"], "mock-model-2");
    let ask: Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.project.join("ask.json")).unwrap())
            .unwrap();
    assert_eq!(
        ask,
        json!({"model": "mock-model-2", "text": "Side answer."})
    );
    // A command alone leaves no session file; none holds router state either way.
    for file in session_files(&sandbox.agent) {
        let entries = read_jsonl(&file);
        assert!(
            states(&entries).is_empty(),
            "direct requests store no state"
        );
    }
}

/// `user` requests to `mock/mock-model`, the rest to `mock/mock-reasoner` at `high`.
const TUI_ROUTER: &str = r#"
export default function (pi) {
  pi.registerVirtualModel({
    provider: "router", id: "auto",
    route(request, ctx) {
      if (request.reason === "user") return { model: ctx.modelRegistry.find("mock", "mock-model") };
      return { model: ctx.modelRegistry.find("mock", "mock-reasoner"), thinkingLevel: "high" };
    },
  });
}
"#;

#[test]
fn the_footer_shows_selection_and_physical_model_and_session_costs_each() {
    let sandbox = crate::tui_common::sandbox(vec![
        ScriptedReply::tool_call("call_read", "read", r#"{"path":"notes.txt"}"#),
        ScriptedReply::text("Three lines."),
    ]);
    std::fs::write(sandbox.project.join("router.ts"), TUI_ROUTER).unwrap();
    let mut tui = sandbox.spawn(&["-e", "router.ts", "--model", "router/auto"], 100, 40);
    tui.wait_for_text("auto");
    tui.submit("Read notes.txt");
    tui.wait_for_text("Three lines.");
    let screen = tui.wait_for_text("auto → mock-reasoner • high");
    assert!(!screen.contains("auto → mock-model"), "{screen}");
    tui.submit("/session");
    let screen = tui.wait_for_text("mock/mock-reasoner:");
    assert!(screen.contains("mock/mock-model:"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// `mock/mock-model` (a 128000-token window) and `mock/<id>` with a window of `window`.
fn small_model_sandbox(server: &MockServer, id: &str, window: u64) -> Sandbox {
    let sandbox = Sandbox::with_models(server, Models::Recorded);
    let models = json!({"providers": {"mock": {
    "baseUrl": server.base_url(), "api": "openai-completions", "apiKey": "test-key",
    "models": [
        {"id": "mock-model", "name": "Mock", "contextWindow": 128000, "maxTokens": 4096},
        {"id": id, "name": id, "contextWindow": window, "maxTokens": window.min(1000)}
    ]}}});
    std::fs::write(sandbox.agent.join("models.json"), models.to_string()).unwrap();
    sandbox
}

/// Continuations to `mock/mock-tiny`, whose window holds nothing; everything else to
/// `mock/mock-model`.
const TINY_ROUTER: &str = r#"
const fs = require("node:fs");
export default function (pi) {
  pi.registerVirtualModel({
    provider: "router", id: "auto",
    route(request, ctx) {
      fs.appendFileSync("route.log", request.reason + "\n");
      const id = request.reason === "continuation" ? "mock-tiny" : "mock-model";
      return { model: ctx.modelRegistry.find("mock", id) };
    },
  });
}
"#;

#[test]
fn a_context_too_large_for_the_routed_model_even_compacted_is_an_overflow() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_read", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("## Goal\nRead notes."),
            ScriptedReply::text("## Goal\nRead notes again."),
            ScriptedReply::text("It has three lines."),
        ],
    )
    .unwrap();
    let sandbox = small_model_sandbox(&server, "mock-tiny", 1);
    std::fs::write(sandbox.project.join("router.ts"), TINY_ROUTER).unwrap();
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
    // The continuation went to the tiny model; compacted first (the summary is a direct
    // request), the context still did not fit, so it failed before sending; the overflow's
    // compaction and the retry went to the big one.
    let log = std::fs::read_to_string(sandbox.project.join("route.log")).unwrap();
    assert_eq!(log, "user\ncontinuation\ndirect\ndirect\nretry\n");
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(models, vec![json!("mock-model"); 4]);
    let entries = read_jsonl(&session_files(&sandbox.agent)[0]);
    assert!(entries.iter().any(|e| e["type"] == "compaction"));
    let overflow = assistants(&entries)
        .into_iter()
        .find(|m| m["stopReason"] == "error")
        .unwrap();
    let text = overflow["errorMessage"].as_str().unwrap();
    assert!(
        text.starts_with("Virtual model router/auto: the context (about ")
            && text.ends_with("does not fit the 1-token window of mock/mock-tiny"),
        "{text}"
    );
}

/// Continuations to `mock/mock-small` (a 20000-token window) once `small.flag` exists;
/// everything else to `mock/mock-model`.
const SMALL_ROUTER: &str = r#"
const fs = require("node:fs");
export default function (pi) {
  pi.registerVirtualModel({
    provider: "router", id: "auto",
    route(request, ctx) {
      fs.appendFileSync("route.log", request.reason + "\n");
      const small = request.reason === "continuation" && fs.existsSync("small.flag");
      return { model: ctx.modelRegistry.find("mock", small ? "mock-small" : "mock-model") };
    },
  });
}
"#;

#[test]
fn a_routed_model_too_small_for_the_context_gets_it_compacted_first() {
    let big = ScriptedReply::tool_call("call_ls", "ls", "{}").with_usage(MockUsage {
        input: 30000,
        output: 10,
        ..MockUsage::default()
    });
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_read", "read", r#"{"path":"big.txt"}"#),
            ScriptedReply::text("Noted."),
            big,
            ScriptedReply::text("## Goal\nList the files."),
            // The small model counts what it was sent: the compacted context.
            ScriptedReply::tool_call("call_ls2", "ls", "{}").with_usage(MockUsage {
                input: 3000,
                output: 10,
                ..MockUsage::default()
            }),
            ScriptedReply::text("Two files."),
        ],
    )
    .unwrap();
    let sandbox = small_model_sandbox(&server, "mock-small", 20000);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"compaction": {"keepRecentTokens": 2000}}"#,
    )
    .unwrap();
    std::fs::write(sandbox.project.join("router.ts"), SMALL_ROUTER).unwrap();
    let text = "BIGTEXT ".repeat(12000);
    std::fs::write(sandbox.project.join("big.txt"), &text).unwrap();
    let args = ["-e", "router.ts", "--model", "router/auto", "-p"];
    let run = knightcode(&sandbox, &[&args[..], &["Read big.txt"]].concat());
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    std::fs::write(sandbox.project.join("small.flag"), "").unwrap();
    let file = session_files(&sandbox.agent)[0].clone();
    let session = ["--session", file.to_str().unwrap()];
    let run = knightcode(
        &sandbox,
        &[&session[..], &args[..], &["List the files"]].concat(),
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Two files.\n");
    // The continuation's context did not fit the small model: the session compacted (the
    // summary routed as `direct`) and sent the compacted context there, without routing
    // again and without a failed response.
    let log = std::fs::read_to_string(sandbox.project.join("route.log")).unwrap();
    assert_eq!(
        log,
        "user\ncontinuation\nuser\ncontinuation\ndirect\ncontinuation\n"
    );
    let requests = server.requests();
    let models: Vec<Value> = requests.iter().map(|r| r.body["model"].clone()).collect();
    let big = "mock-model";
    assert_eq!(models, [big, big, big, big, "mock-small", "mock-small"]);
    // The loop goes on from the compacted conversation too.
    for request in &requests[4..] {
        let body = request.body.to_string();
        assert!(!body.contains("BIGTEXT"), "the compacted context was sent");
        assert!(body.contains("List the files"), "{body}");
    }
    let entries = read_jsonl(&file);
    assert_eq!(
        entries.iter().filter(|e| e["type"] == "compaction").count(),
        1
    );
    assert!(
        assistants(&entries)
            .iter()
            .all(|m| m["stopReason"] != "error"),
        "nothing failed"
    );
}

/// Registers the virtual model named in `router-id.txt` at load; `/again` reloads.
const RELOADED_ROUTER: &str = r#"
import { readFileSync } from "node:fs";
export default function (pi) {
  const id = readFileSync("router-id.txt", "utf8").trim();
  pi.registerVirtualModel({
    provider: "router", id, name: id,
    route: (_request, ctx) => ({ model: ctx.modelRegistry.find("mock", "mock-model-2") }),
  });
  pi.registerCommand("again", { handler: async (_args, ctx) => { await ctx.reload(); } });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_lists_the_virtual_models_the_extensions_register_now() {
    use crate::rpc_common::Raw;
    use crate::rpc_common::watchdog;
    watchdog(async {
        let server = MockServer::start(WireFormat::OpenAiCompletions, vec![])
            .await
            .unwrap();
        let sandbox = Sandbox::with_models(&server, Models::Recorded);
        std::fs::write(sandbox.project.join("router.ts"), RELOADED_ROUTER).unwrap();
        std::fs::write(sandbox.project.join("router-id.txt"), "before").unwrap();
        let mut raw = Raw::spawn(&sandbox, &["-e", "router.ts"]);
        raw.send(json!({"id": "list", "type": "get_available_models"}))
            .await;
        let models = listed(&raw.response("list").await);
        assert!(models.contains(&"router/before".to_owned()), "{models:?}");

        std::fs::write(sandbox.project.join("router-id.txt"), "after").unwrap();
        let reloaded = raw.prompt("again", "/again").await;
        assert_eq!(reloaded["success"], true, "{reloaded}");
        // The command's handler may finish after its prompt is answered; look again (a
        // bounded number of round trips) until the listing has taken the reload.
        let mut models = Vec::new();
        for attempt in 0..200 {
            let id = format!("list{attempt}");
            raw.send(json!({"id": id, "type": "get_available_models"}))
                .await;
            models = listed(&raw.response(&id).await);
            if models.contains(&"router/after".to_owned()) {
                break;
            }
        }
        assert!(models.contains(&"router/after".to_owned()), "{models:?}");
        assert!(!models.contains(&"router/before".to_owned()), "{models:?}");
    })
    .await;
}
