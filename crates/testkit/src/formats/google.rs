//! Gemini `streamGenerateContent?alt=sse`: `data:` lines, each a `GenerateContentResponse` with
//! one candidate holding one part; the last one carries `finishReason` and the full usage.

use serde_json::{Map, Value, json};

use super::RequestCtx;
use crate::script::{MockErrorKind, MockStop, MockUsage, ReplyPart, ScriptedReply, split_chars};
use crate::sse::SseEvent;

fn finish_reason(stop: &MockStop) -> String {
    match stop {
        MockStop::Stop | MockStop::ToolUse | MockStop::PauseTurn => "STOP".into(),
        MockStop::Length => "MAX_TOKENS".into(),
        MockStop::Refusal => "SAFETY".into(),
        MockStop::Other(other) => other.clone(),
    }
}

fn usage_json(usage: MockUsage, is_final: bool) -> Value {
    let prompt = usage.input + usage.cache_read;
    let mut obj = Map::new();
    obj.insert("promptTokenCount".into(), json!(prompt));
    if is_final {
        obj.insert(
            "candidatesTokenCount".into(),
            json!(usage.output.saturating_sub(usage.reasoning)),
        );
    }
    let total = if is_final {
        prompt + usage.output
    } else {
        prompt
    };
    obj.insert("totalTokenCount".into(), json!(total));
    if usage.cache_read > 0 {
        obj.insert("cachedContentTokenCount".into(), json!(usage.cache_read));
    }
    if is_final && usage.reasoning > 0 {
        obj.insert("thoughtsTokenCount".into(), json!(usage.reasoning));
    }
    Value::Object(obj)
}

/// The `parts` of the stream, one per chunk, in order.
fn parts(reply: &ScriptedReply) -> Vec<Value> {
    let mut out = Vec::new();
    // A signature that Gemini puts on the part after the thought (a function call).
    let mut carried_signature: Option<&str> = None;
    for (index, part) in reply.parts.iter().enumerate() {
        match part {
            // Only the Responses API has custom tool calls; `stream_events` turns them
            // into function calls for the other formats.
            ReplyPart::CustomToolCall { .. } => {}
            ReplyPart::Text(text) => {
                for piece in split_chars(text, reply.chunking.text_chars) {
                    out.push(json!({"text": piece}));
                }
            }
            ReplyPart::Thinking {
                text, signature, ..
            } => {
                let next_is_call =
                    matches!(reply.parts.get(index + 1), Some(ReplyPart::ToolCall { .. }));
                for piece in split_chars(text, reply.chunking.text_chars) {
                    out.push(json!({"text": piece, "thought": true}));
                }
                match (signature.as_deref(), next_is_call) {
                    (Some(sig), true) => carried_signature = Some(sig),
                    (Some(sig), false) => {
                        if let Some(Value::Object(last)) = out.last_mut() {
                            last.insert("thoughtSignature".into(), json!(sig));
                        }
                    }
                    (None, _) => {}
                }
            }
            ReplyPart::ToolCall {
                id,
                name,
                arguments_json,
            } => {
                // Gemini sends the whole call at once, with `args` as an object. Text that is
                // not JSON is passed as a string so a client's validation still sees it.
                let args = serde_json::from_str::<Value>(arguments_json)
                    .unwrap_or_else(|_| Value::String(arguments_json.clone()));
                let mut call = Map::new();
                if !id.is_empty() {
                    call.insert("id".into(), json!(id));
                }
                call.insert("name".into(), json!(name));
                call.insert("args".into(), args);
                let mut part = Map::new();
                part.insert("functionCall".into(), Value::Object(call));
                if let Some(sig) = carried_signature.take() {
                    part.insert("thoughtSignature".into(), json!(sig));
                }
                out.push(Value::Object(part));
            }
        }
    }
    out
}

pub(super) fn events(reply: &ScriptedReply, ctx: &RequestCtx) -> Vec<SseEvent> {
    let mut parts = parts(reply);
    if parts.is_empty() {
        // The final chunk still needs a candidate to carry finishReason.
        parts.push(Value::Null);
    }
    let last = parts.len() - 1;
    let finish = finish_reason(&reply.effective_stop());
    parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            let content_parts = if part.is_null() {
                json!([])
            } else {
                json!([part])
            };
            let mut candidate = Map::new();
            candidate.insert(
                "content".into(),
                json!({"parts": content_parts, "role": "model"}),
            );
            if i == last {
                candidate.insert("finishReason".into(), json!(finish));
            }
            candidate.insert("index".into(), json!(0));
            SseEvent::data(&json!({
                "candidates": [candidate],
                "usageMetadata": usage_json(reply.usage, i == last),
                "modelVersion": ctx.model,
                "responseId": format!("mock-response-{}", ctx.seq),
            }))
        })
        .collect()
}

fn status_for_kind(kind: MockErrorKind) -> (u16, &'static str) {
    match kind {
        MockErrorKind::Overloaded => (503, "UNAVAILABLE"),
        MockErrorKind::RateLimit => (429, "RESOURCE_EXHAUSTED"),
        MockErrorKind::Server => (500, "INTERNAL"),
        MockErrorKind::InvalidRequest | MockErrorKind::ContextOverflow => (400, "INVALID_ARGUMENT"),
    }
}

fn status_name(status: u16, kind: MockErrorKind) -> &'static str {
    match status {
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        504 => "DEADLINE_EXCEEDED",
        _ => status_for_kind(kind).1,
    }
}

/// Gemini reports a failure inside a stream as a bare JSON error object, not as an SSE event:
/// `@google/genai` recognises it by parsing each network chunk as JSON and throws an
/// `ApiError` for `{"error": {"code": 4xx|5xx, ...}}`. Pretty-printed like the service does.
pub(super) fn error_chunk(kind: MockErrorKind, message: &str) -> Vec<u8> {
    let (code, status) = status_for_kind(kind);
    let value = json!({"error": {"code": code, "message": message, "status": status}});
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text.into_bytes()
}

pub(super) fn error_body(status: u16, kind: MockErrorKind, message: &str) -> Value {
    json!({"error": {"code": status, "message": message, "status": status_name(status, kind)}})
}
