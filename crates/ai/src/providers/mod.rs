//! One module per wire format, plus what they share.

use serde::Deserialize;

use crate::driver::Decoder;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::HttpRequest;
use crate::model::Api;
use crate::model::Model;
use crate::options::Context;
use crate::options::StreamOptions;
use crate::output::Output;
use crate::sse::SseEvent;

pub(crate) mod anthropic;
pub(crate) mod azure;
pub(crate) mod bedrock;
pub(crate) mod cloudflare;
pub(crate) mod copilot;
pub(crate) mod google;
pub(crate) mod mistral;
pub(crate) mod openai_codex;
pub(crate) mod openai_completions;
pub(crate) mod openai_responses;
pub(crate) mod strict_tools;
pub(crate) mod vertex;

/// Everything that differs between wire formats: each module has one, so adding a format is
/// a module and a line in [`wire_format`].
pub(crate) struct WireFormat {
    /// URL, headers and JSON body for a request (`user_agent` as the last argument).
    pub(crate) build_request:
        fn(&Model, &Context, &StreamOptions, &str) -> Result<HttpRequest, StreamFailure>,
    /// A fresh response decoder for one request (what it was asked and with which key).
    pub(crate) decoder: fn(&Model, &Context, &StreamOptions) -> Box<dyn Decoder>,
    /// How error bodies become messages.
    pub(crate) error_style: ErrorStyle,
}

/// The wire format an API speaks.
pub(crate) fn wire_format(api: Api) -> &'static WireFormat {
    match api {
        Api::AnthropicMessages => &anthropic::WIRE_FORMAT,
        Api::OpenAiCompletions => &openai_completions::WIRE_FORMAT,
        Api::OpenAiResponses => &openai_responses::WIRE_FORMAT,
        Api::GoogleGenerativeAi => &google::WIRE_FORMAT,
        Api::GoogleVertex => &vertex::WIRE_FORMAT,
        Api::MistralConversations => &mistral::WIRE_FORMAT,
        Api::AzureOpenAiResponses => &azure::WIRE_FORMAT,
        Api::OpenAiCodexResponses => &openai_codex::WIRE_FORMAT,
        Api::BedrockConverseStream => &bedrock::WIRE_FORMAT,
    }
}

/// A decoding failure: unparsable JSON (retried once on a repaired copy; a bad payload, not
/// transient) or anything else.
pub(crate) enum Fail {
    Parse(String),
    Other(StreamFailure),
}

impl From<StreamFailure> for Fail {
    fn from(failure: StreamFailure) -> Self {
        Self::Other(failure)
    }
}

/// Parses an event's JSON data.
pub(crate) fn parse_event<'a, T: Deserialize<'a>>(
    api: &str,
    event: &SseEvent<'a>,
) -> Result<T, Fail> {
    serde_json::from_slice(event.data).map_err(|error| {
        let name = if event.event.is_empty() {
            "data"
        } else {
            event.event
        };
        Fail::Parse(format!(
            "Could not parse {api} SSE event {name}: {error}; data={}",
            String::from_utf8_lossy(event.data)
        ))
    })
}

/// Runs `handle`; on a JSON error retries once with control characters escaped and invalid
/// escapes doubled (models sometimes emit raw newlines inside strings).
pub(crate) fn with_repair<S>(
    state: &mut S,
    event: &SseEvent<'_>,
    out: &mut Output,
    handle: impl Fn(&mut S, &SseEvent<'_>, &mut Output) -> Result<(), Fail>,
) -> Result<(), StreamFailure> {
    match handle(state, event, out) {
        Ok(()) => Ok(()),
        Err(Fail::Other(failure)) => Err(failure),
        Err(Fail::Parse(message)) => {
            let text = String::from_utf8_lossy(event.data);
            let repaired = crate::json_partial::repair_json(&text);
            if repaired == text {
                return Err(StreamFailure::other(message));
            }
            let retry = SseEvent {
                event: event.event,
                data: repaired.as_bytes(),
            };
            handle(state, &retry, out).map_err(|fail| match fail {
                Fail::Parse(_) => StreamFailure::other(message),
                Fail::Other(other) => other,
            })
        }
    }
}
