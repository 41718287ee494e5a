//! The loop against the real HTTP client and the scripted mock server (openai-completions).

use crate::common;

use std::sync::Arc;
use std::sync::Mutex;

use common::*;
use knightcode_agent::Agent;
use knightcode_agent::AgentConfig;
use knightcode_agent::EventReceiver;
use knightcode_agent::event_channel;
use knightcode_ai::Api;
use knightcode_ai::Client;
use knightcode_ai::Model;
use knightcode_ai::StreamOptions;
use knightcode_testkit::MockServer;
use knightcode_testkit::MockUsage;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

fn model_for(server: &MockServer) -> Model {
    let mut model = Model::new(
        "mock",
        "mock-model",
        Api::OpenAiCompletions,
        server.base_url(),
    );
    model.context_window = 128_000;
    model.max_tokens = 16_000;
    model.cost.input = 3.0;
    model.cost.output = 15.0;
    model
}

fn agent_for(server: &MockServer) -> (Agent, EventReceiver, Arc<FakeClock>) {
    let client = Client::with_clock(Arc::new(AiClock))
        .unwrap()
        .with_user_agent("knightcode (test)");
    let mut config = AgentConfig::new(model_for(server));
    config.options = StreamOptions {
        api_key: Some("test-key".into()),
        ..StreamOptions::default()
    };
    config.system_prompt = Some("You are a test.".into());
    config.tools = registry(vec![echo()]);
    let clock = Arc::new(FakeClock::default());
    let (tx, rx) = event_channel(4);
    let agent = Agent::new(Arc::new(client), config, tx).with_clock(clock.clone());
    (agent, rx, clock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_round_trip_event_sequence() {
    let usage = MockUsage {
        input: 120,
        output: 30,
        ..MockUsage::default()
    };
    let server = MockServer::start(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::default()
                .with_text("Let me echo.")
                .with_tool_call("call_1", "echo", r#"{"text":"hi"}"#)
                .with_usage(usage),
            ScriptedReply::text("Echoed: hi").with_usage(usage),
        ],
    )
    .await
    .unwrap();
    let (agent, mut events, _clock) = agent_for(&server);
    let (agent, result, seen) = run(agent, &mut events, "Echo hi").await;
    result.unwrap();
    // Snapshotted as the JSONL the JSON and RPC modes write, to compare with the reference
    // agent's recordings in fixtures/pi (whose message_update still carries `partial`).
    let jsonl: String = seen
        .iter()
        .map(|event| serde_json::to_string(event).unwrap() + "\n")
        .collect();
    insta::assert_snapshot!("tool_round_trip", jsonl);

    // The second request carries the tool result after the tool call.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let tool_message = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool_message["tool_call_id"], "call_1");
    assert_eq!(tool_message["content"], "hi");
    assert_eq!(requests[0].body["tools"][0]["function"]["name"], "echo");
    assert_eq!(agent.messages().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_529_is_retried_then_succeeds() {
    let server = MockServer::start(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::http_error(529), ScriptedReply::text("ok")],
    )
    .await
    .unwrap();
    let (agent, mut events, clock) = agent_for(&server);
    let stored = Arc::new(Mutex::new(Vec::new()));
    let omitted = Arc::new(Mutex::new(Vec::new()));
    let agent = agent.with_store(Box::new(RecordingStore {
        appended: stored.clone(),
        omitted: omitted.clone(),
    }));
    let (agent, result, seen) = run(agent, &mut events, "hi").await;
    let outcome = result.unwrap();
    assert_eq!(outcome.error, None);
    let lines = describe(&seen);
    let start = lines
        .iter()
        .find(|l| l.starts_with("auto_retry_start"))
        .unwrap();
    assert!(
        start.starts_with("auto_retry_start 1/3 2000ms \"529"),
        "{start}"
    );
    assert!(lines.contains(&"auto_retry_end success=true attempt=1 None".to_owned()));
    assert_eq!(clock.sleeps.lock().unwrap().len(), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // No assistant message (the failed attempt) in the retried request.
    let roles: Vec<&str> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert!(!roles.contains(&"assistant"), "{roles:?}");
    assert_eq!(omitted.lock().unwrap().len(), 1);
    assert_eq!(stored.lock().unwrap().len(), 3);
    assert_eq!(agent.messages().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_401_is_not_retried() {
    let server = MockServer::start(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::http_error(401),
            ScriptedReply::text("unused"),
        ],
    )
    .await
    .unwrap();
    let (agent, mut events, clock) = agent_for(&server);
    let (_agent, result, seen) = run(agent, &mut events, "hi").await;
    let outcome = result.unwrap();
    assert!(
        outcome.error.as_deref().unwrap().starts_with("401"),
        "{outcome:?}"
    );
    let lines = describe(&seen);
    assert!(lines.contains(&"agent_end 2 willRetry=false".to_owned()));
    assert!(!lines.iter().any(|l| l.starts_with("auto_retry")));
    assert!(clock.sleeps.lock().unwrap().is_empty());
    assert_eq!(server.requests().len(), 1);
}
