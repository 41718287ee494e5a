//! The script a [`crate::MockServer`] plays: one [`ScriptedReply`] per incoming request.
//!
//! Every type here is serde-(de)serialisable so the `knightcode-mock-provider` binary can read a
//! script from a JSON file. Field names are camelCase in JSON; every field except the content has
//! a default, so `{"parts":[{"text":"hi"}]}` is a complete reply.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The provider wire format a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WireFormat {
    /// Anthropic Messages API: `POST /v1/messages`, named SSE events.
    AnthropicMessages,
    /// OpenAI Chat Completions: `POST /v1/chat/completions`, `data:` chunks ending in `[DONE]`.
    OpenAiCompletions,
    /// OpenAI Responses API: `POST /v1/responses`, named `response.*` SSE events.
    OpenAiResponses,
    /// Gemini API: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`.
    Google,
    /// Mistral's chat API: `POST /v1/chat/completions`, Mistral's chunk shapes (reasoning as
    /// `thinking` content chunks, whole tool calls). Not in [`WireFormat::ALL`]: only
    /// KnightCode's `mistral-conversations` client speaks it, tested on its own.
    Mistral,
    /// Amazon Bedrock's Converse API, streaming: `POST /model/{modelId}/converse-stream`,
    /// AWS event-stream frames, SigV4 or bearer auth checked. Not in [`WireFormat::ALL`].
    Bedrock,
}

impl WireFormat {
    /// The formats every client speaks, for tests that loop over them.
    pub const ALL: [WireFormat; 4] = [
        WireFormat::AnthropicMessages,
        WireFormat::OpenAiCompletions,
        WireFormat::OpenAiResponses,
        WireFormat::Google,
    ];

    /// The `model.api` name KnightCode uses for this format (`anthropic-messages`, ...).
    pub fn api_name(self) -> &'static str {
        match self {
            WireFormat::AnthropicMessages => "anthropic-messages",
            WireFormat::OpenAiCompletions => "openai-completions",
            WireFormat::OpenAiResponses => "openai-responses",
            WireFormat::Google => "google-generative-ai",
            WireFormat::Mistral => "mistral-conversations",
            WireFormat::Bedrock => "bedrock-converse-stream",
        }
    }

    /// Parses an api name; also accepts `google` for [`WireFormat::Google`].
    pub fn from_api_name(name: &str) -> Option<WireFormat> {
        match name {
            "anthropic-messages" => Some(WireFormat::AnthropicMessages),
            "openai-completions" => Some(WireFormat::OpenAiCompletions),
            "openai-responses" => Some(WireFormat::OpenAiResponses),
            "google" | "google-generative-ai" => Some(WireFormat::Google),
            "mistral" | "mistral-conversations" => Some(WireFormat::Mistral),
            "bedrock" | "bedrock-converse-stream" => Some(WireFormat::Bedrock),
            _ => None,
        }
    }
}

/// One scripted model answer, served to exactly one request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScriptedReply {
    /// Content blocks in stream order.
    pub parts: Vec<ReplyPart>,
    /// Token usage the stream reports.
    pub usage: MockUsage,
    /// Why the model stopped; `None` means [`MockStop::ToolUse`] when `parts` has a tool call,
    /// else [`MockStop::Stop`] (see [`ScriptedReply::effective_stop`]).
    pub stop: Option<MockStop>,
    /// Optional failure injected instead of, or in the middle of, the normal stream.
    pub fault: Option<Fault>,
    /// How text, thinking and tool arguments are split into deltas, and how fast they go out.
    pub chunking: Chunking,
}

/// One content block of a [`ScriptedReply`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReplyPart {
    /// Visible assistant text.
    Text(String),
    /// Reasoning. `signature` becomes Anthropic's `signature_delta`, the Responses API's
    /// `encrypted_content` and Gemini's `thoughtSignature`. `redacted` emits Anthropic's
    /// `redacted_thinking` block (with `signature` as its `data`); other formats ignore it.
    #[serde(rename_all = "camelCase")]
    Thinking {
        /// The reasoning text (the summary, for the Responses API).
        text: String,
        /// Opaque signature / encrypted reasoning.
        #[serde(default)]
        signature: Option<String>,
        /// Anthropic redacted thinking.
        #[serde(default)]
        redacted: bool,
    },
    /// A function/tool call. `arguments_json` is streamed verbatim in pieces, so it may be any
    /// string, including invalid JSON to test a client's error handling.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// Call id (`toolu_...`, `call_...`); Gemini sends it as `functionCall.id`.
        id: String,
        /// Tool name.
        name: String,
        /// The complete arguments as a JSON text.
        arguments_json: String,
    },
    /// An OpenAI Responses custom tool call (a grammar tool's raw text `input`, streamed in
    /// pieces of `args_chars`). Formats without custom tools send it as a function call
    /// with the arguments `{"input": input}`.
    #[serde(rename_all = "camelCase")]
    CustomToolCall {
        /// Call id (`call_...`).
        id: String,
        /// Tool name.
        name: String,
        /// The raw input text.
        input: String,
    },
}

/// Token usage in KnightCode's normalised terms; each format converts it to its own fields.
///
/// `input` excludes cached tokens (`cache_read`, `cache_write`); `output` includes `reasoning`.
/// So OpenAI's `prompt_tokens` is `input + cache_read + cache_write` and Gemini's
/// `candidatesTokenCount` is `output - reasoning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MockUsage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// The part of `output` spent on reasoning.
    pub reasoning: u64,
}

/// Why the scripted model stopped. Mapping per format:
///
/// | variant | anthropic `stop_reason` | completions `finish_reason` | responses | google `finishReason` |
/// |---|---|---|---|---|
/// | `Stop` | `end_turn` | `stop` | `completed` | `STOP` |
/// | `Length` | `max_tokens` | `length` | `incomplete` / `max_output_tokens` | `MAX_TOKENS` |
/// | `ToolUse` | `tool_use` | `tool_calls` | `completed` | `STOP` |
/// | `Refusal` | `refusal` | `content_filter` | `incomplete` / `content_filter` | `SAFETY` |
/// | `PauseTurn` | `pause_turn` | `stop` | `completed` | `STOP` |
/// | `Other(s)` | `s` | `s` | `completed` | `s` |
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MockStop {
    /// Natural end of turn.
    Stop,
    /// Output token limit hit.
    Length,
    /// The model wants tool results.
    ToolUse,
    /// Safety refusal / content filter.
    Refusal,
    /// Anthropic server-tool pause.
    PauseTurn,
    /// A raw reason string sent verbatim where the format has a free string.
    Other(String),
}

/// The kind of a provider error, mapped to each format's error type strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MockErrorKind {
    /// Anthropic `overloaded_error` (HTTP 529), OpenAI `server_error`, Gemini `UNAVAILABLE`.
    #[default]
    Overloaded,
    /// `rate_limit_error` / `rate_limit_exceeded` / `RESOURCE_EXHAUSTED` (HTTP 429).
    RateLimit,
    /// `api_error` / `server_error` / `INTERNAL` (HTTP 500).
    Server,
    /// `invalid_request_error` / `invalid_request_error` / `INVALID_ARGUMENT` (HTTP 400).
    InvalidRequest,
    /// A context-window overflow (HTTP 400) with the format's usual message and code
    /// (`prompt is too long`, `context_length_exceeded`, `exceeds the maximum number of tokens`).
    ContextOverflow,
}

/// A failure injected into one reply. "Events" count the SSE events of the normal stream
/// (Anthropic `ping` included), so `after_events: 0` fails right after the response headers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Fault {
    /// Answer with this HTTP status instead of a stream.
    #[serde(rename_all = "camelCase")]
    HttpStatus {
        /// Status code, e.g. 429, 500, 529.
        status: u16,
        /// Value of a `retry-after` header, if any.
        #[serde(default)]
        retry_after: Option<String>,
        /// Response body; `None` means the format's own JSON error body for this status
        /// (Anthropic 529 → `overloaded_error`, and so on).
        #[serde(default)]
        body: Option<String>,
        /// Further response headers (e.g. `retry-after-ms`, `x-should-retry`).
        #[serde(default)]
        headers: Vec<(String, String)>,
    },
    /// Send this many events, then close the connection without the terminating chunk, so the
    /// client sees a truncated body.
    ResetAfterEvents(usize),
    /// Send this many events, then a `data:` line that is not JSON, then end the stream.
    MalformedSseAfterEvents(usize),
    /// Send this many events, then send nothing until [`crate::MockServer::release_stalls`] is
    /// called (the rest of the stream follows) or the client disconnects.
    StallAfterEvents(usize),
    /// Send this many events, then the format's own in-stream error event, then end the stream.
    #[serde(rename_all = "camelCase")]
    MidStreamError {
        /// Events sent before the error.
        after_events: usize,
        /// Error message.
        message: String,
        /// Error kind.
        #[serde(default)]
        kind: MockErrorKind,
    },
}

/// How many characters go into each delta (`0` means "everything in one delta"), and how
/// fast the events of the stream go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Chunking {
    /// Characters per text / thinking delta.
    pub text_chars: usize,
    /// Characters per tool-argument delta.
    pub args_chars: usize,
    /// Milliseconds between two SSE events of the stream; `0` sends them as fast as the
    /// connection takes them. Paces a model that streams at a given rate (benchmarks, demos):
    /// with `text_chars: 4` and `interval_ms: 1` a reply streams ~1,000 tokens per second.
    /// The schedule is kept from the first event on, so a late timer is made up for by the
    /// next events and the average rate holds.
    pub interval_ms: u64,
}

impl Default for Chunking {
    /// Small pieces so every test sees a real incremental stream: 4 text chars, 8 arg chars,
    /// no pauses.
    fn default() -> Self {
        Chunking {
            text_chars: 4,
            args_chars: 8,
            interval_ms: 0,
        }
    }
}

impl Chunking {
    /// Every block in a single delta.
    pub fn whole() -> Self {
        Chunking {
            text_chars: 0,
            args_chars: 0,
            interval_ms: 0,
        }
    }

    /// `n` characters per delta for text and arguments alike.
    pub fn chars(n: usize) -> Self {
        Chunking {
            text_chars: n,
            args_chars: n,
            interval_ms: 0,
        }
    }

    /// The same pieces, with `interval` between two events (whole milliseconds; less than
    /// one rounds up to one, so a requested pause is never dropped).
    pub fn with_interval(self, interval: Duration) -> Self {
        let ms = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
        Chunking {
            interval_ms: if interval.is_zero() { 0 } else { ms.max(1) },
            ..self
        }
    }

    /// The pause between two events; zero when unpaced.
    pub fn interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms)
    }
}

impl ScriptedReply {
    /// A reply with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ScriptedReply {
            parts: vec![ReplyPart::Text(text.into())],
            ..ScriptedReply::default()
        }
    }

    /// A reply with one tool call and nothing else.
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments_json: impl Into<String>,
    ) -> Self {
        ScriptedReply::default().with_tool_call(id, name, arguments_json)
    }

    /// A reply that fails: the given fault and no content.
    pub fn fault(fault: Fault) -> Self {
        ScriptedReply {
            fault: Some(fault),
            ..ScriptedReply::default()
        }
    }

    /// An HTTP error reply with the format's default error body.
    pub fn http_error(status: u16) -> Self {
        ScriptedReply::fault(Fault::HttpStatus {
            status,
            retry_after: None,
            body: None,
            headers: Vec::new(),
        })
    }

    /// Appends a text block.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.parts.push(ReplyPart::Text(text.into()));
        self
    }

    /// Appends a thinking block with an optional signature.
    pub fn with_thinking(mut self, text: impl Into<String>, signature: Option<&str>) -> Self {
        self.parts.push(ReplyPart::Thinking {
            text: text.into(),
            signature: signature.map(str::to_owned),
            redacted: false,
        });
        self
    }

    /// Appends an Anthropic redacted-thinking block carrying `data`.
    pub fn with_redacted_thinking(mut self, data: impl Into<String>) -> Self {
        self.parts.push(ReplyPart::Thinking {
            text: String::new(),
            signature: Some(data.into()),
            redacted: true,
        });
        self
    }

    /// Appends a tool call.
    pub fn with_tool_call(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments_json: impl Into<String>,
    ) -> Self {
        self.parts.push(ReplyPart::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments_json: arguments_json.into(),
        });
        self
    }

    /// Appends a custom tool call (see [`ReplyPart::CustomToolCall`]).
    pub fn with_custom_tool_call(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        input: impl Into<String>,
    ) -> Self {
        self.parts.push(ReplyPart::CustomToolCall {
            id: id.into(),
            name: name.into(),
            input: input.into(),
        });
        self
    }

    /// This reply with custom tool calls as function calls taking `{"input": input}`, for
    /// the formats that have no custom tools.
    pub(crate) fn without_custom_calls(&self) -> std::borrow::Cow<'_, Self> {
        if !self
            .parts
            .iter()
            .any(|p| matches!(p, ReplyPart::CustomToolCall { .. }))
        {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut reply = self.clone();
        for part in &mut reply.parts {
            if let ReplyPart::CustomToolCall { id, name, input } = part {
                *part = ReplyPart::ToolCall {
                    id: std::mem::take(id),
                    name: std::mem::take(name),
                    arguments_json: serde_json::json!({ "input": input }).to_string(),
                };
            }
        }
        std::borrow::Cow::Owned(reply)
    }

    /// Sets the usage.
    pub fn with_usage(mut self, usage: MockUsage) -> Self {
        self.usage = usage;
        self
    }

    /// Sets the stop reason explicitly.
    pub fn with_stop(mut self, stop: MockStop) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Sets a fault.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Sets the chunking.
    pub fn with_chunking(mut self, chunking: Chunking) -> Self {
        self.chunking = chunking;
        self
    }

    /// Paces the stream: `interval` between two SSE events (see [`Chunking::interval_ms`]).
    pub fn with_interval(mut self, interval: Duration) -> Self {
        self.chunking = self.chunking.with_interval(interval);
        self
    }

    /// The stop reason the stream reports (explicit, or inferred from the parts).
    pub fn effective_stop(&self) -> MockStop {
        match &self.stop {
            Some(stop) => stop.clone(),
            None if self.parts.iter().any(|p| {
                matches!(
                    p,
                    ReplyPart::ToolCall { .. } | ReplyPart::CustomToolCall { .. }
                )
            }) =>
            {
                MockStop::ToolUse
            }
            None => MockStop::Stop,
        }
    }
}

/// Splits `text` into pieces of at most `chars` characters (never inside a UTF-8 sequence).
/// `chars == 0` or an empty text gives a single piece, so every block has at least one delta.
pub(crate) fn split_chars(text: &str, chars: usize) -> Vec<&str> {
    if chars == 0 || text.is_empty() {
        return vec![text];
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (idx, _) in text.char_indices() {
        if count == chars {
            pieces.push(&text[start..idx]);
            start = idx;
            count = 0;
        }
        count += 1;
    }
    pieces.push(&text[start..]);
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_respects_char_boundaries() {
        assert_eq!(split_chars("héllo wörld", 4), vec!["héll", "o wö", "rld"]);
        assert_eq!(split_chars("abc", 0), vec!["abc"]);
        assert_eq!(split_chars("", 3), vec![""]);
        assert_eq!(split_chars("abcd", 2), vec!["ab", "cd"]);
    }

    #[test]
    fn minimal_json_reply_parses() {
        let reply: ScriptedReply =
            serde_json::from_str(r#"{"parts":[{"text":"hi"}]}"#).expect("parse");
        assert_eq!(reply, ScriptedReply::text("hi"));
        assert_eq!(reply.effective_stop(), MockStop::Stop);
    }

    #[test]
    fn pacing_round_trips_through_json_and_defaults_to_none() {
        let reply = ScriptedReply::text("hi").with_interval(Duration::from_millis(3));
        assert_eq!(reply.chunking.interval(), Duration::from_millis(3));
        let json = serde_json::to_value(&reply).expect("serialise");
        assert_eq!(json["chunking"]["intervalMs"], 3);
        let back: ScriptedReply = serde_json::from_value(json).expect("parse");
        assert_eq!(back, reply);

        let script: ScriptedReply =
            serde_json::from_str(r#"{"parts":[{"text":"hi"}],"chunking":{"intervalMs":2}}"#)
                .expect("parse");
        assert_eq!(script.chunking.interval_ms, 2);
        // The other chunking fields keep their defaults when only the pacing is given.
        assert_eq!(script.chunking.text_chars, 4);
        let plain: ScriptedReply =
            serde_json::from_str(r#"{"parts":[{"text":"hi"}]}"#).expect("parse");
        assert!(plain.chunking.interval().is_zero());
        assert_eq!(
            Chunking::chars(2)
                .with_interval(Duration::from_micros(10))
                .interval_ms,
            1
        );
    }

    #[test]
    fn tool_call_infers_tool_use() {
        let reply = ScriptedReply::tool_call("call_1", "read", r#"{"path":"a"}"#);
        assert_eq!(reply.effective_stop(), MockStop::ToolUse);
    }
}
