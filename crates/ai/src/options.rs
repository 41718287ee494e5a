//! What a caller passes for one model call: the context and the options.

use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::ToolDeclaration;
use std::sync::Arc;

use serde_json::Map;
use serde_json::Value;

use crate::model::Model;
use crate::model::ThinkingLevel;
use crate::retry::ProviderRetry;

/// The conversation sent to the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    /// The rendered system prompt.
    pub system_prompt: Option<String>,
    /// Session messages in order. System messages are skipped (the prompt travels in
    /// `system_prompt`); bash executions, custom messages and summaries become user text.
    /// Shared with the conversation they come from: a request does not copy the history.
    pub messages: Vec<Arc<AgentMessage>>,
    /// Tool declarations: name, description, JSON-schema parameters.
    pub tools: Vec<ToolDeclaration>,
}

/// Prompt-cache retention (providers.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheRetention {
    None,
    #[default]
    Short,
    Long,
}

impl CacheRetention {
    /// What `KNIGHTCODE_CACHE_RETENTION` (pass its value) asks of requests that choose no
    /// lifetime themselves: `long`, or nothing (`None`: the short default).
    pub fn from_env_value(value: Option<&str>) -> Option<Self> {
        (value == Some("long")).then_some(Self::Long)
    }
}

/// Thinking budgets per level (`thinkingBudgets` setting); unset levels use the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThinkingBudgets {
    pub minimal: Option<u64>,
    pub low: Option<u64>,
    pub medium: Option<u64>,
    pub high: Option<u64>,
}

/// Tokens always left for the answer when thinking shares the output budget.
pub const MIN_ANSWER_TOKENS: u64 = 1024;
const CONTEXT_SAFETY_TOKENS: u64 = 4096;

impl ThinkingBudgets {
    /// The budget for a level; `xhigh`/`max` count as `high`, `off` as 0.
    pub fn for_level(&self, level: ThinkingLevel) -> u64 {
        match level {
            ThinkingLevel::Off => 0,
            ThinkingLevel::Minimal => self.minimal.unwrap_or(1024),
            ThinkingLevel::Low => self.low.unwrap_or(2048),
            ThinkingLevel::Medium => self.medium.unwrap_or(8192),
            ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => {
                self.high.unwrap_or(16384)
            }
        }
    }
}

/// Options of one model call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamOptions {
    /// The resolved API key (see [`crate::auth`]); `None` only works when a header carries
    /// the credentials.
    pub api_key: Option<String>,
    /// Requested reasoning level; clamped to the model's capabilities.
    pub thinking: ThinkingLevel,
    /// Output token cap; defaults to the model's `maxTokens`, then clamped to the context.
    pub max_tokens: Option<u64>,
    pub temperature: Option<f64>,
    /// `None` means [`CacheRetention::Short`].
    pub cache_retention: Option<CacheRetention>,
    /// Session id for prompt-cache keys and affinity headers.
    pub session_id: Option<String>,
    /// Extra request headers (win over model headers); a `null` value removes a header.
    pub headers: Map<String, Value>,
    pub thinking_budgets: ThinkingBudgets,
    /// Extra request-body fields, merged last (openai-completions / openai-responses).
    pub sampling_params: Option<Map<String, Value>>,
    /// Provider-level HTTP retry and idle timeout.
    pub retry: ProviderRetry,
    /// Sees (and may replace) the JSON body before it is sent.
    pub payload_hook: Option<PayloadHook>,
    /// Sees the status and headers of a response before its body is read.
    pub response_hook: Option<ResponseHook>,
    /// Sees (and may change) the request headers before they are sent.
    pub headers_hook: Option<HeadersHook>,
    /// Told each parsed stream event before it is decoded.
    pub stream_event_hook: Option<StreamEventHook>,
    /// Why this request is made; a virtual model's router sees it.
    pub reason: RequestReason,
}

/// Why a model request is made, as a virtual model's `route()` is told (`request.reason`).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum RequestReason {
    /// The first request after a message the user wrote (steering and follow-ups too).
    User,
    /// Any other request of the agent loop (after tool results, a hook asking for more).
    Continuation,
    /// An automatic retry; `failed` is the response that failed, when known.
    Retry {
        failed: Option<std::sync::Arc<knightcode_protocol::AssistantMessage>>,
    },
    /// A request outside the agent loop (a compaction summary, an extension's own call).
    #[default]
    Direct,
}

impl RequestReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Continuation => "continuation",
            Self::Retry { .. } => "retry",
            Self::Direct => "direct",
        }
    }
}

/// The boxed future a [`HeadersHook`] returns: the headers to send.
pub type HeadersFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Map<String, Value>> + Send>>;

/// Rewrites the request headers (name to value; a `null` value or a missing name drops
/// the header) after everything else set them: the extensions' `before_provider_headers`.
/// Compared by identity.
#[derive(Clone)]
pub struct HeadersHook(
    pub std::sync::Arc<dyn Fn(Map<String, Value>) -> HeadersFuture + Send + Sync>,
);

impl std::fmt::Debug for HeadersHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HeadersHook")
    }
}

impl PartialEq for HeadersHook {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Told each stream event as parsed from the wire, before it is decoded, and awaited
/// (so a slow hook slows the stream): the extensions' `provider_stream_event`. Gets
/// `{provider, api, model, data}`, `data` being the event's JSON (its text when it is not
/// JSON). Compared by identity.
#[derive(Clone)]
pub struct StreamEventHook(pub std::sync::Arc<dyn Fn(Value) -> ResponseFuture + Send + Sync>);

impl std::fmt::Debug for StreamEventHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamEventHook")
    }
}

impl PartialEq for StreamEventHook {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The boxed future a [`ResponseHook`] returns.
pub type ResponseFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Told the status and headers (lower-case names) of each successful response before its
/// body is read: the extensions' `after_provider_response`. Compared by identity.
#[derive(Clone)]
pub struct ResponseHook(
    pub std::sync::Arc<dyn Fn(u16, Map<String, Value>) -> ResponseFuture + Send + Sync>,
);

impl std::fmt::Debug for ResponseHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResponseHook")
    }
}

impl PartialEq for ResponseHook {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The boxed future a [`PayloadHook`] returns.
pub type PayloadFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Value> + Send>>;

/// Rewrites a request body (wire-format JSON) before it is sent: the runtime's
/// provider-payload hook. Compared by identity.
#[derive(Clone)]
pub struct PayloadHook(pub std::sync::Arc<dyn Fn(Value) -> PayloadFuture + Send + Sync>);

impl std::fmt::Debug for PayloadHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PayloadHook")
    }
}

impl PartialEq for PayloadHook {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl StreamOptions {
    pub fn cache_retention(&self) -> CacheRetention {
        self.cache_retention.unwrap_or_default()
    }

    /// Model sampling defaults ← per-level overrides ← request fields (later wins per key).
    pub(crate) fn merged_sampling_params(
        &self,
        model: &Model,
        level: ThinkingLevel,
    ) -> Option<Map<String, Value>> {
        let by_level = model
            .sampling_params_by_thinking_level
            .as_ref()
            .and_then(|m| m.get(level.as_str()))
            .and_then(Value::as_object);
        if model.sampling_params.is_none() && by_level.is_none() && self.sampling_params.is_none() {
            return None;
        }
        let mut merged = Map::new();
        for source in [
            model.sampling_params.as_ref(),
            by_level,
            self.sampling_params.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            for (key, value) in source {
                merged.insert(key.clone(), value.clone());
            }
        }
        Some(merged)
    }
}

/// A request: model, conversation and options.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRequest {
    pub model: Model,
    pub context: Context,
    pub options: StreamOptions,
}

fn utf16_len(text: &str) -> u64 {
    text.encode_utf16().count() as u64
}

fn blocks_chars(blocks: &[ContentBlock]) -> u64 {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => utf16_len(&t.text),
            ContentBlock::Image(_) => 4800,
            ContentBlock::Thinking(t) => utf16_len(&t.thinking),
            ContentBlock::ToolCall(c) => {
                utf16_len(&c.name)
                    + serde_json::to_string(&c.arguments).map_or(0, |s| utf16_len(&s))
            }
            ContentBlock::Unknown(_) => 0,
        })
        .sum()
}

/// Rough token count of one message: characters / 4, images 1200 tokens.
pub fn estimate_message_tokens(message: &AgentMessage) -> u64 {
    let chars = match message {
        AgentMessage::System(m) => {
            let sections: u64 = m
                .sections
                .iter()
                .flat_map(|s| s.iter())
                .map(|(_, text)| text.map_or(0, utf16_len))
                .sum();
            let tools = m
                .tools_added
                .as_ref()
                .and_then(|t| serde_json::to_string(t).ok())
                .map_or(0, |s| utf16_len(&s));
            content_chars(&m.content) + sections + tools
        }
        AgentMessage::User(m) => content_chars(&m.content),
        AgentMessage::Custom(m) => content_chars(&m.content),
        AgentMessage::Assistant(m) => blocks_chars(&m.content),
        AgentMessage::ToolResult(m) => blocks_chars(&m.content),
        AgentMessage::BashExecution(m) => utf16_len(&m.command) + utf16_len(&m.output),
        AgentMessage::BranchSummary(m) => utf16_len(&m.summary),
        AgentMessage::CompactionSummary(m) => utf16_len(&m.summary),
        AgentMessage::Unknown(_) => 0,
    };
    chars.div_ceil(4)
}

fn content_chars(content: &knightcode_protocol::Content) -> u64 {
    match content {
        knightcode_protocol::Content::Text(t) => utf16_len(t),
        knightcode_protocol::Content::Blocks(b) => blocks_chars(b),
    }
}

/// The context size a response's usage reports (total, else the sum of its parts); `None`
/// for a failed or aborted response or one without usage, which say nothing about it.
pub fn usage_tokens(message: &knightcode_protocol::AssistantMessage) -> Option<u64> {
    if matches!(
        message.stop_reason.known(),
        Some(StopReason::Error | StopReason::Aborted)
    ) {
        return None;
    }
    let u = &message.usage;
    let tokens = if u.total_tokens.0 > 0 {
        u.total_tokens.0
    } else {
        u.input.0 + u.output.0 + u.cache_read.0 + u.cache_write.0
    };
    (tokens > 0).then_some(tokens)
}

/// `(usage tokens, trailing estimate)`: the last usable assistant usage plus estimates of the
/// messages after it; without such usage, everything (prompt and tools included) is estimated.
pub fn estimate_context_tokens(context: &Context) -> (u64, u64) {
    let usable = context
        .messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| match &**m {
            AgentMessage::Assistant(a) => usage_tokens(a).map(|tokens| (i, tokens)),
            _ => None,
        });
    match usable {
        Some((index, tokens)) => {
            let trailing = context.messages[index + 1..]
                .iter()
                .map(|m| estimate_message_tokens(m))
                .sum();
            (tokens, trailing)
        }
        None => {
            let prompt = context
                .system_prompt
                .as_deref()
                .map_or(0, |p| utf16_len(p).div_ceil(4));
            let tools = if context.tools.is_empty() {
                0
            } else {
                serde_json::to_string(&context.tools).map_or(0, |s| utf16_len(&s).div_ceil(4))
            };
            let messages: u64 = context
                .messages
                .iter()
                .map(|m| estimate_message_tokens(m))
                .sum();
            (0, prompt + tools + messages)
        }
    }
}

/// The output cap a request asks for when nothing sets one, as the reference asks: the
/// model's limit, at most this.
pub const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;

/// The output cap when the caller set none: the model's limit up to
/// [`DEFAULT_MAX_TOKENS_CAP`] (`0`, no cap sent, for a model without a known limit).
pub fn default_max_tokens(model: &Model) -> u64 {
    model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP)
}

/// `min(requested, max(1, window − (usage + ⌈trailing × 1.5⌉) − 4096))`.
pub fn clamp_max_tokens_to_context(model: &Model, context: &Context, requested: u64) -> u64 {
    if model.context_window == 0 {
        return requested.max(1);
    }
    let (usage, trailing) = estimate_context_tokens(context);
    let prompt = usage + (trailing as f64 * 1.5).ceil() as u64;
    let available = model
        .context_window
        .saturating_sub(prompt)
        .saturating_sub(CONTEXT_SAFETY_TOKENS);
    requested.min(available.max(1))
}

/// Caps a thinking budget so at least [`MIN_ANSWER_TOKENS`] remain under `ceiling`.
pub fn clamp_thinking_budget_to_answer_room(budget: u64, ceiling: u64) -> u64 {
    budget.min(ceiling.saturating_sub(MIN_ANSWER_TOKENS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Api;

    #[test]
    fn clamps_to_context() {
        let mut model = Model::new("p", "m", Api::OpenAiCompletions, "http://x");
        model.context_window = 10_000;
        let context = Context {
            messages: vec![AgentMessage::user("x".repeat(4000), Default::default()).into()],
            ..Context::default()
        };
        // 1000 estimated tokens × 1.5 = 1500; 10000 − 1500 − 4096 = 4404.
        assert_eq!(clamp_max_tokens_to_context(&model, &context, 8000), 4404);
        assert_eq!(clamp_max_tokens_to_context(&model, &context, 100), 100);
        model.context_window = 5000;
        assert_eq!(clamp_max_tokens_to_context(&model, &context, 8000), 1);
    }

    #[test]
    fn budgets() {
        let budgets = ThinkingBudgets {
            low: Some(100),
            ..ThinkingBudgets::default()
        };
        assert_eq!(budgets.for_level(ThinkingLevel::Low), 100);
        assert_eq!(budgets.for_level(ThinkingLevel::Xhigh), 16384);
        assert_eq!(clamp_thinking_budget_to_answer_room(16384, 8000), 6976);
        assert_eq!(clamp_thinking_budget_to_answer_room(16384, 500), 0);
    }
}
