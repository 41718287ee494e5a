//! Each wire format streams text, thinking and two parallel tool calls from the mock server;
//! the event sequence and the final message are pinned exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::FixedClock;
use common::client;
use common::collect;
use common::describe;
use common::model_for;
use knightcode_ai::Accumulator;
use knightcode_ai::CancellationToken;
use knightcode_ai::Context;
use knightcode_ai::Provider;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_protocol::ToolDeclaration;
use knightcode_testkit::Chunking;
use knightcode_testkit::MockServer;
use knightcode_testkit::MockUsage;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::json;

const FORMATS: &[WireFormat] = &WireFormat::ALL;

fn read_tool() -> ToolDeclaration {
    ToolDeclaration {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        }),
        ..ToolDeclaration::default()
    }
}

fn reply() -> ScriptedReply {
    ScriptedReply::default()
        .with_thinking("Let me check both files.", Some("sig-1"))
        .with_text("Reading now.")
        .with_tool_call("call_1", "read", r#"{"path":"a.txt"}"#)
        .with_tool_call("call_2", "read", r#"{"path":"b.txt"}"#)
        .with_usage(MockUsage {
            input: 100,
            output: 50,
            cache_read: 20,
            cache_write: 10,
            reasoning: 12,
        })
        .with_chunking(Chunking::chars(8))
}

fn request(server: &MockServer) -> StreamRequest {
    StreamRequest {
        model: model_for(server, "mock-model"),
        context: Context {
            system_prompt: Some("You are a test.".into()),
            messages: vec![AgentMessage::user("Read a.txt and b.txt", Millis(1))],
            tools: vec![read_tool()],
        },
        options: StreamOptions {
            api_key: Some("test-key".into()),
            thinking: ThinkingLevel::Medium,
            ..StreamOptions::default()
        },
    }
}

#[tokio::test]
async fn text_thinking_and_parallel_tool_calls() {
    for &format in FORMATS {
        let server = MockServer::start(format, vec![reply()]).await.unwrap();
        let client = client(Arc::new(FixedClock::default()));
        let events = collect(client.stream(&request(&server), CancellationToken::new())).await;
        let name = format.api_name();
        insta::assert_snapshot!(format!("events_{name}"), describe(&events).join("\n"));

        let Some(StreamEvent::Done { reason, message }) = events.last() else {
            panic!("{name}: stream must end with done: {:?}", events.last());
        };
        assert_eq!(*reason, StopReason::ToolUse, "{name}");
        insta::assert_snapshot!(
            format!("final_{name}"),
            serde_json::to_string_pretty(message).unwrap()
        );

        // The accumulator rebuilds the same content from the deltas alone.
        let mut acc = Accumulator::new();
        for event in &events[..events.len() - 1] {
            acc.push(event);
        }
        let partial = acc.partial();
        assert_eq!(partial.content.len(), message.content.len(), "{name}");
        for (built, fin) in partial.content.iter().zip(message.content.iter()) {
            match (built, fin) {
                // Signatures are replay data of the final message, not streamed.
                (ContentBlock::Thinking(a), ContentBlock::Thinking(b)) => {
                    assert_eq!(a.thinking, b.thinking)
                }
                (ContentBlock::Text(a), ContentBlock::Text(b)) => assert_eq!(a.text, b.text),
                (a, b) => assert_eq!(a, b, "{name}"),
            }
        }
        assert_eq!(acc.usage(), &message.usage, "{name}");
    }
}
