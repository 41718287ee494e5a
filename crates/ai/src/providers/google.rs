//! `google-generative-ai`: the Gemini API (`streamGenerateContent?alt=sse`).

use std::borrow::Cow;

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
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::http::join_url;
use crate::model::Model;
use crate::model::ThinkingLevel;
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
    decoder: |_, _, _| Box::new(GoogleDecoder::default()),
    error_style: ErrorStyle::ErrorMessage,
};

fn gemini_major(id: &str) -> Option<u32> {
    let lower = id.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("gemini-live-")
        .or_else(|| lower.strip_prefix("gemini-"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Models behind Google APIs that need explicit tool-call ids.
fn requires_tool_call_id(id: &str) -> bool {
    id.starts_with("claude-")
        || id.starts_with("gpt-oss-")
        || gemini_major(id).is_some_and(|v| v >= 3)
}

/// Gemini 3+ accepts images inside function responses.
fn multimodal_function_response(id: &str) -> bool {
    gemini_major(id).is_none_or(|v| v >= 3)
}

fn family_matches(id: &str, family: &str) -> bool {
    // `gemini-3-pro`, `gemini-3.1-pro-preview`, ...
    let lower = id.to_ascii_lowercase();
    let Some(rest) = lower
        .find("gemini-3")
        .map(|i| &lower[i + "gemini-3".len()..])
    else {
        return false;
    };
    let rest = rest
        .strip_prefix('.')
        .map(|r| r.trim_start_matches(|c: char| c.is_ascii_digit()))
        .unwrap_or(rest);
    rest.starts_with(&format!("-{family}"))
}

fn is_gemini3_pro(id: &str) -> bool {
    family_matches(id, "pro")
}

fn is_gemini3_flash(id: &str) -> bool {
    family_matches(id, "flash") || id == "gemini-flash-latest" || id == "gemini-flash-lite-latest"
}

fn is_gemma4(id: &str) -> bool {
    let lower = id.to_ascii_lowercase();
    lower.contains("gemma-4") || lower.contains("gemma4")
}

/// Thought signatures are base64 bytes; anything else would be rejected.
fn valid_signature(signature: Option<&str>) -> Option<&str> {
    signature.filter(|s| {
        !s.is_empty()
            && s.len() % 4 == 0
            && s.trim_end_matches('=').len() + 2 >= s.len()
            && s.trim_end_matches('=')
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
    })
}

fn thinking_config(model: &Model, options: &StreamOptions) -> Result<Option<Value>, StreamFailure> {
    if !model.reasoning {
        return Ok(None);
    }
    let id = model.id.as_str();
    if options.thinking == ThinkingLevel::Off {
        // Gemini 3 cannot turn thinking off: use its lowest level, without thought summaries.
        return Ok(Some(if is_gemini3_pro(id) {
            json!({"thinkingLevel": "LOW"})
        } else if is_gemini3_flash(id) || is_gemma4(id) {
            json!({"thinkingLevel": "MINIMAL"})
        } else {
            json!({"thinkingBudget": 0})
        }));
    }
    let level = model.clamp_thinking_level(options.thinking);
    let resolved = match level {
        ThinkingLevel::Off => "high".to_owned(),
        other => model
            .level_map(other)
            .value()
            .map_or_else(|| other.as_str().to_owned(), str::to_ascii_lowercase),
    };
    let resolved = match resolved.as_str() {
        "minimal" | "low" | "medium" | "high" => resolved,
        _ => {
            return Err(StreamFailure::other(format!(
                "Unsupported Google thinking level mapping for {}/{}: {} -> {resolved}",
                model.provider,
                model.id,
                level.as_str()
            )));
        }
    };
    if is_gemini3_pro(id) || is_gemini3_flash(id) || is_gemma4(id) {
        let api_level = match (resolved.as_str(), is_gemini3_pro(id), is_gemma4(id)) {
            ("minimal" | "low", true, _) => "LOW",
            (_, true, _) => "HIGH",
            ("minimal" | "low", _, true) => "MINIMAL",
            (_, _, true) => "HIGH",
            ("minimal", ..) => "MINIMAL",
            ("low", ..) => "LOW",
            ("medium", ..) => "MEDIUM",
            _ => "HIGH",
        };
        return Ok(Some(
            json!({"includeThoughts": true, "thinkingLevel": api_level}),
        ));
    }
    let index = ["minimal", "low", "medium", "high"]
        .iter()
        .position(|l| *l == resolved)
        .unwrap_or(3);
    let custom = [
        options.thinking_budgets.minimal,
        options.thinking_budgets.low,
        options.thinking_budgets.medium,
        options.thinking_budgets.high,
    ][index];
    let budget: i64 = match custom {
        Some(b) => b as i64,
        None if id.contains("2.5-pro") => [128, 2048, 8192, 32768][index],
        None if id.contains("2.5-flash-lite") => [512, 2048, 8192, 24576][index],
        None if id.contains("2.5-flash") => [128, 2048, 8192, 24576][index],
        // Unknown models: let the server decide.
        None => -1,
    };
    Ok(Some(
        json!({"includeThoughts": true, "thinkingBudget": budget}),
    ))
}

pub(crate) fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    let Some(key) = options.api_key.as_deref().filter(|k| !k.is_empty()) else {
        return Err(crate::auth::no_api_key_failure(&model.provider));
    };
    let mut headers = base_headers(model, user_agent);
    headers.merge(Some(&options.headers));
    if !headers.has("authorization") && !headers.has("x-goog-api-key") {
        headers.set("x-goog-api-key", key);
    }
    headers.set("content-type", "application/json");
    let path = format!("/models/{}:streamGenerateContent?alt=sse", model.id);
    Ok(HttpRequest {
        url: join_url(&model.base_url, &path),
        headers,
        body: request_body(model, context, options)?,
    })
}

/// The `GenerateContentRequest` JSON, which Vertex AI takes as the Gemini API does.
pub(super) fn request_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<Vec<u8>, StreamFailure> {
    let max_tokens = clamp_max_tokens_to_context(
        model,
        context,
        options
            .max_tokens
            .unwrap_or_else(|| crate::options::default_max_tokens(model)),
    );
    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(convert_contents(model, context)),
    );
    if let Some(prompt) = &context.system_prompt {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": prompt}], "role": "user"}),
        );
    }
    if !context.tools.is_empty() {
        let declarations: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "parametersJsonSchema": tool.parameters,
                })
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    let mut generation = Map::new();
    if let Some(temperature) = options.temperature {
        generation.insert("temperature".into(), json!(temperature));
    }
    generation.insert("maxOutputTokens".into(), json!(max_tokens));
    if let Some(config) = thinking_config(model, options)? {
        generation.insert("thinkingConfig".into(), config);
    }
    body.insert("generationConfig".into(), Value::Object(generation));
    serde_json::to_vec(&Value::Object(body)).map_err(|e| StreamFailure::other(e.to_string()))
}

fn inline_data(image: &knightcode_protocol::ImageContent) -> Value {
    json!({"inlineData": {"mimeType": image.mime_type, "data": image.data}})
}

fn convert_contents(model: &Model, context: &Context) -> Vec<Value> {
    let needs_id = requires_tool_call_id(&model.id);
    let normalize = |id: &str, _: &AssistantMessage| {
        if needs_id {
            crate::providers::anthropic::normalize_tool_call_id(id)
        } else {
            id.to_owned()
        }
    };
    let messages = prepare_messages(&context.messages, model, Some(&normalize));
    let mut contents: Vec<Value> = Vec::new();
    for message in &messages {
        match message {
            LlmMessage::User(UserContent::Text(text)) => {
                contents.push(json!({"role": "user", "parts": [{"text": text}]}));
            }
            LlmMessage::User(UserContent::Blocks(blocks)) => {
                let parts: Vec<Value> = blocks
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => Some(json!({"text": t.text})),
                        ContentBlock::Image(i) => Some(inline_data(i)),
                        _ => None,
                    })
                    .collect();
                if !parts.is_empty() {
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
            LlmMessage::Assistant(assistant) => {
                let parts = assistant_parts(model, assistant, needs_id);
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            LlmMessage::ToolResult(result) => {
                let texts: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(ContentBlock::as_text)
                    .collect();
                let text = texts.join("\n");
                let images: Vec<Value> = if model.supports_images() {
                    result
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Image(i) => Some(inline_data(i)),
                            _ => None,
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let value = if !text.is_empty() {
                    text
                } else if !images.is_empty() {
                    "(see attached image)".to_owned()
                } else {
                    String::new()
                };
                let multimodal = multimodal_function_response(&model.id);
                let mut response = Map::new();
                response.insert("name".into(), json!(result.tool_name));
                response.insert(
                    "response".into(),
                    if result.is_error {
                        json!({"error": value})
                    } else {
                        json!({"output": value})
                    },
                );
                if !images.is_empty() && multimodal {
                    response.insert("parts".into(), Value::Array(images.clone()));
                }
                if needs_id {
                    response.insert("id".into(), json!(result.tool_call_id));
                }
                let part = json!({"functionResponse": response});
                // All function responses of a turn go into one user content.
                let merged = contents.last_mut().is_some_and(|last| {
                    let is_user = last.get("role").and_then(Value::as_str) == Some("user");
                    let parts = last.get_mut("parts").and_then(Value::as_array_mut);
                    match parts {
                        Some(parts)
                            if is_user
                                && parts.iter().any(|p| p.get("functionResponse").is_some()) =>
                        {
                            parts.push(part.clone());
                            true
                        }
                        _ => false,
                    }
                });
                if !merged {
                    contents.push(json!({"role": "user", "parts": [part]}));
                }
                if !images.is_empty() && !multimodal {
                    let mut parts = vec![json!({"text": "Tool result image:"})];
                    parts.extend(images);
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
        }
    }
    contents
}

fn assistant_parts<'a>(model: &Model, message: &'a AssistantMessage, needs_id: bool) -> Vec<Value> {
    let same = message.provider == model.provider && message.model == model.id;
    let signature =
        |s: Option<&'a str>| -> Option<&'a str> { if same { valid_signature(s) } else { None } };
    let mut parts = Vec::new();
    for block in message.content.iter() {
        match block {
            ContentBlock::Text(t) => {
                let sig = signature(t.text_signature.as_deref());
                if t.text.trim().is_empty() && sig.is_none() {
                    continue;
                }
                let mut part = Map::new();
                part.insert("text".into(), json!(t.text));
                if let Some(sig) = sig {
                    part.insert("thoughtSignature".into(), json!(sig));
                }
                parts.push(Value::Object(part));
            }
            ContentBlock::Thinking(t) if same => {
                let sig = signature(t.thinking_signature.as_deref());
                if t.thinking.trim().is_empty() && sig.is_none() {
                    continue;
                }
                let mut part = Map::new();
                part.insert("thought".into(), json!(true));
                part.insert("text".into(), json!(t.thinking));
                if let Some(sig) = sig {
                    part.insert("thoughtSignature".into(), json!(sig));
                }
                parts.push(Value::Object(part));
            }
            ContentBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                parts.push(json!({"text": t.thinking}));
            }
            ContentBlock::ToolCall(call) => {
                let mut function = Map::new();
                function.insert("name".into(), json!(call.name));
                function.insert("args".into(), call.arguments.clone());
                if needs_id {
                    function.insert("id".into(), json!(call.id));
                }
                let mut part = Map::new();
                part.insert("functionCall".into(), Value::Object(function));
                if let Some(sig) = signature(call.thought_signature.as_deref()) {
                    part.insert("thoughtSignature".into(), json!(sig));
                }
                parts.push(Value::Object(part));
            }
            _ => {}
        }
    }
    parts
}

// ---------------------------------------------------------------------------------------------
// Response decoding

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk<'a> {
    response_id: Option<String>,
    #[serde(default, borrow)]
    candidates: Vec<Candidate<'a>>,
    usage_metadata: Option<UsageMetadata>,
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate<'a> {
    #[serde(borrow)]
    content: Option<CandidateContent<'a>>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct CandidateContent<'a> {
    #[serde(default, borrow)]
    parts: Vec<Part<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    thought: Option<bool>,
    thought_signature: Option<String>,
    function_call: Option<FunctionCall>,
}

#[derive(Deserialize)]
struct FunctionCall {
    id: Option<String>,
    name: Option<String>,
    args: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
    cached_content_token_count: Option<u64>,
    total_token_count: Option<u64>,
}

#[derive(Clone, Copy, PartialEq)]
enum Current {
    Text(usize),
    Thinking(usize),
}

#[derive(Default)]
pub(crate) struct GoogleDecoder {
    current: Option<Current>,
    stop: Option<StopReason>,
    generated_ids: u64,
}

/// A Gemini error object (`{"code": 429, "status": "RESOURCE_EXHAUSTED", "message": …}`)
/// inside the stream: its numeric code is an HTTP status, its status the kind.
fn error_failure(error: &Value) -> StreamFailure {
    let status = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok());
    let codes = crate::http::error_codes(error);
    StreamFailure::provider(status, &codes, error_text(error))
}

fn error_text(error: &Value) -> String {
    let code = error.get("code").map(|c| match c {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned);
    match code {
        Some(code) => format!("{code} {message}"),
        None => message,
    }
}

impl GoogleDecoder {
    fn close_current(&mut self, out: &mut Output) {
        match self.current.take() {
            Some(Current::Text(index)) => out.text_end(index),
            Some(Current::Thinking(index)) => out.thinking_end(index),
            None => {}
        }
    }

    fn handle(&mut self, event: &SseEvent<'_>, out: &mut Output) -> Result<(), Fail> {
        let chunk: Chunk<'_> = parse_event("Google", event)?;
        if let Some(error) = &chunk.error {
            return Err(Fail::Other(error_failure(error)));
        }
        if out.message.response_id.is_none() {
            out.message.response_id = chunk.response_id.filter(|id| !id.is_empty());
        }
        let candidate = chunk.candidates.into_iter().next();
        let (parts, finish) = match candidate {
            Some(c) => (
                c.content.map(|c| c.parts).unwrap_or_default(),
                c.finish_reason,
            ),
            None => (Vec::new(), None),
        };
        for part in parts {
            if let Some(text) = &part.text {
                let thinking = part.thought == Some(true);
                let index = match self.current {
                    Some(Current::Thinking(i)) if thinking => i,
                    Some(Current::Text(i)) if !thinking => i,
                    _ => {
                        self.close_current(out);
                        let index = if thinking {
                            out.thinking_start(ThinkingContent::default())
                        } else {
                            out.text_start()
                        };
                        self.current = Some(if thinking {
                            Current::Thinking(index)
                        } else {
                            Current::Text(index)
                        });
                        index
                    }
                };
                // Keep the last non-empty signature of the block.
                let signature = part.thought_signature.clone().filter(|s| !s.is_empty());
                if thinking {
                    out.thinking_delta(index, text);
                    if let (Some(sig), Some(block)) = (signature, out.thinking_mut(index)) {
                        block.thinking_signature = Some(sig);
                    }
                } else {
                    out.text_delta(index, text);
                    if let (Some(sig), Some(block)) = (signature, out.text_mut(index)) {
                        block.text_signature = Some(sig);
                    }
                }
            }
            if let Some(call) = part.function_call {
                self.close_current(out);
                let name = call.name.unwrap_or_default();
                let duplicate = |id: &str| {
                    out.message
                        .content
                        .iter()
                        .any(|b| matches!(b, ContentBlock::ToolCall(c) if c.id == id))
                };
                let id = match call.id.filter(|id| !id.is_empty() && !duplicate(id)) {
                    Some(id) => id,
                    None => {
                        self.generated_ids += 1;
                        format!("{name}_{}_{}", out.started_ms(), self.generated_ids)
                    }
                };
                let index = out.toolcall_start(&id, &name);
                let args = call.args.unwrap_or_else(|| json!({}));
                out.toolcall_delta(index, &args.to_string());
                if let Some(tool) = out.toolcall_mut(index) {
                    tool.thought_signature = part.thought_signature.filter(|s| !s.is_empty());
                }
                out.toolcall_end(index);
            }
        }
        if let Some(reason) = finish {
            let mut stop = match reason.as_str() {
                "STOP" => StopReason::Stop,
                "MAX_TOKENS" => StopReason::Length,
                _ => StopReason::Error,
            };
            let has_tools = out
                .message
                .content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolCall(_)));
            if stop == StopReason::Stop && has_tools {
                stop = StopReason::ToolUse;
            }
            out.message.raw_stop_reason = Some(reason);
            self.stop = Some(stop);
        }
        if let Some(u) = chunk.usage_metadata {
            let cached = u.cached_content_token_count.unwrap_or(0);
            let thoughts = u.thoughts_token_count.unwrap_or(0);
            let mut usage = Output::summed_usage(
                u.prompt_token_count.unwrap_or(0).saturating_sub(cached),
                u.candidates_token_count.unwrap_or(0) + thoughts,
                cached,
                0,
            );
            usage.reasoning = Some(Tokens(thoughts));
            usage.total_tokens = Tokens(u.total_token_count.unwrap_or(0));
            out.set_usage(usage);
        }
        Ok(())
    }
}

impl Decoder for GoogleDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        with_repair(self, &event, out, Self::handle)
    }

    fn wants_raw_lines(&self) -> bool {
        true
    }

    fn raw(&mut self, value: Value, _out: &mut Output) -> Result<(), StreamFailure> {
        match value.get("error") {
            Some(error) => Err(error_failure(error)),
            None => Ok(()),
        }
    }

    fn finish(&mut self, out: &mut Output) -> Result<StopReason, StreamFailure> {
        self.close_current(out);
        match self.stop {
            None => Err(StreamFailure::network(
                "Google stream ended without a finish reason",
            )),
            Some(StopReason::Error) => Err(StreamFailure::from_text(format!(
                "Provider stopped with: {}",
                out.message
                    .raw_stop_reason
                    .as_deref()
                    .unwrap_or("an unknown reason")
            ))),
            Some(reason) => Ok(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        assert!(is_gemini3_pro("gemini-3.1-pro-preview"));
        assert!(is_gemini3_pro("gemini-3-pro"));
        assert!(is_gemini3_flash("gemini-3-flash-preview"));
        assert!(is_gemini3_flash("gemini-3.5-flash-lite"));
        assert!(!is_gemini3_flash("gemini-2.5-flash"));
        assert!(is_gemma4("gemma-4-31b-it"));
        assert!(requires_tool_call_id("gemini-3-flash-preview"));
        assert!(!requires_tool_call_id("gemini-2.5-pro"));
        assert!(!multimodal_function_response("gemini-2.5-pro"));
        assert_eq!(valid_signature(Some("c2ln")), Some("c2ln"));
        assert_eq!(valid_signature(Some("sig-1")), None);
    }
}
