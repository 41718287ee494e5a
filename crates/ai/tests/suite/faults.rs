//! Every fault the mock server can inject ends the stream with the right error class, a retry,
//! or an abort; never a panic, and never a half-built message reported as success.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::FixedClock;
use common::client;
use common::collect;
use common::model_for;
use knightcode_ai::CancellationToken;
use knightcode_ai::Context;
use knightcode_ai::ErrorClass;
use knightcode_ai::Provider;
use knightcode_ai::ProviderRetry;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_ai::classify_error_message;
use knightcode_ai::is_context_overflow;
use knightcode_ai::is_retryable_assistant_error;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_testkit::Chunking;
use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

const FORMATS: &[WireFormat] = &WireFormat::ALL;

fn request(server: &MockServer, retry: ProviderRetry) -> StreamRequest {
    StreamRequest {
        model: model_for(server, "mock-model"),
        context: Context {
            system_prompt: Some("sys".into()),
            messages: vec![AgentMessage::user("hello", Millis(1)).into()],
            tools: vec![],
        },
        options: StreamOptions {
            api_key: Some("k".into()),
            retry,
            ..StreamOptions::default()
        },
    }
}

fn no_retry() -> ProviderRetry {
    ProviderRetry::default()
}

fn long_text() -> ScriptedReply {
    ScriptedReply::text("The quick brown fox jumps over the lazy dog.")
        .with_chunking(Chunking::chars(4))
}

/// Runs one request and checks the stream's shape: exactly one final event, last.
async fn run(
    server: &MockServer,
    retry: ProviderRetry,
    clock: Arc<FixedClock>,
) -> AssistantMessage {
    let events =
        collect(client(clock).stream(&request(server, retry), CancellationToken::new())).await;
    let finals = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Done { .. } | StreamEvent::Error { .. }))
        .count();
    assert_eq!(finals, 1, "exactly one final event: {events:?}");
    events.last().unwrap().final_message().unwrap().clone()
}

fn assert_failed(message: &AssistantMessage, class: ErrorClass, context: &str) {
    assert_eq!(
        message.stop_reason.known(),
        Some(StopReason::Error),
        "{context}: {message:?}"
    );
    let text = message.error_message.as_deref().unwrap_or_default();
    assert_eq!(classify_error_message(text), class, "{context}: {text}");
    // The class was decided where the failure arose, and agrees with what the text says.
    assert_eq!(message.error_class.get(), Some(&class), "{context}: {text}");
}

#[tokio::test]
async fn http_errors_are_classified() {
    let cases = [
        (429, ErrorClass::RateLimit, true),
        (500, ErrorClass::Overloaded, true),
        (529, ErrorClass::Overloaded, true),
        (401, ErrorClass::Auth, false),
    ];
    for &format in FORMATS {
        for (status, class, retryable) in cases {
            let server = MockServer::start(format, vec![ScriptedReply::http_error(status)])
                .await
                .unwrap();
            let message = run(&server, no_retry(), Arc::default()).await;
            let context = format!("{} {status}", format.api_name());
            assert_failed(&message, class, &context);
            assert!(message.content.is_empty(), "{context}");
            assert_eq!(
                is_retryable_assistant_error(&message),
                retryable,
                "{context}"
            );
            assert!(!is_context_overflow(&message, Some(200_000)), "{context}");
        }
    }
}

#[tokio::test]
async fn context_overflow_is_detected() {
    for &format in FORMATS {
        let name = format.api_name();
        let body = match format {
            WireFormat::AnthropicMessages => {
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}"#
            }
            _ => {
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#
            }
        };
        let http = ScriptedReply::fault(Fault::HttpStatus {
            status: 400,
            retry_after: None,
            body: Some(body.into()),
            headers: vec![],
        });
        let mid = long_text().with_fault(Fault::MidStreamError {
            after_events: 2,
            message: "context_length_exceeded: prompt too large".into(),
            kind: MockErrorKind::ContextOverflow,
        });
        let server = MockServer::start(format, vec![http, mid]).await.unwrap();
        for case in ["http", "mid-stream"] {
            let message = run(&server, no_retry(), Arc::default()).await;
            assert_failed(
                &message,
                ErrorClass::ContextOverflow,
                &format!("{name} {case}"),
            );
            assert!(is_context_overflow(&message, None), "{name} {case}");
        }
    }
}

#[tokio::test]
async fn retry_after_is_honoured() {
    for &format in FORMATS {
        let throttled = ScriptedReply::fault(Fault::HttpStatus {
            status: 429,
            retry_after: Some("3".into()),
            body: None,
            headers: vec![],
        });
        let busy = ScriptedReply::fault(Fault::HttpStatus {
            status: 529,
            retry_after: None,
            body: None,
            headers: vec![("retry-after-ms".into(), "250".into())],
        });
        let server = MockServer::start(format, vec![throttled, busy, ScriptedReply::text("ok")])
            .await
            .unwrap();
        let clock = Arc::new(FixedClock::default());
        let retry = ProviderRetry {
            max_retries: 2,
            ..ProviderRetry::default()
        };
        let message = run(&server, retry, clock.clone()).await;
        assert_eq!(message.stop_reason.known(), Some(StopReason::Stop));
        assert_eq!(message.text(), "ok");
        assert_eq!(server.requests().len(), 3);
        assert_eq!(
            *clock.sleeps.lock().unwrap(),
            vec![Duration::from_secs(3), Duration::from_millis(250)]
        );
    }
}

#[tokio::test]
async fn retries_stop_at_the_limit_and_on_permanent_errors() {
    for &format in FORMATS {
        let server = MockServer::start(
            format,
            vec![
                ScriptedReply::http_error(500),
                ScriptedReply::http_error(500),
                ScriptedReply::text("never"),
            ],
        )
        .await
        .unwrap();
        let clock = Arc::new(FixedClock::default());
        let retry = ProviderRetry {
            max_retries: 1,
            ..ProviderRetry::default()
        };
        let message = run(&server, retry, clock.clone()).await;
        assert_failed(&message, ErrorClass::Overloaded, format.api_name());
        assert_eq!(server.requests().len(), 2);
        // Exponential backoff without a server hint: 0.5 s for the first retry (no jitter).
        assert_eq!(
            *clock.sleeps.lock().unwrap(),
            vec![Duration::from_millis(500)]
        );

        let server = MockServer::start(format, vec![ScriptedReply::http_error(400)])
            .await
            .unwrap();
        let message = run(&server, retry, Arc::default()).await;
        assert_eq!(message.stop_reason.known(), Some(StopReason::Error));
        assert_eq!(server.requests().len(), 1, "400 is not retried");

        let too_long = ScriptedReply::fault(Fault::HttpStatus {
            status: 429,
            retry_after: Some("120".into()),
            body: None,
            headers: vec![],
        });
        let server = MockServer::start(format, vec![too_long]).await.unwrap();
        let message = run(&server, retry, Arc::default()).await;
        let text = message.error_message.clone().unwrap();
        assert!(
            text.starts_with("Server requested 120s retry delay (max: 60s). 429"),
            "{text}"
        );
        assert!(is_retryable_assistant_error(&message));
    }
}

#[tokio::test]
async fn broken_streams_fail_with_partial_content() {
    for &format in FORMATS {
        let name = format.api_name();
        let reset = long_text().with_fault(Fault::ResetAfterEvents(5));
        let malformed = long_text().with_fault(Fault::MalformedSseAfterEvents(5));
        let mid = long_text().with_fault(Fault::MidStreamError {
            after_events: 5,
            message: "Overloaded".into(),
            kind: MockErrorKind::Overloaded,
        });
        let server = MockServer::start(format, vec![reset, malformed, mid])
            .await
            .unwrap();

        let message = run(&server, no_retry(), Arc::default()).await;
        assert_failed(&message, ErrorClass::Network, &format!("{name} reset"));
        assert!(is_retryable_assistant_error(&message), "{name} reset");
        assert!(!message.text().is_empty(), "{name}: partial text kept");

        let message = run(&server, no_retry(), Arc::default()).await;
        assert_eq!(
            message.stop_reason.known(),
            Some(StopReason::Error),
            "{name}"
        );
        let text = message.error_message.clone().unwrap();
        assert!(text.contains("Could not parse"), "{name}: {text}");

        let message = run(&server, no_retry(), Arc::default()).await;
        assert_failed(
            &message,
            ErrorClass::Overloaded,
            &format!("{name} mid-stream"),
        );
        assert!(is_retryable_assistant_error(&message), "{name} mid-stream");
        assert!(!message.text().is_empty(), "{name}: partial text kept");
    }
}

#[tokio::test]
async fn abort_mid_stream_keeps_partial_content() {
    for &format in FORMATS {
        let name = format.api_name();
        let reply = long_text().with_fault(Fault::StallAfterEvents(6));
        let server = MockServer::start(format, vec![reply]).await.unwrap();
        let cancel = CancellationToken::new();
        let client = client(Arc::default());
        let mut stream = client.stream(&request(&server, no_retry()), cancel.clone());
        server.wait_for_stalls(1).await;
        // Read what has arrived so far, then cancel while the server holds the stream open.
        let mut seen_text = false;
        while !seen_text {
            match stream.recv().await.unwrap() {
                StreamEvent::TextDelta { .. } => seen_text = true,
                StreamEvent::Error { message, .. } => panic!("{name}: early error {message:?}"),
                _ => {}
            }
        }
        cancel.cancel();
        let message = stream.result().await;
        assert_eq!(
            message.stop_reason.known(),
            Some(StopReason::Aborted),
            "{name}"
        );
        assert_eq!(
            message.error_message.as_deref(),
            Some("Request was aborted")
        );
        assert!(!message.text().is_empty(), "{name}: partial text kept");
        assert!(!is_retryable_assistant_error(&message));
        // The HTTP stream was dropped: the server sees the client go away.
        server.wait_until(|a| a.client_disconnects >= 1).await;
    }
}

#[tokio::test]
async fn abort_before_the_response() {
    for &format in FORMATS {
        let server = MockServer::start(format, vec![long_text()]).await.unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let message = client(Arc::default())
            .complete(&request(&server, no_retry()), cancel)
            .await;
        assert_eq!(message.stop_reason.known(), Some(StopReason::Aborted));
        assert!(message.content.is_empty());
    }
}

#[tokio::test]
async fn idle_timeout_fails_a_stalled_stream() {
    for &format in FORMATS {
        let reply = long_text().with_fault(Fault::StallAfterEvents(4));
        let server = MockServer::start(format, vec![reply]).await.unwrap();
        let retry = ProviderRetry {
            timeout_ms: 200,
            ..ProviderRetry::default()
        };
        let message = run(&server, retry, Arc::default()).await;
        assert_failed(&message, ErrorClass::Network, format.api_name());
        assert!(is_retryable_assistant_error(&message));
    }
}

#[tokio::test]
async fn missing_api_key_is_reported() {
    for &format in FORMATS {
        let server = MockServer::start(format, vec![]).await.unwrap();
        let mut request = request(&server, no_retry());
        request.options.api_key = None;
        let message = client(Arc::default())
            .complete(&request, CancellationToken::new())
            .await;
        assert_failed(&message, ErrorClass::Auth, format.api_name());
        assert_eq!(
            message.error_message.as_deref(),
            Some(
                "No API key for provider: mock. To use it, add a key for \"mock\" to auth.json \
                 or pass --api-key."
            )
        );
        assert!(server.requests().is_empty());
    }
}

#[tokio::test]
async fn paced_reads_deliver_the_same_events_and_faults() {
    // Reading the body at most every few milliseconds batches deltas; it must not lose,
    // reorder or merge any, and faults, timeouts and aborts still end the stream.
    for &format in FORMATS {
        let name = format.api_name();
        let paced_reply = || long_text().with_interval(Duration::from_millis(1));
        let mid = long_text().with_fault(Fault::MidStreamError {
            after_events: 5,
            message: "Overloaded".into(),
            kind: MockErrorKind::Overloaded,
        });
        let stalled = long_text().with_fault(Fault::StallAfterEvents(4));
        // Two servers, so that both runs get the first response id.
        let unpaced_server = MockServer::start(format, vec![long_text()]).await.unwrap();
        let server = MockServer::start(format, vec![paced_reply(), mid, stalled])
            .await
            .unwrap();
        let plain = collect(client(Arc::default()).stream(
            &request(&unpaced_server, no_retry()),
            CancellationToken::new(),
        ))
        .await;
        let paced_client = client(Arc::default()).with_read_pacing(Duration::from_millis(5));
        let paced =
            collect(paced_client.stream(&request(&server, no_retry()), CancellationToken::new()))
                .await;
        assert_eq!(paced, plain, "{name}: same events with paced reads");

        let failed = paced_client
            .complete(&request(&server, no_retry()), CancellationToken::new())
            .await;
        assert_failed(&failed, ErrorClass::Overloaded, &format!("{name} paced"));
        assert!(!failed.text().is_empty(), "{name}: partial text kept");

        let retry = ProviderRetry {
            timeout_ms: 200,
            ..ProviderRetry::default()
        };
        let timed_out = paced_client
            .complete(&request(&server, retry), CancellationToken::new())
            .await;
        assert_failed(
            &timed_out,
            ErrorClass::Network,
            &format!("{name} paced stall"),
        );
    }
}
