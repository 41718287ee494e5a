//! OpenAI Chat Completions streaming: `data: {chat.completion.chunk}` lines, a final usage chunk
//! with empty `choices`, then `data: [DONE]`.

use serde_json::{Map, Value, json};

use super::RequestCtx;
use crate::script::{MockErrorKind, MockStop, MockUsage, ReplyPart, ScriptedReply, split_chars};
use crate::sse::SseEvent;

/// Fixed creation time keeps streams byte-for-byte reproducible across runs.
pub(super) const CREATED: u64 = 1_700_000_000;

fn finish_reason(stop: &MockStop) -> String {
    match stop {
        MockStop::Stop | MockStop::PauseTurn => "stop".into(),
        MockStop::Length => "length".into(),
        MockStop::ToolUse => "tool_calls".into(),
        MockStop::Refusal => "content_filter".into(),
        MockStop::Other(other) => other.clone(),
    }
}

struct Chunker<'a> {
    ctx: &'a RequestCtx,
}

impl Chunker<'_> {
    fn chunk(&self, choices: Value, usage: Value) -> SseEvent {
        SseEvent::data(&json!({
            "id": format!("chatcmpl-mock-{}", self.ctx.seq),
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.ctx.model,
            "system_fingerprint": "fp_mock",
            "choices": choices,
            "usage": usage,
        }))
    }

    fn delta(&self, delta: Value) -> SseEvent {
        self.chunk(
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]),
            Value::Null,
        )
    }
}

fn usage_json(usage: MockUsage) -> Value {
    // OpenRouter-style accounting when there are cache writes: `cached_tokens` counts hits plus
    // writes and `cache_write_tokens` the writes, which is what pi subtracts back out.
    let mut prompt_details = Map::new();
    prompt_details.insert(
        "cached_tokens".into(),
        json!(usage.cache_read + usage.cache_write),
    );
    if usage.cache_write > 0 {
        prompt_details.insert("cache_write_tokens".into(), json!(usage.cache_write));
    }
    prompt_details.insert("audio_tokens".into(), json!(0));
    json!({
        "prompt_tokens": usage.input + usage.cache_read + usage.cache_write,
        "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.cache_read + usage.cache_write + usage.output,
        "prompt_tokens_details": prompt_details,
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    })
}

pub(super) fn events(reply: &ScriptedReply, ctx: &RequestCtx) -> Vec<SseEvent> {
    let c = Chunker { ctx };
    let mut out = vec![c.delta(json!({"role": "assistant", "content": "", "refusal": null}))];
    let mut tool_index = 0usize;
    for part in &reply.parts {
        match part {
            // Only the Responses API has custom tool calls; `stream_events` turns them
            // into function calls for the other formats.
            ReplyPart::CustomToolCall { .. } => {}
            ReplyPart::Text(text) => {
                for piece in split_chars(text, reply.chunking.text_chars) {
                    if !piece.is_empty() {
                        out.push(c.delta(json!({"content": piece})));
                    }
                }
            }
            // Chat Completions has no redacted or signed reasoning: only the text is streamed,
            // as `reasoning_content` (DeepSeek, llama.cpp, vLLM).
            ReplyPart::Thinking { text, .. } => {
                for piece in split_chars(text, reply.chunking.text_chars) {
                    if !piece.is_empty() {
                        out.push(c.delta(json!({"reasoning_content": piece})));
                    }
                }
            }
            ReplyPart::ToolCall {
                id,
                name,
                arguments_json,
            } => {
                out.push(c.delta(json!({"tool_calls": [{
                    "index": tool_index,
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]})));
                if !arguments_json.is_empty() {
                    for piece in split_chars(arguments_json, reply.chunking.args_chars) {
                        out.push(c.delta(json!({"tool_calls": [{
                            "index": tool_index,
                            "function": {"arguments": piece},
                        }]})));
                    }
                }
                tool_index += 1;
            }
        }
    }
    out.push(c.chunk(
        json!([{
            "index": 0,
            "delta": {},
            "logprobs": null,
            "finish_reason": finish_reason(&reply.effective_stop()),
        }]),
        Value::Null,
    ));
    out.push(c.chunk(json!([]), usage_json(reply.usage)));
    out.push(SseEvent::raw("[DONE]"));
    out
}

fn type_and_code(status: u16, kind: MockErrorKind) -> (&'static str, Value) {
    match (status, kind) {
        (401, _) => ("invalid_request_error", json!("invalid_api_key")),
        (404, _) => ("invalid_request_error", json!("model_not_found")),
        (_, MockErrorKind::RateLimit) => ("requests", json!("rate_limit_exceeded")),
        (_, MockErrorKind::ContextOverflow) => {
            ("invalid_request_error", json!("context_length_exceeded"))
        }
        (_, MockErrorKind::InvalidRequest) => ("invalid_request_error", Value::Null),
        (_, MockErrorKind::Overloaded | MockErrorKind::Server) => ("server_error", Value::Null),
    }
}

fn error_object(status: u16, kind: MockErrorKind, message: &str) -> Value {
    let (kind_type, code) = type_and_code(status, kind);
    json!({"message": message, "type": kind_type, "param": null, "code": code})
}

/// The OpenAI SDK raises an `APIError` for any data chunk carrying an `error` object.
pub(super) fn error_event(kind: MockErrorKind, message: &str) -> SseEvent {
    SseEvent::data(&json!({"error": error_object(0, kind, message)}))
}

pub(super) fn error_body(status: u16, kind: MockErrorKind, message: &str) -> Value {
    json!({"error": error_object(status, kind, message)})
}
