//! Mistral chat streaming (`POST /v1/chat/completions` on `api.mistral.ai`): Chat Completions
//! chunks in Mistral's shapes. Text is a string `delta.content`; reasoning (Magistral, Mistral
//! Small 4) is `delta.content` as a list holding one `{"type":"thinking","thinking":[{"type":
//! "text","text"}]}` chunk; a tool call arrives whole in one chunk (`id` of nine letters and
//! digits, `function.arguments` the complete JSON text, `index`). The last chunk carries
//! `finish_reason` and `usage` together; `data: [DONE]` ends the stream. Errors, in a body or
//! in the stream, are `{"object":"error","message","type","param","code"}`.

use serde_json::{Value, json};

use super::RequestCtx;
use super::openai_completions::CREATED;
use crate::script::{MockErrorKind, MockStop, ReplyPart, ScriptedReply, split_chars};
use crate::sse::SseEvent;

fn finish_reason(stop: &MockStop) -> String {
    match stop {
        MockStop::Stop | MockStop::PauseTurn | MockStop::Refusal => "stop".into(),
        MockStop::Length => "length".into(),
        MockStop::ToolUse => "tool_calls".into(),
        MockStop::Other(other) => other.clone(),
    }
}

struct Chunker<'a> {
    ctx: &'a RequestCtx,
}

impl Chunker<'_> {
    fn chunk(&self, delta: Value, finish: Option<String>, usage: Option<Value>) -> SseEvent {
        let mut chunk = json!({
            "id": format!("mistral-mock-{}", self.ctx.seq),
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.ctx.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let (Some(usage), Some(object)) = (usage, chunk.as_object_mut()) {
            object.insert("usage".into(), usage);
        }
        SseEvent::data(&chunk)
    }
}

pub(super) fn events(reply: &ScriptedReply, ctx: &RequestCtx) -> Vec<SseEvent> {
    let c = Chunker { ctx };
    let mut out = vec![c.chunk(json!({"role": "assistant", "content": ""}), None, None)];
    let mut tool_index = 0usize;
    for part in &reply.parts {
        match part {
            // Only the Responses API has custom tool calls; `stream_events` turns them
            // into function calls for the other formats.
            ReplyPart::CustomToolCall { .. } => {}
            ReplyPart::Text(text) => {
                for piece in split_chars(text, reply.chunking.text_chars) {
                    if !piece.is_empty() {
                        out.push(c.chunk(json!({"content": piece}), None, None));
                    }
                }
            }
            // Mistral's reasoning has no signature or redaction: only the text is streamed.
            ReplyPart::Thinking { text, .. } => {
                for piece in split_chars(text, reply.chunking.text_chars) {
                    if !piece.is_empty() {
                        let thinking = json!([{"type": "thinking",
                            "thinking": [{"type": "text", "text": piece}]}]);
                        out.push(c.chunk(json!({"content": thinking}), None, None));
                    }
                }
            }
            ReplyPart::ToolCall {
                id,
                name,
                arguments_json,
            } => {
                let arguments = if arguments_json.is_empty() {
                    "{}"
                } else {
                    arguments_json
                };
                let call = json!({"id": id, "function": {"name": name, "arguments": arguments},
                    "index": tool_index});
                out.push(c.chunk(json!({"tool_calls": [call]}), None, None));
                tool_index += 1;
            }
        }
    }
    let usage = reply.usage;
    let prompt = usage.input + usage.cache_read + usage.cache_write;
    out.push(c.chunk(
        json!({"content": ""}),
        Some(finish_reason(&reply.effective_stop())),
        Some(json!({
            "prompt_tokens": prompt,
            "total_tokens": prompt + usage.output,
            "completion_tokens": usage.output,
        })),
    ));
    out.push(SseEvent::raw("[DONE]"));
    out
}

fn type_and_code(status: u16, kind: MockErrorKind) -> (&'static str, &'static str) {
    match (status, kind) {
        (401, _) => ("unauthorized", "1000"),
        (404, _) => ("invalid_model", "1500"),
        (_, MockErrorKind::RateLimit) => ("rate_limited", "1300"),
        (_, MockErrorKind::ContextOverflow) => ("invalid_request_prompt", "3051"),
        (_, MockErrorKind::InvalidRequest) => ("invalid_request_error", "3000"),
        (_, MockErrorKind::Overloaded) => ("service_tier_capacity_exceeded", "3505"),
        (_, MockErrorKind::Server) => ("internal_server_error", "3700"),
    }
}

pub(super) fn error_object(status: u16, kind: MockErrorKind, message: &str) -> Value {
    let (kind_type, code) = type_and_code(status, kind);
    json!({"object": "error", "message": message, "type": kind_type, "param": null,
        "code": code})
}

pub(super) fn error_event(kind: MockErrorKind, message: &str) -> SseEvent {
    SseEvent::data(&error_object(0, kind, message))
}
