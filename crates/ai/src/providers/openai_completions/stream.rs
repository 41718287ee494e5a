//! Decoding Chat Completions chunks into stream events.
//!
//! Blocks are opened as deltas arrive and all closed when the stream ends (the format has no
//! per-block end marker), in content order.

use std::borrow::Cow;

use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::Tokens;
use serde::Deserialize;
use serde_json::Value;

use super::Compat;
use crate::driver::Decoder;
use crate::error::StreamFailure;
use crate::output::Output;
use crate::providers::Fail;
use crate::providers::parse_event;
use crate::providers::with_repair;
use crate::sse::SseEvent;

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    usage: Option<RawUsage>,
    #[serde(default, borrow)]
    choices: FirstChoice<'a>,
    error: Option<Value>,
}

/// Only the first choice matters (`n` is never set); reading just it avoids a `Vec` per chunk.
#[derive(Default)]
struct FirstChoice<'a>(Option<Choice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visitor<'a> {
            type Value = FirstChoice<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(FirstChoice(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let first = seq.next_element::<Choice<'a>>()?;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first))
            }
        }
        deserializer.deserialize_any(Visitor(std::marker::PhantomData))
    }
}

/// A field that is text for most servers but may be an object for others: text is kept,
/// anything else skipped without building a `Value`.
#[derive(Default)]
struct LenientStr<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for LenientStr<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visitor<'a> {
            type Value = LenientStr<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("text or any JSON value")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(LenientStr(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LenientStr(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(LenientStr(Some(Cow::Owned(v))))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(LenientStr(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(LenientStr(None))
            }
        }
        deserializer.deserialize_any(Visitor(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    delta: Option<ChoiceDelta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
struct ChoiceDelta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: LenientStr<'a>,
    #[serde(default, borrow)]
    reasoning: LenientStr<'a>,
    #[serde(default, borrow)]
    reasoning_text: LenientStr<'a>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
    reasoning_details: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    index: Option<u64>,
    id: Option<String>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    name: Option<String>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct RawUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    cached_tokens: Option<u64>,
    prompt_cache_hit_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    reasoning_tokens: Option<u64>,
}

struct ToolSlot {
    stream_index: Option<u64>,
    id: String,
    content_index: usize,
}

pub(crate) struct CompletionsDecoder {
    model_id: String,
    provider: String,
    supports_finish_reason: bool,
    text: Option<usize>,
    thinking: Option<usize>,
    tools: Vec<ToolSlot>,
    finish: Option<(StopReason, Option<String>)>,
    reasoning_details: Option<Vec<Value>>,
}

impl CompletionsDecoder {
    pub(crate) fn new(model: &crate::model::Model) -> Self {
        Self {
            model_id: model.id.clone(),
            provider: model.provider.clone(),
            supports_finish_reason: Compat::of(model).supports_finish_reason,
            text: None,
            thinking: None,
            tools: Vec::new(),
            finish: None,
            reasoning_details: None,
        }
    }

    fn thinking_block(&mut self, out: &mut Output, signature: &str) -> usize {
        *self.thinking.get_or_insert_with(|| {
            out.thinking_start(ThinkingContent {
                thinking_signature: Some(signature.to_owned()),
                ..ThinkingContent::default()
            })
        })
    }

    fn tool_block(&mut self, out: &mut Output, delta: &ToolCallDelta<'_>) -> usize {
        let by_index = delta
            .index
            .and_then(|i| self.tools.iter().position(|t| t.stream_index == Some(i)));
        let by_id = || {
            delta
                .id
                .as_deref()
                .filter(|id| !id.is_empty())
                .and_then(|id| self.tools.iter().position(|t| t.id == id))
        };
        let name = delta
            .function
            .as_ref()
            .and_then(|f| f.name.as_deref())
            .unwrap_or("");
        let slot = match by_index.or_else(by_id) {
            Some(slot) => slot,
            None => {
                let id = delta.id.clone().unwrap_or_default();
                let content_index = out.toolcall_start(&id, name);
                self.tools.push(ToolSlot {
                    stream_index: delta.index,
                    id,
                    content_index,
                });
                self.tools.len() - 1
            }
        };
        let tool = &mut self.tools[slot];
        if tool.stream_index.is_none() {
            tool.stream_index = delta.index;
        }
        let index = tool.content_index;
        if let Some(ContentBlock::ToolCall(call)) = out.message.content.get_mut(index) {
            if call.id.is_empty()
                && let Some(id) = delta.id.as_deref().filter(|id| !id.is_empty())
            {
                call.id = id.to_owned();
                tool.id = id.to_owned();
            }
            if call.name.is_empty() && !name.is_empty() {
                call.name = name.to_owned();
            }
        }
        index
    }

    fn usage(&self, raw: &RawUsage, out: &mut Output) {
        let prompt = raw.prompt_tokens.unwrap_or(0);
        let details = raw.prompt_tokens_details.as_ref();
        let cache_read = details
            .and_then(|d| d.cached_tokens)
            .or(raw.prompt_cache_hit_tokens)
            .or(raw.cached_tokens)
            .unwrap_or(0);
        let cache_write = details.and_then(|d| d.cache_write_tokens).unwrap_or(0);
        let input = prompt.saturating_sub(cache_read + cache_write);
        let mut usage = Output::summed_usage(
            input,
            raw.completion_tokens.unwrap_or(0),
            cache_read,
            cache_write,
        );
        usage.reasoning = Some(Tokens(
            raw.completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        ));
        out.set_usage(usage);
    }

    fn handle(&mut self, event: &SseEvent<'_>, out: &mut Output) -> Result<(), Fail> {
        if event.data == b"[DONE]" {
            return Ok(());
        }
        if event.event == "error" {
            return Err(Fail::Other(error_event_failure(event.data)));
        }
        let chunk: Chunk<'_> = parse_event("OpenAI", event)?;
        if let Some(error) = chunk.error {
            return Err(Fail::Other(error_failure(&error)));
        }
        if out.message.response_id.is_none()
            && let Some(id) = chunk.id.filter(|id| !id.is_empty())
        {
            out.message.response_id = Some(id.into_owned());
        }
        if out.message.response_model.is_none()
            && let Some(model) = chunk.model.filter(|m| !m.is_empty() && *m != self.model_id)
        {
            out.message.response_model = Some(model.into_owned());
        }
        if let Some(usage) = &chunk.usage {
            self.usage(usage, out);
        }
        let Some(choice) = chunk.choices.0 else {
            return Ok(());
        };
        if chunk.usage.is_none()
            && let Some(usage) = &choice.usage
        {
            // Some providers (Moonshot) put usage on the choice.
            self.usage(usage, out);
        }
        if let Some(reason) = &choice.finish_reason {
            let (stop, error) = map_finish_reason(reason);
            out.message.raw_stop_reason = Some(reason.to_string());
            self.finish = Some((stop, error));
        }
        let Some(delta) = choice.delta else {
            return Ok(());
        };
        if let Some(content) = delta.content.as_deref().filter(|c| !c.is_empty()) {
            let index = *self.text.get_or_insert_with(|| out.text_start());
            out.text_delta(index, content);
        }
        // Servers name the reasoning field differently; use the first non-empty one so that
        // servers sending two copies are not duplicated.
        let field = match (
            delta
                .reasoning_content
                .0
                .as_deref()
                .filter(|s| !s.is_empty()),
            delta.reasoning.0.as_deref().filter(|s| !s.is_empty()),
            delta.reasoning_text.0.as_deref().filter(|s| !s.is_empty()),
        ) {
            (Some(text), _, _) => Some(("reasoning_content", text)),
            (None, Some(text), _) => Some(("reasoning", text)),
            (None, None, Some(text)) => Some(("reasoning_text", text)),
            _ => None,
        };
        if let Some((name, text)) = field {
            let signature = if self.provider == "opencode-go" && name == "reasoning" {
                "reasoning_content"
            } else {
                name
            };
            let index = self.thinking_block(out, signature);
            out.thinking_delta(index, text);
        }
        for call in delta.tool_calls.iter().flatten() {
            let index = self.tool_block(out, call);
            let arguments = call
                .function
                .as_ref()
                .and_then(|f| f.arguments.as_deref())
                .unwrap_or("");
            out.toolcall_delta(index, arguments);
        }
        for detail in delta.reasoning_details.into_iter().flatten() {
            if !is_reasoning_detail(&detail) {
                continue;
            }
            self.thinking_block(out, "");
            append_reasoning_detail(self.reasoning_details.get_or_insert_with(Vec::new), detail);
        }
        Ok(())
    }

    /// Replay data of `reasoning_details` goes into the thinking block's signature.
    fn store_reasoning_details(&self, out: &mut Output) {
        if let (Some(details), Some(index)) = (&self.reasoning_details, self.thinking)
            && let Some(block) = out.thinking_mut(index)
        {
            block.thinking_signature = serde_json::to_string(details).ok();
        }
    }
}

fn is_reasoning_detail(detail: &Value) -> bool {
    let str_field = |k: &str| detail.get(k).is_some_and(Value::is_string);
    match detail.get("type").and_then(Value::as_str) {
        Some("reasoning.summary") => str_field("summary"),
        Some("reasoning.encrypted") => str_field("data"),
        Some("reasoning.text") => str_field("text"),
        _ => false,
    }
}

/// Consecutive text or summary pieces merge into one entry; encrypted entries stay discrete.
fn append_reasoning_detail(details: &mut Vec<Value>, detail: Value) {
    let kind = detail
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let (Some(last), Some(kind)) = (details.last_mut(), kind.as_deref()) {
        let same = last.get("type").and_then(Value::as_str) == Some(kind);
        let field = match kind {
            "reasoning.text" => Some("text"),
            "reasoning.summary" => Some("summary"),
            _ => None,
        };
        if same && let Some(field) = field {
            let addition = detail.get(field).and_then(Value::as_str).unwrap_or("");
            if let Some(Value::String(existing)) = last.get_mut(field) {
                existing.push_str(addition);
            }
            if let (Some(last), Some(new)) = (last.as_object_mut(), detail.as_object()) {
                for key in ["id", "format", "index", "signature"] {
                    let missing = last.get(key).is_none_or(|v| v.is_null() || v == "");
                    if missing && let Some(value) = new.get(key) {
                        last.insert(key.into(), value.clone());
                    }
                }
            }
            return;
        }
    }
    details.push(detail);
}

fn describe_error(error: &Value) -> String {
    match error.get("message").and_then(Value::as_str) {
        Some(message) => message.to_owned(),
        None => error.to_string(),
    }
}

/// An error object in a chunk: its `code` (a status as a number on gateways such as
/// OpenRouter, a name at OpenAI) and `type` decide the class.
fn error_failure(error: &Value) -> StreamFailure {
    let status = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok());
    StreamFailure::provider(
        status,
        &crate::http::error_codes(error),
        describe_error(error),
    )
}

/// An SSE `error` event: an error object, or text that is all there is to go by.
fn error_event_failure(data: &[u8]) -> StreamFailure {
    match serde_json::from_slice::<Value>(data) {
        Ok(value) => error_failure(value.get("error").unwrap_or(&value)),
        Err(_) => StreamFailure::from_text(String::from_utf8_lossy(data).into_owned()),
    }
}

fn map_finish_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "function_call" | "tool_calls" => (StopReason::ToolUse, None),
        other => (
            StopReason::Error,
            Some(format!("Provider finish_reason: {other}")),
        ),
    }
}

impl Decoder for CompletionsDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        with_repair(self, &event, out, Self::handle)
    }

    fn before_fail(&mut self, out: &mut Output) {
        self.store_reasoning_details(out);
    }

    fn finish(&mut self, out: &mut Output) -> Result<StopReason, StreamFailure> {
        self.store_reasoning_details(out);
        for index in 0..out.len() {
            match out.message.content.get(index) {
                Some(ContentBlock::Text(_)) => out.text_end(index),
                Some(ContentBlock::Thinking(_)) => out.thinking_end(index),
                Some(ContentBlock::ToolCall(_)) => out.toolcall_end(index),
                _ => {}
            }
        }
        let has_tool_calls = out
            .message
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolCall(_)));
        match &self.finish {
            None if !self.supports_finish_reason => Ok(if has_tool_calls {
                StopReason::ToolUse
            } else {
                StopReason::Stop
            }),
            None => Err(StreamFailure::network("Stream ended without finish_reason")),
            Some((StopReason::Error, message)) => {
                Err(StreamFailure::from_text(message.clone().unwrap_or_else(
                    || "Provider returned an error stop reason".to_owned(),
                )))
            }
            Some((reason, _)) => Ok(*reason),
        }
    }
}
