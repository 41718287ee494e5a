//! The tools that are off by default, through the binary: `powershell` (run by whatever
//! PowerShell is on PATH, with a clear error without one) and the web tools, switched on
//! with --tools or for every session by `tools.json` (what `/tools ... always` writes).

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use std::os::unix::fs::PermissionsExt as _;

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::command;
use oneshot_common::offered_tools;
use oneshot_common::sandbox;
use serde_json::Value;

/// The text of the tool result the model was sent in `body`.
fn tool_result(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

#[test]
fn powershell_runs_the_pwsh_on_path_with_its_switches() {
    let replies = vec![
        ScriptedReply::tool_call("c1", "powershell", r#"{"command": "Get-Date"}"#),
        ScriptedReply::text("done"),
        ScriptedReply::tool_call("c2", "powershell", r#"{"command": "Get-Date"}"#),
        ScriptedReply::text("done"),
    ];
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
    let sandbox = sandbox(&server);
    // A stand-in PowerShell that shows how it was called.
    let bin = sandbox.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pwsh = bin.join("pwsh");
    std::fs::write(
        &pwsh,
        "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&pwsh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let output = command(
        &sandbox,
        &["-p", "what time is it", "--tools", "powershell"],
    )
    .env("PATH", &path)
    .output_within(PROCESS_LIMIT, "knightcode")
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    assert_eq!(offered_tools(&requests[0].body), ["powershell"]);
    assert_eq!(
        tool_result(&requests[1].body),
        "[-NoProfile]\n[-NonInteractive]\n[-ExecutionPolicy]\n[Bypass]\n[-Command]\n\
         [try { [Console]::OutputEncoding=[System.Text.Encoding]::UTF8 } catch {}\nGet-Date]\n"
    );

    // Without a PowerShell the model is told what to do.
    let output = command(&sandbox, &["-p", "again", "--tools", "powershell"])
        .env("PATH", "/usr/bin:/bin")
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result = tool_result(&server.requests()[3].body);
    assert!(
        result.starts_with("No PowerShell executable found. Install PowerShell (pwsh)"),
        "{result}"
    );
}

#[test]
fn web_tools_are_off_by_default_and_tools_json_turns_them_on() {
    let replies = vec![ScriptedReply::text("ok"); 4];
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
    let sandbox = sandbox(&server);
    let run = |args: &[&str]| {
        let output = command(&sandbox, args)
            .output_within(PROCESS_LIMIT, "knightcode")
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    run(&["-p", "hi"]);
    run(&["-p", "hi", "--tools", "read,webfetch,websearch"]);
    std::fs::write(sandbox.agent.join("tools.json"), r#"{"websearch": true}"#).unwrap();
    run(&["-p", "hi"]);
    run(&["-p", "hi", "--exclude-tools", "websearch"]);
    let offered: Vec<Vec<String>> = server
        .requests()
        .iter()
        .map(|r| offered_tools(&r.body))
        .collect();
    assert_eq!(
        offered,
        [
            vec!["read", "bash", "edit", "write"],
            vec!["read", "webfetch", "websearch"],
            vec!["read", "bash", "edit", "write", "websearch"],
            vec!["read", "bash", "edit", "write"],
        ]
    );
}
