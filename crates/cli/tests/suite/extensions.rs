//! Extensions in the real binary (print and JSON mode) against the scripted mock model:
//! a TypeScript tool the model calls, a gate that blocks a call, a throwing handler that
//! becomes an `extension_error` while the run goes on, a command, and a load failure.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use serde_json::Value;

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect()
}

const HELLO: &str = r#"
import { Type } from "@mariozechner/pi-ai";
import { defineTool, type ExtensionAPI } from "@mariozechner/pi-coding-agent";

const helloTool = defineTool({
  name: "hello",
  label: "Hello",
  description: "A simple greeting tool",
  parameters: Type.Object({ name: Type.String({ description: "Name to greet" }) }),
  async execute(_toolCallId, params, _signal, _onUpdate, _ctx) {
    return { content: [{ type: "text", text: `Hello, ${params.name}!` }], details: { greeted: params.name } };
  },
});

export default function (pi: ExtensionAPI) {
  pi.registerTool(helloTool);
}
"#;

#[test]
fn an_extension_tool_is_offered_called_and_its_result_reaches_the_next_request() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "hello", r#"{"name":"Ada"}"#),
            ScriptedReply::text("Greeted."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("hello.ts"), HELLO).unwrap();
    let run = knightcode(&sandbox, &["--mode", "json", "-e", "hello.ts", "greet Ada"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "hello")
        .expect("hello offered")
        .clone();
    assert_eq!(
        tool["function"]["parameters"],
        serde_json::json!({"type":"object","properties":{"name":{"type":"string","description":"Name to greet"}},"required":["name"]})
    );
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], "call_1");
    assert!(
        last["content"].to_string().contains("Hello, Ada!"),
        "{last}"
    );
    let end = events(&run.stdout)
        .into_iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(
        end["result"]["details"],
        serde_json::json!({"greeted": "Ada"})
    );
}

const GATE: &str = r#"
export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName === "bash" && /rm -rf/.test(event.input.command)) {
      return { block: true, reason: ctx.hasUI ? "asked" : "Dangerous command blocked (no UI to confirm)" };
    }
  });
  pi.on("before_agent_start", () => { throw new Error("handler exploded"); });
}
"#;

#[test]
fn a_gate_blocks_a_call_and_a_throwing_handler_is_reported_while_the_run_goes_on() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_rm", "bash", r#"{"command":"rm -rf ./data"}"#),
            ScriptedReply::text("Understood."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::create_dir_all(sandbox.project.join("data")).unwrap();
    std::fs::write(sandbox.project.join("gate.js"), GATE).unwrap();
    let run = knightcode(&sandbox, &["--mode", "json", "-e", "gate.js", "clean up"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        sandbox.project.join("data").is_dir(),
        "the blocked command ran"
    );
    let events = events(&run.stdout);
    let error = events
        .iter()
        .find(|e| e["type"] == "extension_error")
        .expect("extension_error");
    assert_eq!(error["event"], "before_agent_start");
    assert_eq!(error["error"], "handler exploded");
    assert!(
        error["extensionPath"]
            .as_str()
            .unwrap()
            .ends_with("gate.js")
    );
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true);
    assert!(
        end["result"]
            .to_string()
            .contains("Dangerous command blocked"),
        "{end}"
    );
    assert!(events.iter().any(|e| e["type"] == "agent_settled"));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_command_runs_from_a_slash_prompt_without_a_model_request() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap();
    let sandbox = sandbox(&server);
    let source = r#"
import { writeFileSync } from "node:fs";
import { join } from "node:path";
export default function (pi) {
  pi.registerCommand("mark", { description: "write a marker", handler: async (args, ctx) => {
    writeFileSync(join(ctx.cwd, "marker.txt"), `args=${args} mode=${ctx.mode} ui=${ctx.hasUI}`);
  }});
}
"#;
    std::fs::write(sandbox.project.join("cmd.ts"), source).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "cmd.ts", "/mark one two"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("marker.txt")).unwrap(),
        "args=one two mode=print ui=false"
    );
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn a_failing_extension_exits_1_with_the_error_and_the_hint() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.project.join("bad.ts"),
        "export default function () { throw new Error(\"boom\"); }\n",
    )
    .unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "bad.ts", "hi"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("Failed to load extension \"") && run.stderr.contains("bad.ts\": boom"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("Start without extensions using \"knightcode -ne\""),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn discovered_extensions_load_and_no_extensions_skips_them() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok"); 2],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let dir = sandbox.agent.join("extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hello.ts"), HELLO).unwrap();
    let run = knightcode(&sandbox, &["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = knightcode(&sandbox, &["-p", "-ne", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let offered = |i: usize| {
        server.requests()[i].body["tools"]
            .to_string()
            .contains("\"hello\"")
    };
    assert!(offered(0));
    assert!(!offered(1));
}

const LIFECYCLE_LOG: &str = r#"
import { appendFileSync } from "node:fs";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const log = (line: string) => appendFileSync("lifecycle.log", line + "\n");

export default function (pi: ExtensionAPI) {
  pi.on("agent_start", () => log("agent_start"));
  pi.on("turn_start", (e) => log(`turn_start ${e.turnIndex}`));
  pi.on("message_start", (e) => log(`message_start ${e.message.role}`));
  pi.on("message_end", (e) => log(`message_end ${e.message.role}`));
  pi.on("tool_execution_start", (e) => log(`tool_execution_start ${e.toolName} ${e.args.command}`));
  pi.on("tool_execution_end", (e) => log(`tool_execution_end ${e.toolName} ${e.isError}`));
  pi.on("agent_end", (e) => log(`agent_end ${e.messages.length}`));
  pi.on("session_shutdown", (e) => log(`session_shutdown ${e.reason}`));
}
"#;

#[test]
fn lifecycle_events_reach_extensions_in_order_and_shutdown_comes_last() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "bash", r#"{"command":"echo hi"}"#),
            ScriptedReply::text("Done."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("log.ts"), LIFECYCLE_LOG).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "log.ts", "say hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Done.\n");
    let log = std::fs::read_to_string(sandbox.project.join("lifecycle.log")).unwrap();
    assert_eq!(
        log,
        "agent_start\n\
         turn_start 0\n\
         message_start user\n\
         message_end user\n\
         message_start assistant\n\
         message_end assistant\n\
         tool_execution_start bash echo hi\n\
         tool_execution_end bash false\n\
         message_start toolResult\n\
         message_end toolResult\n\
         turn_start 1\n\
         message_start assistant\n\
         message_end assistant\n\
         agent_end 4\n\
         session_shutdown quit\n"
    );
}

const REVIEW_COMMAND: &str = r#"
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("review", {
    description: "Ask for a review",
    handler: async (args) => {
      pi.sendUserMessage(`Review ${args || "everything"} carefully.`);
    },
  });
}
"#;

#[test]
fn a_command_can_start_a_turn_with_send_user_message() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Looks good.")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("review.ts"), REVIEW_COMMAND).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "review.ts", "/review src/lib.rs"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Looks good.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let user = requests[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()
        .clone();
    assert!(
        user["content"]
            .to_string()
            .contains("Review src/lib.rs carefully."),
        "{user}"
    );
}

const READ_ONLY: &str = r#"
import { writeFileSync } from "node:fs";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("readonly", {
    handler: async () => {
      const before = pi.getActiveTools().join(",");
      pi.setActiveTools(["read", "grep", "no-such-tool"]);
      writeFileSync("tools.log", `${before}\n${pi.getActiveTools().join(",")}\n`);
    },
  });
}
"#;

#[test]
fn set_active_tools_changes_what_the_next_request_offers() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("ro.ts"), READ_ONLY).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "ro.ts", "/readonly", "hello"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let log = std::fs::read_to_string(sandbox.project.join("tools.log")).unwrap();
    assert_eq!(log, "read,bash,edit,write\nread,grep\n");
    assert_eq!(
        oneshot_common::offered_tools(&server.requests()[0].body),
        ["read", "grep"],
        "unknown names are left out"
    );
}

#[test]
fn in_print_mode_dialogs_resolve_to_their_defaults_and_there_is_no_ui() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap();
    let sandbox = sandbox(&server);
    let source = r#"
import { writeFileSync } from "node:fs";
import { join } from "node:path";
export default function (pi) {
  pi.registerCommand("ask", { handler: async (_args, ctx) => {
    ctx.ui.notify("nobody sees this");
    ctx.ui.setStatus("k", "v");
    const answers = [await ctx.ui.select("t", ["a"]), await ctx.ui.confirm("t", "m"),
      await ctx.ui.input("t"), await ctx.ui.editor("t", "x"), await ctx.ui.custom(() => undefined)];
    writeFileSync(join(ctx.cwd, "answers.txt"), `${answers.map(String).join(",")} ui=${ctx.hasUI} mode=${ctx.mode} theme=${JSON.stringify(ctx.ui.setTheme("x"))}`);
  }});
}
"#;
    std::fs::write(sandbox.project.join("ask.ts"), source).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "ask.ts", "/ask"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("answers.txt")).unwrap(),
        r#"undefined,false,undefined,undefined,undefined ui=false mode=print theme={"success":false,"error":"UI not available"}"#
    );
}
