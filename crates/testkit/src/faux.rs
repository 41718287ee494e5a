//! [`FauxProvider`]: an in-process `knightcode_ai::Provider` that answers from a script, for
//! tests of the loop and the runtime that need no wire format (the mock servers are for
//! those that do). It records every request, streams text as one delta per reply, and can
//! hang a reply until the request is cancelled.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_ai::CancellationToken;
use knightcode_ai::EventStream;
use knightcode_ai::Provider;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamRequest;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::ToolCall;
use tokio::sync::mpsc;

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum FauxReply {
    /// A text answer (stop reason `stop`).
    Text(String),
    /// One tool call (stop reason `toolUse`).
    ToolCall {
        id: String,
        name: String,
        arguments: serde_json::Value,
    },
    /// A failed response with this error message (stop reason `error`).
    Error(String),
    /// Starts, then waits until the request is cancelled (ends `aborted`).
    Hang,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<FauxReply>,
    requests: Vec<StreamRequest>,
}

/// A provider that plays [`FauxReply`]s in order; out of replies, it answers with an error
/// that says so. Cheap to clone; clones share the script and the recorded requests.
#[derive(Clone, Default)]
pub struct FauxProvider {
    script: Arc<Mutex<Script>>,
}

impl std::fmt::Debug for FauxProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FauxProvider").finish_non_exhaustive()
    }
}

impl FauxProvider {
    pub fn new(replies: impl IntoIterator<Item = FauxReply>) -> Self {
        let provider = Self::default();
        provider.lock().replies.extend(replies);
        provider
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        // Pushes and pops only: a panicking test cannot leave it half-updated.
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<StreamRequest> {
        self.lock().requests.clone()
    }

    /// Adds a reply at the end of the script.
    pub fn push(&self, reply: FauxReply) {
        self.lock().replies.push_back(reply);
    }
}

fn skeleton(request: &StreamRequest) -> AssistantMessage {
    AssistantMessage {
        api: request.model.api.clone(),
        provider: request.model.provider.clone(),
        model: request.model.id.clone(),
        ..AssistantMessage::default()
    }
}

impl Provider for FauxProvider {
    fn stream(&self, request: &StreamRequest, cancel: CancellationToken) -> EventStream {
        let reply = {
            let mut script = self.lock();
            script.requests.push(request.clone());
            script.replies.pop_front()
        };
        let mut message = skeleton(request);
        let (tx, rx) = mpsc::channel(16);
        let start = StreamEvent::Start {
            message: message.clone(),
        };
        let events = match reply {
            Some(FauxReply::Text(text)) => {
                message.content.0.push(ContentBlock::text(&text));
                message.stop_reason = StopReason::Stop.into();
                vec![
                    start,
                    StreamEvent::TextStart { content_index: 0 },
                    StreamEvent::TextDelta {
                        content_index: 0,
                        delta: text.clone(),
                    },
                    StreamEvent::TextEnd {
                        content_index: 0,
                        content: text,
                    },
                    StreamEvent::Done {
                        reason: StopReason::Stop,
                        message,
                    },
                ]
            }
            Some(FauxReply::ToolCall {
                id,
                name,
                arguments,
            }) => {
                let call = ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments,
                    ..ToolCall::default()
                };
                message.content.0.push(ContentBlock::ToolCall(call.clone()));
                message.stop_reason = StopReason::ToolUse.into();
                vec![
                    start,
                    StreamEvent::ToolCallStart {
                        content_index: 0,
                        id,
                        name,
                    },
                    StreamEvent::ToolCallEnd {
                        content_index: 0,
                        tool_call: call,
                    },
                    StreamEvent::Done {
                        reason: StopReason::ToolUse,
                        message,
                    },
                ]
            }
            Some(FauxReply::Error(text)) => {
                message.stop_reason = StopReason::Error.into();
                message.error_message = Some(text);
                vec![
                    start,
                    StreamEvent::Error {
                        reason: StopReason::Error,
                        message,
                    },
                ]
            }
            None => {
                message.stop_reason = StopReason::Error.into();
                message.error_message = Some("FauxProvider: no scripted reply left".to_owned());
                vec![StreamEvent::Error {
                    reason: StopReason::Error,
                    message,
                }]
            }
            Some(FauxReply::Hang) => {
                message.stop_reason = StopReason::Aborted.into();
                message.error_message = Some(knightcode_ai::ABORTED_MESSAGE.to_owned());
                let aborted = StreamEvent::Error {
                    reason: StopReason::Aborted,
                    message,
                };
                tokio::spawn(async move {
                    if tx.send(start).await.is_err() {
                        return;
                    }
                    cancel.cancelled().await;
                    let _ = tx.send(aborted).await;
                });
                return EventStream::from_receiver(rx);
            }
        };
        tokio::spawn(async move {
            for event in events {
                if tx.send(event).await.is_err() {
                    return;
                }
            }
        });
        EventStream::from_receiver(rx)
    }
}
