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
    assert!(message.contains("knightcode auth login"), "{message}");
    assert!(
        message.contains(&sb.agent.join("models.json").display().to_string()),
        "{message}"
    );
    assert!(message.contains("local model server"), "{message}");
    assert!(!message.contains("models.md"), "{message}");
}

/// With a model configured the start does not wait for the probe; what it finds joins the
/// session's models once it has answered, and can be switched to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_a_model_lists_local_ones_once_the_probe_answers() {
    use crate::rpc_common::Raw;
    use crate::rpc_common::watchdog;
    watchdog(async {
        let server = MockServer::builder(WireFormat::OpenAiCompletions)
            .replies(vec![ScriptedReply::text("from the local model")])
            .document(
                "/v1/models",
                json!({"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 32768}]}),
            )
            .start()
            .await
            .unwrap();
        let sandbox = crate::common::Sandbox::new(&server);
        std::fs::write(
            sandbox.agent.join("settings.json"),
            json!({"localModels": only_the_stand_in(&server)}).to_string(),
        )
        .unwrap();
        let mut raw = Raw::spawn(&sandbox, &[]);
        // The probe asked; its answer is taken in by the session's own task, so look again
        // (a bounded number of round trips) until the listing has it.
        server.wait_until(|activity| activity.requests >= 1).await;
        let mut listed = Vec::new();
        for attempt in 0..200 {
            let id = format!("m{attempt}");
            raw.send(json!({"id": id, "type": "get_available_models"}))
                .await;
            let response = raw.response(&id).await;
            listed = response["data"]["models"]
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
                .collect::<Vec<_>>();
            if listed.iter().any(|m| m == "vllm/Qwen/Qwen3-8B") {
                break;
            }
        }
        assert!(
            listed.starts_with(&["mock/mock-model".to_owned(), "mock/mock-model-2".to_owned()]),
            "{listed:?}"
        );
        assert!(
            listed.contains(&"vllm/Qwen/Qwen3-8B".to_owned()),
            "{listed:?}"
        );
        raw.send(
            json!({"id": "s", "type": "set_model", "provider": "vllm", "modelId": "Qwen/Qwen3-8B"}),
        )
        .await;
        assert_eq!(raw.response("s").await["success"], true);
        let answer = raw.prompt("p", "hello").await;
        assert_eq!(answer["success"], true);
        raw.until(|l| l["type"] == "agent_end").await;
        let chat = server
            .requests()
            .into_iter()
            .find(|r| r.path == "/v1/chat/completions")
            .unwrap();
        assert_eq!(chat.body["model"], "Qwen/Qwen3-8B");
        assert_eq!(chat.header("authorization"), Some("Bearer local"));
        raw.finish().await;
    })
    .await;
}
