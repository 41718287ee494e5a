//! The streaming event model shared by every provider.
//!
//! Events carry deltas only, never the cumulative partial message; consumers that want the
//! partial message (UIs) feed events into an [`Accumulator`]. A stream always ends with exactly
//! one `Done` or `Error`, whose message is authoritative.

use std::pin::Pin;
use std::task::Context;
use std::task::Poll;

use futures_core::Stream;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::AssistantMessageEvent;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::TextContent;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::ToolCall;
use knightcode_protocol::Usage;
use tokio::sync::mpsc;

use crate::json_partial::parse_streaming_json;

/// One event of a model response stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The provider accepted the request. `message` is the empty skeleton (api, provider,
    /// model, timestamp, `stopReason: pending`) that the following events fill in.
    Start {
        message: AssistantMessage,
    },
    TextStart {
        content_index: usize,
    },
    TextDelta {
        content_index: usize,
        delta: String,
    },
    TextEnd {
        content_index: usize,
        content: String,
    },
    ThinkingStart {
        content_index: usize,
    },
    ThinkingDelta {
        content_index: usize,
        delta: String,
    },
    ThinkingEnd {
        content_index: usize,
        content: String,
    },
    ToolCallStart {
        content_index: usize,
        id: String,
        name: String,
    },
    /// A piece of the tool call's JSON arguments text.
    ToolCallDelta {
        content_index: usize,
        delta: String,
    },
    ToolCallEnd {
        content_index: usize,
        tool_call: ToolCall,
    },
    /// The provider reported (cumulative) token usage, cost included.
    Usage(Usage),
    /// The response completed; `reason` is `stop`, `length` or `toolUse`.
    Done {
        reason: StopReason,
        message: AssistantMessage,
    },
    /// The response failed (`reason: error`) or was cancelled (`reason: aborted`); the message
    /// keeps the partial content and has `errorMessage` set.
    Error {
        reason: StopReason,
        message: AssistantMessage,
    },
}

impl StreamEvent {
    /// The wire shape (`assistantMessageEvent` of json.md); `None` for usage updates.
    pub fn to_wire(&self) -> Option<AssistantMessageEvent> {
        use AssistantMessageEvent as W;
        Some(match self {
            Self::Start { .. } => W::Start,
            Self::TextStart { content_index } => W::TextStart {
                content_index: *content_index,
            },
            Self::TextDelta {
                content_index,
                delta,
            } => W::TextDelta {
                content_index: *content_index,
                delta: delta.clone(),
            },
            Self::TextEnd {
                content_index,
                content,
            } => W::TextEnd {
                content_index: *content_index,
                content: content.clone(),
            },
            Self::ThinkingStart { content_index } => W::ThinkingStart {
                content_index: *content_index,
            },
            Self::ThinkingDelta {
                content_index,
                delta,
            } => W::ThinkingDelta {
                content_index: *content_index,
                delta: delta.clone(),
            },
            Self::ThinkingEnd {
                content_index,
                content,
            } => W::ThinkingEnd {
                content_index: *content_index,
                content: content.clone(),
            },
            Self::ToolCallStart {
                content_index,
                id,
                name,
            } => W::ToolcallStart {
                content_index: *content_index,
                id: id.clone(),
                tool_name: name.clone(),
            },
            Self::ToolCallDelta {
                content_index,
                delta,
            } => W::ToolcallDelta {
                content_index: *content_index,
                delta: delta.clone(),
            },
            Self::ToolCallEnd {
                content_index,
                tool_call,
            } => W::ToolcallEnd {
                content_index: *content_index,
                tool_call: tool_call.clone(),
            },
            Self::Usage(_) => return None,
            Self::Done { reason, message } => W::Done {
                reason: *reason,
                message: message.clone(),
            },
            Self::Error { reason, message } => W::Error {
                reason: *reason,
                error: message.clone(),
            },
        })
    }

    /// The final message, for `Done` and `Error`.
    pub fn final_message(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Done { message, .. } | Self::Error { message, .. } => Some(message),
            _ => None,
        }
    }
}

/// A model response as an async stream of [`StreamEvent`]s.
///
/// Dropping it cancels the request. Poll with `futures_util::StreamExt::next` or
/// [`EventStream::recv`].
pub struct EventStream {
    rx: mpsc::Receiver<StreamEvent>,
}

impl EventStream {
    pub(crate) fn new(rx: mpsc::Receiver<StreamEvent>) -> Self {
        Self { rx }
    }

    /// A stream fed by `rx`, for providers implemented outside this crate (test fakes,
    /// proxies). The sender should finish with one `Done` or `Error`; dropping it early makes
    /// [`EventStream::result`] report an error.
    pub fn from_receiver(rx: mpsc::Receiver<StreamEvent>) -> Self {
        Self { rx }
    }

    /// A stream that consists of one event (used for failures before any request was made).
    pub(crate) fn single(event: StreamEvent) -> Self {
        let (tx, rx) = mpsc::channel(1);
        // The channel has room for exactly this event.
        let _ = tx.try_send(event);
        Self { rx }
    }

    /// The next event, or `None` after the final `Done`/`Error`.
    pub async fn recv(&mut self) -> Option<StreamEvent> {
        self.rx.recv().await
    }

    /// Drains the stream and returns the final message. A stream that ends without a final
    /// event (the producer died) yields an error message rather than nothing.
    pub async fn result(mut self) -> AssistantMessage {
        let mut last_start: Option<AssistantMessage> = None;
        while let Some(event) = self.rx.recv().await {
            match event {
                StreamEvent::Done { message, .. } | StreamEvent::Error { message, .. } => {
                    return message;
                }
                StreamEvent::Start { message } => last_start = Some(message),
                _ => {}
            }
        }
        let mut message = last_start.unwrap_or_default();
        message.stop_reason = StopReason::Error.into();
        message.error_message = Some("The response stream ended without a result".to_owned());
        message
    }
}

impl Stream for EventStream {
    type Item = StreamEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StreamEvent>> {
        self.rx.poll_recv(cx)
    }
}

/// Rebuilds the partial assistant message from events, for live displays.
///
/// Tool-call arguments are kept as text while streaming and parsed on demand (tolerating
/// incomplete JSON), so feeding events stays linear in the response size.
#[derive(Debug, Clone, Default)]
pub struct Accumulator {
    message: AssistantMessage,
    partial_args: Vec<Option<String>>,
    finished: bool,
}

impl Accumulator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one event.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Start { message } => {
                self.message = message.clone();
                self.partial_args.clear();
            }
            StreamEvent::TextStart { content_index } => self.put(
                *content_index,
                ContentBlock::Text(TextContent::default()),
                None,
            ),
            StreamEvent::TextDelta {
                content_index,
                delta,
            } => {
                if let Some(ContentBlock::Text(block)) =
                    self.message.content.get_mut(*content_index)
                {
                    block.text.push_str(delta);
                }
            }
            StreamEvent::TextEnd {
                content_index,
                content,
            } => {
                if let Some(ContentBlock::Text(block)) =
                    self.message.content.get_mut(*content_index)
                {
                    block.text.clone_from(content);
                }
            }
            StreamEvent::ThinkingStart { content_index } => self.put(
                *content_index,
                ContentBlock::Thinking(ThinkingContent::default()),
                None,
            ),
            StreamEvent::ThinkingDelta {
                content_index,
                delta,
            } => {
                if let Some(ContentBlock::Thinking(block)) =
                    self.message.content.get_mut(*content_index)
                {
                    block.thinking.push_str(delta);
                }
            }
            StreamEvent::ThinkingEnd {
                content_index,
                content,
            } => {
                if let Some(ContentBlock::Thinking(block)) =
                    self.message.content.get_mut(*content_index)
                {
                    block.thinking.clone_from(content);
                }
            }
            StreamEvent::ToolCallStart {
                content_index,
                id,
                name,
            } => self.put(
                *content_index,
                ContentBlock::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: serde_json::Value::Object(serde_json::Map::new()),
                    ..ToolCall::default()
                }),
                Some(String::new()),
            ),
            StreamEvent::ToolCallDelta {
                content_index,
                delta,
            } => {
                if let Some(Some(buffer)) = self.partial_args.get_mut(*content_index) {
                    buffer.push_str(delta);
                }
            }
            StreamEvent::ToolCallEnd {
                content_index,
                tool_call,
            } => {
                if let Some(slot) = self.message.content.get_mut(*content_index) {
                    *slot = ContentBlock::ToolCall(tool_call.clone());
                }
                if let Some(buffer) = self.partial_args.get_mut(*content_index) {
                    *buffer = None;
                }
            }
            StreamEvent::Usage(usage) => self.message.usage = usage.clone(),
            StreamEvent::Done { message, .. } | StreamEvent::Error { message, .. } => {
                self.message = message.clone();
                self.partial_args.clear();
                self.finished = true;
            }
        }
    }

    fn put(&mut self, index: usize, block: ContentBlock, args: Option<String>) {
        let content = &mut self.message.content;
        while content.len() < index {
            content.push(ContentBlock::text(""));
        }
        if index < content.len() {
            content[index] = block;
        } else {
            content.push(block);
        }
        while self.partial_args.len() <= index {
            self.partial_args.push(None);
        }
        self.partial_args[index] = args;
    }

    /// Latest usage (zero until the provider reports it).
    pub fn usage(&self) -> &Usage {
        &self.message.usage
    }

    /// Whether the final `Done`/`Error` arrived.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The partial message, with streaming tool arguments parsed as far as they go.
    pub fn partial(&self) -> AssistantMessage {
        let mut message = self.message.clone();
        for (index, buffer) in self.partial_args.iter().enumerate() {
            if let (Some(text), Some(ContentBlock::ToolCall(call))) =
                (buffer, message.content.get_mut(index))
            {
                call.arguments = parse_streaming_json(text);
            }
        }
        message
    }

    /// The message as accumulated so far, without parsing pending tool arguments.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accumulates_partial_message() {
        let mut acc = Accumulator::new();
        let start = AssistantMessage {
            model: "m".into(),
            stop_reason: StopReason::Pending.into(),
            ..AssistantMessage::default()
        };
        for event in [
            StreamEvent::Start { message: start },
            StreamEvent::ThinkingStart { content_index: 0 },
            StreamEvent::ThinkingDelta {
                content_index: 0,
                delta: "hm".into(),
            },
            StreamEvent::TextStart { content_index: 1 },
            StreamEvent::TextDelta {
                content_index: 1,
                delta: "Hel".into(),
            },
            StreamEvent::TextDelta {
                content_index: 1,
                delta: "lo".into(),
            },
            StreamEvent::ToolCallStart {
                content_index: 2,
                id: "c1".into(),
                name: "read".into(),
            },
            StreamEvent::ToolCallDelta {
                content_index: 2,
                delta: r#"{"path": "src/m"#.into(),
            },
        ] {
            acc.push(&event);
        }
        let partial = acc.partial();
        assert_eq!(partial.content.len(), 3);
        assert_eq!(partial.text(), "Hello");
        let calls: Vec<_> = partial.tool_calls().collect();
        assert_eq!(calls[0].arguments, json!({"path": "src/m"}));
        assert!(!acc.is_finished());
        assert_eq!(
            StreamEvent::TextStart { content_index: 1 }.to_wire(),
            Some(AssistantMessageEvent::TextStart { content_index: 1 })
        );
    }
}
