//! `openai-responses`: OpenAI's Responses API (stateless: `store: false`, encrypted reasoning
//! items replayed from thinking signatures). This module builds the request (the conversation
//! as input items); `stream` decodes the response events.

pub(crate) mod grammar;
pub(crate) mod stream;

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use grammar::GrammarTools;
use stream::ResponsesDecoder;

use super::WireFormat;
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
use crate::providers::strict_tools;
use crate::transform::LlmMessage;
use crate::transform::UserContent;
use crate::transform::prepare_messages;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |model, context, _| {
        Box::new(ResponsesDecoder::new(GrammarTools::lenient(
            model,
            &context.tools,
        )))
    },
    error_style: ErrorStyle::ErrorMessage,
};

/// Providers whose `call|item` tool-call ids the Responses API accepts back.
const TOOL_CALL_PROVIDERS: [&str; 4] = [
    "openai",
    "openai-codex",
    "opencode",
    "azure-openai-responses",
];
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

/// Who the Responses request is for: OpenAI's API (and the services that copy it), or an
/// Azure OpenAI deployment, whose request the reference builds with fewer fields (no `store`,
/// no cache retention, the session as `prompt_cache_key` always, tools with `strict: false`,
/// the deployment as the model, and its default output cap).
#[derive(Clone, Copy)]
pub(crate) enum Dialect<'a> {
    OpenAi,
    Azure { deployment: &'a str },
}

pub(crate) fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    let compat = Compat::of(model);
    let retention = options.cache_retention();
    let body = request_body(model, context, options, Dialect::OpenAi)?;
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
    super::copilot::add_headers(model, context, &mut headers);
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
    Ok(HttpRequest {
        url: join_url(&model.base_url, "/responses"),
        headers,
        body,
    })
}

/// The JSON body of a Responses request.
pub(crate) fn request_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    dialect: Dialect<'_>,
) -> Result<Vec<u8>, StreamFailure> {
    let compat = Compat::of(model);
    let retention = options.cache_retention();
    let azure = matches!(dialect, Dialect::Azure { .. });
    let level = if model.reasoning && options.thinking != ThinkingLevel::Off {
        model.clamp_thinking_level(options.thinking)
    } else {
        ThinkingLevel::Off
    };
    let max_tokens = clamp_max_tokens_to_context(
        model,
        context,
        options
            .max_tokens
            .unwrap_or_else(|| crate::options::default_max_tokens(model)),
    );

    let grammar = GrammarTools::resolve(model, &context.tools)?;
    let mut body = Map::new();
    let model_name = match dialect {
        Dialect::OpenAi => model.id.as_str(),
        Dialect::Azure { deployment } => deployment,
    };
    body.insert("model".into(), json!(model_name));
    body.insert(
        "input".into(),
        Value::Array(convert_input(model, context, Some(&compat), &grammar)?),
    );
    body.insert("stream".into(), json!(true));
    if azure {
        if let Some(session) = &options.session_id {
            body.insert("prompt_cache_key".into(), json!(session));
        }
    } else {
        cache_fields(&mut body, &compat, retention, options.session_id.as_deref());
        body.insert("store".into(), json!(false));
    }
    if max_tokens > 0 && compat.max_output_tokens {
        let floor = if azure { 1 } else { MIN_OUTPUT_TOKENS };
        body.insert("max_output_tokens".into(), json!(max_tokens.max(floor)));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        // Azure's endpoint takes `strict` whatever the model's compat says, as in the reference.
        let strict_mode = compat.strict_mode || azure;
        let tools = context
            .tools
            .iter()
            .map(|tool| {
                if let Some(custom) = grammar.custom_tool(tool) {
                    return Ok(custom);
                }
                let strict = strict_tools::strict_sampling(tool, strict_mode)?;
                let mut out = Map::new();
                out.insert("type".into(), json!("function"));
                out.insert("name".into(), json!(tool.name));
                out.insert("description".into(), json!(tool.description));
                out.insert("parameters".into(), strict_tools::parameters(tool, strict));
                if strict_mode {
                    out.insert("strict".into(), json!(strict.unwrap_or(false)));
                }
                Ok(Value::Object(out))
            })
            .collect::<Result<Vec<Value>, StreamFailure>>()?;
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
    serde_json::to_vec(&Value::Object(body)).map_err(|e| StreamFailure::other(e.to_string()))
}

/// OpenAI's prompt-cache fields: the session as the key, and how long to keep the cache.
fn cache_fields(
    body: &mut Map<String, Value>,
    compat: &Compat,
    retention: CacheRetention,
    session: Option<&str>,
) {
    if retention != CacheRetention::None
        && let Some(session) = session
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

/// The conversation as input items without the system prompt: the ChatGPT-plan backend
/// takes that as `instructions` instead.
pub(crate) fn input_without_system_prompt(
    model: &Model,
    context: &Context,
    grammar: &GrammarTools,
) -> Result<Vec<Value>, StreamFailure> {
    convert_input(model, context, None, grammar)
}

/// Calls of tools sent as custom tools go back as `custom_tool_call` items (their results as
/// `custom_tool_call_output`); whether a tool is one is decided by this request's tools, not
/// by how the call was made, so a session that moves to a model without grammar tools sends
/// the same calls as function calls.
fn convert_input(
    model: &Model,
    context: &Context,
    compat: Option<&Compat>,
    grammar: &GrammarTools,
) -> Result<Vec<Value>, StreamFailure> {
    let normalize = |id: &str, source: &AssistantMessage| normalize_tool_call_id(id, model, source);
    let messages = prepare_messages(&context.messages, model, Some(&normalize));
    let mut out = Vec::new();
    if let Some(compat) = compat
        && let Some(prompt) = &context.system_prompt
    {
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
                convert_assistant(model, assistant, message_index, grammar, &mut out)?;
            }
            LlmMessage::ToolResult(result) => {
                let call_id = result.tool_call_id.split('|').next().unwrap_or_default();
                let kind = if grammar.input_property(&result.tool_name).is_some() {
                    "custom_tool_call_output"
                } else {
                    "function_call_output"
                };
                out.push(json!({
                    "type": kind,
                    "call_id": call_id,
                    "output": tool_output(model, &result.content),
                }));
            }
        }
    }
    Ok(out)
}

fn convert_assistant(
    model: &Model,
    message: &AssistantMessage,
    index: usize,
    grammar: &GrammarTools,
    out: &mut Vec<Value>,
) -> Result<(), StreamFailure> {
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
                let custom = grammar.input_property(&call.name);
                // Function-call items of another model, or ids that are not `fc_*` (a custom
                // call's `ctc_*` sent as a function call), are sent without an id so the API
                // does not try to pair them with reasoning items.
                let item_id = parts.next().filter(|item| {
                    let fc = item.starts_with("fc_");
                    !((different_model && fc) || (custom.is_none() && !fc))
                });
                let mut item = Map::new();
                let kind = if custom.is_some() {
                    "custom_tool_call"
                } else {
                    "function_call"
                };
                item.insert("type".into(), json!(kind));
                if let Some(item_id) = item_id {
                    item.insert("id".into(), json!(item_id));
                }
                item.insert("call_id".into(), json!(call_id));
                item.insert("name".into(), json!(call.name));
                match custom {
                    Some(property) => item.insert(
                        "input".into(),
                        json!(GrammarTools::replay_input(
                            &call.name,
                            &call.arguments,
                            property
                        )?),
                    ),
                    None => item.insert(
                        "arguments".into(),
                        json!(serde_json::to_string(&call.arguments).unwrap_or_default()),
                    ),
                };
                if same_model && let Some(namespace) = &call.namespace {
                    item.insert("namespace".into(), json!(namespace));
                }
                out.push(Value::Object(item));
            }
            _ => {}
        }
    }
    Ok(())
}
