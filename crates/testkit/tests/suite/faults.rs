//! Every fault behaves as documented, in every format.

use crate::common;

use common::{GUARD, client, open_stream, post};
use knightcode_testkit::{Fault, MockErrorKind, MockServer, ScriptedReply, WireFormat};
use serde_json::{Value, json};

fn body() -> Value {
    json!({"model": "m", "stream": true, "messages": []})
}

#[tokio::test]
async fn http_status_with_retry_after_and_format_body() {
    let client = client();
    for format in WireFormat::ALL {
        let reply = ScriptedReply::fault(Fault::HttpStatus {
            status: 429,
            retry_after: Some("7".into()),
            body: None,
            headers: vec![("retry-after-ms".into(), "7000".into())],
        });
        let server = MockServer::start(format, vec![reply]).await.expect("start");
        let resp = post(&client, &server, "m", body()).await;
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.headers()["retry-after"], "7");
        assert_eq!(resp.headers()["retry-after-ms"], "7000");
        let err: Value = resp.json().await.expect("json body");
        match format {
            WireFormat::AnthropicMessages => {
                assert_eq!(err["type"], "error");
                assert_eq!(err["error"]["type"], "rate_limit_error");
            }
            WireFormat::OpenAiCompletions | WireFormat::OpenAiResponses => {
                assert_eq!(err["error"]["code"], "rate_limit_exceeded");
                assert!(err["error"]["message"].is_string());
            }
            WireFormat::Google => {
                assert_eq!(err["error"]["code"], 429);
                assert_eq!(err["error"]["status"], "RESOURCE_EXHAUSTED");
            }
            WireFormat::Mistral | WireFormat::Bedrock => unreachable!("not in WireFormat::ALL"),
        }
    }
}

#[tokio::test]
async fn anthropic_529_is_overloaded_and_custom_bodies_pass_through() {
    let client = client();
    let server = MockServer::start(
        WireFormat::AnthropicMessages,
        vec![
            ScriptedReply::http_error(529),
            ScriptedReply::fault(Fault::HttpStatus {
                status: 500,
                retry_after: None,
                body: Some("plain failure".into()),
                headers: Vec::new(),
            }),
            ScriptedReply::text("recovered"),
        ],
    )
    .await
    .expect("start");
    let resp = post(&client, &server, "m", body()).await;
    assert_eq!(resp.status(), 529);
    let err: Value = resp.json().await.expect("json");
    assert_eq!(
        err["error"],
        json!({"type": "overloaded_error", "message": "Overloaded"})
    );
    let resp = post(&client, &server, "m", body()).await;
    assert_eq!(resp.status(), 500);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("text/plain")
    );
    assert_eq!(resp.text().await.expect("text"), "plain failure");
    // The connection survives error responses; the next reply streams normally.
    let events = open_stream(&client, &server, "m").await.rest().await;
    assert_eq!(
        events.last().and_then(|e| e.event.as_deref()),
        Some("message_stop")
    );
}

#[tokio::test]
async fn reset_truncates_the_body() {
    let client = client();
    for format in WireFormat::ALL {
        let reply =
            ScriptedReply::text("a long enough answer").with_fault(Fault::ResetAfterEvents(2));
        let server = MockServer::start(format, vec![reply]).await.expect("start");
        let mut reader = open_stream(&client, &server, "m").await;
        reader.take(2).await;
        let end = reader.next().await;
        assert!(
            end.is_err(),
            "{format:?}: expected a body error, got {end:?}"
        );
    }
}

#[tokio::test]
async fn malformed_event_is_not_json() {
    let client = client();
    for format in WireFormat::ALL {
        let reply = ScriptedReply::text("answer").with_fault(Fault::MalformedSseAfterEvents(2));
        let server = MockServer::start(format, vec![reply]).await.expect("start");
        let mut reader = open_stream(&client, &server, "m").await;
        let good = reader.take(2).await;
        for event in &good {
            event.json();
        }
        let rest = reader.rest().await;
        assert_eq!(rest.len(), 1, "{format:?}: {rest:?}");
        // Named formats keep a known event name so clients do not just skip the event.
        let named = matches!(
            format,
            WireFormat::AnthropicMessages | WireFormat::OpenAiResponses
        );
        assert_eq!(rest[0].event.is_some(), named, "{format:?}");
        assert!(
            serde_json::from_str::<Value>(&rest[0].data).is_err(),
            "{format:?}: {:?}",
            rest[0]
        );
    }
}

#[tokio::test]
async fn stalled_stream_notices_the_client_leaving() {
    let client = client();
    for format in WireFormat::ALL {
        let reply = ScriptedReply::text("never finished").with_fault(Fault::StallAfterEvents(1));
        let server = MockServer::start(format, vec![reply]).await.expect("start");
        let mut reader = open_stream(&client, &server, "m").await;
        reader.take(1).await;
        tokio::time::timeout(GUARD, server.wait_for_stalls(1))
            .await
            .expect("stall");
        // Aborting the request (as a client does on user abort) closes the connection.
        drop(reader);
        let activity =
            tokio::time::timeout(GUARD, server.wait_until(|a| a.client_disconnects == 1))
                .await
                .expect("disconnect seen");
        assert_eq!(activity.completed, 0, "{format:?}");
    }
}

#[tokio::test]
async fn stall_at_start_holds_back_every_event() {
    let client = client();
    let reply = ScriptedReply::text("hi").with_fault(Fault::StallAfterEvents(0));
    let server = MockServer::start(WireFormat::OpenAiCompletions, vec![reply])
        .await
        .expect("start");
    // Headers arrive even though no event does.
    let mut reader = open_stream(&client, &server, "m").await;
    tokio::time::timeout(GUARD, server.wait_for_stalls(1))
        .await
        .expect("stall");
    server.release_stalls();
    let events = reader.rest().await;
    assert_eq!(events.last().map(|e| e.data.as_str()), Some("[DONE]"));
}

#[tokio::test]
async fn mid_stream_error_uses_each_format_shape() {
    let client = client();
    for format in WireFormat::ALL {
        let reply = ScriptedReply::text("partial answer").with_fault(Fault::MidStreamError {
            after_events: 2,
            message: "boom".into(),
            kind: MockErrorKind::Overloaded,
        });
        let server = MockServer::start(format, vec![reply]).await.expect("start");
        let mut reader = open_stream(&client, &server, "m").await;
        reader.take(2).await;
        if format == WireFormat::Google {
            // Gemini sends the error as a bare JSON object, not as an SSE event.
            let raw = reader.rest_raw().await;
            let err: Value = serde_json::from_str(&raw).expect("bare JSON error");
            assert_eq!(err["error"]["message"], "boom");
            assert_eq!(err["error"]["code"], 503);
            assert_eq!(err["error"]["status"], "UNAVAILABLE");
            continue;
        }
        let rest = reader.rest().await;
        assert_eq!(rest.len(), 1, "{format:?}: {rest:?}");
        let err = rest[0].json();
        match format {
            WireFormat::AnthropicMessages => {
                assert_eq!(rest[0].event.as_deref(), Some("error"));
                assert_eq!(err["type"], "error");
                assert_eq!(
                    err["error"],
                    json!({"type": "overloaded_error", "message": "boom"})
                );
            }
            WireFormat::OpenAiCompletions => {
                assert_eq!(rest[0].event, None);
                assert_eq!(err["error"]["message"], "boom");
                assert_eq!(err["error"]["type"], "server_error");
            }
            WireFormat::OpenAiResponses => {
                assert_eq!(rest[0].event.as_deref(), Some("error"));
                assert_eq!(err["type"], "error");
                assert_eq!(err["message"], "boom");
                assert_eq!(err["code"], "server_error");
            }
            WireFormat::Google => unreachable!("handled above"),
            WireFormat::Mistral | WireFormat::Bedrock => unreachable!("not in WireFormat::ALL"),
        }
    }
}

#[tokio::test]
async fn fault_beyond_the_stream_strikes_before_the_end() {
    let client = client();
    let reply = ScriptedReply::text("hi").with_fault(Fault::MidStreamError {
        after_events: 1000,
        message: "late".into(),
        kind: MockErrorKind::Server,
    });
    let server = MockServer::start(WireFormat::AnthropicMessages, vec![reply])
        .await
        .expect("start");
    let events = open_stream(&client, &server, "m").await.rest().await;
    let last = events.last().expect("events");
    assert_eq!(last.event.as_deref(), Some("error"));
    assert_eq!(last.json()["error"]["type"], "api_error");
    assert_eq!(
        events[events.len() - 2].event.as_deref(),
        Some("message_stop")
    );
}

#[tokio::test]
async fn exhausted_script_and_unknown_paths() {
    let client = client();
    let server = MockServer::start(
        WireFormat::OpenAiResponses,
        vec![ScriptedReply::text("one")],
    )
    .await
    .expect("start");
    // A wrong path gets 404 and does not consume the reply.
    let resp = client
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&body())
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), 404);
    assert!(
        resp.text()
            .await
            .expect("text")
            .contains("POST /v1/responses")
    );
    assert_eq!(server.remaining_replies(), 1);

    open_stream(&client, &server, "m").await.rest().await;
    let resp = post(&client, &server, "m", body()).await;
    assert_eq!(resp.status(), 500);
    let err: Value = resp.json().await.expect("json");
    let message = err["error"]["message"].as_str().expect("message");
    assert!(message.contains("script exhausted"), "{message}");
    assert_eq!(server.activity().requests, 3);
    assert_eq!(server.activity().replies_served, 1);
}
