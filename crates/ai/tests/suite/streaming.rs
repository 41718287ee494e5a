//! Each wire format streams text, thinking and two parallel tool calls from the mock server;
//! the event sequence and the final message are pinned exactly.

use crate::common;

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
            messages: vec![AgentMessage::user("Read a.txt and b.txt", Millis(1)).into()],
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

/// What each format must send back for the thinking it received.
fn replayed_signature(format: WireFormat, body: &serde_json::Value) -> bool {
    let text = body.to_string();
    match format {
        // The signed thinking block goes back verbatim.
        WireFormat::AnthropicMessages => text.contains(r#""signature":"sig-1""#),
        // Reasoning text goes back in the field it arrived in.
        WireFormat::OpenAiCompletions => {
            text.contains(r#""reasoning_content":"Let me check both files.""#)
        }
        // The reasoning item, encrypted content included.
        WireFormat::OpenAiResponses => {
            text.contains(r#""type":"reasoning""#)
                && text.contains(r#""encrypted_content":"sig-1""#)
        }
        // Gemini thought signature (base64) on the thought part.
        WireFormat::Google => text.contains(r#""thoughtSignature":"c2lnLTE=""#),
        WireFormat::Mistral | WireFormat::Bedrock => unreachable!("not in WireFormat::ALL"),
    }
}

#[tokio::test]
async fn thinking_is_replayed_on_the_next_request() {
    for &format in FORMATS {
        let name = format.api_name();
        let signature = if format == WireFormat::Google {
            "c2lnLTE="
        } else {
            "sig-1"
        };
        let first = ScriptedReply::default()
            .with_thinking("Let me check both files.", Some(signature))
            .with_tool_call("call_1", "read", r#"{"path":"a.txt"}"#);
        let server = MockServer::start(format, vec![first, ScriptedReply::text("Done.")])
            .await
            .unwrap();
        let client = client(Arc::new(FixedClock::default()));
        let mut request = request(&server);
        let message = client.complete(&request, CancellationToken::new()).await;
        assert_eq!(
            message.stop_reason.known(),
            Some(StopReason::ToolUse),
            "{name}"
        );
        let call = message.tool_calls().next().unwrap().clone();
        request
            .context
            .messages
            .push(AgentMessage::Assistant(Box::new(message)).into());
        request.context.messages.push(
            AgentMessage::ToolResult(Box::new(knightcode_protocol::ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: knightcode_protocol::Blocks(vec![ContentBlock::text("alpha")]),
                ..Default::default()
            }))
            .into(),
        );
        let done = client.complete(&request, CancellationToken::new()).await;
        assert_eq!(done.text(), "Done.", "{name}");
        let requests = server.requests();
        assert!(
            replayed_signature(format, &requests[1].body),
            "{name}: {}",
            requests[1].body
        );
    }
}
