//! Decoding `ConverseStream` events into stream events, as the reference does. Each
//! event-stream message reaches the decoder as an [`SseEvent`] named by its `:event-type`
//! (or, for a modelled exception, its `:exception-type`, which is how the service model
//! names the stream's union members), with the JSON payload as data.
//!
//! - A text block opens on its first text delta (Bedrock sends no start for text), a
//!   reasoning block on its first reasoning delta (signature deltas extend the signature),
//!   a tool call on `contentBlockStart` with its `toolUse`; `contentBlockStop` closes it.
//! - `messageStop` carries the stop reason, `metadata` the usage (cache reads and writes
//!   apart from input).
//! - An exception ends the stream with `<kind>: <message>` in the reference's words, a
//!   typed class decided by the exception's type.

use knightcode_protocol::StopReason;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::Tokens;
use knightcode_protocol::Usage;
use serde::Deserialize;
use serde_json::Value;

use crate::driver::Decoder;
use crate::driver::Framing;
use crate::error::ErrorClass;
use crate::error::StreamFailure;
use crate::output::Output;
use crate::providers::Fail;
use crate::providers::parse_event;
use crate::providers::with_repair;
use crate::sse::SseEvent;

/// The name an event-stream `error` message (an unmodelled failure) reaches the decoder
/// under; its data is the `:error-message` text.
pub(crate) const ERROR_EVENT: &str = ":error";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStart {
    role: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStart {
    content_block_index: Option<u64>,
    start: Option<StartBody>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartBody {
    tool_use: Option<ToolUseStart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseStart {
    tool_use_id: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockDelta {
    content_block_index: Option<u64>,
    delta: Option<DeltaBody>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeltaBody {
    text: Option<String>,
    tool_use: Option<ToolUseDelta>,
    reasoning_content: Option<ReasoningDelta>,
}

#[derive(Deserialize)]
struct ToolUseDelta {
    input: Option<String>,
}

#[derive(Deserialize)]
struct ReasoningDelta {
    text: Option<String>,
    signature: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStop {
    content_block_index: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStop {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct Metadata {
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_write_input_tokens: Option<u64>,
    total_tokens: Option<u64>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

/// One open content block: Bedrock's index, ours, and what it holds.
struct Block {
    wire: Option<u64>,
    index: usize,
    kind: Kind,
}

pub(crate) struct BedrockDecoder {
    blocks: Vec<Block>,
    stop: StopReason,
}

impl BedrockDecoder {
    pub(crate) fn new() -> Self {
        Self {
            blocks: Vec::new(),
            stop: StopReason::Stop,
        }
    }

    fn find(&self, wire: Option<u64>) -> Option<&Block> {
        self.blocks.iter().find(|b| b.wire == wire)
    }

    fn handle(&mut self, event: &SseEvent<'_>, out: &mut Output) -> Result<(), Fail> {
        const API: &str = "Bedrock";
        match event.event {
            "messageStart" => {
                let start: MessageStart = parse_event(API, event)?;
                if start.role.as_deref().is_some_and(|r| r != "assistant") {
                    return Err(StreamFailure::other(
                        "Unexpected assistant message start but got user message start instead",
                    )
                    .into());
                }
            }
            "contentBlockStart" => {
                let start: BlockStart = parse_event(API, event)?;
                if let Some(tool) = start.start.and_then(|s| s.tool_use) {
                    let index = out.toolcall_start(
                        tool.tool_use_id.as_deref().unwrap_or(""),
                        tool.name.as_deref().unwrap_or(""),
                    );
                    self.blocks.push(Block {
                        wire: start.content_block_index,
                        index,
                        kind: Kind::ToolCall,
                    });
                }
            }
            "contentBlockDelta" => {
                let delta: BlockDelta = parse_event(API, event)?;
                if let Some(body) = delta.delta {
                    self.delta(delta.content_block_index, body, out);
                }
            }
            "contentBlockStop" => {
                let stop: BlockStop = parse_event(API, event)?;
                if let Some(at) = self
                    .blocks
                    .iter()
                    .position(|b| b.wire == stop.content_block_index)
                {
                    let block = self.blocks.remove(at);
                    match block.kind {
                        Kind::Text => out.text_end(block.index),
                        Kind::Thinking => out.thinking_end(block.index),
                        Kind::ToolCall => out.toolcall_end(block.index),
                    }
                }
            }
            "messageStop" => {
                let stop: MessageStop = parse_event(API, event)?;
                self.stop = match stop.stop_reason.as_deref() {
                    Some("end_turn" | "stop_sequence") => StopReason::Stop,
                    Some("max_tokens" | "model_context_window_exceeded") => StopReason::Length,
                    Some("tool_use") => StopReason::ToolUse,
                    _ => StopReason::Error,
                };
            }
            "metadata" => {
                let metadata: Metadata = parse_event(API, event)?;
                if let Some(usage) = metadata.usage {
                    let input = usage.input_tokens.unwrap_or(0);
                    let output = usage.output_tokens.unwrap_or(0);
                    out.set_usage(Usage {
                        input: Tokens(input),
                        output: Tokens(output),
                        cache_read: Tokens(usage.cache_read_input_tokens.unwrap_or(0)),
                        cache_write: Tokens(usage.cache_write_input_tokens.unwrap_or(0)),
                        total_tokens: Tokens(
                            usage
                                .total_tokens
                                .filter(|t| *t > 0)
                                .unwrap_or(input + output),
                        ),
                        ..Usage::default()
                    });
                }
            }
            ERROR_EVENT => {
                let message = String::from_utf8_lossy(event.data);
                let message = if message.is_empty() {
                    "UnknownError".into()
                } else {
                    message
                };
                return Err(StreamFailure::from_text(message.into_owned()).into());
            }
            name if name.ends_with("Exception") => return Err(exception(name, event.data).into()),
            // Events this client does not use (citations, guardrail traces) are skipped, as
            // the reference's loop does.
            _ => {}
        }
        Ok(())
    }

    fn delta(&mut self, wire: Option<u64>, body: DeltaBody, out: &mut Output) {
        let existing = self.find(wire).map(|b| (b.index, b.kind));
        if let Some(text) = body.text {
            let index = match existing {
                Some((index, Kind::Text)) => index,
                Some(_) => return,
                None => {
                    let index = out.text_start();
                    self.blocks.push(Block {
                        wire,
                        index,
                        kind: Kind::Text,
                    });
                    index
                }
            };
            out.text_delta(index, &text);
        } else if let Some(tool) = body.tool_use {
            if let Some((index, Kind::ToolCall)) = existing {
                out.toolcall_delta(index, tool.input.as_deref().unwrap_or(""));
            }
        } else if let Some(reasoning) = body.reasoning_content {
            let index = match existing {
                Some((index, Kind::Thinking)) => index,
                Some(_) => return,
                None => {
                    let thinking = ThinkingContent {
                        thinking_signature: Some(String::new()),
                        ..ThinkingContent::default()
                    };
                    let index = out.thinking_start(thinking);
                    self.blocks.push(Block {
                        wire,
                        index,
                        kind: Kind::Thinking,
                    });
                    index
                }
            };
            if let Some(text) = reasoning.text.filter(|t| !t.is_empty()) {
                out.thinking_delta(index, &text);
            }
            if let Some(signature) = reasoning.signature.filter(|s| !s.is_empty())
                && let Some(block) = out.thinking_mut(index)
            {
                block
                    .thinking_signature
                    .get_or_insert_with(String::new)
                    .push_str(&signature);
            }
        }
    }
}

/// The reference's words for the exceptions Bedrock models (its retry rule matches them).
fn prefix(name: &str) -> Option<&'static str> {
    Some(match name {
        "InternalServerException" => "Internal server error",
        "ModelStreamErrorException" => "Model stream error",
        "ValidationException" => "Validation error",
        "ThrottlingException" => "Throttling error",
        "ServiceUnavailableException" => "Service unavailable",
        _ => return None,
    })
}

/// The class of a Bedrock exception, by its name; a validation error is decided by its
/// words (context overflow is reported as one), as the reference does.
fn class_of(name: &str, message: &str) -> ErrorClass {
    match name {
        "ThrottlingException" | "ServiceQuotaExceededException" => {
            if crate::retry::is_non_retryable_limit(message) {
                ErrorClass::Quota
            } else {
                ErrorClass::RateLimit
            }
        }
        "InternalServerException"
        | "ServiceUnavailableException"
        | "ModelStreamErrorException"
        | "ModelNotReadyException"
        | "ModelTimeoutException" => ErrorClass::Overloaded,
        "AccessDeniedException" | "UnrecognizedClientException" | "ExpiredTokenException" => {
            ErrorClass::Auth
        }
        _ => crate::error::classify_provider_error(None, &[], message),
    }
}

/// An exception message in the stream: `:exception-type` is the union member's name
/// (`throttlingException`), the payload `{"message": …}`.
fn exception(member: &str, payload: &[u8]) -> StreamFailure {
    let mut name = member.to_owned();
    if let Some(first) = name.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    let message = serde_json::from_slice::<Value>(payload)
        .ok()
        .and_then(|body| body_message(&body))
        .unwrap_or_else(|| String::from_utf8_lossy(payload).into_owned());
    let class = class_of(&name, &message);
    let text = match prefix(&name) {
        Some(prefix) => format!("{prefix}: {message}"),
        // An exception the service model does not list reaches the reference as a plain
        // error with the payload as its message.
        None => message,
    };
    StreamFailure::new(class, text)
}

fn body_message(body: &Value) -> Option<String> {
    ["message", "Message"]
        .iter()
        .find_map(|key| body.get(*key).and_then(Value::as_str))
        .map(str::to_owned)
}

/// An HTTP error response as the SDK reports it: the error's name from `x-amzn-errortype`
/// (or the body's `__type`/`code`, or the status), its message from the body.
pub(crate) fn http_failure(status: u16, error_type: Option<&str>, body: &str) -> StreamFailure {
    let json = serde_json::from_str::<Value>(body.trim()).ok();
    let from_body = json.as_ref().and_then(|j| {
        ["__type", "code", "Code"]
            .iter()
            .find_map(|key| j.get(*key).and_then(Value::as_str))
    });
    let name = error_type
        .or(from_body)
        .map(|raw| {
            // `Name:http://internal…` in the header, `namespace#Name` in bodies.
            let raw = raw.split(':').next().unwrap_or(raw);
            raw.rsplit('#').next().unwrap_or(raw).trim().to_owned()
        })
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| status.to_string());
    let message = json
        .as_ref()
        .and_then(body_message)
        .unwrap_or_else(|| "UnknownError".to_owned());
    let text = format!("{}: {message}", prefix(&name).unwrap_or(&name));
    let class = match (status, class_of(&name, &message)) {
        (_, ErrorClass::Other) => crate::error::classify_provider_error(Some(status), &[], &text),
        (_, class) => class,
    };
    StreamFailure::new(class, text)
}

impl Decoder for BedrockDecoder {
    fn framing(&self) -> Framing {
        Framing::EventStream
    }

    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        with_repair(self, &event, out, |state, event, out| {
            state.handle(event, out)
        })
    }

    fn finish(&mut self, _out: &mut Output) -> Result<StopReason, StreamFailure> {
        if self.stop == StopReason::Error {
            return Err(StreamFailure::from_text("An unknown error occurred"));
        }
        Ok(self.stop)
    }
}
