//! Plan mode through the real binary in print and JSON mode (`mcp-codemode-virtual.md` §6):
//! `--plan` and `/plan <task>` plan, print exactly the submitted plan and leave the seed's
//! snapshots; edits, MCP tools, codemode and nested calls are blocked while planning;
//! `ask_user` without a UI takes the recommended choice; `/plan approve` implements; tool
//! settings that cannot plan and malformed state fail closed; an extension that registers
//! `/plan` replaces the built-in.

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

use crate::common::Sandbox;
use crate::common::read_jsonl;
use crate::oneshot_common::knightcode;
use crate::oneshot_common::offered_description;
use crate::oneshot_common::offered_tools;
use crate::oneshot_common::sandbox;
use crate::suite::mcp::fixture_entry;
use crate::suite::mcp::write_config;

const PLAN: &str = "# Fix the cache\n\n- Change `src/cache.rs`\n\n## Assumptions\n- none\n";

fn submit(id: &str, markdown: &str) -> ScriptedReply {
    ScriptedReply::tool_call(
        id,
        "submit_plan",
        json!({ "markdown": markdown }).to_string(),
    )
}

fn server(replies: Vec<ScriptedReply>) -> MockServer {
    MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap()
}

/// The `plan-mode` entries of the one session file, as (type, data or details).
fn plan_entries(sb: &Sandbox) -> Vec<(String, Value)> {
    let files = sb.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    read_jsonl(&files[0])
        .into_iter()
        .filter(|e| e["customType"] == "plan-mode")
        .map(|e| {
            let kind = e["type"].as_str().unwrap().to_owned();
            let value = if kind == "custom" {
                e["data"].clone()
            } else {
                assert_eq!(e["display"], false, "{e}");
                e["details"].clone()
            };
            (kind, value)
        })
        .collect()
}

/// The text of every tool result the request `index` carries.
fn tool_results(server: &MockServer, index: usize) -> Vec<String> {
    server.requests()[index].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn plan_flag_plans_and_prints_exactly_the_submitted_plan() {
    let server = server(vec![submit("call_1", PLAN)]);
    let sb = sandbox(&server);
    let run = knightcode(&sb, &["-p", "--plan", "Investigate the cache bug"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, PLAN, "exactly the plan");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the submission ends the run");
    let offered = offered_tools(&requests[0].body);
    for name in ["ask_user", "submit_plan", "read", "grep", "find", "ls"] {
        assert!(
            offered.iter().any(|n| n == name),
            "{name} not in {offered:?}"
        );
    }
    let body = requests[0].body.to_string();
    assert!(body.contains("<plan_mode>"), "the instructions are sent");
    assert_eq!(
        plan_entries(&sb),
        [
            ("custom".to_owned(), json!({"mode": "planning"})),
            ("custom_message".to_owned(), json!({"kind": "instructions"})),
            (
                "custom".to_owned(),
                json!({"mode": "planning", "draft": {"revision": 1, "markdown": PLAN}})
            ),
        ]
    );
}

#[test]
fn a_session_that_never_plans_declares_no_planning_tools() {
    let server = server(vec![ScriptedReply::text("Hi.")]);
    let sb = sandbox(&server);
    let run = knightcode(&sb, &["-p", "hello"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered = offered_tools(&server.requests()[0].body);
    assert!(
        !offered
            .iter()
            .any(|n| n == "ask_user" || n == "submit_plan"),
        "{offered:?}"
    );
    assert!(
        !server.requests()[0]
            .body
            .to_string()
            .contains("<plan_mode>")
    );
}

const NESTING: &str = r#"
import { Type } from "@sinclair/typebox";
export default function (pi) {
  // Replaces the built-in read (allowed while planning) and writes through a nested call.
  pi.registerTool({
    name: "read", label: "Read", description: "Reads, and writes on the side", parameters: Type.Object({ path: Type.String() }),
    async execute(id, params, signal, onUpdate, ctx) {
      const nested = await ctx.executeTool("write", { path: "nested.txt", content: "x" });
      const text = nested.result.content.map((c) => c.text).join("");
      return { content: [{ type: "text", text: `nested write: error=${nested.isError} ${text}` }], details: {} };
    },
  });
}
"#;

#[test]
fn edits_mcp_tools_codemode_and_nested_calls_are_blocked_while_planning() {
    let server = server(vec![
        ScriptedReply::tool_call("call_1", "write", r#"{"path":"out.txt","content":"x"}"#),
        ScriptedReply::tool_call("call_2", "mcp__fixture__echo", r#"{"message":"hi"}"#),
        ScriptedReply::tool_call("call_3", "codemode", r#"{"code":"return 1"}"#),
        ScriptedReply::tool_call("call_4", "read", r#"{"path":"notes.txt"}"#),
        ScriptedReply::tool_call("call_5", "bash", r#"{"command":"echo inspected"}"#),
        submit("call_6", PLAN),
    ]);
    let sb = sandbox(&server);
    write_config(&sb, json!({"fixture": fixture_entry(&sb)}));
    std::fs::write(sb.project.join("nesting.ts"), NESTING).unwrap();
    let run = knightcode(
        &sb,
        &[
            "-p",
            "--plan",
            "--tools",
            "read,bash,write,codemode,ask_user,submit_plan,mcp__fixture__echo",
            "-e",
            "nesting.ts",
            "Investigate",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, PLAN);
    // Codemode is blocked: the declared tools do not say how scripts call them.
    let read = offered_description(&server.requests()[0].body, "read").unwrap();
    assert!(!read.contains("Codemode:"), "{read}");
    let results = tool_results(&server, 5);
    assert_eq!(results.len(), 5, "{results:?}");
    for (result, tool) in results[..3]
        .iter()
        .zip(["write", "mcp__fixture__echo", "codemode"])
    {
        assert!(
            result.starts_with(&format!("Blocked by plan mode: {tool} is not available")),
            "{result}"
        );
    }
    assert!(
        results[3].starts_with("nested write: error=true Blocked by plan mode: write"),
        "{}",
        results[3]
    );
    assert_eq!(
        results[4].trim(),
        "inspected",
        "shell commands are not inspected"
    );
    assert!(!sb.project.join("out.txt").exists());
    assert!(!sb.project.join("nested.txt").exists());
}

#[test]
fn ask_user_without_a_ui_takes_the_recommended_choice() {
    let question = json!({
        "question": "Which store?",
        "options": [{"label": "SQLite", "description": "one file"}, {"label": "Postgres"}]
    });
    let server = server(vec![
        ScriptedReply::tool_call("call_1", "ask_user", question.to_string()),
        submit("call_2", PLAN),
    ]);
    let sb = sandbox(&server);
    let run = knightcode(&sb, &["-p", "/plan Pick a store"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, PLAN);
    let results = tool_results(&server, 1);
    assert!(
        results[0].contains("\"SQLite\"") && results[0].contains("Assumptions"),
        "{results:?}"
    );
    let messages = server.requests()[0].body["messages"].clone();
    let last = messages.as_array().unwrap().last().unwrap();
    assert_eq!(
        last["content"],
        json!([{"type": "text", "text": "Pick a store"}]),
        "the task is the prompt"
    );
    let bad = json!({"question": "Which?", "options": [{"label": "only one"}]});
    let server = self::server(vec![
        ScriptedReply::tool_call("call_1", "ask_user", bad.to_string()),
        ScriptedReply::text("ok"),
    ]);
    let sb = sandbox(&server);
    let run = knightcode(&sb, &["-p", "--plan", "Pick"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        tool_results(&server, 1)[0].contains("less than 2 items"),
        "{:?}",
        tool_results(&server, 1)
    );
}

#[test]
fn plan_approve_implements_the_draft_in_the_same_session() {
    let server = server(vec![
        submit("call_1", PLAN),
        ScriptedReply::text("Implemented."),
    ]);
    let sb = sandbox(&server);
    let run = knightcode(&sb, &["-p", "--plan", "Investigate"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let file = sb.session_files()[0].clone();
    let file = file.to_str().unwrap();

    // A stale revision is refused on stderr; nothing runs.
    let run = knightcode(&sb, &["--session", file, "-p", "/plan approve 2"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("Revision 2 is not the current plan"),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 1);

    let run = knightcode(
        &sb,
        &["--session", file, "-p", "/plan approve 1 keep it small"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Implemented.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let prompt = last["content"].to_string();
    assert!(
        prompt.contains("Implement the approved plan (revision 1)")
            && prompt.contains("Fix the cache")
            && prompt.contains("keep it small"),
        "{prompt}"
    );
    assert!(
        offered_tools(&requests[1].body)
            .iter()
            .any(|n| n == "ask_user"),
        "the loadout is kept"
    );
    let entries = plan_entries(&sb);
    assert_eq!(
        entries[entries.len() - 2..],
        [
            (
                "custom".to_owned(),
                json!({"mode": "off", "draft": {"revision": 1, "markdown": PLAN}, "approved": 1})
            ),
            ("custom_message".to_owned(), json!({"kind": "exit"})),
        ]
    );
}

#[test]
fn plan_commands_without_a_draft_say_so_on_stderr() {
    let server = server(vec![]);
    let sb = sandbox(&server);
    let run = knightcode(&sb, &["-p", "/plan approve"]);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("No plan to approve."), "{}", run.stderr);
    let run = knightcode(&sb, &["-p", "/plan"]);
    assert!(run.stderr.contains("Plan mode on"), "{}", run.stderr);
    assert!(server.requests().is_empty());
}

#[test]
fn tool_settings_that_cannot_plan_fail_closed() {
    let server = server(vec![]);
    let sb = sandbox(&server);
    for args in [
        &["-p", "--plan", "--no-tools", "go"][..],
        &["-p", "--plan", "--tools", "read,bash", "go"][..],
        &["-p", "--plan", "--exclude-tools", "ask_user", "go"][..],
    ] {
        let run = knightcode(&sb, args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("--plan cannot be used here"),
            "{}",
            run.stderr
        );
    }
    let run = knightcode(&sb, &["-p", "--no-tools", "/plan go"]);
    assert!(
        run.stderr.contains("Cannot enter plan mode"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[test]
fn malformed_state_refuses_requests() {
    let server = server(vec![ScriptedReply::text("never")]);
    let sb = sandbox(&server);
    let file = sb.root.path().join("bad.jsonl");
    let lines = [
        json!({"type":"session","version":3,"id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd": sb.project}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1733234401000u64}}),
        json!({"type":"custom","id":"p1","parentId":"u1","timestamp":"2024-12-03T14:00:02.000Z","customType":"plan-mode","data":{"mode":"planning","approved":3}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let run = knightcode(&sb, &["--session", file.to_str().unwrap(), "-p", "go on"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("Plan mode cannot restore"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}

const REPLACEMENT: &str = r#"
export default function (pi) {
  pi.registerCommand("plan", { description: "my plan", handler: async (args, ctx) => { ctx.ui.notify(`my plan: ${args}`, "info"); } });
}
"#;

#[test]
fn an_extension_registering_plan_replaces_the_built_in() {
    let server = server(vec![ScriptedReply::text("ok")]);
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("myplan.ts"), REPLACEMENT).unwrap();
    let run = knightcode(&sb, &["-p", "-e", "myplan.ts", "/plan something"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("Plan mode on"), "{}", run.stderr);
    assert!(server.requests().is_empty(), "the extension's command ran");
    let run = knightcode(&sb, &["-p", "-e", "myplan.ts", "hello"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered = offered_tools(&server.requests()[0].body);
    assert!(!offered.iter().any(|n| n == "submit_plan"), "{offered:?}");
}

/// Plan mode replaced by an extension whose `--plan` is a flag of type `kind`; at session
/// start it writes what `getFlag("plan")` gave to `flag.json`.
fn flag_replacement(kind: &str) -> String {
    format!(
        r#"
import {{ writeFileSync }} from "node:fs";
export default function (pi) {{
  pi.registerFlag("plan", {{ type: "{kind}", description: "Plan first" }});
  pi.on("session_start", () => writeFileSync("flag.json", JSON.stringify({{ plan: pi.getFlag("plan") }})));
}}
"#
    )
}

#[test]
fn a_replacing_extensions_string_plan_flag_takes_the_argument_after_it() {
    let server = server(vec![ScriptedReply::text("ok"), ScriptedReply::text("ok")]);
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("string.ts"), flag_replacement("string")).unwrap();
    std::fs::write(sb.project.join("boolean.ts"), flag_replacement("boolean")).unwrap();
    let flag = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(sb.project.join("flag.json")).unwrap())
            .unwrap()
    };
    let asked = |index: usize| -> String {
        let body = &server.requests()[index].body;
        let messages = body["messages"].as_array().unwrap();
        let user = messages.iter().rfind(|m| m["role"] == "user").unwrap();
        user["content"].to_string()
    };

    // A string flag takes the word after it, which is then no message.
    let argv = [
        "-e",
        "string.ts",
        "-p",
        "--plan",
        "Investigate the bug",
        "Say hi",
    ];
    let run = knightcode(&sb, &argv);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(flag(), json!({ "plan": "Investigate the bug" }));
    assert_eq!(server.requests().len(), 1, "one prompt");
    assert!(asked(0).contains("Say hi"), "{}", asked(0));
    assert!(!asked(0).contains("Investigate"), "{}", asked(0));

    // A boolean one is `true` and the word stays the message, as with the built-in.
    let run = knightcode(
        &sb,
        &["-e", "boolean.ts", "-p", "--plan", "Investigate the bug"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(flag(), json!({ "plan": true }));
    assert!(asked(1).contains("Investigate the bug"), "{}", asked(1));
}

#[test]
fn calls_beside_a_submission_are_blocked_before_and_after_it() {
    let server = server(vec![
        ScriptedReply::tool_call("call_1", "bash", r#"{"command":"echo ran > before.txt"}"#)
            .with_tool_call(
                "call_2",
                "submit_plan",
                json!({ "markdown": PLAN }).to_string(),
            )
            .with_tool_call("call_3", "read", r#"{"path":"notes.txt"}"#),
    ]);
    let sb = sandbox(&server);
    let run = knightcode(&sb, &["-p", "--plan", "Investigate"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, PLAN, "the submission still counts");
    assert_eq!(server.requests().len(), 1, "the submission ends the run");
    assert!(
        !sb.project.join("before.txt").exists(),
        "the call written before submit_plan did not run"
    );
    let file = &sb.session_files()[0];
    let results: Vec<(String, String)> = read_jsonl(file)
        .into_iter()
        .filter(|e| e["message"]["role"] == "toolResult")
        .map(|e| {
            (
                e["message"]["toolName"].as_str().unwrap().to_owned(),
                e["message"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    for (name, text) in [&results[0], &results[2]] {
        assert!(
            text.starts_with("Blocked: this response also submits the plan"),
            "{name}: {text}"
        );
    }
    assert_eq!(results[1].0, "submit_plan");
}

#[test]
fn codemode_only_with_codemode_active_refuses_entry() {
    let server = server(vec![ScriptedReply::text("never")]);
    let sb = sandbox(&server);
    std::fs::write(
        sb.agent.join("settings.json"),
        json!({"codemode": {"mode": "only"}}).to_string(),
    )
    .unwrap();
    let tools = "read,codemode,ask_user,submit_plan";
    let run = knightcode(&sb, &["-p", "--plan", "--tools", tools, "go"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--plan cannot be used here: codemode is active with codemode.mode \"only\""),
        "{}",
        run.stderr
    );
    let run = knightcode(&sb, &["-p", "--tools", tools, "/plan go"]);
    assert!(
        run.stderr
            .contains("Cannot enter plan mode: codemode is active"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty(), "nothing was sent");
    // Without codemode active, `only` does not matter.
    let run = knightcode(
        &sb,
        &["-p", "--tools", "read,ask_user,submit_plan", "/plan"],
    );
    assert!(run.stderr.contains("Plan mode on"), "{}", run.stderr);
}

/// The provider's answer when the context does not fit (HTTP 400, OpenAI's wording).
fn overflow() -> ScriptedReply {
    ScriptedReply::fault(knightcode_testkit::Fault::HttpStatus {
        status: 400,
        retry_after: None,
        body: Some(
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#
                .into(),
        ),
        headers: Vec::new(),
    })
}

/// Leaves plan mode's saved recovery messages out of every request's context.
const DROP_RECOVERY: &str = r#"
export default function (pi) {
  pi.on("context", (event) => ({
    messages: event.messages.filter((m) => !(m.role === "custom" && m.details && m.details.kind === "recovery")),
  }));
}
"#;

#[test]
fn an_overflow_retry_ends_with_the_recovery_message() {
    let server = server(vec![
        submit("call_1", PLAN),
        overflow(),
        ScriptedReply::text("## Goal\nPlan the cache fix."),
        ScriptedReply::text("Still planning."),
    ]);
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("drop.ts"), DROP_RECOVERY).unwrap();
    let run = knightcode(&sb, &["-p", "--plan", "Investigate"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let file = sb.session_files()[0].clone();
    let file = file.to_str().unwrap();
    let run = knightcode(
        &sb,
        &["--session", file, "-e", "drop.ts", "-p", "Revise it"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Still planning.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "plan, overflow, summary, retry");
    // The retry carries the planning rules and the draft last, even though the saved copy
    // was left out of its context (as the reference's retries do until it is in context).
    let messages = requests[3].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"].to_string();
    assert!(
        last.contains("<plan_mode>") && last.contains("The current draft (revision 1)"),
        "{last}"
    );
    let recoveries = plan_entries(&sb)
        .into_iter()
        .filter(|(_, v)| v["kind"] == "recovery")
        .count();
    assert_eq!(recoveries, 1, "saved once");
}
