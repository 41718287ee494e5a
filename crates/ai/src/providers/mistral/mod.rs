//! `mistral-conversations`: Mistral's chat API (`POST {baseUrl}/v1/chat/completions`).
//!
//! It looks like Chat Completions but differs where it matters, so it has its own request and
//! decoder (SSE, partial JSON and the output builder are shared): reasoning is requested with
//! `prompt_mode: "reasoning"` (Magistral) or `reasoning_effort` (Mistral Small 4, Medium 3.5)
//! and streamed as `thinking` content chunks, replayed the same way; tool-call ids must be
//! nine letters or digits; an assistant message carries `prefix: false`; tool results are
//! content lists; error responses read `Mistral API error (<status>): <body>`. The reference
//! reaches it through Mistral's SDK, whose request this module writes field for field.

mod stream;

use std::cell::RefCell;
use std::collections::HashMap;

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::ImageContent;
use knightcode_protocol::ToolDeclaration;
use knightcode_protocol::ToolResultMessage;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::WireFormat;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::http::join_url;
use crate::model::Model;
use crate::model::ThinkingLevel;
use crate::options::Context;
use crate::options::StreamOptions;
use crate::options::clamp_max_tokens_to_context;
use crate::transform::LlmMessage;
use crate::transform::UserContent;
use crate::transform::prepare_messages;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |model, _, _| Box::new(stream::MistralDecoder::new(model)),
    error_style: ErrorStyle::Mistral,
};

/// Mistral rejects tool-call ids that are not exactly this many letters and digits.
const TOOL_CALL_ID_LENGTH: usize = 9;

/// Models that take `reasoning_effort`; other reasoning models take `prompt_mode`.
const REASONING_EFFORT_MODELS: [&str; 3] = [
    "mistral-small-2603",
    "mistral-small-latest",
    "mistral-medium-3.5",
];

/// The reference's `shortHash` (two 32-bit multiplicative hashes over UTF-16 code units,
/// printed in base 36), so that ids derived from the same history match its ids.
fn pi_short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in text.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut value: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(value % 36) as usize]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

/// A Mistral id for `id`: kept when it already is nine letters and digits, else nine
/// characters of a hash (`attempt` > 0 on a collision).
pub(crate) fn derive_tool_call_id(id: &str, attempt: usize) -> String {
    let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && normalized.len() == TOOL_CALL_ID_LENGTH {
        return normalized;
    }
    let base = if normalized.is_empty() {
        id
    } else {
        &normalized
    };
    let seed = if attempt == 0 {
        base.to_owned()
    } else {
        format!("{base}:{attempt}")
    };
    pi_short_hash(&seed)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(TOOL_CALL_ID_LENGTH)
        .collect()
}

/// Maps ids of other providers to Mistral ids, one id per original, never two alike.
#[derive(Default)]
struct IdNormalizer {
    forward: HashMap<String, String>,
    owners: HashMap<String, String>,
}

impl IdNormalizer {
    fn normalize(&mut self, id: &str) -> String {
        if let Some(existing) = self.forward.get(id) {
            return existing.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive_tool_call_id(id, attempt);
            let free = self.owners.get(&candidate).is_none_or(|owner| owner == id);
            if free {
                self.forward.insert(id.to_owned(), candidate.clone());
                self.owners.insert(candidate.clone(), id.to_owned());
                return candidate;
            }
            attempt += 1;
        }
    }
}

fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    let key = options
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .ok_or_else(|| crate::auth::no_api_key_failure(&model.provider))?;
    let level = if model.reasoning && options.thinking != ThinkingLevel::Off {
        model.clamp_thinking_level(options.thinking)
    } else {
        ThinkingLevel::Off
    };
    let requested = options
        .max_tokens
        .unwrap_or_else(|| crate::options::default_max_tokens(model));

    // Key order as Mistral's SDK serializes the request.
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if requested > 0 {
        let max_tokens = clamp_max_tokens_to_context(model, context, requested);
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    body.insert("stream".into(), json!(true));
    body.insert("messages".into(), Value::Array(messages(model, context)));
    if !context.tools.is_empty() {
        body.insert("tools".into(), tools(&context.tools));
    }
    if level != ThinkingLevel::Off {
        if REASONING_EFFORT_MODELS.contains(&model.id.as_str()) {
            let effort = model.level_map(level).value().unwrap_or("high");
            body.insert("reasoning_effort".into(), json!(effort));
        } else {
            body.insert("prompt_mode".into(), json!("reasoning"));
        }
    }
    if let Some(params) = options.merged_sampling_params(model, level) {
        body.extend(params);
    }

    let mut headers = base_headers(model, user_agent);
    headers.merge(Some(&options.headers));
    // Mistral reuses its prefix cache across requests that name the same affinity.
    if let Some(session) = &options.session_id
        && !headers.has("x-affinity")
    {
        headers.set("x-affinity", session.clone());
    }
    if !headers.has("authorization") {
        headers.set("authorization", format!("Bearer {key}"));
    }
    headers.set("accept", "text/event-stream");
    headers.set("content-type", "application/json");
    let body = serde_json::to_vec(&Value::Object(body))
        .map_err(|e| StreamFailure::other(e.to_string()))?;
    Ok(HttpRequest {
        url: join_url(&model.base_url, "/v1/chat/completions"),
        headers,
        body,
    })
}

fn tools(tools: &[ToolDeclaration]) -> Value {
    tools
        .iter()
        .map(|tool| {
            json!({"type": "function", "function": {
                "name": tool.name,
                "description": tool.description,
                "strict": false,
                "parameters": tool.parameters,
            }})
        })
        .collect()
}

fn image_part(image: &ImageContent) -> Value {
    json!({"type": "image_url", "image_url": format!("data:{};base64,{}", image.mime_type, image.data)})
}

fn messages(model: &Model, context: &Context) -> Vec<Value> {
    let ids = RefCell::new(IdNormalizer::default());
    let normalize = |id: &str, _: &AssistantMessage| ids.borrow_mut().normalize(id);
    let prepared = prepare_messages(&context.messages, model, Some(&normalize));
    let images = model.supports_images();
    let mut out = Vec::with_capacity(prepared.len() + 1);
    if let Some(prompt) = &context.system_prompt {
        out.push(json!({"role": "system", "content": prompt}));
    }
    for message in &prepared {
        match message {
            LlmMessage::User(UserContent::Text(text)) => {
                out.push(json!({"role": "user", "content": text}));
            }
            LlmMessage::User(UserContent::Blocks(blocks)) => {
                let parts: Vec<Value> = blocks
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::Text(t) => Some(json!({"type": "text", "text": t.text})),
                        ContentBlock::Image(image) if images => Some(image_part(image)),
                        _ => None,
                    })
                    .collect();
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "content": parts}));
                }
            }
            LlmMessage::Assistant(assistant) => out.extend(assistant_message(assistant)),
            LlmMessage::ToolResult(result) => out.push(tool_message(result, images)),
        }
    }
    out
}

fn assistant_message(message: &AssistantMessage) -> Option<Value> {
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for block in message.content.iter() {
        match block {
            ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                parts.push(json!({"type": "text", "text": t.text}));
            }
            ContentBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                parts.push(json!({"type": "thinking",
                    "thinking": [{"type": "text", "text": t.thinking}]}));
            }
            ContentBlock::ToolCall(call) => calls.push(json!({
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": serde_json::to_string(&call.arguments).unwrap_or_default(),
                },
                "index": 0,
            })),
            _ => {}
        }
    }
    if parts.is_empty() && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    if !parts.is_empty() {
        out.insert("content".into(), Value::Array(parts));
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    out.insert("prefix".into(), json!(false));
    Some(Value::Object(out))
}

fn tool_message(result: &ToolResultMessage, images: bool) -> Value {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect();
    let text = text.join("\n");
    let text = text.trim();
    let has_images = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Image(_)));
    let error = if result.is_error { "[tool error] " } else { "" };
    let body = if !text.is_empty() {
        let omitted = if has_images && !images {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        format!("{error}{text}{omitted}")
    } else if has_images && images {
        format!("{error}(see attached image)")
    } else if has_images {
        format!("{error}(image omitted: model does not support images)")
    } else {
        format!("{error}(no tool output)")
    };
    let mut content = vec![json!({"type": "text", "text": body})];
    if images {
        for block in result.content.iter() {
            if let ContentBlock::Image(image) = block {
                content.push(image_part(image));
            }
        }
    }
    json!({
        "role": "tool",
        "content": content,
        "tool_call_id": result.tool_call_id,
        "name": result.tool_name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_matches_the_reference() {
        // Values printed by pi-ai 0.73.1's `shortHash`.
        assert_eq!(pi_short_hash("toolcall:0"), "1nlso9v7di2pi");
        assert_eq!(pi_short_hash(""), "k4n83c7h0j2b");
        assert_eq!(pi_short_hash("abcDEF123:1"), "11syy0iwkn6g3");
    }

    #[test]
    fn ids_become_nine_letters_and_digits() {
        assert_eq!(derive_tool_call_id("abcDEF123", 0), "abcDEF123");
        assert_eq!(derive_tool_call_id("abc-DEF-123", 0), "abcDEF123");
        let long = derive_tool_call_id("call_0123456789|fc_abcdef", 0);
        assert_eq!(long.len(), 9);
        assert!(long.chars().all(|c| c.is_ascii_alphanumeric()));
        let mut ids = IdNormalizer::default();
        let first = ids.normalize("abc-DEF-123");
        let second = ids.normalize("abc_DEF_123");
        assert_eq!(first, "abcDEF123");
        assert_eq!(second, "11syy0iwk");
        assert_eq!(ids.normalize("abc-DEF-123"), first);
    }
}
