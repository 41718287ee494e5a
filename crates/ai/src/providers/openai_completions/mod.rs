//! `openai-completions`: OpenAI Chat Completions and the many servers that copy it (Ollama,
//! LM Studio, vLLM, SGLang, llama.cpp, OpenRouter, DeepSeek, ...).

mod compat;
mod stream;

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::ThinkingContent;
use knightcode_protocol::ToolDeclaration;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

pub(crate) use compat::Compat;
use compat::ThinkingFormat;
pub(crate) use stream::CompletionsDecoder;

use super::WireFormat;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::http::join_url;
use crate::model::Model;
use crate::model::ThinkingLevel;
use crate::options::CacheRetention;
use crate::options::Context;
use crate::options::StreamOptions;
use crate::options::clamp_max_tokens_to_context;
use crate::options::clamp_thinking_budget_to_answer_room;
use crate::transform::LlmMessage;
use crate::transform::UserContent;
use crate::transform::prepare_messages;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |model, _, _| Box::new(CompletionsDecoder::new(model)),
    error_style: ErrorStyle::ErrorMessage,
};

const REASONING_FIELDS: [&str; 3] = ["reasoning", "reasoning_content", "reasoning_text"];
const BRIDGE_TEXT: &str = "I have processed the tool results.";

/// Chat Completions ids may not carry the Responses API's `call|item` form, and OpenAI caps
/// them at 40 characters.
fn normalize_tool_call_id(id: &str, provider: &str) -> String {
    let sanitize = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    if let Some((call, item)) = id.split_once('|') {
        let call = sanitize(call);
        let item = sanitize(item);
        let combined = if item.is_empty() {
            call.clone()
        } else {
            format!("{call}_{item}")
        };
        if combined.chars().count() <= 40 {
            return combined;
        }
        let hash = short_hash(id);
        let prefix: String = call.chars().take(40 - hash.len() - 1).collect();
        return format!("{prefix}_{hash}");
    }
    if provider == "openai" && id.chars().count() > 40 {
        return id.chars().take(40).collect();
    }
    id.to_owned()
}

/// 8 hex digits of FNV-1a: stable, so replays produce the same ids.
fn short_hash(text: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
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
    let effort = (level != ThinkingLevel::Off).then_some(level);
    let max_tokens = clamp_max_tokens_to_context(
        model,
        context,
        options
            .max_tokens
            .unwrap_or_else(|| crate::options::default_max_tokens(model)),
    );

    let mut messages = convert_messages(model, context, &compat);
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Null);
    body.insert("stream".into(), json!(true));
    let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    let wants_cache_key =
        (model.base_url.contains("api.openai.com") && retention != CacheRetention::None) || long;
    if wants_cache_key && let Some(session) = &options.session_id {
        body.insert(
            "prompt_cache_key".into(),
            json!(clamp_prompt_cache_key(session)),
        );
    }
    if long {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }
    if max_tokens > 0 {
        let field = if compat.use_max_tokens_field {
            "max_tokens"
        } else {
            "max_completion_tokens"
        };
        body.insert(field.into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    let mut tools = None;
    if !context.tools.is_empty() {
        tools = Some(convert_tools(&context.tools, &compat)?);
        if compat.zai_tool_stream {
            body.insert("tool_stream".into(), json!(true));
        }
    } else if has_tool_history(&messages) {
        // Proxies in front of Anthropic insist on `tools` when the history has tool calls.
        tools = Some(Vec::new());
    }
    if compat.anthropic_cache_control && retention != CacheRetention::None {
        let ttl = retention == CacheRetention::Long && compat.supports_long_cache_retention;
        let cache_control = if ttl {
            json!({"type": "ephemeral", "ttl": "1h"})
        } else {
            json!({"type": "ephemeral"})
        };
        apply_anthropic_cache_control(&mut messages, tools.as_mut(), &cache_control);
    }
    body.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = tools {
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(priority) = &compat.vllm_priority {
        body.insert("priority".into(), priority.clone());
    }

    let budget = effort.and_then(|level| {
        let budget = clamp_thinking_budget_to_answer_room(
            options.thinking_budgets.for_level(level),
            if max_tokens > 0 {
                max_tokens
            } else {
                model.max_tokens
            },
        );
        (budget > 0).then_some(budget)
    });
    apply_thinking(&mut body, model, &compat, effort, budget);
    if let (Some(field), Some(budget)) = (&compat.thinking_budget_field, budget) {
        body.insert(field.clone(), json!(budget));
    }
    if let Some(routing) = &compat.open_router_routing {
        body.insert("provider".into(), routing.clone());
    }
    if let Some(routing) = compat
        .vercel_gateway_routing
        .as_ref()
        .and_then(Value::as_object)
    {
        let mut gateway = Map::new();
        for key in ["only", "order"] {
            if let Some(value) = routing.get(key) {
                gateway.insert(key.into(), value.clone());
            }
        }
        if !gateway.is_empty() {
            body.insert("providerOptions".into(), json!({"gateway": gateway}));
        }
    }
    // Last, so custom keys override the named fields.
    if let Some(params) = options.merged_sampling_params(model, level) {
        for (key, value) in params {
            body.insert(key, value);
        }
    }

    let mut headers = base_headers(model, user_agent);
    let key = options.api_key.as_deref().filter(|k| !k.is_empty());
    if key.is_none() && !(headers.has("authorization") || headers.has("cf-aig-authorization")) {
        let mut request_headers = crate::http::Headers::default();
        request_headers.merge(Some(&options.headers));
        if !(request_headers.has("authorization") || request_headers.has("cf-aig-authorization")) {
            return Err(crate::auth::no_api_key_failure(&model.provider));
        }
    }
    if let Some(key) = key {
        // Model and request headers below may replace it (e.g. a gateway's own auth).
        let mut with_auth = crate::http::Headers::default();
        with_auth.set("Authorization", format!("Bearer {key}"));
        for (name, value) in headers.iter() {
            with_auth.set(name, value);
        }
        headers = with_auth;
    }
    super::copilot::add_headers(model, context, &mut headers);
    if compat.send_session_affinity_headers
        && retention != CacheRetention::None
        && let Some(session) = &options.session_id
    {
        if compat.session_affinity_openrouter {
            headers.set("x-session-id", session.clone());
        } else {
            if compat.session_affinity_openai {
                headers.set("session_id", session.clone());
            }
            headers.set("x-client-request-id", session.clone());
            headers.set("x-session-affinity", session.clone());
        }
    }
    headers.merge(Some(&options.headers));
    headers.set("content-type", "application/json");

    let body = serde_json::to_vec(&Value::Object(body))
        .map_err(|e| StreamFailure::other(e.to_string()))?;
    Ok(HttpRequest {
        url: join_url(&model.base_url, "/chat/completions"),
        headers,
        body,
    })
}

/// OpenAI rejects `prompt_cache_key` values over 64 characters.
fn clamp_prompt_cache_key(key: &str) -> String {
    key.chars().take(64).collect()
}

fn has_tool_history(messages: &[Value]) -> bool {
    messages.iter().any(|m| {
        m.get("role").and_then(Value::as_str) == Some("tool") || m.get("tool_calls").is_some()
    })
}

/// The tools as functions; `strict` (where the provider takes it) is `true` for the tools that
/// asked for strict JSON-schema sampling and got it, else `false`.
fn convert_tools(tools: &[ToolDeclaration], compat: &Compat) -> Result<Vec<Value>, StreamFailure> {
    use crate::providers::strict_tools;
    tools
        .iter()
        .map(|tool| {
            let strict = strict_tools::strict_sampling(tool, compat.supports_strict_mode)?;
            let mut function = Map::new();
            function.insert("name".into(), json!(tool.name));
            function.insert("description".into(), json!(tool.description));
            function.insert("parameters".into(), strict_tools::parameters(tool, strict));
            if compat.supports_strict_mode {
                function.insert("strict".into(), json!(strict.unwrap_or(false)));
            }
            Ok(json!({"type": "function", "function": function}))
        })
        .collect()
}

/// The mapped effort for a level (`thinkingLevelMap`), else the level name; `None` when the
/// level is mapped to `null`.
fn mapped_effort(model: &Model, level: ThinkingLevel) -> Option<String> {
    match model.level_map(level) {
        crate::model::LevelMapping::Absent => Some(level.as_str().to_owned()),
        crate::model::LevelMapping::Unsupported => None,
        crate::model::LevelMapping::Value(v) => Some(v.clone()),
    }
}

fn apply_thinking(
    body: &mut Map<String, Value>,
    model: &Model,
    compat: &Compat,
    effort: Option<ThinkingLevel>,
    budget: Option<u64>,
) {
    if !model.reasoning {
        return;
    }
    let off = model.level_map(ThinkingLevel::Off);
    let effort_value = effort.and_then(|level| mapped_effort(model, level));
    match compat.thinking_format {
        ThinkingFormat::Zai => {
            body.insert(
                "thinking".into(),
                if effort.is_some() {
                    json!({"type": "enabled", "clear_thinking": false})
                } else {
                    json!({"type": "disabled"})
                },
            );
            if compat.supports_reasoning_effort
                && let Some(value) = effort_value
            {
                body.insert("reasoning_effort".into(), json!(value));
            }
        }
        ThinkingFormat::Qwen => {
            body.insert("enable_thinking".into(), json!(effort.is_some()));
            if compat.supports_reasoning_effort
                && let Some(value) = effort_value
            {
                body.insert("reasoning_effort".into(), json!(value));
            }
        }
        ThinkingFormat::QwenChatTemplate => {
            body.insert(
                "chat_template_kwargs".into(),
                json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
            );
        }
        ThinkingFormat::ChatTemplate => {
            if let Some(values) =
                chat_template_values(model, &compat.chat_template_kwargs, effort, budget)
            {
                body.insert("chat_template_kwargs".into(), Value::Object(values));
            }
        }
        ThinkingFormat::Baseten => {
            if let Some(values) =
                chat_template_values(model, &compat.chat_template_args, effort, budget)
            {
                body.insert("chat_template_args".into(), Value::Object(values));
            }
            if compat.supports_reasoning_effort {
                let value = match effort {
                    Some(level) => mapped_effort(model, level),
                    None => off.value().map(str::to_owned),
                };
                if let Some(value) = value {
                    body.insert("reasoning_effort".into(), json!(value));
                }
            }
        }
        ThinkingFormat::DeepSeek => {
            if effort.is_some() {
                body.insert("thinking".into(), json!({"type": "enabled"}));
            } else if !off.is_unsupported() {
                body.insert("thinking".into(), json!({"type": "disabled"}));
            }
            if compat.supports_reasoning_effort
                && let Some(value) = effort_value
            {
                body.insert("reasoning_effort".into(), json!(value));
            }
        }
        ThinkingFormat::OpenRouter => {
            if let Some(value) = effort_value {
                body.insert("reasoning".into(), json!({"effort": value}));
            } else if effort.is_none() && !off.is_unsupported() {
                body.insert(
                    "reasoning".into(),
                    json!({"effort": off.value().unwrap_or("none")}),
                );
            }
        }
        ThinkingFormat::AntLing => {
            if let Some(value) = effort.and_then(|level| model.level_map(level).value()) {
                body.insert("reasoning".into(), json!({"effort": value}));
            }
        }
        ThinkingFormat::Together => {
            body.insert("reasoning".into(), json!({"enabled": effort.is_some()}));
            if compat.supports_reasoning_effort
                && let Some(value) = effort_value
            {
                body.insert("reasoning_effort".into(), json!(value));
            }
        }
        ThinkingFormat::StringThinking => {
            if let Some(value) = effort_value {
                body.insert("thinking".into(), json!(value));
            } else if effort.is_none() && !off.is_unsupported() {
                body.insert("thinking".into(), json!(off.value().unwrap_or("none")));
            }
        }
        ThinkingFormat::OpenAi => {
            if !compat.supports_reasoning_effort {
                return;
            }
            if effort.is_some() {
                if let Some(value) = effort_value {
                    body.insert("reasoning_effort".into(), json!(value));
                }
            } else if let Some(value) = off.value() {
                body.insert("reasoning_effort".into(), json!(value));
            }
        }
    }
}

/// Resolves `chatTemplateKwargs` / `chatTemplateArgs`: literals pass through; objects with
/// `$var` read `thinking.enabled`, `thinking.budget` or (otherwise) the effort;
/// `omitWhenOff` drops the key when thinking is off.
fn chat_template_values(
    model: &Model,
    values: &Map<String, Value>,
    effort: Option<ThinkingLevel>,
    budget: Option<u64>,
) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    for (key, value) in values {
        let resolved = match value {
            Value::Object(spec) => {
                if effort.is_none() && spec.get("omitWhenOff") == Some(&Value::Bool(true)) {
                    continue;
                }
                match spec.get("$var").and_then(Value::as_str) {
                    Some("thinking.enabled") => json!(effort.is_some()),
                    Some("thinking.budget") => match budget {
                        Some(b) => json!(b),
                        None => continue,
                    },
                    _ => {
                        let mapping = match effort {
                            Some(level) => model.level_map(level),
                            None => model.level_map(ThinkingLevel::Off),
                        };
                        match (mapping, effort) {
                            (crate::model::LevelMapping::Value(v), _) => json!(v),
                            (crate::model::LevelMapping::Absent, Some(level)) => {
                                json!(level.as_str())
                            }
                            _ => continue,
                        }
                    }
                }
            }
            literal => literal.clone(),
        };
        out.insert(key.clone(), resolved);
    }
    (!out.is_empty()).then_some(out)
}

fn image_part(image: &knightcode_protocol::ImageContent) -> Value {
    json!({
        "type": "image_url",
        "image_url": {"url": format!("data:{};base64,{}", image.mime_type, image.data)},
    })
}

fn convert_messages(model: &Model, context: &Context, compat: &Compat) -> Vec<Value> {
    let provider = model.provider.clone();
    let normalize = move |id: &str, _: &AssistantMessage| normalize_tool_call_id(id, &provider);
    let messages = prepare_messages(&context.messages, model, Some(&normalize));
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(prompt) = &context.system_prompt {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": prompt}));
    }
    let mut last_role = "";
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        if compat.requires_assistant_after_tool_result
            && last_role == "toolResult"
            && matches!(message, LlmMessage::User(_))
        {
            out.push(json!({"role": "assistant", "content": BRIDGE_TEXT}));
        }
        match message {
            LlmMessage::User(UserContent::Text(text)) => {
                out.push(json!({"role": "user", "content": text}));
                last_role = "user";
            }
            LlmMessage::User(UserContent::Blocks(blocks)) => {
                let parts: Vec<Value> = blocks
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::Text(t) => Some(json!({"type": "text", "text": t.text})),
                        ContentBlock::Image(image) => Some(image_part(image)),
                        _ => None,
                    })
                    .collect();
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "content": parts}));
                }
                last_role = "user";
            }
            LlmMessage::Assistant(assistant) => {
                if let Some(converted) = convert_assistant(model, assistant, compat) {
                    out.push(converted);
                }
                last_role = "assistant";
            }
            LlmMessage::ToolResult(_) => {
                let mut images = Vec::new();
                while let Some(LlmMessage::ToolResult(result)) = messages.get(i) {
                    let text: Vec<&str> = result
                        .content
                        .iter()
                        .filter_map(ContentBlock::as_text)
                        .collect();
                    let text = text.join("\n");
                    let has_images = result
                        .content
                        .iter()
                        .any(|b| matches!(b, ContentBlock::Image(_)));
                    let content = if !text.is_empty() {
                        text
                    } else if has_images {
                        "(see attached image)".to_owned()
                    } else {
                        "(no tool output)".to_owned()
                    };
                    let mut tool = Map::new();
                    tool.insert("role".into(), json!("tool"));
                    tool.insert("content".into(), json!(content));
                    tool.insert("tool_call_id".into(), json!(result.tool_call_id));
                    if compat.requires_tool_result_name && !result.tool_name.is_empty() {
                        tool.insert("name".into(), json!(result.tool_name));
                    }
                    out.push(Value::Object(tool));
                    if has_images && model.supports_images() {
                        for block in result.content.iter() {
                            if let ContentBlock::Image(image) = block {
                                images.push(image_part(image));
                            }
                        }
                    }
                    i += 1;
                }
                if images.is_empty() {
                    last_role = "toolResult";
                } else {
                    if compat.requires_assistant_after_tool_result {
                        out.push(json!({"role": "assistant", "content": BRIDGE_TEXT}));
                    }
                    let mut content = vec![json!({
                        "type": "text",
                        "text": "Attached image(s) from tool result:",
                    })];
                    content.extend(images);
                    out.push(json!({"role": "user", "content": content}));
                    last_role = "user";
                }
                continue;
            }
        }
        i += 1;
    }
    out
}

/// `reasoning_details` stored in a thinking signature (OpenRouter replay data).
fn reasoning_details(signature: Option<&str>) -> Option<Vec<Value>> {
    let parsed: Value = serde_json::from_str(signature?).ok()?;
    let items = parsed.as_array()?;
    let valid = !items.is_empty()
        && items.iter().all(|item| {
            let kind = item.get("type").and_then(Value::as_str);
            let str_field = |k: &str| item.get(k).is_some_and(Value::is_string);
            match kind {
                Some("reasoning.summary") => str_field("summary"),
                Some("reasoning.encrypted") => str_field("data"),
                Some("reasoning.text") => str_field("text"),
                _ => false,
            }
        });
    valid.then(|| items.clone())
}

fn convert_assistant(model: &Model, message: &AssistantMessage, compat: &Compat) -> Option<Value> {
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    out.insert(
        "content".into(),
        if compat.requires_assistant_after_tool_result {
            json!("")
        } else {
            Value::Null
        },
    );
    let texts: Vec<&str> = message
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .filter(|t| !t.trim().is_empty())
        .collect();
    let text = texts.concat();
    let thinking: Vec<&ThinkingContent> = message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Thinking(t) => Some(t),
            _ => None,
        })
        .collect();
    let tool_calls: Vec<&knightcode_protocol::ToolCall> = message.tool_calls().collect();
    let details = thinking
        .iter()
        .find_map(|t| reasoning_details(t.thinking_signature.as_deref()))
        .or_else(|| {
            let legacy: Vec<Value> = tool_calls
                .iter()
                .filter_map(|c| {
                    let parsed: Value =
                        serde_json::from_str(c.thought_signature.as_deref()?).ok()?;
                    let ok = parsed.get("type").and_then(Value::as_str)
                        == Some("reasoning.encrypted")
                        && parsed
                            .get("id")
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty())
                        && parsed
                            .get("data")
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty());
                    ok.then_some(parsed)
                })
                .collect();
            (!legacy.is_empty()).then_some(legacy)
        });
    let non_empty: Vec<&&ThinkingContent> = thinking
        .iter()
        .filter(|t| !t.thinking.trim().is_empty())
        .collect();
    if !non_empty.is_empty() {
        if compat.requires_thinking_as_text {
            let joined: Vec<&str> = non_empty.iter().map(|t| t.thinking.as_str()).collect();
            let mut parts = vec![json!({"type": "text", "text": joined.join("\n\n")})];
            parts.extend(texts.iter().map(|t| json!({"type": "text", "text": t})));
            out.insert("content".into(), Value::Array(parts));
        } else {
            if !text.is_empty() {
                out.insert("content".into(), json!(text));
            }
            if details.is_none() {
                let mut field = non_empty[0].thinking_signature.as_deref().unwrap_or("");
                if model.provider == "opencode-go" && field == "reasoning" {
                    field = "reasoning_content";
                }
                if REASONING_FIELDS.contains(&field) {
                    let joined: Vec<&str> = non_empty.iter().map(|t| t.thinking.as_str()).collect();
                    out.insert(field.into(), json!(joined.join("\n")));
                }
            }
        }
    } else if !text.is_empty() {
        out.insert("content".into(), json!(text));
    }
    if !tool_calls.is_empty() {
        let calls: Vec<Value> = tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": serde_json::to_string(&call.arguments).unwrap_or_default(),
                    },
                })
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(details) = details {
        out.insert("reasoning_details".into(), Value::Array(details));
    }
    if compat.requires_reasoning_content_on_assistant
        && model.reasoning
        && !out.contains_key("reasoning_content")
    {
        out.insert("reasoning_content".into(), json!(""));
    }
    let has_content = match out.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    (has_content || out.contains_key("tool_calls")).then_some(Value::Object(out))
}

/// OpenRouter's Anthropic models: `cache_control` on the system prompt, the last tool and the
/// last conversation message.
fn apply_anthropic_cache_control(
    messages: &mut [Value],
    tools: Option<&mut Vec<Value>>,
    cache_control: &Value,
) {
    if let Some(system) = messages.iter_mut().find(|m| {
        matches!(
            m.get("role").and_then(Value::as_str),
            Some("system" | "developer")
        )
    }) {
        add_cache_control_to_text(system, cache_control);
    }
    if let Some(last) = tools
        .and_then(|t| t.last_mut())
        .and_then(Value::as_object_mut)
    {
        last.insert("cache_control".into(), cache_control.clone());
    }
    for message in messages.iter_mut().rev() {
        if matches!(
            message.get("role").and_then(Value::as_str),
            Some("user" | "assistant" | "tool")
        ) && add_cache_control_to_text(message, cache_control)
        {
            break;
        }
    }
}

fn add_cache_control_to_text(message: &mut Value, cache_control: &Value) -> bool {
    let Some(content) = message.get_mut("content") else {
        return false;
    };
    match content {
        Value::String(text) if !text.is_empty() => {
            *content = json!([{"type": "text", "text": text, "cache_control": cache_control}]);
            true
        }
        Value::Array(parts) => {
            for part in parts.iter_mut().rev() {
                if part.get("type").and_then(Value::as_str) == Some("text")
                    && let Some(object) = part.as_object_mut()
                {
                    object.insert("cache_control".into(), cache_control.clone());
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}
