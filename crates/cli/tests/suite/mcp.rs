//! MCP servers in the real binary: `knightcode mcp list|add|remove`, a direct tool the
//! scripted model calls (print and JSON mode), a server that crashes mid-call, exposures that
//! are not declared, `--no-mcp`, and `@modelcontextprotocol/server-everything` from npm
//! (installed into the test cache, never committed).

use std::path::PathBuf;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

use crate::common::Sandbox;
use crate::oneshot_common::knightcode;
use crate::oneshot_common::offered_tools;
use crate::oneshot_common::sandbox;

/// The fixture server the MCP crate's tests use (tools `echo`, `crash`, `hang`, …).
const FIXTURE: &str = include_str!("../../../mcp/tests/common/fixture-server.js");

/// `@modelcontextprotocol/server-everything`, pinned.
const EVERYTHING: [(&str, &str); 1] = [("@modelcontextprotocol/server-everything", "2026.8.31")];

pub(crate) fn fixture_entry(sandbox: &Sandbox) -> Value {
    let script = sandbox.root.path().join("fixture-server.js");
    std::fs::write(&script, FIXTURE).unwrap();
    json!({"command": "node", "args": [script], "exposure": "direct", "description": "The test fixture"})
}

pub(crate) fn write_config(sandbox: &Sandbox, servers: Value) {
    std::fs::write(
        sandbox.agent.join("mcp.json"),
        json!({"mcpServers": servers}).to_string(),
    )
    .unwrap();
}

/// The text of the tool result the second request sends back to the model.
pub(crate) fn returned_result(server: &MockServer) -> Value {
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one request per turn");
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool", "{last}");
    last
}

fn no_model() -> MockServer {
    MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap()
}

#[test]
fn the_model_calls_a_direct_mcp_tool_and_the_result_is_in_the_session() {
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
    let run = knightcode(&sandbox, &["--mode", "json", "echo hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    let offered = offered_tools(&requests[0].body);
    for name in [
        "mcp__fixture__echo",
        "mcp__fixture__crash",
        "mcp__fixture__roots",
    ] {
        assert!(
            offered.iter().any(|n| n == name),
            "{name} not in {offered:?}"
        );
    }
    let echo = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__fixture__echo")
        .unwrap()
        .clone();
    assert_eq!(echo["function"]["description"], "Echoes the message back");
    assert_eq!(
        echo["function"]["parameters"],
        json!({"type": "object", "properties": {"message": {"type": "string"}}})
    );
    let result = returned_result(&server);
    assert_eq!(result["tool_call_id"], "call_1");
    assert!(
        result["content"].to_string().contains("echo: hi"),
        "{result}"
    );
    let files = sandbox.session_files();
    let entries = crate::common::read_jsonl(&files[0]);
    let stored = entries
        .iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .expect("a tool result entry");
    assert_eq!(stored["message"]["toolName"], "mcp__fixture__echo");
    assert_eq!(stored["message"]["isError"], false);
    assert!(
        stored["message"]["content"]
            .to_string()
            .contains("echo: hi")
    );
}

#[test]
fn a_server_that_crashes_mid_call_gives_a_tool_error_and_the_run_goes_on() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__fixture__crash", "{}"),
            ScriptedReply::text("It crashed."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_config(&sandbox, json!({"fixture": fixture_entry(&sandbox)}));
    let run = knightcode(&sandbox, &["-p", "crash it"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stdout.contains("It crashed."), "{}", run.stdout);
    let text = returned_result(&server)["content"].to_string();
    assert!(
        text.contains("MCP server \\\"fixture\\\": Connection closed"),
        "{text}"
    );
    assert!(text.contains("fixture: crashing on purpose"), "{text}");
}

#[test]
fn deferred_and_hidden_tools_are_not_declared_and_unreachable_ones_are_said_once() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Fine.")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let mut entry = fixture_entry(&sandbox);
    entry.as_object_mut().unwrap().remove("exposure");
    entry["toolExposure"] = json!({"echo": "direct", "crash": "hidden", "r*": "deferred"});
    write_config(&sandbox, json!({"fixture": entry}));
    // `--exclude-tools tool_search` keeps the deferred tools' search off.
    let run = knightcode(
        &sandbox,
        &["--exclude-tools", "tool_search,codemode", "-p", "hello"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered = offered_tools(&server.requests()[0].body);
    let mcp: Vec<&String> = offered.iter().filter(|n| n.starts_with("mcp__")).collect();
    assert_eq!(mcp, ["mcp__fixture__echo"]);
    let warning = "MCP tools are only reachable from the codemode or tool_search tool, but neither is active; they cannot be called.";
    assert_eq!(run.stderr.matches(warning).count(), 1, "{}", run.stderr);
}

#[test]
fn no_mcp_reads_no_config_and_starts_no_server() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Fine.")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_config(
        &sandbox,
        json!({"fixture": fixture_entry(&sandbox), "bad name": {"command": "x"}}),
    );
    let run = knightcode(&sandbox, &["--no-mcp", "-p", "hello"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered = offered_tools(&server.requests()[0].body);
    assert!(
        offered.iter().all(|n| !n.starts_with("mcp__")),
        "{offered:?}"
    );
    assert!(!run.stderr.contains("MCP"), "{}", run.stderr);

    // Without it, the invalid entry is reported and the valid one still works.
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Fine.")],
    )
    .unwrap();
    let sandbox = crate::oneshot_common::sandbox(&server);
    write_config(
        &sandbox,
        json!({"fixture": fixture_entry(&sandbox), "bad name": {"command": "x"}}),
    );
    let run = knightcode(&sandbox, &["-p", "hello"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stderr
            .contains(r#"invalid server name "bad name" (use letters, digits, "_" and "-")"#),
        "{}",
        run.stderr
    );
    let offered = offered_tools(&server.requests()[0].body);
    assert!(
        offered.iter().any(|n| n == "mcp__fixture__echo"),
        "{offered:?}"
    );
}

#[test]
fn mcp_list_connects_to_each_server_and_fails_on_a_problem() {
    let model = no_model();
    let sandbox = sandbox(&model);
    write_config(
        &sandbox,
        json!({
            "fixture": fixture_entry(&sandbox),
            "missing": {"command": "/nonexistent/mcp-server"},
            "off": {"command": "/nonexistent/mcp-server", "enabled": false}
        }),
    );
    let run = knightcode(&sandbox, &["mcp", "list"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    // What needs attention comes first.
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "missing: failed (stdio, codemode, global)");
    assert!(
        lines[1].starts_with(
            "  MCP server \"missing\" failed to connect: cannot start /nonexistent/mcp-server: "
        ),
        "{}",
        run.stdout
    );
    assert_eq!(
        lines[2],
        "fixture: connected, 9 tools (stdio, direct, global)"
    );
    assert_eq!(lines[3], "off: disabled (stdio, codemode, global)");

    write_config(&sandbox, json!({"fixture": fixture_entry(&sandbox)}));
    let run = knightcode(&sandbox, &["mcp", "list"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    write_config(
        &sandbox,
        json!({"sse": {"type": "sse", "url": "http://127.0.0.1:1/sse"}}),
    );
    let run = knightcode(&sandbox, &["mcp", "list"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "server \"sse\": legacy SSE transport is not supported; use the streamable HTTP URL"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn mcp_list_json_reports_each_server_as_the_reference_does() {
    let model = no_model();
    let sandbox = sandbox(&model);
    let mut fixture = fixture_entry(&sandbox);
    fixture["toolExposure"] = json!({"crash": "hidden"});
    fixture["env"] = json!({"FIXTURE_RESOURCES": "1"});
    write_config(
        &sandbox,
        json!({
            "fixture": fixture,
            "missing": {"command": "/nonexistent/mcp-server", "args": ["--port", "1"]},
            "off": {"url": "http://127.0.0.1:1/mcp", "enabled": false},
            "bad": {"exposure": "sometimes", "command": "x"}
        }),
    );
    std::fs::create_dir_all(sandbox.project.join(".knightcode")).unwrap();
    std::fs::write(sandbox.project.join(".knightcode/mcp.json"), "{}").unwrap();
    let run = knightcode(&sandbox, &["mcp", "list", "--json"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let servers = report["servers"].as_array().unwrap();
    let by_name = |name: &str| {
        servers
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {report}"))
            .clone()
    };
    let fixture = by_name("fixture");
    assert_eq!(fixture["scope"], "global");
    assert_eq!(fixture["enabled"], true);
    assert_eq!(fixture["exposure"], "direct");
    assert_eq!(fixture["state"], "connected");
    assert!(fixture["transport"].as_str().unwrap().starts_with("node "));
    assert!(
        fixture["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "echo")
    );
    assert_eq!(fixture["toolExposure"], json!({"crash": "hidden"}));
    assert_eq!(fixture["resources"], 2);
    assert_eq!(fixture["resourceTemplates"], 1);
    assert!(fixture.get("error").is_none(), "{fixture}");
    let missing = by_name("missing");
    assert_eq!(missing["state"], "failed");
    assert_eq!(missing["transport"], "/nonexistent/mcp-server --port 1");
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .contains("cannot start /nonexistent/mcp-server"),
        "{missing}"
    );
    let off = by_name("off");
    assert_eq!(off["state"], "disabled");
    assert_eq!(off["enabled"], false);
    assert_eq!(off["transport"], "http://127.0.0.1:1/mcp");
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{report}");
    assert!(
        errors[0]
            .as_str()
            .unwrap()
            .contains("server \"bad\": exposure must be one of"),
        "{report}"
    );
    assert!(
        report["note"]
            .as_str()
            .unwrap()
            .contains("was not read: the project is not trusted"),
        "{report}"
    );
    // Nothing but the JSON on stdout; the notes are in it, not on stderr.
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// A user's `mcp.json` linked from a dotfiles folder, owner-only (headers may hold tokens):
/// `mcp add` writes where the link points, and the link and the mode stay.
#[test]
fn mcp_add_writes_through_a_linked_file_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let model = no_model();
    let sandbox = sandbox(&model);
    let dotfiles = sandbox.root.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("mcp.json");
    std::fs::write(&real, r#"{"mcpServers": {"kept": {"command": "x"}}}"#).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = sandbox.agent.join("mcp.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let run = knightcode(&sandbox, &["mcp", "add", "files", "--", "npx", "server"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"mcpServers": {
            "kept": {"command": "x"},
            "files": {"command": "npx", "args": ["server"]}
        }})
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn mcp_add_and_remove_edit_the_right_file() {
    let model = no_model();
    let sandbox = sandbox(&model);
    let user_file = sandbox.agent.join("mcp.json");
    let run = knightcode(
        &sandbox,
        &[
            "mcp", "add", "files", "--env", "A=b", "--", "npx", "-y", "server", "--flag",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "Added global MCP server \"files\" in {}.\nCheck it with: knightcode mcp list\n",
            user_file.display()
        )
    );
    let run = knightcode(
        &sandbox,
        &[
            "mcp",
            "add",
            "docs",
            "--url",
            "https://example.com/mcp",
            "--exposure",
            "direct",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.ends_with(
            "Check it with: knightcode mcp list. If it requires sign-in: knightcode mcp login docs\n"
        ),
        "{}",
        run.stdout
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&user_file).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server", "--flag"], "env": {"A": "b"}},
            "docs": {"url": "https://example.com/mcp", "exposure": "direct"}
        }})
    );
    let run = knightcode(
        &sandbox,
        &["mcp", "add", "bad", "--exposure", "always", "--", "x"],
    );
    assert_eq!(run.code, 1);
    assert!(run.stderr.starts_with(
        "Error: server \"bad\": exposure must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\""
    ), "{}", run.stderr);

    let run = knightcode(&sandbox, &["mcp", "remove", "files", "-l"]);
    assert_eq!(run.code, 1);
    let project_file: PathBuf = sandbox.project.join(".knightcode/mcp.json");
    assert!(
        run.stderr.starts_with(&format!(
            "Error: MCP server \"files\" is not defined in {}; omit --local",
            project_file.display()
        )),
        "{}",
        run.stderr
    );
    let run = knightcode(&sandbox, &["mcp", "remove", "files"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&user_file).unwrap()).unwrap();
    assert_eq!(written["mcpServers"].as_object().unwrap().len(), 1);
}

#[test]
fn server_everything_from_npm_lists_its_tools_and_echoes_for_the_model() {
    let node_modules = super::ext_examples::npm::install_pinned("mcp-servers", &EVERYTHING);
    let script = node_modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.exists(), "{} is missing", script.display());
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__everything__echo", r#"{"message":"hello"}"#),
            ScriptedReply::text("Done."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_config(
        &sandbox,
        json!({"everything": {"command": "node", "args": [script, "stdio"], "exposure": "direct"}}),
    );
    let run = knightcode(&sandbox, &["mcp", "list"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("everything: connected, ")
            && run.stdout.contains(" tools (stdio, direct, global)"),
        "{}",
        run.stdout
    );
    let run = knightcode(&sandbox, &["-p", "echo hello"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = returned_result(&server);
    assert!(
        result["content"].to_string().contains("Echo: hello"),
        "{result}"
    );
}

#[test]
fn mcp_login_of_an_unknown_server_and_mcp_alone_say_what_to_do() {
    let model = no_model();
    let sandbox = sandbox(&model);
    let run = knightcode(&sandbox, &["mcp", "login", "docs"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Error: MCP server \"docs\" is not configured; see knightcode mcp list\n"
    );
    let run = knightcode(&sandbox, &["mcp"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with(
            "Error: knightcode mcp needs a command: list, add, remove, login or logout"
        ),
        "{}",
        run.stderr
    );
}

/// Blocks the fixture's `echo` before it runs: MCP calls go through the `tool_call` hooks.
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
fn an_extension_gate_sees_and_blocks_an_mcp_call() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__fixture__echo", r#"{"message":"hi"}"#),
            ScriptedReply::text("Blocked."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_config(&sandbox, json!({"fixture": fixture_entry(&sandbox)}));
    std::fs::write(sandbox.project.join("gate.ts"), GATE).unwrap();
    let run = knightcode(&sandbox, &["-e", "gate.ts", "-p", "echo hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let text = returned_result(&server)["content"].to_string();
    assert!(
        text.contains("MCP echo blocked by the test's gate"),
        "{text}"
    );
    assert!(!text.contains("echo: hi"), "{text}");
}

/// `server-everything` over streamable HTTP on a free loopback port; killed when dropped.
struct HttpEverything {
    child: std::process::Child,
    url: String,
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_everything(script: &std::path::Path) -> HttpEverything {
    use std::io::BufRead as _;
    // A port the system just handed out; the server says if someone took it meanwhile.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new("node")
        .arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (ready, listening) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = ready.send(line);
        }
    });
    let server = HttpEverything {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    loop {
        let line = listening
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("server-everything did not say it was listening within 60 s");
        assert!(!line.contains("Failed to start"), "{line}");
        if line.contains("listening on port") {
            return server;
        }
    }
}

#[test]
fn server_everything_over_streamable_http_lists_its_tools_and_echoes() {
    let node_modules = super::ext_examples::npm::install_pinned("mcp-servers", &EVERYTHING);
    let script = node_modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let everything = http_everything(&script);
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__web__echo", r#"{"message":"over http"}"#),
            ScriptedReply::text("Done."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_config(
        &sandbox,
        json!({"web": {"url": everything.url, "exposure": "direct"}}),
    );
    let run = knightcode(&sandbox, &["mcp", "list"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("web: connected, ")
            && run.stdout.contains(" tools (http, direct, global)"),
        "{}",
        run.stdout
    );
    let run = knightcode(&sandbox, &["-p", "echo over http"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = returned_result(&server);
    assert!(
        result["content"].to_string().contains("Echo: over http"),
        "{result}"
    );
}

#[test]
fn a_servers_progress_becomes_tool_updates() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call(
                "call_1",
                "mcp__fixture__progress",
                r#"{"steps":3,"ms":200}"#,
            ),
            ScriptedReply::text("Done."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_config(&sandbox, json!({"fixture": fixture_entry(&sandbox)}));
    let run = knightcode(&sandbox, &["--mode", "json", "count"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let update = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "tool_execution_update")
        .unwrap_or_else(|| panic!("no update in {}", run.stdout));
    assert_eq!(update["toolCallId"], "call_1");
    assert!(update.to_string().contains("Progress 1/3"), "{update}");
    assert!(
        returned_result(&server)["content"]
            .to_string()
            .contains("done after 3 steps")
    );
}

#[test]
fn the_projects_mcp_json_starts_servers_only_when_the_project_is_trusted() {
    for (flag, offered) in [("--no-approve", false), ("--approve", true)] {
        let server = MockServer::start_blocking(
            WireFormat::OpenAiCompletions,
            vec![ScriptedReply::text("Fine.")],
        )
        .unwrap();
        let sandbox = sandbox(&server);
        let dot = sandbox.project.join(".knightcode");
        std::fs::create_dir_all(&dot).unwrap();
        std::fs::write(
            dot.join("mcp.json"),
            json!({"mcpServers": {"fixture": fixture_entry(&sandbox)}}).to_string(),
        )
        .unwrap();
        let run = knightcode(&sandbox, &[flag, "-p", "hello"]);
        assert_eq!(run.code, 0, "stderr: {}", run.stderr);
        let tools = offered_tools(&server.requests()[0].body);
        assert_eq!(
            tools.iter().any(|n| n == "mcp__fixture__echo"),
            offered,
            "{flag}: {tools:?}\n{}",
            run.stderr
        );
    }
}

#[test]
fn a_tool_the_server_withdraws_leaves_the_models_list_at_the_next_prompt() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__fixture__shrink", "{}"),
            ScriptedReply::text("Shrunk."),
            ScriptedReply::text("Still here."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    write_config(&sandbox, json!({"fixture": fixture_entry(&sandbox)}));
    let run = knightcode(&sandbox, &["-p", "shrink it", "and now?"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let before = offered_tools(&requests[0].body);
    let after = offered_tools(&requests[2].body);
    assert!(
        before.iter().any(|n| n == "mcp__fixture__crash"),
        "{before:?}"
    );
    assert!(
        !after.iter().any(|n| n == "mcp__fixture__crash"),
        "{after:?}"
    );
    assert!(after.iter().any(|n| n == "mcp__fixture__echo"), "{after:?}");
}
