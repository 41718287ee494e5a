//! The kind of a failure is decided where it arises (HTTP status, the provider's error code or
//! type, the transport) and travels with the message in memory; retry and overflow handling
//! read it, and fall back to the text only for messages that have no kind.

use crate::common;

use std::sync::Arc;

use common::client;
use common::collect;
use common::model_for;
use knightcode_ai::CancellationToken;
use knightcode_ai::Context;
use knightcode_ai::ErrorClass;
use knightcode_ai::Provider;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_ai::is_context_overflow;
use knightcode_ai::is_retryable_assistant_error;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::MemoryOnly;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_testkit::Chunking;
use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

async fn failed_once(format: WireFormat, reply: ScriptedReply) -> AssistantMessage {
    let server = MockServer::start(format, vec![reply]).await.unwrap();
    let request = StreamRequest {
        model: model_for(&server, "mock-model"),
        context: Context {
            system_prompt: None,
            messages: vec![AgentMessage::user("hello", Millis(1)).into()],
            tools: vec![],
        },
        options: StreamOptions {
            api_key: Some("k".into()),
            ..StreamOptions::default()
        },
    };
    let events = collect(client(Arc::default()).stream(&request, CancellationToken::new())).await;
    let message = events.last().unwrap().final_message().unwrap().clone();
    assert_eq!(message.stop_reason.known(), Some(StopReason::Error));
    message
}

fn http(status: u16, body: &str) -> ScriptedReply {
    ScriptedReply::fault(Fault::HttpStatus {
        status,
        retry_after: None,
        body: Some(body.to_owned()),
        headers: vec![],
    })
}

/// An error body in `format`'s shape whose message says nothing about its kind.
fn neutral_body(format: WireFormat, code: &str) -> String {
    match format {
        WireFormat::AnthropicMessages => serde_json::json!({
            "type": "error",
            "error": {"type": code, "message": "Request refused"},
        }),
        WireFormat::Google => serde_json::json!({
            "error": {"code": 400, "message": "Request refused", "status": code},
        }),
        _ => serde_json::json!({
            "error": {"message": "Request refused", "type": "invalid_request_error", "code": code},
        }),
    }
    .to_string()
}

#[tokio::test]
async fn the_status_decides_when_the_body_says_nothing() {
    for &format in &WireFormat::ALL {
        for (status, class, retryable) in [
            (503, ErrorClass::Overloaded, true),
            (520, ErrorClass::Overloaded, true),
            (502, ErrorClass::Overloaded, true),
            (403, ErrorClass::Auth, false),
            (404, ErrorClass::Other, false),
        ] {
            let message = failed_once(format, http(status, "")).await;
            let context = format!("{} {status}", format.api_name());
            assert_eq!(
                message.error_message.as_deref(),
                Some(format!("{status} status code (no body)").as_str()),
                "{context}"
            );
            assert_eq!(message.error_class.get(), Some(&class), "{context}");
            assert_eq!(
                is_retryable_assistant_error(&message),
                retryable,
                "{context}"
            );
        }
    }
}

#[tokio::test]
async fn the_provider_code_decides_over_the_status() {
    for &format in &WireFormat::ALL {
        let name = format.api_name();
        let (overflow, rate_limit, quota) = match format {
            WireFormat::AnthropicMessages => {
                ("request_too_large", "rate_limit_error", "billing_error")
            }
            WireFormat::Google => ("", "RESOURCE_EXHAUSTED", ""),
            _ => (
                "context_length_exceeded",
                "rate_limit_exceeded",
                "insufficient_quota",
            ),
        };
        // A 400 whose code says "context window": compacted, not reported as a bad request.
        if !overflow.is_empty() {
            let message = failed_once(format, http(400, &neutral_body(format, overflow))).await;
            assert_eq!(
                message.error_class.get(),
                Some(&ErrorClass::ContextOverflow),
                "{name}: {:?}",
                message.error_message
            );
            assert!(is_context_overflow(&message, None), "{name}");
            assert!(!is_retryable_assistant_error(&message), "{name}");
        }
        // A 400 whose code says "slow down" is retried like a 429.
        let message = failed_once(format, http(400, &neutral_body(format, rate_limit))).await;
        assert_eq!(
            message.error_class.get(),
            Some(&ErrorClass::RateLimit),
            "{name}"
        );
        assert!(is_retryable_assistant_error(&message), "{name}");
        // A 429 whose code says the quota is used up is not retried.
        if !quota.is_empty() {
            let message = failed_once(format, http(429, &neutral_body(format, quota))).await;
            assert_eq!(
                message.error_class.get(),
                Some(&ErrorClass::Quota),
                "{name}"
            );
            assert!(!is_retryable_assistant_error(&message), "{name}");
        }
    }
}

#[tokio::test]
async fn errors_inside_the_stream_are_classified_by_their_code() {
    for &format in &WireFormat::ALL {
        for (kind, class) in [
            (MockErrorKind::RateLimit, ErrorClass::RateLimit),
            (MockErrorKind::Server, ErrorClass::Overloaded),
            (MockErrorKind::Overloaded, ErrorClass::Overloaded),
            (MockErrorKind::InvalidRequest, ErrorClass::Other),
        ] {
            // The message alone names no kind ("Slow down" is not in any retry wording).
            let reply = ScriptedReply::text("The quick brown fox jumps over the lazy dog.")
                .with_chunking(Chunking::chars(4))
                .with_fault(Fault::MidStreamError {
                    after_events: 4,
                    message: "Slow down".into(),
                    kind,
                });
            let message = failed_once(format, reply).await;
            let context = format!(
                "{} {kind:?}: {:?}",
                format.api_name(),
                message.error_message
            );
            assert_eq!(message.error_class.get(), Some(&class), "{context}");
            assert_eq!(
                is_retryable_assistant_error(&message),
                class.is_transient(),
                "{context}"
            );
        }
    }
}

#[tokio::test]
async fn truncated_streams_are_network_failures() {
    for &format in &WireFormat::ALL {
        let reply = ScriptedReply::text("The quick brown fox jumps over the lazy dog.")
            .with_chunking(Chunking::chars(4))
            .with_fault(Fault::ResetAfterEvents(5));
        let message = failed_once(format, reply).await;
        assert_eq!(
            message.error_class.get(),
            Some(&ErrorClass::Network),
            "{}",
            format.api_name()
        );
    }
}

#[tokio::test]
async fn aborts_carry_their_kind() {
    let server = MockServer::start(WireFormat::AnthropicMessages, vec![])
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let request = StreamRequest {
        model: model_for(&server, "mock-model"),
        context: Context::default(),
        options: StreamOptions {
            api_key: Some("k".into()),
            ..StreamOptions::default()
        },
    };
    let message = client(Arc::default()).complete(&request, cancel).await;
    assert_eq!(message.stop_reason.known(), Some(StopReason::Aborted));
    assert_eq!(message.error_class.get(), Some(&ErrorClass::Aborted));
}

fn failed(text: &str, class: Option<ErrorClass>) -> AssistantMessage {
    AssistantMessage {
        stop_reason: StopReason::Error.into(),
        error_message: Some(text.to_owned()),
        error_class: MemoryOnly(class),
        ..AssistantMessage::default()
    }
}

#[test]
fn the_kind_answers_and_the_text_only_without_one() {
    // The kind wins over wording that would say otherwise.
    let bad_request = failed("400 upstream said: overloaded", Some(ErrorClass::Other));
    assert!(!is_retryable_assistant_error(&bad_request));
    let overflow = failed("Request refused", Some(ErrorClass::ContextOverflow));
    assert!(is_context_overflow(&overflow, None));
    let throttled = failed("Slow down", Some(ErrorClass::RateLimit));
    assert!(is_retryable_assistant_error(&throttled));
    // Without a kind (a session file, a provider that reports only text) the reference's
    // text rules decide.
    assert!(is_retryable_assistant_error(&failed(
        "400 upstream said: overloaded",
        None
    )));
    assert!(!is_context_overflow(&failed("Request refused", None), None));
    assert!(is_context_overflow(
        &failed("prompt is too long: 213462 tokens > 200000 maximum", None),
        None
    ));
    // A kind never makes a success a failure.
    let mut done = failed("", Some(ErrorClass::RateLimit));
    done.stop_reason = StopReason::Stop.into();
    done.error_message = None;
    assert!(!is_retryable_assistant_error(&done));
}

#[test]
fn the_kind_is_never_written() {
    let message = failed("529 overloaded_error", Some(ErrorClass::Overloaded));
    let json = serde_json::to_string(&message).unwrap();
    assert_eq!(
        json,
        serde_json::to_string(&failed("529 overloaded_error", None)).unwrap()
    );
    assert!(!json.contains("Overloaded\""), "{json}");
    let read: AssistantMessage = serde_json::from_str(&json).unwrap();
    assert_eq!(read.error_class.get(), None);
    // Equal to what was written: the kind is not part of the message's identity.
    assert_eq!(read, message);
    // The final stream event carries the same message, kind included.
    let event = StreamEvent::Error {
        reason: StopReason::Error,
        message,
    };
    assert_eq!(
        event.final_message().unwrap().error_class.get(),
        Some(&ErrorClass::Overloaded)
    );
}
