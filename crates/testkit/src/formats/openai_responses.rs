//! OpenAI Responses streaming: named `response.*` events with a running `sequence_number`,
//! one output item per reply part, ending in `response.completed` (or `response.incomplete`).

use serde_json::{Map, Value, json};

use super::RequestCtx;
use super::openai_completions::CREATED;
use crate::script::{MockErrorKind, MockStop, MockUsage, ReplyPart, ScriptedReply, split_chars};
use crate::sse::SseEvent;

/// Collects events and numbers them in order, as the service does.
struct Events {
    out: Vec<SseEvent>,
}

impl Events {
    /// Adds an event; `fields` must be a JSON object. `type` goes first and `sequence_number`
    /// last, mirroring the service's key order.
    fn push(&mut self, kind: &str, fields: Value) {
        let mut obj = Map::new();
        obj.insert("type".into(), json!(kind));
        if let Value::Object(fields) = fields {
            obj.extend(fields);
        }
        obj.insert("sequence_number".into(), json!(self.out.len()));
        self.out.push(SseEvent::named(kind, &Value::Object(obj)));
    }
}

fn response_object(ctx: &RequestCtx, status: &str, output: &[Value], usage: Value) -> Value {
    json!({
        "id": format!("resp_mock_{}", ctx.seq),
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": ctx.model,
        "output": output,
        "parallel_tool_calls": true,
        "store": false,
        "usage": usage,
    })
}

fn usage_json(usage: MockUsage) -> Value {
    let input = usage.input + usage.cache_read + usage.cache_write;
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": usage.cache_read},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": input + usage.output,
    })
}

pub(super) fn events(reply: &ScriptedReply, ctx: &RequestCtx) -> Vec<SseEvent> {
    let mut ev = Events { out: Vec::new() };
    let mut output: Vec<Value> = Vec::new();
    let in_progress = response_object(ctx, "in_progress", &[], Value::Null);
    ev.push("response.created", json!({"response": in_progress}));
    ev.push("response.in_progress", json!({"response": in_progress}));

    for (output_index, part) in reply.parts.iter().enumerate() {
        let done_item = match part {
            ReplyPart::Thinking {
                text, signature, ..
            } => {
                let item_id = format!("rs_mock_{}_{output_index}", ctx.seq);
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": {
                        "id": item_id, "type": "reasoning", "summary": [],
                    }}),
                );
                let mut summary = Vec::new();
                if !text.is_empty() {
                    let at = json!({"item_id": item_id, "output_index": output_index, "summary_index": 0});
                    ev.push(
                        "response.reasoning_summary_part.added",
                        with(&at, json!({"part": {"type": "summary_text", "text": ""}})),
                    );
                    for piece in split_chars(text, reply.chunking.text_chars) {
                        ev.push(
                            "response.reasoning_summary_text.delta",
                            with(&at, json!({"delta": piece})),
                        );
                    }
                    ev.push(
                        "response.reasoning_summary_text.done",
                        with(&at, json!({"text": text})),
                    );
                    let part = json!({"type": "summary_text", "text": text});
                    ev.push(
                        "response.reasoning_summary_part.done",
                        with(&at, json!({"part": part})),
                    );
                    summary.push(part);
                }
                let mut item = json!({"id": item_id, "type": "reasoning", "summary": summary});
                if let (Some(signature), Value::Object(obj)) = (signature, &mut item) {
                    obj.insert("encrypted_content".into(), json!(signature));
                }
                item
            }
            ReplyPart::Text(text) => {
                let item_id = format!("msg_mock_{}_{output_index}", ctx.seq);
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": {
                        "id": item_id, "type": "message", "status": "in_progress",
                        "content": [], "role": "assistant",
                    }}),
                );
                let at =
                    json!({"item_id": item_id, "output_index": output_index, "content_index": 0});
                ev.push(
                    "response.content_part.added",
                    with(
                        &at,
                        json!({"part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}}),
                    ),
                );
                for piece in split_chars(text, reply.chunking.text_chars) {
                    ev.push(
                        "response.output_text.delta",
                        with(&at, json!({"delta": piece, "logprobs": []})),
                    );
                }
                ev.push(
                    "response.output_text.done",
                    with(&at, json!({"text": text, "logprobs": []})),
                );
                let part =
                    json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text});
                ev.push(
                    "response.content_part.done",
                    with(&at, json!({"part": part})),
                );
                json!({
                    "id": item_id, "type": "message", "status": "completed",
                    "content": [part], "role": "assistant",
                })
            }
            ReplyPart::ToolCall {
                id,
                name,
                arguments_json,
            } => {
                let item_id = format!("fc_mock_{}_{output_index}", ctx.seq);
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": {
                        "id": item_id, "type": "function_call", "status": "in_progress",
                        "arguments": "", "call_id": id, "name": name,
                    }}),
                );
                let at = json!({"item_id": item_id, "output_index": output_index});
                if !arguments_json.is_empty() {
                    for piece in split_chars(arguments_json, reply.chunking.args_chars) {
                        ev.push(
                            "response.function_call_arguments.delta",
                            with(&at, json!({"delta": piece})),
                        );
                    }
                }
                ev.push(
                    "response.function_call_arguments.done",
                    with(&at, json!({"arguments": arguments_json})),
                );
                json!({
                    "id": item_id, "type": "function_call", "status": "completed",
                    "arguments": arguments_json, "call_id": id, "name": name,
                })
            }
            ReplyPart::CustomToolCall { id, name, input } => {
                let item_id = format!("ctc_mock_{}_{output_index}", ctx.seq);
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": {
                        "id": item_id, "type": "custom_tool_call", "status": "in_progress",
                        "call_id": id, "input": "", "name": name,
                    }}),
                );
                let at = json!({"item_id": item_id, "output_index": output_index});
                if !input.is_empty() {
                    for piece in split_chars(input, reply.chunking.args_chars) {
                        ev.push(
                            "response.custom_tool_call_input.delta",
                            with(&at, json!({"delta": piece})),
                        );
                    }
                }
                ev.push(
                    "response.custom_tool_call_input.done",
                    with(&at, json!({"input": input})),
                );
                json!({
                    "id": item_id, "type": "custom_tool_call", "status": "completed",
                    "call_id": id, "input": input, "name": name,
                })
            }
        };
        ev.push(
            "response.output_item.done",
            json!({"output_index": output_index, "item": done_item}),
        );
        output.push(done_item);
    }

    let usage = usage_json(reply.usage);
    let incomplete_reason = match reply.effective_stop() {
        MockStop::Length => Some("max_output_tokens"),
        MockStop::Refusal => Some("content_filter"),
        _ => None,
    };
    match incomplete_reason {
        None => ev.push(
            "response.completed",
            json!({"response": response_object(ctx, "completed", &output, usage)}),
        ),
        Some(reason) => {
            let mut response = response_object(ctx, "incomplete", &output, usage);
            if let Value::Object(obj) = &mut response {
                obj.insert("incomplete_details".into(), json!({"reason": reason}));
            }
            ev.push("response.incomplete", json!({"response": response}));
        }
    }
    ev.out
}

/// `base` (an object) extended with the fields of `extra` (an object).
fn with(base: &Value, extra: Value) -> Value {
    let mut merged = base.clone();
    if let (Value::Object(merged), Value::Object(extra)) = (&mut merged, extra) {
        merged.extend(extra);
    }
    merged
}

fn code(kind: MockErrorKind) -> &'static str {
    match kind {
        MockErrorKind::Overloaded | MockErrorKind::Server => "server_error",
        MockErrorKind::RateLimit => "rate_limit_exceeded",
        MockErrorKind::InvalidRequest => "invalid_request_error",
        MockErrorKind::ContextOverflow => "context_length_exceeded",
    }
}

/// The Responses stream reports failures as a top-level `error` event, numbered after the
/// `events_sent` events before it.
pub(super) fn error_event(kind: MockErrorKind, message: &str, events_sent: usize) -> SseEvent {
    SseEvent::named(
        "error",
        &json!({
            "type": "error",
            "code": code(kind),
            "message": message,
            "param": null,
            "sequence_number": events_sent,
        }),
    )
}
