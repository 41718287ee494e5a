//! The reference agent's own RPC client against our RPC mode: `RpcClient` from the npm package
//! (`dist/modes/rpc/rpc-client.js`, fetched with `npm pack` like the example corpus) is run
//! by `rpc_pi_client/client.mjs` with `knightcode --mode rpc` behind it, through
//! `rpc_pi_client/knightcode-shim.mjs` (RpcClient runs `node <cliPath>`). The script calls
//! every public method of RpcClient, checks what each result means, and reports per method.
//!
//! `KC_RPC_CLIENT_REFERENCE=<pi's dist/cli.js>` runs the same script against the reference
//! agent (offline, same mock model): every check must hold there too, which is what makes
//! it a check of compatibility rather than of our reading of the protocol.
//!
//! Node and npm are required; without them the test fails.

use super::ext_examples::corpus;
use crate::rpc_common::Sandbox;
use crate::rpc_common::usage;

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::Value;

/// The public methods of pi 0.73.1's RpcClient (`rpc-client.d.ts`): 29 that send a command,
/// 3 that wait for events, and `start`, `stop`, `onEvent`, `getStderr`.
const METHODS: [&str; 36] = [
    "abort",
    "abortBash",
    "abortRetry",
    "bash",
    "clone",
    "collectEvents",
    "compact",
    "cycleModel",
    "cycleThinkingLevel",
    "exportHtml",
    "followUp",
    "fork",
    "getAvailableModels",
    "getCommands",
    "getForkMessages",
    "getLastAssistantText",
    "getMessages",
    "getSessionStats",
    "getState",
    "getStderr",
    "newSession",
    "onEvent",
    "prompt",
    "promptAndWait",
    "setAutoCompaction",
    "setAutoRetry",
    "setFollowUpMode",
    "setModel",
    "setSessionName",
    "setSteeringMode",
    "setThinkingLevel",
    "start",
    "steer",
    "stop",
    "switchSession",
    "waitForIdle",
];

/// The image `client.mjs` sends with a prompt (a 1x1 PNG).
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// What the model answers, request by request, in the order of the steps of `client.mjs`.
fn replies() -> Vec<ScriptedReply> {
    let overloaded = || {
        ScriptedReply::text("Half an answer").with_fault(Fault::MidStreamError {
            after_events: 2,
            message: "server overloaded".to_owned(),
            kind: MockErrorKind::Overloaded,
        })
    };
    vec![
        // promptAndWait("Say hello")
        ScriptedReply::text("Hello there.").with_usage(usage(100, 10)),
        // prompt("Second question") + waitForIdle
        ScriptedReply::text("Second answer.").with_usage(usage(100, 10)),
        // prompt("Run the gated command"): the tool waits on gate.fifo while the script
        // steers and queues a follow-up.
        ScriptedReply::tool_call(
            "call_gate",
            "bash",
            r#"{"command":"read line < gate.fifo && echo \"got $line\""}"#,
        )
        .with_usage(usage(100, 10)),
        ScriptedReply::text("After steer."),
        ScriptedReply::text("After follow-up."),
        // prompt("Tell me a long story") + abort: the stream stalls until the agent hangs up.
        ScriptedReply::text("Once upon a time there was a story that never ended.")
            .with_fault(Fault::StallAfterEvents(3)),
        // promptAndWait with an image, on mock-model-2.
        ScriptedReply::text("A single pixel."),
        // In the new session: two exchanges, then compact("keep it short").
        // (With usage: the size before compacting is read from the last answer's.)
        ScriptedReply::text("first answer").with_usage(usage(50, 5)),
        ScriptedReply::text("second answer").with_usage(usage(60, 5)),
        ScriptedReply::text("THE SUMMARY"),
        // prompt("Try once more"): a retry is scheduled, then abortRetry.
        overloaded(),
        // promptAndWait("Fail without retry") with auto-retry off.
        overloaded(),
    ]
}

fn run_checked(command: &mut Command, what: &str) -> std::process::Output {
    let output = command
        .output_within(PROCESS_LIMIT, what)
        .unwrap_or_else(|e| panic!("{what}: cannot run it ({e}); node must be installed"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/suite/rpc_pi_client")
        .join(name)
}

/// The problems the script reported, one line each (`method: why`, `step <name>: why`).
fn problems(report: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for (method, whys) in report["methods"].as_object().unwrap() {
        for why in whys.as_array().unwrap() {
            found.push(format!("{method}: {}", why.as_str().unwrap()));
        }
    }
    for (step, why) in report["steps"].as_object().unwrap() {
        found.push(format!("step {step}: {}", why.as_str().unwrap()));
    }
    found
}

#[test]
fn pi_rpc_client_passes_every_method() {
    run_checked(Command::new("node").arg("--version"), "node --version");
    let module = corpus::corpus()
        .package
        .join("dist/modes/rpc/rpc-client.js");
    assert!(module.exists(), "{} is missing", module.display());

    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies()).unwrap();
    let sandbox = Sandbox::new(&server);
    // A summary keeps only the last exchange; a retry would wait ten minutes (only
    // abortRetry ends it).
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"compaction": {"keepRecentTokens": 5}, "retry": {"baseDelayMs": 600000}}"#,
    )
    .unwrap();
    let template = sandbox.root.path().join("templates").join("greet.md");
    std::fs::create_dir_all(template.parent().unwrap()).unwrap();
    std::fs::write(
        &template,
        "---\ndescription: Say hello politely\n---\nSay hello to $1, politely.\n",
    )
    .unwrap();

    let mut node = Command::new("node");
    node.arg(fixture("client.mjs"))
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("KC_RPC_CLIENT_MODULE", &module)
        .env("KC_RPC_PROJECT", &sandbox.project)
        .env("KC_RPC_TEMPLATE", &template);
    let reference = std::env::var_os("KC_RPC_CLIENT_REFERENCE");
    match &reference {
        Some(pi) => node
            .env("KC_RPC_CLI", pi)
            .env("PI_CODING_AGENT_DIR", &sandbox.agent)
            .env("PI_OFFLINE", "1"),
        None => node
            .env("KC_RPC_CLI", fixture("knightcode-shim.mjs"))
            .env("KC_RPC_BIN", env!("CARGO_BIN_EXE_knightcode"))
            .env("KNIGHTCODE_CODING_AGENT_DIR", &sandbox.agent),
    };
    let output = run_checked(&mut node, "node rpc_pi_client/client.mjs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("client.mjs printed no report ({e}):\n{stdout}\nstderr:\n{stderr}")
    });

    let agent = if reference.is_some() {
        "pi"
    } else {
        "knightcode"
    };
    let problems = problems(&report);
    assert!(
        problems.is_empty(),
        "pi's RpcClient against {agent} --mode rpc:\n{}\nstderr of the agent:\n{stderr}",
        problems.join("\n")
    );
    let methods: Vec<&str> = report["methods"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(methods, METHODS, "RpcClient's public methods changed");
    let pixel = format!("data:image/png;base64,{PIXEL}");
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains(&pixel)),
        "the prompt's image reached the model"
    );
    assert_eq!(
        server.remaining_replies(),
        0,
        "every scripted reply was asked for"
    );
}
