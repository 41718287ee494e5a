//! Builds the assistant message while a response streams and queues the matching events.
//!
//! Every wire decoder drives one [`Output`]: it opens, extends and closes content blocks; the
//! output keeps the authoritative message and the list of events still to be sent.

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::ErrorClass;
use knightcode_protocol::MemoryOnly;
use knightcode_protocol::StopReason;
use knightcode_protocol::TextContent;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::Tokens;
use knightcode_protocol::ToolCall;
use knightcode_protocol::Usage;

use crate::cost::calculate_cost;
use crate::error::StreamFailure;
use crate::event::StreamEvent;
use crate::json_partial::parse_streaming_json;
use crate::model::Model;
use crate::model::ModelCost;

pub(crate) struct Output {
    pub(crate) message: AssistantMessage,
    pub(crate) events: Vec<StreamEvent>,
    /// Raw argument text of tool calls that are still streaming, by content index.
    args: Vec<Option<String>>,
    cost: ModelCost,
    started_ms: i64,
}

impl Output {
    pub(crate) fn new(model: &Model, now_ms: i64) -> Self {
        let message = AssistantMessage {
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            stop_reason: StopReason::Pending.into(),
            timestamp: knightcode_protocol::Millis(now_ms),
            ..AssistantMessage::default()
        };
        Self {
            message,
            events: Vec::new(),
            args: Vec::new(),
            cost: model.cost.clone(),
            started_ms: now_ms,
        }
    }

    pub(crate) fn start(&mut self) {
        self.events.push(StreamEvent::Start {
            message: self.message.clone(),
        });
    }

    /// When the request started (Unix ms).
    pub(crate) fn started_ms(&self) -> i64 {
        self.started_ms
    }

    pub(crate) fn len(&self) -> usize {
        self.message.content.len()
    }

    fn push_block(&mut self, block: ContentBlock, args: Option<String>) -> usize {
        let index = self.message.content.len();
        self.message.content.push(block);
        self.args.resize(index, None);
        self.args.push(args);
        index
    }

    pub(crate) fn text_start(&mut self) -> usize {
        let index = self.push_block(ContentBlock::Text(TextContent::default()), None);
        self.events.push(StreamEvent::TextStart {
            content_index: index,
        });
        index
    }

    pub(crate) fn text_delta(&mut self, index: usize, delta: &str) {
        if let Some(ContentBlock::Text(block)) = self.message.content.get_mut(index) {
            block.text.push_str(delta);
            self.events.push(StreamEvent::TextDelta {
                content_index: index,
                delta: delta.to_owned(),
            });
        }
    }

    pub(crate) fn text_mut(&mut self, index: usize) -> Option<&mut TextContent> {
        match self.message.content.get_mut(index) {
            Some(ContentBlock::Text(block)) => Some(block),
            _ => None,
        }
    }

    pub(crate) fn text_end(&mut self, index: usize) {
        if let Some(ContentBlock::Text(block)) = self.message.content.get(index) {
            self.events.push(StreamEvent::TextEnd {
                content_index: index,
                content: block.text.clone(),
            });
        }
    }

    pub(crate) fn thinking_start(&mut self, thinking: ThinkingContent) -> usize {
        let index = self.push_block(ContentBlock::Thinking(thinking), None);
        self.events.push(StreamEvent::ThinkingStart {
            content_index: index,
        });
        index
    }

    pub(crate) fn thinking_delta(&mut self, index: usize, delta: &str) {
        if let Some(ContentBlock::Thinking(block)) = self.message.content.get_mut(index) {
            block.thinking.push_str(delta);
            self.events.push(StreamEvent::ThinkingDelta {
                content_index: index,
                delta: delta.to_owned(),
            });
        }
    }

    pub(crate) fn thinking_mut(&mut self, index: usize) -> Option<&mut ThinkingContent> {
        match self.message.content.get_mut(index) {
            Some(ContentBlock::Thinking(block)) => Some(block),
            _ => None,
        }
    }

    pub(crate) fn thinking_end(&mut self, index: usize) {
        if let Some(ContentBlock::Thinking(block)) = self.message.content.get(index) {
            self.events.push(StreamEvent::ThinkingEnd {
                content_index: index,
                content: block.thinking.clone(),
            });
        }
    }

    pub(crate) fn toolcall_start(&mut self, id: &str, name: &str) -> usize {
        let call = ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: serde_json::Value::Object(serde_json::Map::new()),
            ..ToolCall::default()
        };
        let index = self.push_block(ContentBlock::ToolCall(call), Some(String::new()));
        self.events.push(StreamEvent::ToolCallStart {
            content_index: index,
            id: id.to_owned(),
            name: name.to_owned(),
        });
        index
    }

    pub(crate) fn toolcall_delta(&mut self, index: usize, delta: &str) {
        if let Some(Some(buffer)) = self.args.get_mut(index) {
            buffer.push_str(delta);
            self.events.push(StreamEvent::ToolCallDelta {
                content_index: index,
                delta: delta.to_owned(),
            });
        }
    }

    /// Whether a tool call's arguments are still streaming.
    pub(crate) fn toolcall_open(&self, index: usize) -> bool {
        matches!(self.args.get(index), Some(Some(_)))
    }

    /// The argument text streamed so far for an open tool call.
    pub(crate) fn toolcall_args(&self, index: usize) -> Option<&str> {
        self.args.get(index).and_then(Option::as_deref)
    }

    /// Replaces the argument text of an open tool call (the provider sent the final text).
    pub(crate) fn set_toolcall_args(&mut self, index: usize, text: String) {
        if let Some(slot @ Some(_)) = self.args.get_mut(index) {
            *slot = Some(text);
        }
    }

    pub(crate) fn toolcall_mut(&mut self, index: usize) -> Option<&mut ToolCall> {
        match self.message.content.get_mut(index) {
            Some(ContentBlock::ToolCall(call)) => Some(call),
            _ => None,
        }
    }

    /// Parses the arguments and emits `toolcall_end`.
    pub(crate) fn toolcall_end(&mut self, index: usize) {
        let Some(text) = self.args.get_mut(index).and_then(Option::take) else {
            return;
        };
        if let Some(ContentBlock::ToolCall(call)) = self.message.content.get_mut(index) {
            // A call whose arguments arrived whole in the start event keeps them.
            if !text.is_empty() || !call.arguments.is_object() {
                call.arguments = parse_streaming_json(&text);
            }
            self.events.push(StreamEvent::ToolCallEnd {
                content_index: index,
                tool_call: call.clone(),
            });
        }
    }

    /// Sets usage, fills in the total when the provider omits it, prices it and reports it.
    pub(crate) fn set_usage(&mut self, mut usage: Usage) {
        calculate_cost(&self.cost, &mut usage);
        self.message.usage = usage.clone();
        self.events.push(StreamEvent::Usage(usage));
    }

    /// Usage with the total recomputed from the parts.
    pub(crate) fn summed_usage(
        input: u64,
        output: u64,
        cache_read: u64,
        cache_write: u64,
    ) -> Usage {
        Usage {
            input: Tokens(input),
            output: Tokens(output),
            cache_read: Tokens(cache_read),
            cache_write: Tokens(cache_write),
            total_tokens: Tokens(input + output + cache_read + cache_write),
            ..Usage::default()
        }
    }

    fn stamp_duration(&mut self, now_ms: i64) {
        self.message.duration_ms =
            Some(Tokens(now_ms.saturating_sub(self.started_ms).max(0) as u64));
    }

    /// Completes the message successfully.
    pub(crate) fn finish(&mut self, reason: StopReason, now_ms: i64) {
        self.message.stop_reason = reason.into();
        self.stamp_duration(now_ms);
        self.events.push(StreamEvent::Done {
            reason,
            message: self.message.clone(),
        });
    }

    /// Ends the message with an error (or an abort), keeping the partial content. Tool calls
    /// that were still streaming keep whatever arguments parsed so far.
    pub(crate) fn fail(&mut self, failure: StreamFailure, now_ms: i64) {
        let aborted = failure.class == ErrorClass::Aborted;
        for (index, buffer) in self.args.iter_mut().enumerate() {
            if let Some(text) = buffer.take()
                && let Some(ContentBlock::ToolCall(call)) = self.message.content.get_mut(index)
            {
                call.arguments = parse_streaming_json(&text);
            }
        }
        let reason = if aborted {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        self.message.stop_reason = reason.into();
        self.message.error_message = Some(failure.message);
        self.message.error_class = MemoryOnly(Some(failure.class));
        self.message.retry_after_ms = MemoryOnly(failure.retry_after_ms);
        self.stamp_duration(now_ms);
        self.events.push(StreamEvent::Error {
            reason,
            message: self.message.clone(),
        });
    }
}
