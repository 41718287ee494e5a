//! The ChatGPT-plan (Codex) backend's own stream events, served raw: `response.done` ends a
//! response as `response.completed` does (usage and all), and `response.failed` and `error`
//! read as the reference words them.

use crate::common;

use std::sync::Arc;

use common::FixedClock;
use common::client;
use knightcode_ai::Api;
use knightcode_ai::CancellationToken;
use knightcode_ai::Context;
use knightcode_ai::Model;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_testkit::WebResponse;
use knightcode_testkit::WebServer;
use knightcode_testkit::oauth::chatgpt_access_token;
use serde_json::Value;
use serde_json::json;

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

async fn complete(events: &[Value]) -> knightcode_protocol::AssistantMessage {
    let body = sse(events);
    let server = WebServer::start(vec![(
        "/backend-api/codex/responses",
        WebResponse::ok("text/event-stream", body),
    )])
    .await
    .unwrap();
    let mut model = Model::new(
        "openai-codex",
        "gpt-5.1",
        Api::OpenAiCodexResponses,
        format!("{}/backend-api", server.url()),
    );
    model.reasoning = true;
    let request = StreamRequest {
        model,
        context: Context {
            system_prompt: Some("Be brief.".into()),
            messages: vec![AgentMessage::user("hi", Millis(1)).into()],
            tools: Vec::new(),
        },
        options: StreamOptions {
            api_key: Some(chatgpt_access_token("acct-raw", "n")),
            ..StreamOptions::default()
        },
    };
    let message = client(Arc::new(FixedClock::default()))
        .complete(&request, CancellationToken::new())
        .await;
    let sent = &server.requests()[0];
    assert_eq!(sent.header("chatgpt-account-id"), Some("acct-raw"));
    message
}

fn text_item(status: &str) -> Value {
    json!({"type": "message", "id": "msg_1", "role": "assistant", "status": status,
           "content": [{"type": "output_text", "text": "Hello.", "annotations": []}]})
}

#[tokio::test]
async fn response_done_ends_the_response_with_its_usage() {
    let message = complete(&[
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": text_item("in_progress")}),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Hello."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": text_item("completed")}),
        json!({"type": "response.done", "response": {"id": "resp_1", "status": "completed",
               "usage": {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15,
                         "input_tokens_details": {"cached_tokens": 2}}}}),
    ])
    .await;
    assert_eq!(
        message.stop_reason.known(),
        Some(StopReason::Stop),
        "{:?}",
        message.error_message
    );
    assert_eq!(message.text(), "Hello.");
    assert_eq!(message.response_id.as_deref(), Some("resp_1"));
    assert_eq!(message.usage.input.0, 10);
    assert_eq!(message.usage.cache_read.0, 2);
    assert_eq!(message.usage.output.0, 3);
}

#[tokio::test]
async fn failures_in_the_stream_are_the_backends_words() {
    let failed = complete(&[
        json!({"type": "response.created", "response": {"id": "resp_2"}}),
        json!({"type": "response.failed", "response": {"id": "resp_2", "status": "failed",
               "error": {"code": "server_error", "message": "The model crashed"}}}),
    ])
    .await;
    assert_eq!(failed.stop_reason.known(), Some(StopReason::Error));
    assert_eq!(failed.error_message.as_deref(), Some("The model crashed"));

    let failed = complete(&[json!({"type": "response.failed", "response": {}})]).await;
    assert_eq!(
        failed.error_message.as_deref(),
        Some("Codex response failed")
    );

    let error = complete(&[
        json!({"type": "error", "code": "context_length_exceeded", "message": "Too long"}),
    ])
    .await;
    assert_eq!(
        error.error_message.as_deref(),
        Some("Codex error: Too long")
    );
    let error = complete(&[json!({"type": "error", "code": "usage_limit_reached"})]).await;
    assert_eq!(
        error.error_message.as_deref(),
        Some("Codex error: usage_limit_reached")
    );
}
