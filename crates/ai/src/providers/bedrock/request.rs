//! The `ConverseStream` request body, field for field as the reference builds it and the
//! AWS SDK serialises it (members in the service model's order): `messages`, `system`,
//! `inferenceConfig`, `toolConfig`, `additionalModelRequestFields`.
//!
//! - Consecutive tool results travel together in one user message (Bedrock requires it).
//! - Claude models that cache (4.x, 3.7 Sonnet, 3.5 Haiku) get a `cachePoint` after the
//!   system prompt and at the end of the last user message (`ttl: "1h"` for long retention).
//! - Reasoning replays as `reasoningContent`; for Claude only with its signature (a block
//!   without one goes back as text), for other models without one (they reject the field).
//! - Thinking is requested through `additionalModelRequestFields` for Claude only: adaptive
//!   with an effort on Opus 4.6/4.7 and Sonnet 4.6, a token budget (plus the interleaved
//!   thinking beta) on the others.

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::ImageContent;
use knightcode_protocol::ToolResultMessage;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::error::StreamFailure;
use crate::model::Model;
use crate::model::ThinkingLevel;
use crate::options::CacheRetention;
use crate::options::Context;
use crate::options::StreamOptions;
use crate::options::clamp_max_tokens_to_context;
use crate::transform::LlmMessage;
use crate::transform::UserContent;
use crate::transform::prepare_messages;

/// The model's id and name, lower-cased, also with separators as dashes: application
/// inference profiles have ARNs without the model's name, so the name counts too.
fn candidates(model: &Model) -> Vec<String> {
    let mut values = vec![model.id.as_str()];
    if !model.name.is_empty() {
        values.push(model.name.as_str());
    }
    values
        .into_iter()
        .flat_map(|value| {
            let lower = value.to_lowercase();
            let dashed: String = lower
                .split(|c: char| c.is_whitespace() || matches!(c, '_' | '.' | ':'))
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join("-");
            [lower, dashed]
        })
        .collect()
}

pub(crate) fn is_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude")
        || id.contains("anthropic/claude")
        || name.contains("anthropic.claude")
        || name.contains("anthropic/claude")
        || name.contains("claude")
}

fn adaptive_thinking(model: &Model) -> bool {
    candidates(model)
        .iter()
        .any(|s| s.contains("opus-4-6") || s.contains("opus-4-7") || s.contains("sonnet-4-6"))
}

fn caches_prompts(model: &Model, force_cache: bool) -> bool {
    let candidates = candidates(model);
    if !candidates.iter().any(|s| s.contains("claude")) {
        // Application inference profiles: the ARN does not say; the user can.
        return force_cache;
    }
    candidates.iter().any(|s| {
        s.contains("-4-") || s.contains("claude-3-7-sonnet") || s.contains("claude-3-5-haiku")
    })
}

/// What the request depends on besides the model and the conversation.
pub(crate) struct RequestEnv<'a> {
    /// The region the request goes to (GovCloud omits Claude's `thinking.display`).
    pub(crate) region: Option<&'a str>,
    /// `AWS_BEDROCK_FORCE_CACHE=1`.
    pub(crate) force_cache: bool,
}

pub(crate) fn body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    env: &RequestEnv<'_>,
) -> Result<Value, StreamFailure> {
    let retention = options.cache_retention();
    let cache = (retention != CacheRetention::None && caches_prompts(model, env.force_cache))
        .then(|| cache_point(retention));
    let level = if model.reasoning && options.thinking != ThinkingLevel::Off {
        model.clamp_thinking_level(options.thinking)
    } else {
        ThinkingLevel::Off
    };
    let requested = options
        .max_tokens
        .unwrap_or_else(|| crate::options::default_max_tokens(model));
    let mut max_tokens = (requested > 0).then_some(requested);
    let mut budget = None;
    if level != ThinkingLevel::Off && is_claude(model) && !adaptive_thinking(model) {
        // The reference raises the cap by the budget (up to the model's limit) and, when the
        // limit leaves no room, shrinks the budget instead.
        let mut thinking_budget = options.thinking_budgets.for_level(level);
        let raised = (requested + thinking_budget).min(model.max_tokens);
        if raised <= thinking_budget {
            thinking_budget = raised.saturating_sub(crate::options::MIN_ANSWER_TOKENS);
        }
        max_tokens = Some(raised);
        budget = Some(thinking_budget);
    }
    let max_tokens = max_tokens.map(|m| clamp_max_tokens_to_context(model, context, m));

    let mut body = Map::new();
    body.insert(
        "messages".into(),
        Value::Array(messages(model, context, cache.as_ref())?),
    );
    if let Some(prompt) = &context.system_prompt
        && !prompt.is_empty()
    {
        let mut system = vec![json!({"text": prompt})];
        system.extend(cache);
        body.insert("system".into(), Value::Array(system));
    }
    let mut inference = Map::new();
    if let Some(max_tokens) = max_tokens {
        inference.insert("maxTokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        inference.insert("temperature".into(), json!(temperature));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"toolSpec": {
                    "name": tool.name,
                    "inputSchema": {"json": tool.parameters},
                    "description": tool.description,
                }})
            })
            .collect();
        body.insert("toolConfig".into(), json!({"tools": tools}));
    }
    if level != ThinkingLevel::Off && is_claude(model) {
        body.insert(
            "additionalModelRequestFields".into(),
            thinking_fields(model, level, budget, env),
        );
    }
    Ok(Value::Object(body))
}

fn cache_point(retention: CacheRetention) -> Value {
    if retention == CacheRetention::Long {
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    } else {
        json!({"cachePoint": {"type": "default"}})
    }
}

fn thinking_fields(
    model: &Model,
    level: ThinkingLevel,
    budget: Option<u64>,
    env: &RequestEnv<'_>,
) -> Value {
    let id = model.id.to_lowercase();
    let gov_cloud = env
        .region
        .is_some_and(|r| r.to_lowercase().starts_with("us-gov-"))
        || id.starts_with("us-gov.")
        || id.starts_with("arn:aws-us-gov:");
    let mut thinking = Map::new();
    let mut fields = Map::new();
    match budget {
        None => {
            thinking.insert("type".into(), json!("adaptive"));
            if !gov_cloud {
                thinking.insert("display".into(), json!("summarized"));
            }
            fields.insert("thinking".into(), Value::Object(thinking));
            fields.insert(
                "output_config".into(),
                json!({"effort": effort(model, level)}),
            );
        }
        Some(budget) => {
            thinking.insert("type".into(), json!("enabled"));
            thinking.insert("budget_tokens".into(), json!(budget));
            if !gov_cloud {
                thinking.insert("display".into(), json!("summarized"));
            }
            fields.insert("thinking".into(), Value::Object(thinking));
            fields.insert(
                "anthropic_beta".into(),
                json!(["interleaved-thinking-2025-05-14"]),
            );
        }
    }
    Value::Object(fields)
}

fn effort(model: &Model, level: ThinkingLevel) -> String {
    if level >= ThinkingLevel::Xhigh && candidates(model).iter().any(|s| s.contains("opus-4-7")) {
        return "xhigh".to_owned();
    }
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

/// Bedrock's tool-use ids: letters, digits, `_` and `-`, at most 64.
fn normalize_tool_call_id(id: &str) -> String {
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

fn image(image: &ImageContent) -> Result<Value, StreamFailure> {
    let format = match image.mime_type.as_str() {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => {
            return Err(StreamFailure::other(format!(
                "Unknown image type: {other} (Bedrock takes JPEG, PNG, GIF and WebP images)"
            )));
        }
    };
    Ok(json!({"image": {"format": format, "source": {"bytes": image.data}}}))
}

fn messages(
    model: &Model,
    context: &Context,
    cache: Option<&Value>,
) -> Result<Vec<Value>, StreamFailure> {
    let normalize = |id: &str, _: &AssistantMessage| normalize_tool_call_id(id);
    let prepared = prepare_messages(&context.messages, model, Some(&normalize));
    let mut out: Vec<Value> = Vec::with_capacity(prepared.len());
    // Whether the last message pushed holds tool results, so the next joins it.
    let mut open_results = false;
    for message in &prepared {
        let joins = matches!(message, LlmMessage::ToolResult(_)) && open_results;
        open_results = matches!(message, LlmMessage::ToolResult(_));
        match message {
            LlmMessage::User(UserContent::Text(text)) => {
                out.push(json!({"role": "user", "content": [{"text": text}]}));
            }
            LlmMessage::User(UserContent::Blocks(blocks)) => {
                let mut content = Vec::new();
                for block in blocks.iter() {
                    match block {
                        ContentBlock::Text(t) => content.push(json!({"text": t.text})),
                        ContentBlock::Image(i) => content.push(image(i)?),
                        _ => {}
                    }
                }
                out.push(json!({"role": "user", "content": content}));
            }
            LlmMessage::Assistant(assistant) => {
                if let Some(message) = assistant_message(model, assistant) {
                    out.push(message);
                }
            }
            LlmMessage::ToolResult(result) => {
                let block = tool_result(result)?;
                match out.last_mut().and_then(|last| last.get_mut("content")) {
                    Some(Value::Array(content)) if joins => content.push(block),
                    _ => out.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    if let Some(cache) = cache
        && let Some(last) = out.last_mut()
        && last.get("role").and_then(Value::as_str) == Some("user")
        && let Some(Value::Array(content)) = last.get_mut("content")
    {
        content.push(cache.clone());
    }
    Ok(out)
}

fn assistant_message(model: &Model, message: &AssistantMessage) -> Option<Value> {
    let signatures = is_claude(model);
    let mut content = Vec::new();
    for block in message.content.iter() {
        match block {
            ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                content.push(json!({"text": t.text}));
            }
            ContentBlock::ToolCall(call) => content.push(json!({"toolUse": {
                "toolUseId": call.id,
                "name": call.name,
                "input": call.arguments,
            }})),
            ContentBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                let signature = t
                    .thinking_signature
                    .as_deref()
                    .filter(|s| !s.trim().is_empty());
                content.push(match (signatures, signature) {
                    // A Claude block without its signature would be rejected: send the text.
                    (true, None) => json!({"text": t.thinking}),
                    (true, Some(signature)) => json!({"reasoningContent": {"reasoningText": {
                        "text": t.thinking, "signature": signature}}}),
                    (false, _) => {
                        json!({"reasoningContent": {"reasoningText": {"text": t.thinking}}})
                    }
                });
            }
            _ => {}
        }
    }
    (!content.is_empty()).then(|| json!({"role": "assistant", "content": content}))
}

fn tool_result(result: &ToolResultMessage) -> Result<Value, StreamFailure> {
    let mut content = Vec::new();
    for block in result.content.iter() {
        match block {
            ContentBlock::Image(i) => content.push(image(i)?),
            ContentBlock::Text(t) => content.push(json!({"text": t.text})),
            _ => {}
        }
    }
    Ok(json!({"toolResult": {
        "toolUseId": result.tool_call_id,
        "content": content,
        "status": if result.is_error { "error" } else { "success" },
    }}))
}
