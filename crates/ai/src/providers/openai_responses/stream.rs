//! Decoding the Responses API's events: output items by index (reasoning, text, function
//! calls, custom tool calls), finished items replacing their deltas, and the final
//! response's usage and status.

use std::borrow::Cow;
use std::collections::HashMap;

use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::Tokens;
use serde::Deserialize;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::driver::Decoder;
use crate::error::StreamFailure;
use crate::output::Output;
use crate::providers::Fail;
use crate::providers::parse_event;
use crate::providers::with_repair;
use crate::sse::SseEvent;

use super::grammar::CustomInput;
use super::grammar::GrammarTools;

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    output_index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Cow<'a, str>>,
    arguments: Option<String>,
    /// A custom tool call's whole input (`response.custom_tool_call_input.done`).
    input: Option<String>,
    item: Option<Value>,
    response: Option<Value>,
    code: Option<Value>,
    message: Option<String>,
}

#[derive(Clone, Copy)]
enum Slot {
    Thinking(usize),
    Text(usize),
    Tool(usize),
    /// A custom tool call, its raw input in `customs` under the same content index.
    Custom(usize),
}

#[derive(Default)]
pub(crate) struct ResponsesDecoder {
    /// The request's tools sent as custom tools: which argument a custom call's input is.
    grammar: GrammarTools,
    customs: HashMap<usize, CustomInput>,
    slots: HashMap<u64, Slot>,
    reasoning_by_id: HashMap<String, usize>,
    terminal: bool,
    stop: Option<(StopReason, Option<String>)>,
}

impl ResponsesDecoder {
    pub(crate) fn new(grammar: GrammarTools) -> Self {
        Self {
            grammar,
            ..Self::default()
        }
    }

    /// Extends a custom call's input to `next` and streams the JSON text that adds.
    fn custom_input(
        &mut self,
        content: usize,
        next: impl FnOnce(&str) -> String,
        close: bool,
        out: &mut Output,
    ) -> Result<(), StreamFailure> {
        let Some(custom) = self.customs.get_mut(&content) else {
            return Ok(());
        };
        let next = next(&custom.input);
        if let Some(delta) = custom.advance(&next, close)? {
            out.toolcall_delta(content, &delta);
        }
        if let Some(call) = out.toolcall_mut(content) {
            call.arguments = json!({ custom.property.as_str(): next });
        }
        Ok(())
    }

    fn create_slot(&mut self, index: u64, item: &Value, out: &mut Output) -> Option<Slot> {
        let slot = match item.get("type").and_then(Value::as_str)? {
            "reasoning" => Slot::Thinking(out.thinking_start(ThinkingContent::default())),
            "message" => {
                if item.get("phase").and_then(Value::as_str) == Some("final_answer") {
                    self.stop = Some((StopReason::Stop, None));
                }
                Slot::Text(out.text_start())
            }
            "function_call" => {
                let call_id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                let content = out.toolcall_start(&format!("{call_id}|{id}"), name);
                if let Some(namespace) = item.get("namespace").and_then(Value::as_str)
                    && let Some(call) = out.toolcall_mut(content)
                {
                    call.namespace = Some(namespace.to_owned());
                }
                if let Some(arguments) = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .filter(|a| !a.is_empty())
                {
                    out.set_toolcall_args(content, arguments.to_owned());
                }
                Slot::Tool(content)
            }
            "custom_tool_call" => {
                let call_id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                // A tool this request did not send as a custom tool: its input is `input`.
                let property = self.grammar.input_property(name).unwrap_or("input");
                let input = item.get("input").and_then(Value::as_str).unwrap_or("");
                let content = out.toolcall_start(&format!("{call_id}|{id}"), name);
                if let Some(call) = out.toolcall_mut(content) {
                    call.arguments = json!({ property: input });
                    if let Some(namespace) = item.get("namespace").and_then(Value::as_str) {
                        call.namespace = Some(namespace.to_owned());
                    }
                }
                self.customs
                    .insert(content, CustomInput::new(property, input));
                Slot::Custom(content)
            }
            _ => return None,
        };
        self.slots.insert(index, slot);
        Some(slot)
    }

    fn item_done(&mut self, index: u64, item: &Value, out: &mut Output) -> Result<(), Fail> {
        if item.get("type").and_then(Value::as_str) == Some("message")
            && item.get("phase").and_then(Value::as_str) == Some("final_answer")
        {
            self.stop = Some((StopReason::Stop, None));
        }
        let slot = match self.slots.get(&index).copied() {
            Some(slot) => slot,
            None => match self.create_slot(index, item, out) {
                Some(slot) => slot,
                None => return Ok(()),
            },
        };
        let texts = |key: &str, field: &str, sep: &str| -> String {
            item.get(key)
                .and_then(Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .filter_map(|p| p.get(field).and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join(sep)
                })
                .unwrap_or_default()
        };
        match slot {
            Slot::Thinking(content) => {
                let summary = texts("summary", "text", "\n\n");
                let text = if summary.is_empty() {
                    texts("content", "text", "\n\n")
                } else {
                    summary
                };
                if let Some(block) = out.thinking_mut(content) {
                    if !text.is_empty() {
                        block.thinking = text;
                    }
                    block.thinking_signature = serde_json::to_string(item).ok();
                }
                if let Some(id) = item.get("id").and_then(Value::as_str) {
                    self.reasoning_by_id.insert(id.to_owned(), content);
                }
                out.thinking_end(content);
            }
            Slot::Text(content) => {
                let text = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| {
                                p.get("text")
                                    .or_else(|| p.get("refusal"))
                                    .and_then(Value::as_str)
                            })
                            .collect::<String>()
                    })
                    .unwrap_or_default();
                let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                let mut signature = Map::new();
                signature.insert("v".into(), json!(1));
                signature.insert("id".into(), json!(id));
                if let Some(phase) = item.get("phase").and_then(Value::as_str) {
                    signature.insert("phase".into(), json!(phase));
                }
                if let Some(block) = out.text_mut(content) {
                    block.text = text;
                    block.text_signature = Some(Value::Object(signature).to_string());
                }
                out.text_end(content);
            }
            Slot::Custom(content) => {
                if item.get("type").and_then(Value::as_str) != Some("custom_tool_call") {
                    return Ok(());
                }
                let input = item.get("input").and_then(Value::as_str);
                self.custom_input(
                    content,
                    |current| input.unwrap_or(current).to_owned(),
                    true,
                    out,
                )?;
                if let Some(namespace) = item.get("namespace").and_then(Value::as_str)
                    && let Some(call) = out.toolcall_mut(content)
                {
                    call.namespace = Some(namespace.to_owned());
                }
                self.customs.remove(&content);
                out.toolcall_end(content);
            }
            Slot::Tool(content) => {
                if !out.toolcall_open(content) {
                    return Ok(());
                }
                if let Some(arguments) = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .filter(|a| !a.is_empty())
                {
                    out.set_toolcall_args(content, arguments.to_owned());
                }
                if let Some(namespace) = item.get("namespace").and_then(Value::as_str)
                    && let Some(call) = out.toolcall_mut(content)
                {
                    call.namespace = Some(namespace.to_owned());
                }
                out.toolcall_end(content);
            }
        }
        self.slots.remove(&index);
        Ok(())
    }

    fn finalize(&mut self, response: &Value, out: &mut Output) {
        self.terminal = true;
        // Some deployments only include encrypted reasoning in the terminal response.
        for item in response
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some("reasoning"), Some(id), Some(encrypted)) = (
                item.get("type").and_then(Value::as_str),
                item.get("id").and_then(Value::as_str),
                item.get("encrypted_content").and_then(Value::as_str),
            ) else {
                continue;
            };
            let Some(&content) = self.reasoning_by_id.get(id) else {
                continue;
            };
            if let Some(block) = out.thinking_mut(content)
                && let Some(mut stored) = block
                    .thinking_signature
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<Map<String, Value>>(s).ok())
                && !stored.contains_key("encrypted_content")
            {
                stored.insert("encrypted_content".into(), json!(encrypted));
                block.thinking_signature = Some(Value::Object(stored).to_string());
            }
        }
        if let Some(id) = response.get("id").and_then(Value::as_str) {
            out.message.response_id = Some(id.to_owned());
        }
        if let Some(usage) = response.get("usage") {
            let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
            let details = usage.get("input_tokens_details");
            let cached = n(details.and_then(|d| d.get("cached_tokens")));
            let cache_write = n(details.and_then(|d| d.get("cache_write_tokens")));
            let input = n(usage.get("input_tokens")).saturating_sub(cached + cache_write);
            let mut parsed =
                Output::summed_usage(input, n(usage.get("output_tokens")), cached, cache_write);
            parsed.total_tokens = Tokens(n(usage.get("total_tokens")));
            parsed.reasoning = Some(Tokens(n(usage
                .get("output_tokens_details")
                .and_then(|d| d.get("reasoning_tokens")))));
            out.set_usage(parsed);
        }
        let status = response.get("status").and_then(Value::as_str);
        let reason = response
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str);
        out.message.raw_stop_reason = match (status, reason) {
            (Some(s), Some(r)) => Some(format!("{s}.{r}")),
            (Some(s), None) => Some(s.to_owned()),
            _ => None,
        };
        let (mut stop, error) = match (status, reason) {
            (Some("incomplete"), Some("max_output_tokens")) => (StopReason::Length, None),
            (Some("incomplete"), Some(r)) => {
                (StopReason::Error, Some(format!("Response incomplete: {r}")))
            }
            (Some("incomplete"), None) => (
                StopReason::Error,
                Some("Response incomplete without a provider reason".to_owned()),
            ),
            (Some("failed" | "cancelled"), _) => (StopReason::Error, None),
            _ => (StopReason::Stop, None),
        };
        let has_tools = out
            .message
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolCall(_)));
        if stop == StopReason::Stop && has_tools {
            stop = StopReason::ToolUse;
        }
        self.stop = Some((stop, error));
    }

    fn handle(&mut self, event: &SseEvent<'_>, out: &mut Output) -> Result<(), Fail> {
        let ev: Event<'_> = parse_event("OpenAI Responses", event)?;
        let index = ev.output_index.unwrap_or(0);
        let slot = self.slots.get(&index).copied();
        match ev.kind.as_ref() {
            "response.created" => {
                if let Some(id) = ev
                    .response
                    .as_ref()
                    .and_then(|r| r.get("id"))
                    .and_then(Value::as_str)
                {
                    out.message.response_id = Some(id.to_owned());
                }
            }
            "response.output_item.added" => {
                if let Some(item) = &ev.item {
                    self.create_slot(index, item, out);
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let (Some(Slot::Thinking(content)), Some(delta)) = (slot, &ev.delta) {
                    out.thinking_delta(content, delta);
                }
            }
            "response.reasoning_summary_part.done" => {
                if let Some(Slot::Thinking(content)) = slot {
                    out.thinking_delta(content, "\n\n");
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let (Some(Slot::Text(content)), Some(delta)) = (slot, &ev.delta) {
                    out.text_delta(content, delta);
                }
            }
            "response.function_call_arguments.delta" => {
                if let (Some(Slot::Tool(content)), Some(delta)) = (slot, &ev.delta) {
                    out.toolcall_delta(content, delta);
                }
            }
            "response.function_call_arguments.done" => {
                if let (Some(Slot::Tool(content)), Some(arguments)) = (slot, ev.arguments) {
                    let previous = out.toolcall_args(content).unwrap_or("").to_owned();
                    match arguments.strip_prefix(previous.as_str()) {
                        Some(rest) if !rest.is_empty() => out.toolcall_delta(content, rest),
                        Some(_) => {}
                        None => out.set_toolcall_args(content, arguments),
                    }
                }
            }
            "response.custom_tool_call_input.delta" => {
                if let (Some(Slot::Custom(content)), Some(delta)) = (slot, &ev.delta) {
                    self.custom_input(content, |current| format!("{current}{delta}"), false, out)?;
                }
            }
            "response.custom_tool_call_input.done" => {
                if let (Some(Slot::Custom(content)), Some(input)) = (slot, ev.input) {
                    self.custom_input(content, |_| input, true, out)?;
                }
            }
            "response.output_item.done" => {
                if let Some(item) = &ev.item {
                    self.item_done(index, item, out)?;
                }
            }
            "response.completed" | "response.incomplete" => {
                if let Some(response) = &ev.response {
                    self.finalize(response, out);
                } else {
                    self.terminal = true;
                    self.stop = Some((StopReason::Stop, None));
                }
            }
            "error" => {
                let code = ev.code.map_or_else(
                    || "unknown".to_owned(),
                    |c| match c {
                        Value::String(s) => s,
                        other => other.to_string(),
                    },
                );
                let message = ev.message.unwrap_or_else(|| "Unknown error".to_owned());
                return Err(Fail::Other(StreamFailure::provider(
                    None,
                    &[code.as_str()],
                    format!("Error Code {code}: {message}"),
                )));
            }
            "response.failed" => {
                self.terminal = true;
                let response = ev.response.unwrap_or_default();
                out.message.raw_stop_reason = response
                    .get("status")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let error = response.get("error");
                let text = |v: Option<&Value>, default: &str| {
                    v.and_then(Value::as_str).unwrap_or(default).to_owned()
                };
                let failure = match error {
                    Some(e) if !e.is_null() => StreamFailure::provider(
                        None,
                        &crate::http::error_codes(e),
                        format!(
                            "{}: {}",
                            text(e.get("code"), "unknown"),
                            text(e.get("message"), "no message")
                        ),
                    ),
                    _ => StreamFailure::from_text(
                        match response
                            .get("incomplete_details")
                            .and_then(|d| d.get("reason"))
                            .and_then(Value::as_str)
                        {
                            Some(reason) => format!("incomplete: {reason}"),
                            None => "Unknown error (no error details in response)".to_owned(),
                        },
                    ),
                };
                return Err(Fail::Other(failure));
            }
            _ => {}
        }
        Ok(())
    }
}

impl Decoder for ResponsesDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        with_repair(self, &event, out, Self::handle)
    }

    fn finish(&mut self, _out: &mut Output) -> Result<StopReason, StreamFailure> {
        if !self.terminal {
            return Err(StreamFailure::network(
                "OpenAI Responses stream ended before a terminal response event",
            ));
        }
        match &self.stop {
            None => Err(StreamFailure::network(
                "OpenAI Responses stream ended without a stop reason",
            )),
            Some((StopReason::Error, message)) => Err(StreamFailure::from_text(
                message
                    .clone()
                    .unwrap_or_else(|| "An unknown error occurred".to_owned()),
            )),
            Some((reason, _)) => Ok(*reason),
        }
    }
}
