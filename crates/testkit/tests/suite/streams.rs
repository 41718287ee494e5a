//! Every format streams a rich reply incrementally and in its own valid shape.

// Helpers outside #[test] functions panic on purpose, like the tests themselves.
#![allow(clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::assemble::{self, Assembled, Block, Usage};
use common::{GUARD, client, open_stream};
use knightcode_testkit::{
    Chunking, Fault, MockServer, MockStop, MockUsage, ScriptedReply, WireFormat,
};

const THINKING: &str = "Let me think… über ünïcode.";
const TEXT: &str = "Hello wörld, this is a streamed answer.";
const ARGS_1: &str = r#"{"path":"src/main.rs","limit":10}"#;
const ARGS_2: &str = r#"{"command":"ls -la"}"#;

fn rich_reply() -> ScriptedReply {
    ScriptedReply::default()
        .with_thinking(THINKING, Some("sig-1"))
        .with_text(TEXT)
        .with_tool_call("call_1", "read", ARGS_1)
        .with_tool_call("call_2", "bash", ARGS_2)
        .with_usage(MockUsage {
            input: 100,
            output: 50,
            cache_read: 20,
            cache_write: 0,
            reasoning: 10,
        })
}

fn assemble(format: WireFormat, events: &[common::Event]) -> Assembled {
    match format {
        WireFormat::AnthropicMessages => assemble::anthropic(events),
        WireFormat::OpenAiCompletions => assemble::openai_completions(events),
        WireFormat::OpenAiResponses => assemble::openai_responses(events),
        WireFormat::Google => assemble::google(events),
        WireFormat::Mistral | WireFormat::Bedrock => unreachable!("not in WireFormat::ALL"),
    }
}

fn expected_blocks(format: WireFormat) -> Vec<Block> {
    let signature = match format {
        // Chat Completions has no place for a reasoning signature.
        WireFormat::OpenAiCompletions => None,
        _ => Some("sig-1".to_owned()),
    };
    let args = |a: &str| match format {
        // Gemini sends args as an object; compare its compact serialisation.
        WireFormat::Google => serde_json::from_str::<serde_json::Value>(a)
            .expect("json")
            .to_string(),
        _ => a.to_owned(),
    };
    vec![
        Block::Thinking {
            text: THINKING.to_owned(),
            signature,
        },
        Block::Text(TEXT.to_owned()),
        Block::Tool {
            id: "call_1".into(),
            name: "read".into(),
            args: args(ARGS_1),
        },
        Block::Tool {
            id: "call_2".into(),
            name: "bash".into(),
            args: args(ARGS_2),
        },
    ]
}

fn tool_stop(format: WireFormat) -> &'static str {
    match format {
        WireFormat::AnthropicMessages => "tool_use",
        WireFormat::OpenAiCompletions => "tool_calls",
        WireFormat::OpenAiResponses => "completed",
        WireFormat::Google => "STOP",
        WireFormat::Mistral | WireFormat::Bedrock => unreachable!("not in WireFormat::ALL"),
    }
}

#[tokio::test]
async fn every_format_streams_a_rich_reply() {
    let client = client();
    for format in WireFormat::ALL {
        let server = MockServer::start(format, vec![rich_reply()])
            .await
            .expect("start");
        let mut reader = open_stream(&client, &server, "mock-model").await;
        let events = reader.rest().await;
        let got = assemble(format, &events);
        assert_eq!(got.blocks, expected_blocks(format), "{format:?}");
        assert_eq!(got.stop, tool_stop(format), "{format:?}");
        assert_eq!(
            got.usage,
            Usage {
                input: 100,
                output: 50,
                cache_read: 20,
                cache_write: 0
            },
            "{format:?}"
        );
        // Small default chunking: a 39-char text must take several deltas.
        assert!(
            events.len() > 15,
            "{format:?}: only {} events",
            events.len()
        );
        server.wait_until(|a| a.completed == 1).await;
    }
}

#[tokio::test]
async fn events_arrive_before_the_stream_ends() {
    let client = client();
    for format in WireFormat::ALL {
        let reply = rich_reply().with_fault(Fault::StallAfterEvents(3));
        let server = MockServer::start(format, vec![reply]).await.expect("start");
        let mut reader = open_stream(&client, &server, "mock-model").await;
        // The server holds the stream after three events; reading them proves they were
        // flushed on their own rather than buffered until the end.
        let first = reader.take(3).await;
        let activity = tokio::time::timeout(GUARD, server.wait_for_stalls(1))
            .await
            .expect("stall");
        assert_eq!(activity.completed, 0, "{format:?}");
        server.release_stalls();
        let mut events = first;
        events.extend(reader.rest().await);
        assert_eq!(
            assemble(format, &events).blocks,
            expected_blocks(format),
            "{format:?}"
        );
    }
}

#[tokio::test]
async fn chunking_controls_delta_sizes() {
    let client = client();
    let reply = ScriptedReply::text("abcdefghij")
        .with_tool_call("toolu_1", "ls", r#"{"a":1}"#)
        .with_chunking(Chunking {
            text_chars: 3,
            args_chars: 2,
            interval_ms: 0,
        });
    let server = MockServer::start(WireFormat::AnthropicMessages, vec![reply])
        .await
        .expect("start");
    let events = open_stream(&client, &server, "claude").await.rest().await;
    let deltas: Vec<String> = events
        .iter()
        .filter(|e| e.event.as_deref() == Some("content_block_delta"))
        .map(|e| {
            let d = e.json();
            d["delta"]["text"]
                .as_str()
                .or(d["delta"]["partial_json"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        deltas,
        ["abc", "def", "ghi", "j", "", "{\"", "a\"", ":1", "}"]
    );
    let whole = ScriptedReply::text("abcdefghij").with_chunking(Chunking::whole());
    server.push_reply(whole);
    let events = open_stream(&client, &server, "claude").await.rest().await;
    let text_deltas = events
        .iter()
        .filter(|e| e.event.as_deref() == Some("content_block_delta"))
        .count();
    assert_eq!(text_deltas, 1);
}

#[tokio::test]
async fn paced_replies_send_the_same_events() {
    // Pacing only spaces the events out; no timing is asserted, only that every event
    // arrives unchanged, also when a stall interrupts the schedule.
    let client = client();
    for format in WireFormat::ALL {
        let plain = MockServer::start(format, vec![rich_reply()])
            .await
            .expect("start");
        let expected = open_stream(&client, &plain, "mock-model")
            .await
            .rest()
            .await;
        let paced = rich_reply().with_interval(Duration::from_millis(1));
        let stalled = paced.clone().with_fault(Fault::StallAfterEvents(3));
        let server = MockServer::start(format, vec![paced, stalled])
            .await
            .expect("start");
        let events = open_stream(&client, &server, "mock-model")
            .await
            .rest()
            .await;
        assert_eq!(events, expected, "{format:?}");

        let mut reader = open_stream(&client, &server, "mock-model").await;
        let mut events = reader.take(3).await;
        tokio::time::timeout(GUARD, server.wait_for_stalls(1))
            .await
            .expect("stall");
        server.release_stalls();
        events.extend(reader.rest().await);
        assert_eq!(
            assemble(format, &events).blocks,
            expected_blocks(format),
            "{format:?}"
        );
        server.wait_until(|a| a.completed == 2).await;
    }
}

#[tokio::test]
async fn stop_reasons_map_per_format() {
    let client = client();
    let cases = [
        (MockStop::Stop, ["end_turn", "stop", "completed", "STOP"]),
        (
            MockStop::Length,
            [
                "max_tokens",
                "length",
                "incomplete:max_output_tokens",
                "MAX_TOKENS",
            ],
        ),
        (
            MockStop::Refusal,
            [
                "refusal",
                "content_filter",
                "incomplete:content_filter",
                "SAFETY",
            ],
        ),
    ];
    for (stop, expected) in cases {
        for (format, want) in WireFormat::ALL.into_iter().zip(expected) {
            let reply = ScriptedReply::text("x").with_stop(stop.clone());
            let server = MockServer::start(format, vec![reply]).await.expect("start");
            let events = open_stream(&client, &server, "m").await.rest().await;
            assert_eq!(assemble(format, &events).stop, want, "{format:?} {stop:?}");
        }
    }
}

#[tokio::test]
async fn cache_writes_are_reported_where_the_format_has_them() {
    let client = client();
    let usage = MockUsage {
        input: 7,
        output: 3,
        cache_read: 11,
        cache_write: 13,
        reasoning: 0,
    };
    for format in [WireFormat::AnthropicMessages, WireFormat::OpenAiCompletions] {
        let reply = ScriptedReply::text("x").with_usage(usage);
        let server = MockServer::start(format, vec![reply]).await.expect("start");
        let events = open_stream(&client, &server, "m").await.rest().await;
        assert_eq!(
            assemble(format, &events).usage,
            Usage {
                input: 7,
                output: 3,
                cache_read: 11,
                cache_write: 13
            },
            "{format:?}"
        );
    }
}

#[tokio::test]
async fn anthropic_redacted_thinking_and_ping() {
    let client = client();
    let reply = ScriptedReply::default()
        .with_redacted_thinking("opaque-data")
        .with_text("ok");
    let server = MockServer::start(WireFormat::AnthropicMessages, vec![reply])
        .await
        .expect("start");
    let events = open_stream(&client, &server, "claude").await.rest().await;
    let names: Vec<_> = events.iter().filter_map(|e| e.event.clone()).collect();
    assert_eq!(
        &names[..3],
        ["message_start", "content_block_start", "ping"]
    );
    let got = assemble::anthropic(&events);
    assert_eq!(
        got.blocks,
        vec![
            Block::Thinking {
                text: String::new(),
                signature: Some("opaque-data".into())
            },
            Block::Text("ok".into())
        ]
    );
}

#[tokio::test]
async fn google_moves_a_thought_signature_onto_the_following_call() {
    let client = client();
    let reply = ScriptedReply::default()
        .with_thinking("plan", Some("sig-g"))
        .with_tool_call("", "ls", "{}");
    let server = MockServer::start(WireFormat::Google, vec![reply])
        .await
        .expect("start");
    let events = open_stream(&client, &server, "gemini-2.5-pro")
        .await
        .rest()
        .await;
    let last = events.last().expect("events").json();
    let part = &last["candidates"][0]["content"]["parts"][0];
    assert_eq!(part["thoughtSignature"], "sig-g");
    assert_eq!(part["functionCall"]["name"], "ls");
    assert!(
        part["functionCall"].get("id").is_none(),
        "empty id is omitted"
    );
    assert_eq!(last["modelVersion"], "gemini-2.5-pro");
}
