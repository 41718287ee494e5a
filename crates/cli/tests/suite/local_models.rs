//! Local model servers with no setup: with no key and no `models.json`, a session asks the
//! local servers what they serve and uses it; `--list-models` lists it; `localModels: false`
//! turns the probe off. The address list points at a stand-in server on a free port.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use serde_json::json;

/// A stand-in vLLM server: its model list and a scripted chat answer.
fn vllm() -> MockServer {
    MockServer::builder(WireFormat::OpenAiCompletions)
        .replies(vec![ScriptedReply::text("hello from the local model")])
        .document(
            "/v1/models",
            json!({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model",
                                                "max_model_len": 32768}]}),
        )
        .start_blocking()
        .unwrap()
}

/// A sandbox with nothing configured but `localModels` (the stand-in only).
fn unconfigured(server: &MockServer, local_models: serde_json::Value) -> oneshot_common::Sandbox {
    let sb = sandbox(server);
    std::fs::remove_file(sb.agent.join("models.json")).unwrap();
    std::fs::write(
        sb.agent.join("settings.json"),
        json!({"localModels": local_models}).to_string(),
    )
    .unwrap();
    sb
}

fn only_the_stand_in(server: &MockServer) -> serde_json::Value {
    json!({"defaults": false, "servers": [{"provider": "vllm", "url": server.root_url()}]})
}

#[test]
fn with_nothing_configured_a_local_server_is_used() {
    let server = vllm();
    let sb = unconfigured(&server, only_the_stand_in(&server));
    let run = knightcode(&sb, &["-p", "--offline", "say hello"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "hello from the local model");
    let chat = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap();
    assert_eq!(chat.body["model"], "Qwen/Qwen3-8B");
}

#[test]
fn list_models_shows_what_local_servers_serve() {
    let server = vllm();
    let sb = unconfigured(&server, only_the_stand_in(&server));
    let run = knightcode(&sb, &["--list-models"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let row: Vec<&str> = run
        .stdout
        .lines()
        .find(|line| line.starts_with("vllm"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(row, ["vllm", "Qwen/Qwen3-8B", "32.8K", "16.4K", "no", "no"]);
}

#[test]
fn the_probe_can_be_turned_off_and_the_message_says_what_to_do() {
    let server = vllm();
    let sb = unconfigured(&server, json!(false));
    let run = knightcode(&sb, &["-p", "say hello"]);
    assert_eq!(run.code, 1);
    assert!(server.requests().is_empty());
    let message = &run.stderr;
    assert!(message.contains("No model available."), "{message}");
    assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");
    assert!(
        message.contains(&sb.agent.join("models.json").display().to_string()),
        "{message}"
    );
    assert!(message.contains("local model server"), "{message}");
    assert!(!message.contains("models.md"), "{message}");
}
