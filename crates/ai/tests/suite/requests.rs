//! Request bodies for a conversation with tool results, images and thinking, per wire format.

use crate::common;

use std::sync::Arc;

use knightcode_ai::Api;
use knightcode_ai::Context;
use knightcode_ai::Model;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::ToolCall;
use knightcode_protocol::ToolDeclaration;
use knightcode_protocol::ToolResultMessage;
use serde_json::json;

fn model(api: Api) -> Model {
    let mut model = Model::new("mock", "mock-model", api, "http://127.0.0.1:9");
    model.reasoning = true;
    model.input = vec!["text".into(), "image".into()];
    model.context_window = 200_000;
    model.max_tokens = 32_000;
    model
}

fn assistant(api: Api, provider: &str, model: &str, content: Vec<ContentBlock>) -> AgentMessage {
    AgentMessage::Assistant(Box::new(AssistantMessage {
        content: Blocks(content),
        api: api.as_str().into(),
        provider: provider.into(),
        model: model.into(),
        stop_reason: StopReason::ToolUse.into(),
        timestamp: Millis(2),
        ..AssistantMessage::default()
    }))
}

fn tool_result(id: &str, content: Vec<ContentBlock>) -> AgentMessage {
    AgentMessage::ToolResult(Box::new(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: Blocks(content),
        is_error: false,
        timestamp: Millis(3),
        ..ToolResultMessage::default()
    }))
}

fn call(id: &str, path: &str) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({"path": path}),
        ..ToolCall::default()
    })
}

fn thinking(text: &str, signature: &str) -> ContentBlock {
    ContentBlock::Thinking(ThinkingContent {
        thinking: text.into(),
        thinking_signature: Some(signature.into()),
        ..ThinkingContent::default()
    })
}

/// The same conversation for every format; `signature` is what that format stores.
fn conversation(api: Api, signature: &str) -> Context {
    let image = ContentBlock::image("aGVsbG8=", "image/png");
    let redacted = ContentBlock::Thinking(ThinkingContent {
        thinking: "[Reasoning redacted]".into(),
        thinking_signature: Some("opaque-redacted".into()),
        redacted: Some(true),
        ..ThinkingContent::default()
    });
    Context {
        system_prompt: Some("You are a careful assistant.".into()),
        messages: vec![
            AgentMessage::user(
                knightcode_protocol::Content::Blocks(vec![
                    ContentBlock::text("What is in this picture and in a.txt, b.txt?"),
                    image.clone(),
                ]),
                Millis(1),
            ),
            assistant(
                api,
                "mock",
                "mock-model",
                vec![
                    thinking("The user wants two files.", signature),
                    redacted,
                    ContentBlock::text("Let me read them."),
                    call("call_1", "a.txt"),
                    call("call_2", "b.txt"),
                ],
            ),
            tool_result("call_1", vec![ContentBlock::text("alpha"), image]),
            tool_result("call_2", vec![ContentBlock::text("beta")]),
            assistant(
                Api::OpenAiResponses,
                "other",
                "other-model",
                vec![
                    thinking("Thoughts from another model.", "{\"type\":\"reasoning\"}"),
                    ContentBlock::text("Both files are short."),
                    call("call_3|fc_item_1", "c.txt"),
                ],
            ),
            AgentMessage::user("Thanks, and c.txt?", Millis(5)),
        ]
        .into_iter()
        .map(std::sync::Arc::new)
        .collect(),
        tools: vec![ToolDeclaration {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "File path"}},
                "required": ["path"],
            }),
            ..ToolDeclaration::default()
        }],
    }
}

fn snapshot(api: Api, signature: &str, options: StreamOptions, name: &str) {
    let client = common::client(Arc::default());
    let request = StreamRequest {
        model: model(api),
        context: conversation(api, signature),
        options,
    };
    let built = client.build_request(&request).unwrap();
    let headers: Vec<String> = built
        .headers
        .iter()
        .map(|(n, v)| format!("{n}: {v}"))
        .collect();
    let text = format!(
        "POST {}\n{}\n\n{}",
        built.url,
        headers.join("\n"),
        serde_json::to_string_pretty(&built.body).unwrap()
    );
    insta::assert_snapshot!(name, text);
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("sk-test".into()),
        thinking: ThinkingLevel::Medium,
        session_id: Some("session-1".into()),
        temperature: Some(0.5),
        ..StreamOptions::default()
    }
}

#[test]
fn anthropic_messages_request() {
    snapshot(
        Api::AnthropicMessages,
        "sig-abc",
        options(),
        "anthropic-messages",
    );
}

#[test]
fn openai_completions_request() {
    snapshot(
        Api::OpenAiCompletions,
        "reasoning_content",
        options(),
        "openai-completions",
    );
}

#[test]
fn thinking_off_and_long_cache() {
    let options = StreamOptions {
        thinking: ThinkingLevel::Off,
        cache_retention: Some(knightcode_ai::CacheRetention::Long),
        ..options()
    };
    snapshot(
        Api::AnthropicMessages,
        "sig-abc",
        options,
        "anthropic-messages-thinking-off-long-cache",
    );
}

#[test]
fn openai_responses_request() {
    let reasoning_item = r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"The user wants two files."}],"encrypted_content":"ENC"}"#;
    snapshot(
        Api::OpenAiResponses,
        reasoning_item,
        options(),
        "openai-responses",
    );
}

#[test]
fn google_request() {
    snapshot(
        Api::GoogleGenerativeAi,
        "c2lnLWFiYw==",
        options(),
        "google-generative-ai",
    );
}

#[test]
fn mistral_request() {
    // Mistral stores no signature; the other model's `call_3|fc_item_1` becomes the nine
    // characters pi derives (`shortHash("call3fcitem1")`), in the call and in its result.
    snapshot(
        Api::MistralConversations,
        "",
        options(),
        "mistral-conversations",
    );
}

#[test]
fn azure_openai_responses_request() {
    let mut model = model(Api::AzureOpenAiResponses);
    model.provider = "azure-openai-responses".into();
    let client = common::client(Arc::default());
    let request = StreamRequest {
        model,
        context: conversation(Api::AzureOpenAiResponses, "{\"type\":\"reasoning\"}"),
        options: options(),
    };
    let built = client.build_request(&request).unwrap();
    assert_eq!(
        built.url, "http://127.0.0.1:9/responses?api-version=v1",
        "the model's base URL when the environment names no endpoint"
    );
    let headers: Vec<(String, String)> = built.headers.clone();
    assert!(
        headers
            .iter()
            .any(|(n, v)| n == "api-key" && v == "sk-test")
    );
    assert!(
        !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
    );
    let body = &built.body;
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["prompt_cache_key"], "session-1");
    assert!(body.get("store").is_none());
    assert_eq!(body["max_output_tokens"], 32000);
}
