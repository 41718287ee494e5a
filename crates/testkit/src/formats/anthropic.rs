//! Anthropic Messages streaming: named events `message_start`, `content_block_start`, `ping`,
//! `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`, `error`.

use serde_json::{Value, json};

use super::{RequestCtx, initial_output_tokens};
use crate::script::{MockErrorKind, MockStop, ReplyPart, ScriptedReply, split_chars};
use crate::sse::SseEvent;

fn stop_reason(stop: &MockStop) -> String {
    match stop {
        MockStop::Stop => "end_turn".into(),
        MockStop::Length => "max_tokens".into(),
        MockStop::ToolUse => "tool_use".into(),
        MockStop::Refusal => "refusal".into(),
        MockStop::PauseTurn => "pause_turn".into(),
        MockStop::Other(other) => other.clone(),
    }
}

fn delta(index: usize, delta: Value) -> SseEvent {
    SseEvent::named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

pub(super) fn events(reply: &ScriptedReply, ctx: &RequestCtx) -> Vec<SseEvent> {
    let usage = reply.usage;
    let mut out = vec![SseEvent::named(
        "message_start",
        &json!({
            "type": "message_start",
            "message": {
                "id": format!("msg_mock_{}", ctx.seq),
                "type": "message",
                "role": "assistant",
                "model": ctx.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": usage.input,
                    "cache_creation_input_tokens": usage.cache_write,
                    "cache_read_input_tokens": usage.cache_read,
                    "output_tokens": initial_output_tokens(usage.output),
                    "service_tier": "standard",
                },
            },
        }),
    )];
    let ping = SseEvent::named("ping", &json!({"type": "ping"}));
    // The real service sends one ping right after the first content_block_start.
    let mut pinged = false;
    for (index, part) in reply.parts.iter().enumerate() {
        match part {
            // Only the Responses API has custom tool calls; `stream_events` turns them
            // into function calls for the other formats.
            ReplyPart::CustomToolCall { .. } => {}
            ReplyPart::Text(text) => {
                out.push(block_start(index, json!({"type": "text", "text": ""})));
                if !pinged {
                    out.push(ping.clone());
                    pinged = true;
                }
                for piece in split_chars(text, reply.chunking.text_chars) {
                    out.push(delta(index, json!({"type": "text_delta", "text": piece})));
                }
            }
            ReplyPart::Thinking {
                signature,
                redacted: true,
                ..
            } => {
                let data = signature.clone().unwrap_or_default();
                out.push(block_start(
                    index,
                    json!({"type": "redacted_thinking", "data": data}),
                ));
                if !pinged {
                    out.push(ping.clone());
                    pinged = true;
                }
            }
            ReplyPart::Thinking {
                text, signature, ..
            } => {
                out.push(block_start(
                    index,
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                ));
                if !pinged {
                    out.push(ping.clone());
                    pinged = true;
                }
                for piece in split_chars(text, reply.chunking.text_chars) {
                    out.push(delta(
                        index,
                        json!({"type": "thinking_delta", "thinking": piece}),
                    ));
                }
                if let Some(signature) = signature {
                    out.push(delta(
                        index,
                        json!({"type": "signature_delta", "signature": signature}),
                    ));
                }
            }
            ReplyPart::ToolCall {
                id,
                name,
                arguments_json,
            } => {
                out.push(block_start(
                    index,
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                ));
                if !pinged {
                    out.push(ping.clone());
                    pinged = true;
                }
                // The service opens every tool block with an empty partial_json delta.
                out.push(delta(
                    index,
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
                if !arguments_json.is_empty() {
                    for piece in split_chars(arguments_json, reply.chunking.args_chars) {
                        out.push(delta(
                            index,
                            json!({"type": "input_json_delta", "partial_json": piece}),
                        ));
                    }
                }
            }
        }
        out.push(SseEvent::named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    out.push(SseEvent::named(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(&reply.effective_stop()), "stop_sequence": null},
            "usage": {
                "input_tokens": usage.input,
                "cache_creation_input_tokens": usage.cache_write,
                "cache_read_input_tokens": usage.cache_read,
                "output_tokens": usage.output,
            },
        }),
    ));
    out.push(SseEvent::named(
        "message_stop",
        &json!({"type": "message_stop"}),
    ));
    out
}

fn block_start(index: usize, block: Value) -> SseEvent {
    SseEvent::named(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn type_for_kind(kind: MockErrorKind) -> &'static str {
    match kind {
        MockErrorKind::Overloaded => "overloaded_error",
        MockErrorKind::RateLimit => "rate_limit_error",
        MockErrorKind::Server => "api_error",
        MockErrorKind::InvalidRequest | MockErrorKind::ContextOverflow => "invalid_request_error",
    }
}

fn type_for_status(status: u16, kind: MockErrorKind) -> &'static str {
    match status {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        504 => "timeout_error",
        _ => type_for_kind(kind),
    }
}

pub(super) fn error_event(kind: MockErrorKind, message: &str, ctx: &RequestCtx) -> SseEvent {
    SseEvent::named(
        "error",
        &json!({
            "type": "error",
            "error": {"type": type_for_kind(kind), "message": message},
            "request_id": format!("req_mock_{}", ctx.seq),
        }),
    )
}

pub(super) fn error_body(status: u16, kind: MockErrorKind, message: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": type_for_status(status, kind), "message": message},
        "request_id": "req_mock_error",
    })
}
