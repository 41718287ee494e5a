//! `anthropic-messages`: Anthropic's Messages API and compatible servers. This module builds
//! the request (headers, thinking, caching, the conversation as Messages API turns);
//! `stream` decodes the response.

mod claude_code;
mod stream;

use knightcode_protocol::ContentBlock;
use knightcode_protocol::ToolDeclaration;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use stream::AnthropicDecoder;

use super::WireFormat;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::Headers;
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::http::join_url;
use crate::model::Model;
use crate::model::ThinkingLevel;
use crate::options::CacheRetention;
use crate::options::Context;
use crate::options::MIN_ANSWER_TOKENS;
use crate::options::StreamOptions;
use crate::options::clamp_max_tokens_to_context;
use crate::options::clamp_thinking_budget_to_answer_room;
use crate::providers::strict_tools;
use crate::transform::LlmMessage;
use crate::transform::UserContent;
use crate::transform::prepare_messages;

pub(crate) use claude_code::is_oauth_token;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |_, context, options| {
        // A subscription request sent Claude Code's tool names; its answers name them so.
        let oauth = options.api_key.as_deref().is_some_and(is_oauth_token);
        Box::new(AnthropicDecoder::new(
            oauth.then(|| claude_code::tool_names(&context.tools)),
        ))
    },
    error_style: ErrorStyle::WholeBody,
};

const API_VERSION: &str = "2023-06-01";
const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const IMAGE_PLACEHOLDER: &str = "(see attached image)";

/// Compatibility flags with their defaults.
struct Compat {
    eager_tool_input_streaming: bool,
    long_cache_retention: bool,
    session_affinity_headers: bool,
    cache_control_on_tools: bool,
    temperature: bool,
    allow_empty_signature: bool,
    adaptive_thinking: bool,
    /// Tools asking for strict JSON-schema sampling get `strict: true`.
    strict_tools: bool,
}

impl Compat {
    fn of(model: &Model) -> Self {
        let flag = |key: &str, default: bool| model.compat_bool(key).unwrap_or(default);
        Self {
            eager_tool_input_streaming: flag("supportsEagerToolInputStreaming", true),
            long_cache_retention: flag("supportsLongCacheRetention", true),
            session_affinity_headers: flag("sendSessionAffinityHeaders", false),
            cache_control_on_tools: flag("supportsCacheControlOnTools", true),
            temperature: flag("supportsTemperature", true),
            allow_empty_signature: flag("allowEmptySignature", false),
            // Models with managed mid-conversation effort always think adaptively.
            adaptive_thinking: flag("forceAdaptiveThinking", false)
                || flag("supportsMidConvoEffort", false),
            strict_tools: flag("supportsStrictTools", false),
        }
    }
}

/// How thinking is requested.
enum Thinking {
    /// Thinking not requested: `{type: disabled}` unless the model cannot turn it off.
    Off,
    Adaptive {
        effort: String,
    },
    Budget {
        budget: u64,
    },
}

fn effort_for(model: &Model, level: ThinkingLevel) -> String {
    if let Some(mapped) = model.level_map(level).value() {
        return mapped.to_owned();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_owned()
}

/// Anthropic ids must match `^[a-zA-Z0-9_-]+$` and be at most 64 characters.
pub(crate) fn normalize_tool_call_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// Builds the HTTP request.
pub(crate) fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    let compat = Compat::of(model);
    let oauth = options.api_key.as_deref().is_some_and(is_oauth_token);
    let retention = options.cache_retention();
    let cache_control = match retention {
        CacheRetention::None => None,
        CacheRetention::Short => Some(json!({"type": "ephemeral"})),
        CacheRetention::Long if compat.long_cache_retention => {
            Some(json!({"type": "ephemeral", "ttl": "1h"}))
        }
        CacheRetention::Long => Some(json!({"type": "ephemeral"})),
    };

    let level = if model.reasoning {
        model.clamp_thinking_level(options.thinking)
    } else {
        ThinkingLevel::Off
    };
    let base_max = clamp_max_tokens_to_context(
        model,
        context,
        options
            .max_tokens
            .unwrap_or_else(|| crate::options::default_max_tokens(model)),
    );
    let (max_tokens, thinking) = if level == ThinkingLevel::Off {
        (base_max, Thinking::Off)
    } else if compat.adaptive_thinking {
        (
            base_max,
            Thinking::Adaptive {
                effort: effort_for(model, level),
            },
        )
    } else {
        let mut budget = options.thinking_budgets.for_level(level);
        let adjusted = (base_max + budget).min(model.max_tokens);
        if adjusted <= budget {
            budget = clamp_thinking_budget_to_answer_room(budget, adjusted);
        }
        let max_tokens = clamp_max_tokens_to_context(model, context, adjusted);
        let budget = clamp_thinking_budget_to_answer_room(budget, max_tokens);
        if budget < MIN_ANSWER_TOKENS {
            (max_tokens, Thinking::Off)
        } else {
            (max_tokens, Thinking::Budget { budget })
        }
    };
    let thinking_enabled = !matches!(thinking, Thinking::Off);

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(
            model,
            context,
            cache_control.as_ref(),
            compat.allow_empty_signature,
            oauth,
        )),
    );
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    let identity = oauth.then_some(claude_code::IDENTITY);
    let system: Vec<Value> = identity
        .into_iter()
        .chain(context.system_prompt.as_deref())
        .map(|text| {
            let mut block = Map::new();
            block.insert("type".into(), json!("text"));
            block.insert("text".into(), json!(text));
            if let Some(cc) = &cache_control {
                block.insert("cache_control".into(), cc.clone());
            }
            Value::Object(block)
        })
        .collect();
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    if let Some(temperature) = options.temperature
        && !thinking_enabled
        && compat.temperature
    {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let last = context.tools.len() - 1;
        let tools = context
            .tools
            .iter()
            .enumerate()
            .map(|(i, tool)| {
                let strict = strict_tools::strict_sampling(tool, compat.strict_tools)?;
                let mut out = Map::new();
                let name = if oauth {
                    claude_code::to_claude_code_name(&tool.name)
                } else {
                    &tool.name
                };
                out.insert("name".into(), json!(name));
                out.insert("description".into(), json!(tool.description));
                if compat.eager_tool_input_streaming {
                    out.insert("eager_input_streaming".into(), json!(true));
                }
                if strict == Some(true) {
                    out.insert("strict".into(), json!(true));
                }
                out.insert("input_schema".into(), input_schema(tool, strict));
                if i == last
                    && compat.cache_control_on_tools
                    && let Some(cc) = &cache_control
                {
                    out.insert("cache_control".into(), cc.clone());
                }
                Ok(Value::Object(out))
            })
            .collect::<Result<Vec<Value>, StreamFailure>>()?;
        body.insert("tools".into(), Value::Array(tools));
    }
    match &thinking {
        Thinking::Off => {
            if model.reasoning && !model.level_map(ThinkingLevel::Off).is_unsupported() {
                body.insert("thinking".into(), json!({"type": "disabled"}));
            }
        }
        Thinking::Adaptive { effort } => {
            body.insert(
                "thinking".into(),
                json!({"type": "adaptive", "display": "summarized"}),
            );
            body.insert("output_config".into(), json!({"effort": effort}));
        }
        Thinking::Budget { budget } => {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}),
            );
        }
    }

    let claude_code_agent = claude_code::user_agent();
    let mut headers = base_headers(
        model,
        if oauth {
            &claude_code_agent
        } else {
            user_agent
        },
    );
    headers.set("accept", "application/json");
    headers.set("anthropic-dangerous-direct-browser-access", "true");
    if oauth {
        headers.set("x-app", "cli");
    }
    if compat.session_affinity_headers
        && retention != CacheRetention::None
        && let Some(session) = &options.session_id
    {
        headers.set("x-session-affinity", session.clone());
    }
    super::copilot::add_headers(model, context, &mut headers);
    // Request headers come last so callers can override anything above.
    let configured_betas = configured_betas(model, options);
    headers.merge(Some(&options.headers));
    match options.api_key.as_deref().filter(|k| !k.is_empty()) {
        // Copilot takes its token as a bearer token too, without Claude Code's identity.
        Some(key) if oauth || super::copilot::is_copilot(model) => {
            headers.set("authorization", format!("Bearer {key}"));
        }
        Some(key) => headers.set("x-api-key", key),
        None if auth_header_present(&headers) => {}
        None => return Err(crate::auth::no_api_key_failure(&model.provider)),
    }
    headers.set("anthropic-version", API_VERSION);
    headers.set("content-type", "application/json");
    let betas = configured_betas.unwrap_or_else(|| {
        let mut betas: Vec<String> = Vec::new();
        if oauth {
            betas.extend(claude_code::OAUTH_BETAS.map(str::to_owned));
        }
        if !context.tools.is_empty() && !compat.eager_tool_input_streaming {
            betas.push(FINE_GRAINED_TOOL_STREAMING_BETA.to_owned());
        }
        if thinking_enabled && !compat.adaptive_thinking {
            betas.push(INTERLEAVED_THINKING_BETA.to_owned());
        }
        betas
    });
    if betas.is_empty() {
        headers.remove("anthropic-beta");
    } else {
        headers.set("anthropic-beta", betas.join(","));
    }

    let body = serde_json::to_vec(&Value::Object(body))
        .map_err(|e| StreamFailure::other(e.to_string()))?;
    Ok(HttpRequest {
        url: join_url(&model.base_url, "/v1/messages?beta=true"),
        headers,
        body,
    })
}

fn auth_header_present(headers: &Headers) -> bool {
    ["authorization", "x-api-key", "cf-aig-authorization"]
        .iter()
        .any(|name| headers.has(name))
}

/// An `anthropic-beta` header set on the model or request replaces the computed list (`null`
/// disables betas).
fn configured_betas(model: &Model, options: &StreamOptions) -> Option<Vec<String>> {
    let mut configured: Option<Option<String>> = None;
    for headers in [model.headers.as_ref(), Some(&options.headers)]
        .into_iter()
        .flatten()
    {
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("anthropic-beta") {
                configured = Some(value.as_str().map(str::to_owned));
            }
        }
    }
    let value = configured?;
    let mut betas: Vec<String> = Vec::new();
    for beta in value.unwrap_or_default().split(',').map(str::trim) {
        if !beta.is_empty() && !betas.iter().any(|b| b == beta) {
            betas.push(beta.to_owned());
        }
    }
    Some(betas)
}

fn image_block(image: &knightcode_protocol::ImageContent) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": image.mime_type, "data": image.data},
    })
}

/// Tool-result content: a string when there are no images, else blocks (with a placeholder
/// when only images are present).
fn tool_result_content(blocks: &[ContentBlock]) -> Value {
    let has_images = blocks.iter().any(|b| matches!(b, ContentBlock::Image(_)));
    if !has_images {
        let texts: Vec<&str> = blocks.iter().filter_map(ContentBlock::as_text).collect();
        return json!(texts.join("\n"));
    }
    let mut out: Vec<Value> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(json!({"type": "text", "text": t.text})),
            ContentBlock::Image(image) => Some(image_block(image)),
            _ => None,
        })
        .collect();
    if !blocks.iter().any(|b| matches!(b, ContentBlock::Text(_))) {
        out.insert(0, json!({"type": "text", "text": IMAGE_PLACEHOLDER}));
    }
    Value::Array(out)
}

fn convert_messages(
    model: &Model,
    context: &Context,
    cache_control: Option<&Value>,
    allow_empty_signature: bool,
    oauth: bool,
) -> Vec<Value> {
    let normalize =
        |id: &str, _: &knightcode_protocol::AssistantMessage| normalize_tool_call_id(id);
    let messages = prepare_messages(&context.messages, model, Some(&normalize));
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            LlmMessage::User(UserContent::Text(text)) => {
                if !text.trim().is_empty() {
                    out.push(json!({"role": "user", "content": text}));
                }
            }
            LlmMessage::User(UserContent::Blocks(blocks)) => {
                let converted: Vec<Value> = blocks
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                            Some(json!({"type": "text", "text": t.text}))
                        }
                        ContentBlock::Image(image) => Some(image_block(image)),
                        _ => None,
                    })
                    .collect();
                if !converted.is_empty() {
                    out.push(json!({"role": "user", "content": converted}));
                }
            }
            LlmMessage::Assistant(message) => {
                let blocks = assistant_blocks(message, allow_empty_signature, oauth);
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            LlmMessage::ToolResult(_) => {
                // Consecutive results go into one user turn.
                let mut results = Vec::new();
                while let Some(LlmMessage::ToolResult(result)) = messages.get(i) {
                    results.push(json!({
                        "type": "tool_result",
                        "tool_use_id": result.tool_call_id,
                        "content": tool_result_content(&result.content),
                        "is_error": result.is_error,
                    }));
                    i += 1;
                }
                out.push(json!({"role": "user", "content": results}));
                continue;
            }
        }
        i += 1;
    }
    if let Some(cc) = cache_control {
        add_cache_control_to_last_user(&mut out, cc);
    }
    out
}

fn assistant_blocks(
    message: &knightcode_protocol::AssistantMessage,
    allow_empty_signature: bool,
    oauth: bool,
) -> Vec<Value> {
    let mut blocks = Vec::new();
    for block in message.content.iter() {
        match block {
            ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                blocks.push(json!({"type": "text", "text": t.text}));
            }
            ContentBlock::Thinking(t) => {
                if t.redacted == Some(true) {
                    blocks.push(json!({
                        "type": "redacted_thinking",
                        "data": t.thinking_signature.clone().unwrap_or_default(),
                    }));
                    continue;
                }
                let signature = t
                    .thinking_signature
                    .as_deref()
                    .filter(|s| !s.trim().is_empty());
                if t.thinking.trim().is_empty() && signature.is_none() {
                    continue;
                }
                match signature {
                    Some(signature) => blocks.push(json!({
                        "type": "thinking", "thinking": t.thinking, "signature": signature,
                    })),
                    // Unsigned thinking (an aborted stream) is rejected; send it as text.
                    None if allow_empty_signature => blocks.push(json!({
                        "type": "thinking", "thinking": t.thinking, "signature": "",
                    })),
                    None => blocks.push(json!({"type": "text", "text": t.thinking})),
                }
            }
            ContentBlock::ToolCall(call) => blocks.push(json!({
                "type": "tool_use",
                "id": call.id,
                "name": if oauth { claude_code::to_claude_code_name(&call.name) } else { &call.name },
                "input": call.arguments,
            })),
            _ => {}
        }
    }
    blocks
}

/// Marks the last user message's last block for caching the whole conversation prefix.
fn add_cache_control_to_last_user(messages: &mut [Value], cache_control: &Value) {
    let Some(last) = messages.last_mut() else {
        return;
    };
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return;
    }
    let Some(content) = last.get_mut("content") else {
        return;
    };
    if let Value::String(text) = content {
        *content = json!([{"type": "text", "text": text, "cache_control": cache_control}]);
        return;
    }
    if let Some(block) = content.as_array_mut().and_then(|blocks| blocks.last_mut())
        && matches!(
            block.get("type").and_then(Value::as_str),
            Some("text" | "image" | "tool_result")
        )
        && let Some(object) = block.as_object_mut()
    {
        object.insert("cache_control".into(), cache_control.clone());
    }
}

/// A tool's `input_schema`: its properties and required names; a strict tool keeps the rest
/// of its (strict) schema around them.
fn input_schema(tool: &ToolDeclaration, strict: Option<bool>) -> Value {
    let parameters = strict_tools::parameters(tool, strict);
    let properties = parameters
        .get("properties")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let required = parameters
        .get("required")
        .cloned()
        .unwrap_or_else(|| json!([]));
    let mut schema = match (strict, parameters) {
        (Some(true), Value::Object(all)) => all,
        _ => Map::new(),
    };
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), properties);
    schema.insert("required".into(), required);
    Value::Object(schema)
}
