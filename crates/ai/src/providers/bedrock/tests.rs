//! Request building, endpoints and signing, with the environment given as a map.

use std::sync::Arc;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::ToolCall;
use knightcode_protocol::ToolDeclaration;
use knightcode_protocol::ToolResultMessage;
use serde_json::Value;
use serde_json::json;

use super::*;
use crate::config_value::MapEnv;
use crate::model::ThinkingLevel;
use crate::options::CacheRetention;

fn model(id: &str, base_url: &str) -> Model {
    let mut model = Model::new("amazon-bedrock", id, Api::BedrockConverseStream, base_url);
    model.reasoning = true;
    model.input = vec!["text".into(), "image".into()];
    model.context_window = 200_000;
    model.max_tokens = 64_000;
    model
}

fn keys() -> MapEnv {
    MapEnv::new([
        ("AWS_ACCESS_KEY_ID", "AKID"),
        ("AWS_SECRET_ACCESS_KEY", "SECRET"),
        ("HOME", "/nonexistent"),
    ])
}

fn body_of(request: &HttpRequest) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

fn conversation() -> Context {
    let assistant = AssistantMessage {
        content: Blocks(vec![
            ContentBlock::Thinking(ThinkingContent {
                thinking: "Two files.".into(),
                thinking_signature: Some("sig-1".into()),
                ..ThinkingContent::default()
            }),
            ContentBlock::text("Reading."),
            ContentBlock::ToolCall(ToolCall {
                id: "call|1".into(),
                name: "read".into(),
                arguments: json!({"path": "a.txt"}),
                ..ToolCall::default()
            }),
            ContentBlock::ToolCall(ToolCall {
                id: "call_2".into(),
                name: "read".into(),
                arguments: json!({"path": "b.txt"}),
                ..ToolCall::default()
            }),
        ]),
        api: "bedrock-converse-stream".into(),
        provider: "amazon-bedrock".into(),
        model: "us.anthropic.claude-sonnet-4-5-v1".into(),
        ..AssistantMessage::default()
    };
    let result = |id: &str, text: &str, is_error: bool| {
        AgentMessage::ToolResult(Box::new(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: Blocks(vec![ContentBlock::text(text)]),
            is_error,
            timestamp: Millis(3),
            ..ToolResultMessage::default()
        }))
    };
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![
            Arc::new(AgentMessage::user(
                knightcode_protocol::Content::Blocks(vec![
                    ContentBlock::text("Look"),
                    ContentBlock::image("aGVsbG8=", "image/png"),
                ]),
                Millis(1),
            )),
            Arc::new(AgentMessage::Assistant(Box::new(assistant))),
            Arc::new(result("call|1", "alpha", false)),
            Arc::new(result("call_2", "missing", true)),
        ],
        tools: vec![ToolDeclaration {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
            ..ToolDeclaration::default()
        }],
    }
}

#[test]
fn the_body_follows_the_reference() {
    let model = model("us.anthropic.claude-sonnet-4-5-v1", "");
    let options = StreamOptions {
        temperature: Some(0.5),
        ..StreamOptions::default()
    };
    let request = build_request_in(&model, &conversation(), &options, "ua", &keys()).unwrap();
    assert_eq!(
        request.url,
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-v1/converse-stream"
    );
    let body = body_of(&request);
    let expected = json!({
        "messages": [
            {"role": "user", "content": [
                {"text": "Look"},
                {"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}},
            ]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "Two files.", "signature": "sig-1"}}},
                {"text": "Reading."},
                {"toolUse": {"toolUseId": "call|1", "name": "read", "input": {"path": "a.txt"}}},
                {"toolUse": {"toolUseId": "call_2", "name": "read", "input": {"path": "b.txt"}}},
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "call|1", "content": [{"text": "alpha"}], "status": "success"}},
                {"toolResult": {"toolUseId": "call_2", "content": [{"text": "missing"}], "status": "error"}},
                {"cachePoint": {"type": "default"}},
            ]},
        ],
        "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
        "inferenceConfig": {"maxTokens": 32000, "temperature": 0.5},
        "toolConfig": {"tools": [{"toolSpec": {
            "name": "read", "inputSchema": {"json": {"type": "object"}}, "description": "Read a file"}}]},
    });
    assert_eq!(body, expected);
    // Key order as the SDK serialises it.
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["messages", "system", "inferenceConfig", "toolConfig"]
    );
    assert_eq!(
        request.headers.get("content-type"),
        Some("application/json")
    );
    assert!(!request.headers.has("authorization"));
}

#[test]
fn thinking_and_cache_fields() {
    let context = Context {
        system_prompt: Some("s".into()),
        messages: vec![Arc::new(AgentMessage::user("hi", Millis(1)))],
        tools: vec![],
    };
    let adaptive = model("us.anthropic.claude-opus-4-6-v1", "");
    let options = StreamOptions {
        thinking: ThinkingLevel::High,
        cache_retention: Some(CacheRetention::Long),
        ..StreamOptions::default()
    };
    let body = body_of(&build_request_in(&adaptive, &context, &options, "ua", &keys()).unwrap());
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "high"}})
    );
    assert_eq!(
        body["system"][1],
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    );
    assert_eq!(body["inferenceConfig"], json!({"maxTokens": 32000}));

    let budget = model("anthropic.claude-3-7-sonnet-20250219-v1:0", "");
    let options = StreamOptions {
        thinking: ThinkingLevel::Medium,
        ..StreamOptions::default()
    };
    let request = build_request_in(&budget, &context, &options, "ua", &keys()).unwrap();
    assert!(
        request
            .url
            .ends_with("/model/anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream")
    );
    let body = body_of(&request);
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({"thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
               "anthropic_beta": ["interleaved-thinking-2025-05-14"]})
    );
    assert_eq!(body["inferenceConfig"]["maxTokens"], json!(32000 + 8192));

    // Not Claude: no thinking fields, no cache points, reasoning replayed unsigned.
    let nova = model("amazon.nova-pro-v1:0", "");
    let body = body_of(&build_request_in(&nova, &context, &options, "ua", &keys()).unwrap());
    assert!(body.get("additionalModelRequestFields").is_none());
    assert_eq!(body["system"], json!([{"text": "s"}]));
    assert_eq!(body["messages"][0]["content"], json!([{"text": "hi"}]));
}

#[test]
fn endpoints_and_regions() {
    let catalog = "https://bedrock-runtime.us-east-1.amazonaws.com";
    let env = |vars: &[(&str, &str)]| MapEnv::new(vars.iter().copied());
    let t = |base: &str, vars: &[(&str, &str)]| target(&model("m", base), &env(vars)).unwrap();
    assert_eq!(
        t(catalog, &[("AWS_REGION", "eu-west-1")]),
        Target {
            endpoint: "https://bedrock-runtime.eu-west-1.amazonaws.com".into(),
            region: "eu-west-1".into(),
            defaulted: false,
        }
    );
    assert_eq!(t(catalog, &[]).endpoint, catalog);
    assert!(t(catalog, &[]).defaulted);
    assert_eq!(
        t(catalog, &[("AWS_DEFAULT_REGION", "cn-north-1")]).endpoint,
        "https://bedrock-runtime.cn-north-1.amazonaws.com.cn"
    );
    // A proxy (or test server) is used as it is, whatever the region.
    let proxy = t(
        "http://127.0.0.1:9/prefix/",
        &[("AWS_REGION", "ap-south-1")],
    );
    assert_eq!(proxy.endpoint, "http://127.0.0.1:9/prefix");
    assert_eq!(proxy.region, "ap-south-1");
    assert_eq!(t("http://127.0.0.1:9", &[]).region, "us-east-1");
    // A profile without a region in ~/.aws/config leaves none: a clear error.
    let failure = target(
        &model("m", catalog),
        &env(&[("AWS_PROFILE", "x"), ("HOME", "/nonexistent")]),
    )
    .unwrap_err();
    assert!(
        failure.message.contains("set AWS_REGION"),
        "{}",
        failure.message
    );
    assert_eq!(failure.class, ErrorClass::Auth);
}

#[tokio::test]
async fn bearer_tokens_signers_and_missing_credentials() {
    let m = model("m", "http://127.0.0.1:9");
    let context = Context::default();
    let bearer = MapEnv::new([("AWS_BEARER_TOKEN_BEDROCK", "tok")]);
    let request = build_request_in(&m, &context, &StreamOptions::default(), "ua", &bearer).unwrap();
    assert_eq!(request.headers.get("authorization"), Some("Bearer tok"));
    assert!(
        signer_in(&m, &StreamOptions::default(), &Arc::default(), &bearer)
            .unwrap()
            .is_none()
    );

    let signer = signer_in(&m, &StreamOptions::default(), &Arc::default(), &keys())
        .unwrap()
        .unwrap();
    let mut request =
        build_request_in(&m, &context, &StreamOptions::default(), "ua", &keys()).unwrap();
    let http = crate::http::build_http_client().unwrap();
    signer
        .sign(&http, &mut request, 1_440_938_160_000)
        .await
        .unwrap();
    let authorization = request.headers.get("authorization").unwrap();
    assert!(
        authorization.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/bedrock/aws4_request, \
         SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, Signature="
        ),
        "{authorization}"
    );

    let none = MapEnv::new([
        ("HOME", "/nonexistent"),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ]);
    let failure =
        build_request_in(&m, &context, &StreamOptions::default(), "ua", &none).unwrap_err();
    assert_eq!(failure.class, ErrorClass::Auth);
    assert!(
        failure.message.contains("AWS_ACCESS_KEY_ID"),
        "{}",
        failure.message
    );
    // A request's own Authorization header needs no credentials at all.
    let mut options = StreamOptions::default();
    options
        .headers
        .insert("Authorization".into(), json!("Bearer proxy"));
    assert!(build_request_in(&m, &context, &options, "ua", &none).is_ok());
    assert!(
        signer_in(&m, &options, &Arc::default(), &none)
            .unwrap()
            .is_none()
    );
}

#[test]
fn http_errors_read_like_the_sdks() {
    let failure = http_failure(
        400,
        Some("ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
        r#"{"message":"Input is too long for requested model."}"#,
    );
    assert_eq!(
        failure.message,
        "Validation error: Input is too long for requested model."
    );
    assert_eq!(failure.class, ErrorClass::ContextOverflow);
    let failure = http_failure(
        403,
        None,
        r#"{"__type":"com.amazon#UnrecognizedClientException","message":"The security token included in the request is invalid."}"#,
    );
    assert_eq!(
        failure.message,
        "UnrecognizedClientException: The security token included in the request is invalid."
    );
    assert_eq!(failure.class, ErrorClass::Auth);
    let failure = http_failure(
        429,
        Some("ThrottlingException"),
        r#"{"message":"Too many requests"}"#,
    );
    assert_eq!(failure.message, "Throttling error: Too many requests");
    assert_eq!(failure.class, ErrorClass::RateLimit);
    assert_eq!(
        http_failure(502, None, "<html>").message,
        "502: UnknownError"
    );
}

mod decoding {
    use knightcode_protocol::StopReason;

    use super::*;
    use crate::driver::WireDecoder;
    use crate::event::StreamEvent;
    use crate::providers::bedrock::eventstream::encode;

    fn event(name: &str, payload: Value) -> Vec<u8> {
        encode(
            &[
                (":event-type", name),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            payload.to_string().as_bytes(),
        )
    }

    fn exception(name: &str, message: &str) -> Vec<u8> {
        encode(
            &[
                (":exception-type", name),
                (":content-type", "application/json"),
                (":message-type", "exception"),
            ],
            json!({"message": message}).to_string().as_bytes(),
        )
    }

    /// Feeds `bytes` in pieces of `step` and returns the events and the final one.
    fn run(bytes: &[u8], step: usize) -> (Vec<StreamEvent>, StreamEvent) {
        let model = model("us.anthropic.claude-sonnet-4-5-v1", "http://x");
        let mut decoder = WireDecoder::new(&model, 0).unwrap();
        let mut events = Vec::new();
        for piece in bytes.chunks(step) {
            if let Err(failure) = decoder.feed(piece) {
                panic!("feed failed: {failure}");
            }
        }
        decoder.drain_into(&mut events);
        let last = decoder.finish(1, &mut events);
        (events, last)
    }

    fn full_stream() -> Vec<u8> {
        let p = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0";
        [
            event("messageStart", json!({"p": p, "role": "assistant"})),
            event("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Let me "}}, "p": p})),
            event("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "think."}}, "p": p})),
            event("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig-xyz"}}, "p": p})),
            event("contentBlockStop", json!({"contentBlockIndex": 0, "p": p})),
            event("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "Reading "}, "p": p})),
            event("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "it."}, "p": p})),
            event("contentBlockStop", json!({"contentBlockIndex": 1, "p": p})),
            event("contentBlockStart", json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}, "p": p})),
            event("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"path\":"}}, "p": p})),
            event("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "\"a.txt\"}"}}, "p": p})),
            event("contentBlockStop", json!({"contentBlockIndex": 2, "p": p})),
            event("messageStop", json!({"p": p, "stopReason": "tool_use"})),
            event("metadata", json!({"metrics": {"latencyMs": 812}, "p": p, "usage": {
                "inputTokens": 12, "outputTokens": 34, "cacheReadInputTokens": 100,
                "cacheWriteInputTokens": 5, "totalTokens": 151}})),
        ]
        .concat()
    }

    #[test]
    fn a_stream_split_anywhere_decodes_the_same() {
        let bytes = full_stream();
        let (whole, last) = run(&bytes, bytes.len());
        let StreamEvent::Done { reason, message } = &last else {
            panic!("{last:?}");
        };
        assert_eq!(*reason, StopReason::ToolUse);
        let content = serde_json::to_value(&message.content).unwrap();
        assert_eq!(
            content,
            json!([
                {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "sig-xyz"},
                {"type": "text", "text": "Reading it."},
                {"type": "toolCall", "id": "tooluse_1", "name": "read", "arguments": {"path": "a.txt"}},
            ])
        );
        let usage = serde_json::to_value(&message.usage).unwrap();
        assert_eq!(
            (
                &usage["input"],
                &usage["output"],
                &usage["cacheRead"],
                &usage["cacheWrite"],
                &usage["totalTokens"]
            ),
            (&json!(12), &json!(34), &json!(100), &json!(5), &json!(151))
        );
        for step in [1, 3, 7, 64] {
            let (events, again) = run(&bytes, step);
            assert_eq!(events, whole, "step {step}");
            assert_eq!(again, last);
        }
    }

    #[test]
    fn exceptions_end_the_stream_with_a_typed_error() {
        for (name, message, expected, class) in [
            (
                "throttlingException",
                "Too many tokens, please wait.",
                "Throttling error: Too many tokens, please wait.",
                ErrorClass::RateLimit,
            ),
            (
                "modelStreamErrorException",
                "Model produced invalid sequence",
                "Model stream error: Model produced invalid sequence",
                ErrorClass::Overloaded,
            ),
            (
                "validationException",
                "Input is too long for requested model.",
                "Validation error: Input is too long for requested model.",
                ErrorClass::ContextOverflow,
            ),
            (
                "internalServerException",
                "boom",
                "Internal server error: boom",
                ErrorClass::Overloaded,
            ),
        ] {
            let bytes = [
                event("messageStart", json!({"role": "assistant"})),
                event(
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 0, "delta": {"text": "Par"}}),
                ),
                exception(name, message),
            ]
            .concat();
            let model = model("m", "http://x");
            let mut decoder = WireDecoder::new(&model, 0).unwrap();
            let failure = decoder.feed(&bytes).unwrap_err();
            assert_eq!(failure.message, expected);
            assert_eq!(failure.class, class, "{name}");
        }
    }

    #[test]
    fn stop_reasons_and_broken_streams() {
        let stop = |reason: &str| {
            let bytes = [
                event(
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 0, "delta": {"text": "x"}}),
                ),
                event("messageStop", json!({"stopReason": reason})),
            ]
            .concat();
            run(&bytes, bytes.len()).1
        };
        assert!(matches!(
            stop("end_turn"),
            StreamEvent::Done {
                reason: StopReason::Stop,
                ..
            }
        ));
        assert!(matches!(
            stop("max_tokens"),
            StreamEvent::Done {
                reason: StopReason::Length,
                ..
            }
        ));
        assert!(matches!(
            stop("model_context_window_exceeded"),
            StreamEvent::Done {
                reason: StopReason::Length,
                ..
            }
        ));
        let StreamEvent::Error { message, .. } = stop("guardrail_intervened") else {
            panic!("guardrail_intervened should fail");
        };
        assert_eq!(
            message.error_message.as_deref(),
            Some("An unknown error occurred")
        );
        // Cut mid-message: a network failure, not a panic or a silent success.
        let bytes = full_stream();
        let (_, last) = run(&bytes[..bytes.len() - 5], 4096);
        let StreamEvent::Error { message, .. } = last else {
            panic!("a cut stream should fail");
        };
        assert!(
            message
                .error_message
                .unwrap()
                .contains("closed before the answer was complete")
        );
        // Not event-stream framing at all (a proxy's page).
        let model = model("m", "http://x");
        let mut decoder = WireDecoder::new(&model, 0).unwrap();
        let failure = decoder
            .feed(b"<html><body>Bad gateway</body></html>")
            .unwrap_err();
        assert!(failure.message.contains("corrupted"), "{}", failure.message);
    }
}
