//! Extensions' MCP servers (`pi.registerMcpServer`, `unregisterMcpServer`, `getMcpServers`,
//! `mcp_servers_change`) in the real binary: a server registered while loading is connected
//! with the files' servers and its tools reach the model; one registered later connects at
//! once and is announced; unregistering withdraws its tools; `mcp.json` wins a name; bad
//! registrations throw with the `mcp.json` messages.

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
use crate::suite::mcp::returned_result;
use crate::suite::mcp::write_config;

/// An extension file in the project whose code sees the fixture server's entry as `ENTRY`.
fn write_extension(sandbox: &Sandbox, file: &str, body: &str) {
    let entry = fixture_entry(sandbox);
    let code = format!("const ENTRY = {entry};\n{body}");
    std::fs::write(sandbox.project.join(file), code).unwrap();
}

fn read_json(sandbox: &Sandbox, file: &str) -> Value {
    let path = sandbox.project.join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

const AT_LOAD: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.registerMcpServer("viaext", ENTRY);
  pi.on("session_start", () => {
    writeFileSync("servers.json", JSON.stringify(pi.getMcpServers()));
  });
}
"#;

#[test]
fn a_server_registered_while_loading_connects_and_the_model_calls_its_tool() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__viaext__echo", r#"{"message":"hi"}"#),
            ScriptedReply::text("Echoed."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_extension(&sandbox, "ext.ts", AT_LOAD);
    let run = knightcode(&sandbox, &["-e", "ext.ts", "-p", "echo hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered = offered_tools(&server.requests()[0].body);
    assert!(
        offered.iter().any(|n| n == "mcp__viaext__echo"),
        "{offered:?}"
    );
    let result = returned_result(&server);
    assert!(
        result["content"].to_string().contains("echo: hi"),
        "{result}"
    );
    let servers = read_json(&sandbox, "servers.json");
    assert_eq!(servers[0]["name"], "viaext", "{servers}");
    assert_eq!(servers[0]["config"]["description"], "The test fixture");
    assert!(
        servers[0]["extensionPath"]
            .as_str()
            .is_some_and(|p| p.ends_with("ext.ts")),
        "{servers}"
    );
}

#[test]
fn the_mcp_json_server_of_the_same_name_wins_and_the_user_is_told() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__fixture__echo", r#"{"message":"hi"}"#),
            ScriptedReply::text("Echoed."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_config(&sandbox, json!({"fixture": fixture_entry(&sandbox)}));
    // The extension's would not even start.
    write_extension(
        &sandbox,
        "ext.ts",
        r#"export default function (pi) {
  pi.registerMcpServer("fixture", { command: "/nonexistent/server" });
}"#,
    );
    let run = knightcode(&sandbox, &["-e", "ext.ts", "-p", "echo hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = returned_result(&server);
    assert!(
        result["content"].to_string().contains("echo: hi"),
        "{result}"
    );
    assert!(
        run.stderr
            .contains("MCP server \"fixture\" of mcp.json takes precedence over \"fixture\""),
        "stderr: {}",
        run.stderr
    );
}

#[test]
fn a_server_registered_in_session_start_is_connected_before_the_first_prompt() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__early__echo", r#"{"message":"hi"}"#),
            ScriptedReply::text("Echoed."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_extension(
        &sandbox,
        "ext.ts",
        r#"export default function (pi) {
  pi.on("session_start", () => pi.registerMcpServer("early", ENTRY));
}"#,
    );
    let run = knightcode(&sandbox, &["-e", "ext.ts", "-p", "echo hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered = offered_tools(&server.requests()[0].body);
    assert!(
        offered.iter().any(|n| n == "mcp__early__echo"),
        "{offered:?}"
    );
    let result = returned_result(&server);
    assert!(
        result["content"].to_string().contains("echo: hi"),
        "{result}"
    );
}

const OWNER: &str = r#"
export default function (pi) {
  pi.registerMcpServer("shared", ENTRY);
}
"#;

const INTRUDER: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  const errors = [];
  const attempt = (name, config) => {
    try {
      pi.registerMcpServer(name, config);
      errors.push("accepted " + name);
    } catch (e) {
      errors.push(e.message);
    }
  };
  attempt("shared", ENTRY);
  attempt("empty", {});
  attempt("bad name", ENTRY);
  attempt("sneaky", { command: "node", auth: { provider: "anthropic" } });
  attempt("fn", { command: "node", env: { X: 1n } });
  writeFileSync("errors.json", JSON.stringify(errors));
}
"#;

#[test]
fn another_extensions_name_invalid_names_and_invalid_configs_throw() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Fine.")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_extension(&sandbox, "owner.ts", OWNER);
    write_extension(&sandbox, "intruder.ts", INTRUDER);
    let run = knightcode(
        &sandbox,
        &["-e", "owner.ts", "-e", "intruder.ts", "-p", "hello"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let errors = read_json(&sandbox, "errors.json");
    let errors: Vec<&str> = errors
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 5, "{errors:?}");
    assert!(
        errors[0].starts_with("MCP server \"shared\" is already registered by ")
            && errors[0].ends_with("owner.ts"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("needs either \"command\" (stdio) or \"url\""),
        "{errors:?}"
    );
    assert!(
        errors[2].contains("invalid server name \"bad name\""),
        "{errors:?}"
    );
    assert!(errors[3].contains("auth is only allowed"), "{errors:?}");
    assert!(errors[4].contains("plain JSON"), "{errors:?}");
    // The owner's registration stands: its tools were offered.
    let offered = offered_tools(&server.requests()[0].body);
    assert!(
        offered.iter().any(|n| n == "mcp__shared__echo"),
        "{offered:?}"
    );
}

const LATER: &str = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("mcp_servers_change", (event) => {
    appendFileSync("changes.jsonl", JSON.stringify(event.servers.map((s) => s.name)) + "\n");
  });
  pi.registerCommand("addsrv", { handler: async () => pi.registerMcpServer("late", ENTRY) });
  pi.registerCommand("dropsrv", { handler: async () => pi.unregisterMcpServer("late") });
}
"#;

#[test]
fn a_later_registration_connects_at_once_is_announced_and_unregistering_withdraws_it() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__late__echo", r#"{"message":"late"}"#),
            ScriptedReply::text("Echoed."),
            ScriptedReply::text("Gone."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_extension(&sandbox, "ext.ts", LATER);
    let run = knightcode(
        &sandbox,
        &[
            "-e", "ext.ts", "-p", "/addsrv", "call it", "/dropsrv", "again",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "two prompts, one tool call");
    let first = offered_tools(&requests[0].body);
    assert!(first.iter().any(|n| n == "mcp__late__echo"), "{first:?}");
    let result = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        result["content"].to_string().contains("echo: late"),
        "{result}"
    );
    let last = offered_tools(&requests[2].body);
    assert!(
        !last.iter().any(|n| n.starts_with("mcp__late__")),
        "{last:?}"
    );
    let changes = std::fs::read_to_string(sandbox.project.join("changes.jsonl")).unwrap();
    assert_eq!(changes, "[\"late\"]\n[]\n");
}
