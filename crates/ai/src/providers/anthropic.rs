//! `anthropic-messages`: Anthropic's Messages API and compatible servers.

use std::borrow::Cow;

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
use crate::model::Model;
use crate::model::ThinkingLevel;
use crate::options::CacheRetention;
use crate::options::Context;
use crate::options::MIN_ANSWER_TOKENS;
use crate::options::StreamOptions;
use crate::options::clamp_max_tokens_to_context;
use crate::options::clamp_thinking_budget_to_answer_room;
use crate::output::Output;
use crate::sse::SseEvent;
use crate::transform::LlmMessage;
use crate::transform::UserContent;
use crate::transform::prepare_messages;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |_| Box::new(AnthropicDecoder::default()),
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
        options.max_tokens.unwrap_or(model.max_tokens),
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
        )),
    );
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(prompt) = context.system_prompt.as_deref() {
        let mut block = Map::new();
        block.insert("type".into(), json!("text"));
        block.insert("text".into(), json!(prompt));
        if let Some(cc) = &cache_control {
            block.insert("cache_control".into(), cc.clone());
        }
        body.insert("system".into(), json!([block]));
    }
    if let Some(temperature) = options.temperature
        && !thinking_enabled
        && compat.temperature
    {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let last = context.tools.len() - 1;
        let tools: Vec<Value> = context
            .tools
            .iter()
            .enumerate()
            .map(|(i, tool)| {
                let mut out = Map::new();
                out.insert("name".into(), json!(tool.name));
                out.insert("description".into(), json!(tool.description));
                if compat.eager_tool_input_streaming {
                    out.insert("eager_input_streaming".into(), json!(true));
                }
                out.insert(
                    "input_schema".into(),
                    json!({
                        "type": "object",
                        "properties": tool.parameters.get("properties").cloned().unwrap_or_else(|| json!({})),
                        "required": tool.parameters.get("required").cloned().unwrap_or_else(|| json!([])),
                    }),
                );
                if i == last
                    && compat.cache_control_on_tools
                    && let Some(cc) = &cache_control
                {
                    out.insert("cache_control".into(), cc.clone());
                }
                Value::Object(out)
            })
            .collect();
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

    let mut headers = base_headers(model, user_agent);
    headers.set("accept", "application/json");
    headers.set("anthropic-dangerous-direct-browser-access", "true");
    if compat.session_affinity_headers
        && retention != CacheRetention::None
        && let Some(session) = &options.session_id
    {
        headers.set("x-session-affinity", session.clone());
    }
    // Request headers come last so callers can override anything above.
    let configured_betas = configured_betas(model, options);
    headers.merge(Some(&options.headers));
    match options.api_key.as_deref().filter(|k| !k.is_empty()) {
        Some(key) => headers.set("x-api-key", key),
        None if auth_header_present(&headers) => {}
        None => return Err(crate::auth::no_api_key_failure(&model.provider)),
    }
    headers.set("anthropic-version", API_VERSION);
    headers.set("content-type", "application/json");
    let betas = configured_betas.unwrap_or_else(|| {
        let mut betas = Vec::new();
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
                let blocks = assistant_blocks(message, allow_empty_signature);
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
                "name": call.name,
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

// ---------------------------------------------------------------------------------------------
// Response decoding

#[derive(Deserialize)]
struct RawUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_creation: Option<CacheCreation>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct CacheCreation {
    ephemeral_1h_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    thinking_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct MessageStart {
    message: StartMessage,
}

#[derive(Deserialize)]
struct StartMessage {
    id: Option<String>,
    model: Option<String>,
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
struct BlockStart<'a> {
    index: u64,
    #[serde(borrow)]
    content_block: StartBlock<'a>,
}

#[derive(Deserialize)]
struct StartBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    signature: Option<String>,
    data: Option<String>,
    id: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
struct BlockDelta<'a> {
    index: u64,
    #[serde(borrow)]
    delta: Delta<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct BlockStop {
    index: u64,
}

#[derive(Deserialize)]
struct MessageDelta {
    delta: Option<MessageDeltaBody>,
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
    stop_details: Option<Value>,
}

fn parse<'a, T: Deserialize<'a>>(event: &SseEvent<'a>) -> Result<T, Fail> {
    parse_event("Anthropic", event)
}

/// Decodes the Messages API event stream.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    /// `(anthropic block index, our content index)` of blocks seen so far.
    blocks: Vec<(u64, usize)>,
    saw_start: bool,
    saw_stop: bool,
    stop: Option<StopReason>,
    stop_error: Option<String>,
    usage: (u64, u64, u64, u64, u64, Option<u64>),
}

impl AnthropicDecoder {
    fn block(&self, index: u64) -> Option<usize> {
        self.blocks
            .iter()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, c)| *c)
    }

    fn apply_usage(&mut self, usage: &RawUsage, out: &mut Output, from_start: bool) {
        let u = &mut self.usage;
        if from_start {
            *u = (
                usage.input_tokens.unwrap_or(0),
                usage.output_tokens.unwrap_or(0),
                usage.cache_read_input_tokens.unwrap_or(0),
                usage.cache_creation_input_tokens.unwrap_or(0),
                usage
                    .cache_creation
                    .as_ref()
                    .and_then(|c| c.ephemeral_1h_input_tokens)
                    .unwrap_or(0),
                None,
            );
        } else {
            // Proxies often omit fields in message_delta; keep what message_start said.
            u.0 = usage.input_tokens.unwrap_or(u.0);
            u.1 = usage.output_tokens.unwrap_or(u.1);
            u.2 = usage.cache_read_input_tokens.unwrap_or(u.2);
            u.3 = usage.cache_creation_input_tokens.unwrap_or(u.3);
            if let Some(thinking) = usage
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.thinking_tokens)
            {
                u.5 = Some(thinking);
            }
        }
        self.publish_usage(out);
    }

    fn publish_usage(&self, out: &mut Output) {
        let (input, output, read, write, write_1h, reasoning) = self.usage;
        let mut usage = Output::summed_usage(input, output, read, write);
        usage.cache_write_1h = Some(Tokens(write_1h));
        usage.reasoning = reasoning.map(Tokens);
        out.set_usage(usage);
    }

    fn handle(&mut self, event: &SseEvent<'_>, out: &mut Output) -> Result<(), Fail> {
        match event.event {
            "message_start" => {
                let start: MessageStart = parse(event)?;
                self.saw_start = true;
                out.message.response_id = start.message.id;
                if let Some(model) = start.message.model.filter(|m| !m.is_empty()) {
                    out.message.model = model;
                }
                if let Some(usage) = &start.message.usage {
                    self.apply_usage(usage, out, true);
                }
            }
            "content_block_start" => {
                let start: BlockStart<'_> = parse(event)?;
                let block = start.content_block;
                let index = match block.kind.as_ref() {
                    "text" => {
                        let index = out.text_start();
                        if let Some(text) = block.text.filter(|t| !t.is_empty()) {
                            out.text_delta(index, &text);
                        }
                        index
                    }
                    "thinking" => {
                        let index = out.thinking_start(ThinkingContent {
                            thinking_signature: Some(block.signature.unwrap_or_default()),
                            ..ThinkingContent::default()
                        });
                        if let Some(text) = block.thinking.filter(|t| !t.is_empty()) {
                            out.thinking_delta(index, &text);
                        }
                        index
                    }
                    "redacted_thinking" => out.thinking_start(ThinkingContent {
                        thinking: "[Reasoning redacted]".to_owned(),
                        thinking_signature: block.data,
                        redacted: Some(true),
                        ..ThinkingContent::default()
                    }),
                    "tool_use" => out.toolcall_start(
                        block.id.as_deref().unwrap_or_default(),
                        block.name.as_deref().unwrap_or_default(),
                    ),
                    "fallback" if out.len() > 0 => {
                        return Err(Fail::Other(StreamFailure::other(
                            "Anthropic performed an unsupported mid-output model fallback",
                        )));
                    }
                    _ => return Ok(()),
                };
                self.blocks.push((start.index, index));
            }
            "content_block_delta" => {
                let delta: BlockDelta<'_> = parse(event)?;
                let Some(index) = self.block(delta.index) else {
                    return Ok(());
                };
                let d = delta.delta;
                match d.kind.as_ref() {
                    "text_delta" => {
                        if let Some(text) = d.text {
                            out.text_delta(index, &text);
                        }
                    }
                    "thinking_delta" => {
                        if let Some(text) = d.thinking {
                            out.thinking_delta(index, &text);
                        }
                    }
                    "input_json_delta" => {
                        if let Some(json) = d.partial_json {
                            out.toolcall_delta(index, &json);
                        }
                    }
                    "signature_delta" => {
                        if let (Some(signature), Some(block)) =
                            (d.signature, out.thinking_mut(index))
                        {
                            block
                                .thinking_signature
                                .get_or_insert_with(String::new)
                                .push_str(&signature);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let stop: BlockStop = parse(event)?;
                let Some(index) = self.block(stop.index) else {
                    return Ok(());
                };
                match out.message.content.get(index) {
                    Some(ContentBlock::Text(_)) => out.text_end(index),
                    Some(ContentBlock::Thinking(_)) => out.thinking_end(index),
                    Some(ContentBlock::ToolCall(_)) => out.toolcall_end(index),
                    _ => {}
                }
            }
            "message_delta" => {
                let delta: MessageDelta = parse(event)?;
                if let Some(reason) = delta.delta.as_ref().and_then(|d| d.stop_reason.clone()) {
                    let details = delta.delta.as_ref().and_then(|d| d.stop_details.as_ref());
                    let (stop, error) = map_stop_reason(&reason, details)?;
                    out.message.raw_stop_reason = Some(reason);
                    self.stop = Some(stop);
                    self.stop_error = error;
                }
                match &delta.usage {
                    Some(usage) => self.apply_usage(usage, out, false),
                    None => self.publish_usage(out),
                }
            }
            "message_stop" => self.saw_stop = true,
            "error" => {
                // `{"type":"error","error":{"type":"overloaded_error","message":…}}`: the
                // error's type decides the class.
                let text = String::from_utf8_lossy(event.data).into_owned();
                let json = serde_json::from_slice::<Value>(event.data).unwrap_or_default();
                let codes = crate::http::error_codes(&json);
                return Err(Fail::Other(StreamFailure::provider(None, &codes, text)));
            }
            _ => {}
        }
        Ok(())
    }
}

fn map_stop_reason(
    reason: &str,
    details: Option<&Value>,
) -> Result<(StopReason, Option<String>), StreamFailure> {
    Ok(match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => (StopReason::Stop, None),
        "max_tokens" => (StopReason::Length, None),
        "tool_use" => (StopReason::ToolUse, None),
        "refusal" => (
            StopReason::Error,
            Some(
                details
                    .and_then(|d| d.get("explanation"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .unwrap_or("The model refused to complete the request")
                    .to_owned(),
            ),
        ),
        "sensitive" => (
            StopReason::Error,
            Some("Provider stopped with: sensitive".to_owned()),
        ),
        other => {
            return Err(StreamFailure::other(format!(
                "Unhandled stop reason: {other}"
            )));
        }
    })
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        with_repair(self, &event, out, Self::handle)
    }

    fn finish(&mut self, _out: &mut Output) -> Result<StopReason, StreamFailure> {
        if self.saw_start && !self.saw_stop {
            return Err(StreamFailure::network(
                "Anthropic stream ended before message_stop",
            ));
        }
        match self.stop {
            None => Err(StreamFailure::network(
                "Anthropic stream ended without a stop reason",
            )),
            // A refusal or a safety stop: the model's answer, not a transient failure.
            Some(StopReason::Error) => Err(StreamFailure::other(
                self.stop_error
                    .clone()
                    .unwrap_or_else(|| "An unknown error occurred".to_owned()),
            )),
            Some(reason) => Ok(reason),
        }
    }
}
