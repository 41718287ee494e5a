//! Decoding Mistral's chat chunks into stream events, as the reference does: a text or
//! thinking block is closed as soon as another kind of content (or a tool call) follows;
//! tool calls are told apart by id and index and closed at the end of the stream; a stream
//! without `finish_reason` ended normally.

use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::ThinkingContent;
use serde::Deserialize;
use serde_json::Value;

use super::derive_tool_call_id;
use crate::driver::Decoder;
use crate::error::StreamFailure;
use crate::output::Output;
use crate::providers::Fail;
use crate::providers::parse_event;
use crate::providers::with_repair;
use crate::sse::SseEvent;

#[derive(Deserialize)]
struct Chunk {
    id: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<RawUsage>,
    /// `"error"` on an error object sent in place of a chunk.
    object: Option<String>,
    message: Option<Value>,
    #[serde(rename = "type")]
    kind: Option<String>,
    code: Option<Value>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<DeltaContent>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A plain text delta, or a list of content chunks (text, thinking, others ignored).
#[derive(Deserialize)]
#[serde(untagged)]
enum DeltaContent {
    Text(String),
    Chunks(Vec<ContentChunk>),
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentChunk {
    Text {
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: Vec<ThinkingPart>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct ThinkingPart {
    text: Option<String>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    id: Option<String>,
    index: Option<u64>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    /// The JSON text, or (some servers) the arguments as an object.
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct RawUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    total_tokens: Option<u64>,
}

#[derive(Clone, Copy, PartialEq)]
enum Open {
    Text(usize),
    Thinking(usize),
}

pub(crate) struct MistralDecoder {
    current: Option<Open>,
    /// `(id, stream index)` of each tool call and its content index, in arrival order.
    tools: Vec<((String, u64), usize)>,
    stop: StopReason,
}

impl MistralDecoder {
    pub(crate) fn new(_model: &crate::model::Model) -> Self {
        Self {
            current: None,
            tools: Vec::new(),
            stop: StopReason::Stop,
        }
    }

    fn close_current(&mut self, out: &mut Output) {
        match self.current.take() {
            Some(Open::Text(index)) => out.text_end(index),
            Some(Open::Thinking(index)) => out.thinking_end(index),
            None => {}
        }
    }

    fn text(&mut self, out: &mut Output, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let index = match self.current {
            Some(Open::Text(index)) => index,
            _ => {
                self.close_current(out);
                let index = out.text_start();
                self.current = Some(Open::Text(index));
                index
            }
        };
        out.text_delta(index, delta);
    }

    fn thinking(&mut self, out: &mut Output, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let index = match self.current {
            Some(Open::Thinking(index)) => index,
            _ => {
                self.close_current(out);
                let index = out.thinking_start(ThinkingContent::default());
                self.current = Some(Open::Thinking(index));
                index
            }
        };
        out.thinking_delta(index, delta);
    }

    fn tool_call(&mut self, out: &mut Output, call: ToolCallDelta) {
        self.close_current(out);
        let stream_index = call.index.unwrap_or(0);
        let id = match call.id.filter(|id| !id.is_empty() && id != "null") {
            Some(id) => id,
            None => derive_tool_call_id(&format!("toolcall:{stream_index}"), 0),
        };
        let key = (id, stream_index);
        let function = call.function;
        let index = match self.tools.iter().find(|(k, _)| *k == key) {
            Some((_, index)) => *index,
            None => {
                let name = function
                    .as_ref()
                    .and_then(|f| f.name.as_deref())
                    .unwrap_or("");
                let index = out.toolcall_start(&key.0, name);
                self.tools.push((key, index));
                index
            }
        };
        let arguments = match function.and_then(|f| f.arguments) {
            Some(Value::String(text)) => text,
            Some(Value::Null) | None => "{}".to_owned(),
            Some(other) => other.to_string(),
        };
        out.toolcall_delta(index, &arguments);
    }

    fn handle(&mut self, event: &SseEvent<'_>, out: &mut Output) -> Result<(), Fail> {
        if event.data == b"[DONE]" {
            return Ok(());
        }
        let chunk: Chunk = parse_event("Mistral", event)?;
        if chunk.object.as_deref() == Some("error") || chunk.error.is_some() {
            return Err(Fail::Other(stream_error(&chunk)));
        }
        if out.message.response_id.is_none()
            && let Some(id) = chunk.id.filter(|id| !id.is_empty())
        {
            out.message.response_id = Some(id);
        }
        if let Some(raw) = &chunk.usage {
            let input = raw.prompt_tokens.unwrap_or(0);
            let output = raw.completion_tokens.unwrap_or(0);
            let mut usage = Output::summed_usage(input, output, 0, 0);
            if let Some(total) = raw.total_tokens.filter(|total| *total > 0) {
                usage.total_tokens = knightcode_protocol::Tokens(total);
            }
            out.set_usage(usage);
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(());
        };
        if let Some(reason) = &choice.finish_reason {
            out.message.raw_stop_reason = Some(reason.clone());
            self.stop = match reason.as_str() {
                "length" | "model_length" => StopReason::Length,
                "tool_calls" => StopReason::ToolUse,
                "error" => StopReason::Error,
                _ => StopReason::Stop,
            };
        }
        let Some(delta) = choice.delta else {
            return Ok(());
        };
        match delta.content {
            Some(DeltaContent::Text(text)) => self.text(out, &text),
            Some(DeltaContent::Chunks(chunks)) => {
                for item in chunks {
                    match item {
                        ContentChunk::Text { text } => self.text(out, &text),
                        ContentChunk::Thinking { thinking } => {
                            let text: String =
                                thinking.into_iter().filter_map(|part| part.text).collect();
                            self.thinking(out, &text);
                        }
                        ContentChunk::Other => {}
                    }
                }
            }
            None => {}
        }
        for call in delta.tool_calls.into_iter().flatten() {
            self.tool_call(out, call);
        }
        Ok(())
    }
}

/// An error object sent in the stream: its message, classed by its `type` and `code`.
fn stream_error(chunk: &Chunk) -> StreamFailure {
    let error = chunk.error.as_ref();
    let message = error
        .and_then(|e| e.get("message"))
        .or(chunk.message.as_ref())
        .map(|m| match m {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "Mistral sent an error without a message".to_owned());
    let mut codes = error.map(crate::http::error_codes).unwrap_or_default();
    codes.extend(chunk.kind.as_deref());
    codes.extend(chunk.code.as_ref().and_then(Value::as_str));
    StreamFailure::provider(None, &codes, format!("Mistral API error: {message}"))
}

impl Decoder for MistralDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        with_repair(self, &event, out, Self::handle)
    }

    fn finish(&mut self, out: &mut Output) -> Result<StopReason, StreamFailure> {
        self.close_current(out);
        for (_, index) in &self.tools {
            if matches!(
                out.message.content.get(*index),
                Some(ContentBlock::ToolCall(_))
            ) {
                out.toolcall_end(*index);
            }
        }
        if self.stop == StopReason::Error {
            // The reference has nothing more to say about a stream that stopped with `error`.
            return Err(StreamFailure::from_text("An unknown error occurred"));
        }
        Ok(self.stop)
    }
}
