//! Decoding the Messages API event stream: blocks opened and closed by index, usage from
//! `message_start` and `message_delta`, and the stop reason.

use std::borrow::Cow;

use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::Tokens;
use serde::Deserialize;
use serde_json::Value;

use super::claude_code;
use crate::driver::Decoder;
use crate::error::StreamFailure;
use crate::output::Output;
use crate::providers::Fail;
use crate::providers::parse_event;
use crate::providers::with_repair;
use crate::sse::SseEvent;

#[derive(Deserialize)]
struct RawUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_creation: Option<CacheCreation>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct CacheCreation {
    ephemeral_1h_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    thinking_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct MessageStart {
    message: StartMessage,
}

#[derive(Deserialize)]
struct StartMessage {
    id: Option<String>,
    model: Option<String>,
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
struct BlockStart<'a> {
    index: u64,
    #[serde(borrow)]
    content_block: StartBlock<'a>,
}

#[derive(Deserialize)]
struct StartBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    signature: Option<String>,
    data: Option<String>,
    id: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
struct BlockDelta<'a> {
    index: u64,
    #[serde(borrow)]
    delta: Delta<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct BlockStop {
    index: u64,
}

#[derive(Deserialize)]
struct MessageDelta {
    delta: Option<MessageDeltaBody>,
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
    stop_details: Option<Value>,
}

fn parse<'a, T: Deserialize<'a>>(event: &SseEvent<'a>) -> Result<T, Fail> {
    parse_event("Anthropic", event)
}

/// Decodes the Messages API event stream.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    /// `(anthropic block index, our content index)` of blocks seen so far.
    blocks: Vec<(u64, usize)>,
    saw_start: bool,
    saw_stop: bool,
    stop: Option<StopReason>,
    stop_error: Option<String>,
    usage: (u64, u64, u64, u64, u64, Option<u64>),
    /// The declared tools' names when the request used Claude Code's names for them.
    claude_code_tools: Option<Vec<String>>,
}

impl AnthropicDecoder {
    pub(crate) fn new(claude_code_tools: Option<Vec<String>>) -> Self {
        Self {
            claude_code_tools,
            ..Self::default()
        }
    }

    fn block(&self, index: u64) -> Option<usize> {
        self.blocks
            .iter()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, c)| *c)
    }

    fn apply_usage(&mut self, usage: &RawUsage, out: &mut Output, from_start: bool) {
        let u = &mut self.usage;
        if from_start {
            *u = (
                usage.input_tokens.unwrap_or(0),
                usage.output_tokens.unwrap_or(0),
                usage.cache_read_input_tokens.unwrap_or(0),
                usage.cache_creation_input_tokens.unwrap_or(0),
                usage
                    .cache_creation
                    .as_ref()
                    .and_then(|c| c.ephemeral_1h_input_tokens)
                    .unwrap_or(0),
                None,
            );
        } else {
            // Proxies often omit fields in message_delta; keep what message_start said.
            u.0 = usage.input_tokens.unwrap_or(u.0);
            u.1 = usage.output_tokens.unwrap_or(u.1);
            u.2 = usage.cache_read_input_tokens.unwrap_or(u.2);
            u.3 = usage.cache_creation_input_tokens.unwrap_or(u.3);
            if let Some(thinking) = usage
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.thinking_tokens)
            {
                u.5 = Some(thinking);
            }
        }
        self.publish_usage(out);
    }

    fn publish_usage(&self, out: &mut Output) {
        let (input, output, read, write, write_1h, reasoning) = self.usage;
        let mut usage = Output::summed_usage(input, output, read, write);
        usage.cache_write_1h = Some(Tokens(write_1h));
        usage.reasoning = reasoning.map(Tokens);
        out.set_usage(usage);
    }

    fn handle(&mut self, event: &SseEvent<'_>, out: &mut Output) -> Result<(), Fail> {
        match event.event {
            "message_start" => {
                let start: MessageStart = parse(event)?;
                self.saw_start = true;
                out.message.response_id = start.message.id;
                if let Some(model) = start.message.model.filter(|m| !m.is_empty()) {
                    out.message.model = model;
                }
                if let Some(usage) = &start.message.usage {
                    self.apply_usage(usage, out, true);
                }
            }
            "content_block_start" => {
                let start: BlockStart<'_> = parse(event)?;
                let block = start.content_block;
                let index = match block.kind.as_ref() {
                    "text" => {
                        let index = out.text_start();
                        if let Some(text) = block.text.filter(|t| !t.is_empty()) {
                            out.text_delta(index, &text);
                        }
                        index
                    }
                    "thinking" => {
                        let index = out.thinking_start(ThinkingContent {
                            thinking_signature: Some(block.signature.unwrap_or_default()),
                            ..ThinkingContent::default()
                        });
                        if let Some(text) = block.thinking.filter(|t| !t.is_empty()) {
                            out.thinking_delta(index, &text);
                        }
                        index
                    }
                    "redacted_thinking" => out.thinking_start(ThinkingContent {
                        thinking: "[Reasoning redacted]".to_owned(),
                        thinking_signature: block.data,
                        redacted: Some(true),
                        ..ThinkingContent::default()
                    }),
                    "tool_use" => {
                        let name = block.name.as_deref().unwrap_or_default();
                        let name = match &self.claude_code_tools {
                            Some(tools) => claude_code::from_claude_code_name(name, tools),
                            None => name.to_owned(),
                        };
                        out.toolcall_start(block.id.as_deref().unwrap_or_default(), &name)
                    }
                    "fallback" if out.len() > 0 => {
                        return Err(Fail::Other(StreamFailure::other(
                            "Anthropic performed an unsupported mid-output model fallback",
                        )));
                    }
                    _ => return Ok(()),
                };
                self.blocks.push((start.index, index));
            }
            "content_block_delta" => {
                let delta: BlockDelta<'_> = parse(event)?;
                let Some(index) = self.block(delta.index) else {
                    return Ok(());
                };
                let d = delta.delta;
                match d.kind.as_ref() {
                    "text_delta" => {
                        if let Some(text) = d.text {
                            out.text_delta(index, &text);
                        }
                    }
                    "thinking_delta" => {
                        if let Some(text) = d.thinking {
                            out.thinking_delta(index, &text);
                        }
                    }
                    "input_json_delta" => {
                        if let Some(json) = d.partial_json {
                            out.toolcall_delta(index, &json);
                        }
                    }
                    "signature_delta" => {
                        if let (Some(signature), Some(block)) =
                            (d.signature, out.thinking_mut(index))
                        {
                            block
                                .thinking_signature
                                .get_or_insert_with(String::new)
                                .push_str(&signature);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let stop: BlockStop = parse(event)?;
                let Some(index) = self.block(stop.index) else {
                    return Ok(());
                };
                match out.message.content.get(index) {
                    Some(ContentBlock::Text(_)) => out.text_end(index),
                    Some(ContentBlock::Thinking(_)) => out.thinking_end(index),
                    Some(ContentBlock::ToolCall(_)) => out.toolcall_end(index),
                    _ => {}
                }
            }
            "message_delta" => {
                let delta: MessageDelta = parse(event)?;
                if let Some(reason) = delta.delta.as_ref().and_then(|d| d.stop_reason.clone()) {
                    let details = delta.delta.as_ref().and_then(|d| d.stop_details.as_ref());
                    let (stop, error) = map_stop_reason(&reason, details)?;
                    out.message.raw_stop_reason = Some(reason);
                    self.stop = Some(stop);
                    self.stop_error = error;
                }
                match &delta.usage {
                    Some(usage) => self.apply_usage(usage, out, false),
                    None => self.publish_usage(out),
                }
            }
            "message_stop" => self.saw_stop = true,
            "error" => {
                // `{"type":"error","error":{"type":"overloaded_error","message":…}}`: the
                // error's type decides the class.
                let text = String::from_utf8_lossy(event.data).into_owned();
                let json = serde_json::from_slice::<Value>(event.data).unwrap_or_default();
                let codes = crate::http::error_codes(&json);
                return Err(Fail::Other(StreamFailure::provider(None, &codes, text)));
            }
            _ => {}
        }
        Ok(())
    }
}

fn map_stop_reason(
    reason: &str,
    details: Option<&Value>,
) -> Result<(StopReason, Option<String>), StreamFailure> {
    Ok(match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => (StopReason::Stop, None),
        "max_tokens" => (StopReason::Length, None),
        "tool_use" => (StopReason::ToolUse, None),
        "refusal" => (
            StopReason::Error,
            Some(
                details
                    .and_then(|d| d.get("explanation"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .unwrap_or("The model refused to complete the request")
                    .to_owned(),
            ),
        ),
        "sensitive" => (
            StopReason::Error,
            Some("Provider stopped with: sensitive".to_owned()),
        ),
        other => {
            return Err(StreamFailure::other(format!(
                "Unhandled stop reason: {other}"
            )));
        }
    })
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        with_repair(self, &event, out, Self::handle)
    }

    fn finish(&mut self, _out: &mut Output) -> Result<StopReason, StreamFailure> {
        if self.saw_start && !self.saw_stop {
            return Err(StreamFailure::network(
                "Anthropic stream ended before message_stop",
            ));
        }
        match self.stop {
            None => Err(StreamFailure::network(
                "Anthropic stream ended without a stop reason",
            )),
            // A refusal or a safety stop: the model's answer, not a transient failure.
            Some(StopReason::Error) => Err(StreamFailure::other(
                self.stop_error
                    .clone()
                    .unwrap_or_else(|| "An unknown error occurred".to_owned()),
            )),
            Some(reason) => Ok(reason),
        }
    }
}
