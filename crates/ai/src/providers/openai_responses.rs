//! `openai-responses`: OpenAI's Responses API (stateless: `store: false`, encrypted reasoning
//! items replayed from thinking signatures).

use std::borrow::Cow;
use std::collections::HashMap;

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::Tokens;
use serde::Deserialize;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::Fail;
use super::WireFormat;
use super::parse_event;
use super::with_repair;
use crate::driver::Decoder;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::Headers;
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::http::join_url;
use crate::model::LevelMapping;
use crate::model::Model;
use crate::model::ThinkingLevel;
use crate::options::CacheRetention;
use crate::options::Context;
use crate::options::StreamOptions;
use crate::options::clamp_max_tokens_to_context;
use crate::output::Output;
use crate::sse::SseEvent;
use crate::transform::LlmMessage;
use crate::transform::UserContent;
use crate::transform::prepare_messages;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |_| Box::new(ResponsesDecoder::default()),
    error_style: ErrorStyle::ErrorMessage,
};

/// Providers whose `call|item` tool-call ids the Responses API accepts back.
const TOOL_CALL_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];
/// The API rejects `max_output_tokens` below 16.
const MIN_OUTPUT_TOKENS: u64 = 16;

struct Compat {
    developer_role: bool,
    openrouter_affinity: bool,
    long_cache_retention: bool,
    strict_mode: bool,
    explicit_prompt_cache: bool,
    max_output_tokens: bool,
}

impl Compat {
    fn of(model: &Model) -> Self {
        let flag = |key: &str, default: bool| model.compat_bool(key).unwrap_or(default);
        let openrouter = model.provider == "openrouter" || model.base_url.contains("openrouter.ai");
        Self {
            developer_role: flag("supportsDeveloperRole", true),
            openrouter_affinity: model
                .compat_str("sessionAffinityFormat")
                .map_or(openrouter, |f| f == "openrouter"),
            long_cache_retention: flag("supportsLongCacheRetention", true),
            strict_mode: flag("supportsStrictMode", false),
            explicit_prompt_cache: flag("supportsExplicitPromptCacheMode", false),
            max_output_tokens: flag("supportsMaxOutputTokens", true),
        }
    }
}

fn sanitize_id_part(part: &str) -> String {
    let sanitized: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    sanitized.trim_end_matches('_').to_owned()
}

fn short_hash(text: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

/// Tool-call ids from other models: `call|item` pairs keep an `fc_` item id the API accepts.
fn normalize_tool_call_id(id: &str, model: &Model, source: &AssistantMessage) -> String {
    if !TOOL_CALL_PROVIDERS.contains(&model.provider.as_str()) {
        return sanitize_id_part(id);
    }
    let Some((call, item)) = id.split_once('|') else {
        return sanitize_id_part(id);
    };
    let foreign = source.provider != model.provider || source.api != model.api;
    let mut item = if foreign {
        format!("fc_{}", short_hash(item))
            .chars()
            .take(64)
            .collect()
    } else {
        sanitize_id_part(item)
    };
    if !item.starts_with("fc_") {
        item = sanitize_id_part(&format!("fc_{item}"));
    }
    format!("{}|{item}", sanitize_id_part(call))
}

pub(crate) fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    let compat = Compat::of(model);
    let retention = options.cache_retention();
    let level = if model.reasoning && options.thinking != ThinkingLevel::Off {
        model.clamp_thinking_level(options.thinking)
    } else {
        ThinkingLevel::Off
    };
    let max_tokens = clamp_max_tokens_to_context(
        model,
        context,
        options.max_tokens.unwrap_or(model.max_tokens),
    );

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert(
        "input".into(),
        Value::Array(convert_input(model, context, &compat)),
    );
    body.insert("stream".into(), json!(true));
    if retention != CacheRetention::None
        && let Some(session) = &options.session_id
    {
        body.insert(
            "prompt_cache_key".into(),
            json!(session.chars().take(64).collect::<String>()),
        );
    }
    let long = retention == CacheRetention::Long && compat.long_cache_retention;
    if long && !compat.explicit_prompt_cache {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.explicit_prompt_cache {
        if retention == CacheRetention::None {
            body.insert("prompt_cache_options".into(), json!({"mode": "explicit"}));
        } else if long {
            body.insert("prompt_cache_options".into(), json!({"ttl": "30m"}));
        }
    }
    body.insert("store".into(), json!(false));
    if max_tokens > 0 && compat.max_output_tokens {
        body.insert(
            "max_output_tokens".into(),
            json!(max_tokens.max(MIN_OUTPUT_TOKENS)),
        );
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                let mut out = Map::new();
                out.insert("type".into(), json!("function"));
                out.insert("name".into(), json!(tool.name));
                out.insert("description".into(), json!(tool.description));
                out.insert("parameters".into(), tool.parameters.clone());
                if compat.strict_mode {
                    out.insert("strict".into(), json!(false));
                }
                Value::Object(out)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning {
        if level != ThinkingLevel::Off {
            let effort = model
                .level_map(level)
                .value()
                .unwrap_or(level.as_str())
                .to_owned();
            body.insert(
                "reasoning".into(),
                json!({"effort": effort, "summary": "auto"}),
            );
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        } else if model.provider != "github-copilot"
            && *model.level_map(ThinkingLevel::Off) != LevelMapping::Unsupported
        {
            let off = model
                .level_map(ThinkingLevel::Off)
                .value()
                .unwrap_or("none");
            body.insert("reasoning".into(), json!({"effort": off}));
        }
        if model.provider == "xai" {
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
    }
    if let Some(params) = options.merged_sampling_params(model, level) {
        for (key, value) in params {
            body.insert(key, value);
        }
    }

    let mut headers = Headers::default();
    match options.api_key.as_deref().filter(|k| !k.is_empty()) {
        Some(key) => headers.set("Authorization", format!("Bearer {key}")),
        None => {
            let mut probe = base_headers(model, user_agent);
            probe.merge(Some(&options.headers));
            if !(probe.has("authorization") || probe.has("cf-aig-authorization")) {
                return Err(crate::auth::no_api_key_failure(&model.provider));
            }
        }
    }
    for (name, value) in base_headers(model, user_agent).iter() {
        headers.set(name, value);
    }
    if retention != CacheRetention::None
        && let Some(session) = &options.session_id
    {
        if compat.openrouter_affinity {
            headers.set("x-session-id", session.clone());
        } else {
            headers.set("session_id", session.clone());
            headers.set("x-client-request-id", session.clone());
        }
    }
    headers.merge(Some(&options.headers));
    headers.set("content-type", "application/json");

    let body = serde_json::to_vec(&Value::Object(body))
        .map_err(|e| StreamFailure::other(e.to_string()))?;
    Ok(HttpRequest {
        url: join_url(&model.base_url, "/responses"),
        headers,
        body,
    })
}

/// `{"v":1,"id":...,"phase"?}` or a legacy plain id.
fn parse_text_signature(signature: Option<&str>) -> Option<(String, Option<String>)> {
    let signature = signature?;
    if signature.starts_with('{')
        && let Ok(value) = serde_json::from_str::<Value>(signature)
        && value.get("v").and_then(Value::as_u64) == Some(1)
        && let Some(id) = value.get("id").and_then(Value::as_str)
    {
        let phase = value
            .get("phase")
            .and_then(Value::as_str)
            .filter(|p| matches!(*p, "commentary" | "final_answer"))
            .map(str::to_owned);
        return Some((id.to_owned(), phase));
    }
    Some((signature.to_owned(), None))
}

fn image_item(image: &knightcode_protocol::ImageContent) -> Value {
    json!({
        "type": "input_image",
        "detail": "auto",
        "image_url": format!("data:{};base64,{}", image.mime_type, image.data),
    })
}

fn tool_output(model: &Model, blocks: &[ContentBlock]) -> Value {
    let text: Vec<&str> = blocks.iter().filter_map(ContentBlock::as_text).collect();
    let text = text.join("\n");
    let images: Vec<&knightcode_protocol::ImageContent> = blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Image(i) => Some(i),
            _ => None,
        })
        .collect();
    if images.is_empty() || !model.supports_images() {
        let text = if !text.is_empty() {
            text
        } else if !images.is_empty() {
            "(see attached image)".to_owned()
        } else {
            "(no tool output)".to_owned()
        };
        return json!(text);
    }
    let mut out = Vec::new();
    if !text.is_empty() {
        out.push(json!({"type": "input_text", "text": text}));
    }
    out.extend(images.into_iter().map(image_item));
    Value::Array(out)
}

fn convert_input(model: &Model, context: &Context, compat: &Compat) -> Vec<Value> {
    let normalize = |id: &str, source: &AssistantMessage| normalize_tool_call_id(id, model, source);
    let messages = prepare_messages(&context.messages, model, Some(&normalize));
    let mut out = Vec::new();
    if let Some(prompt) = &context.system_prompt {
        let role = if model.reasoning && compat.developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": prompt}));
    }
    for (message_index, message) in messages.iter().enumerate() {
        match message {
            LlmMessage::User(UserContent::Text(text)) => out.push(json!({
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            })),
            LlmMessage::User(UserContent::Blocks(blocks)) => {
                let content: Vec<Value> = blocks
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => {
                            Some(json!({"type": "input_text", "text": t.text}))
                        }
                        ContentBlock::Image(i) => Some(image_item(i)),
                        _ => None,
                    })
                    .collect();
                if !content.is_empty() {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
            LlmMessage::Assistant(assistant) => {
                convert_assistant(model, assistant, message_index, &mut out);
            }
            LlmMessage::ToolResult(result) => {
                let call_id = result.tool_call_id.split('|').next().unwrap_or_default();
                out.push(json!({
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": tool_output(model, &result.content),
                }));
            }
        }
    }
    out
}

fn convert_assistant(
    model: &Model,
    message: &AssistantMessage,
    index: usize,
    out: &mut Vec<Value>,
) {
    let same_provider_api = message.provider == model.provider && message.api == model.api;
    let same_model = same_provider_api && message.model == model.id;
    let different_model = same_provider_api && message.model != model.id;
    let mut text_index = 0;
    for block in message.content.iter() {
        match block {
            ContentBlock::Thinking(t) => {
                // The signature is the reasoning item as received (encrypted content included).
                if let Some(item) = t
                    .thinking_signature
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    .filter(Value::is_object)
                {
                    out.push(item);
                }
            }
            ContentBlock::Text(t) => {
                let parsed = parse_text_signature(t.text_signature.as_deref());
                let fallback = if text_index == 0 {
                    format!("msg_kc_{index}")
                } else {
                    format!("msg_kc_{index}_{text_index}")
                };
                text_index += 1;
                let (id, phase) = match parsed {
                    Some((id, phase)) if id.chars().count() > 64 => {
                        (format!("msg_{}", short_hash(&id)), phase)
                    }
                    Some((id, phase)) if !id.is_empty() => (id, phase),
                    _ => (fallback, None),
                };
                let mut item = Map::new();
                item.insert("type".into(), json!("message"));
                item.insert("role".into(), json!("assistant"));
                item.insert(
                    "content".into(),
                    json!([{"type": "output_text", "text": t.text, "annotations": []}]),
                );
                item.insert("status".into(), json!("completed"));
                item.insert("id".into(), json!(id));
                if let Some(phase) = phase {
                    item.insert("phase".into(), json!(phase));
                }
                out.push(Value::Object(item));
            }
            ContentBlock::ToolCall(call) => {
                let mut parts = call.id.split('|');
                let call_id = parts.next().unwrap_or_default();
                // Items of another model, or ids that are not `fc_*`, are sent without an id so
                // the API does not try to pair them with reasoning items.
                let item_id = parts
                    .next()
                    .filter(|item| item.starts_with("fc_") && !different_model);
                let mut item = Map::new();
                item.insert("type".into(), json!("function_call"));
                if let Some(item_id) = item_id {
                    item.insert("id".into(), json!(item_id));
                }
                item.insert("call_id".into(), json!(call_id));
                item.insert("name".into(), json!(call.name));
                item.insert(
                    "arguments".into(),
                    json!(serde_json::to_string(&call.arguments).unwrap_or_default()),
                );
                if same_model && let Some(namespace) = &call.namespace {
                    item.insert("namespace".into(), json!(namespace));
                }
                out.push(Value::Object(item));
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Response decoding

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    output_index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Cow<'a, str>>,
    arguments: Option<String>,
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
}

#[derive(Default)]
pub(crate) struct ResponsesDecoder {
    slots: HashMap<u64, Slot>,
    reasoning_by_id: HashMap<String, usize>,
    terminal: bool,
    stop: Option<(StopReason, Option<String>)>,
}

impl ResponsesDecoder {
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
            _ => return None,
        };
        self.slots.insert(index, slot);
        Some(slot)
    }

    fn item_done(&mut self, index: u64, item: &Value, out: &mut Output) {
        if item.get("type").and_then(Value::as_str) == Some("message")
            && item.get("phase").and_then(Value::as_str) == Some("final_answer")
        {
            self.stop = Some((StopReason::Stop, None));
        }
        let slot = match self.slots.get(&index).copied() {
            Some(slot) => slot,
            None => match self.create_slot(index, item, out) {
                Some(slot) => slot,
                None => return,
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
            Slot::Tool(content) => {
                if !out.toolcall_open(content) {
                    return;
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
            "response.output_item.done" => {
                if let Some(item) = &ev.item {
                    self.item_done(index, item, out);
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
