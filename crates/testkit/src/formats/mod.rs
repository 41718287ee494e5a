//! Per-format rendering: routes, response headers, stream events and error shapes.
//!
//! Each submodule turns a [`ScriptedReply`] into the SSE events the real service would send,
//! in the real service's order and field shapes (see the crate README for the exact sequences).

mod anthropic;
mod bedrock;
mod google;
mod mistral;
mod openai_completions;
mod openai_responses;

use crate::script::{MockErrorKind, ScriptedReply, WireFormat};
use crate::sse::SseEvent;

/// What the formats need to know about the request being answered.
#[derive(Debug, Clone)]
pub(crate) struct RequestCtx {
    /// Model from the body (`model`) or, for Google, from the path.
    pub model: String,
    /// 1-based number of the request on this server; makes ids unique and deterministic.
    pub seq: usize,
}

/// Whether `method path` is this format's streaming endpoint. `Some(model)` carries the model
/// named in the path (Google only); `Some(None)` is a match without a path model.
pub(crate) fn route(format: WireFormat, method: &str, path: &str) -> Option<Option<String>> {
    if method != "POST" {
        return None;
    }
    match format {
        // Behind any prefix, as services that relay these APIs serve them: Azure OpenAI under
        // `/openai/v1`, Cloudflare under an account's (and a gateway's) path.
        WireFormat::AnthropicMessages => path.ends_with("/v1/messages").then_some(None),
        WireFormat::OpenAiCompletions => path.ends_with("/chat/completions").then_some(None),
        WireFormat::OpenAiResponses => path.ends_with("/responses").then_some(None),
        WireFormat::Mistral => (path == "/v1/chat/completions").then_some(None),
        WireFormat::Bedrock => {
            // `/model/{modelId}/converse-stream` behind any prefix (a proxy's); the id is
            // percent-encoded (`:` as `%3A`).
            let (_, rest) = path.rsplit_once("/model/")?;
            let model = rest.strip_suffix("/converse-stream")?;
            (!model.is_empty() && !model.contains('/')).then(|| Some(percent_decode(model)))
        }
        WireFormat::Google => {
            // `…/models/{model}:streamGenerateContent`: the Gemini API's
            // `/{version}/models/…` and Vertex AI's `…/publishers/google/models/…` (behind
            // any prefix, as clients configure it through the base URL). The stream is the
            // same.
            let (before, rest) = path.rsplit_once("models/")?;
            if !before.ends_with('/') {
                return None;
            }
            let model = rest.strip_suffix(":streamGenerateContent")?;
            (!model.is_empty() && !model.contains('/')).then(|| Some(model.to_owned()))
        }
    }
}

/// `%XX` escapes decoded (invalid ones kept as they are).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The path (with query, for Google) of the streaming endpoint.
pub(crate) fn endpoint_path(format: WireFormat, model: &str) -> String {
    match format {
        WireFormat::AnthropicMessages => "/v1/messages".to_owned(),
        WireFormat::OpenAiCompletions | WireFormat::Mistral => "/v1/chat/completions".to_owned(),
        WireFormat::OpenAiResponses => "/v1/responses".to_owned(),
        WireFormat::Google => format!("/v1beta/models/{model}:streamGenerateContent?alt=sse"),
        WireFormat::Bedrock => format!("/model/{model}/converse-stream"),
    }
}

/// Headers of a streaming 200 response.
pub(crate) fn stream_headers(format: WireFormat, ctx: &RequestCtx) -> Vec<(String, String)> {
    let mut headers = vec![
        (
            "content-type".to_owned(),
            match format {
                WireFormat::Google => "text/event-stream",
                WireFormat::Bedrock => "application/vnd.amazon.eventstream",
                _ => "text/event-stream; charset=utf-8",
            }
            .to_owned(),
        ),
        ("cache-control".to_owned(), "no-cache".to_owned()),
    ];
    match format {
        WireFormat::AnthropicMessages => {
            headers.push(("request-id".to_owned(), format!("req_mock_{}", ctx.seq)));
        }
        WireFormat::OpenAiCompletions | WireFormat::OpenAiResponses => {
            headers.push(("x-request-id".to_owned(), format!("req_mock_{}", ctx.seq)));
        }
        WireFormat::Mistral => {
            headers.push((
                "mistral-correlation-id".to_owned(),
                format!("mock-{}", ctx.seq),
            ));
        }
        WireFormat::Bedrock => {
            headers.push((
                "x-amzn-requestid".to_owned(),
                format!("00000000-0000-4000-8000-{:012}", ctx.seq),
            ));
        }
        WireFormat::Google => {}
    }
    headers
}

/// The bytes of one stream event: SSE, or an event-stream frame for Bedrock.
pub(crate) fn event_bytes(format: WireFormat, event: &SseEvent) -> Vec<u8> {
    match format {
        WireFormat::Bedrock => bedrock::event_bytes(event),
        _ => event.to_bytes(),
    }
}

/// Headers an error response of `status` carries besides its content type (the error's
/// type, for Bedrock).
pub(crate) fn error_headers(format: WireFormat, status: u16) -> Vec<(String, String)> {
    match format {
        WireFormat::Bedrock => vec![(
            "x-amzn-errortype".to_owned(),
            format!(
                "{}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                bedrock::error_type(status)
            ),
        )],
        _ => Vec::new(),
    }
}

/// Why a request's credentials would be refused (Bedrock checks its SigV4 or bearer
/// header): the status, the error type and its message.
pub(crate) fn check_auth(
    format: WireFormat,
    headers: &[(String, String)],
) -> Option<(u16, &'static str, String)> {
    match format {
        WireFormat::Bedrock => {
            bedrock::check_auth(headers).map(|(kind, message)| (403, kind, message))
        }
        _ => None,
    }
}

/// The events of a normal (fault-free) stream for `reply`.
pub(crate) fn stream_events(
    format: WireFormat,
    reply: &ScriptedReply,
    ctx: &RequestCtx,
) -> Vec<SseEvent> {
    if format == WireFormat::OpenAiResponses {
        return openai_responses::events(reply, ctx);
    }
    let reply = &*reply.without_custom_calls();
    match format {
        WireFormat::AnthropicMessages => anthropic::events(reply, ctx),
        WireFormat::OpenAiCompletions => openai_completions::events(reply, ctx),
        WireFormat::OpenAiResponses => openai_responses::events(reply, ctx),
        WireFormat::Google => google::events(reply, ctx),
        WireFormat::Mistral => mistral::events(reply, ctx),
        WireFormat::Bedrock => bedrock::events(reply, ctx),
    }
}

/// The bytes of the in-stream error of a [`crate::Fault::MidStreamError`], sent as one chunk
/// after `events_sent` events.
pub(crate) fn error_bytes(
    format: WireFormat,
    kind: MockErrorKind,
    message: &str,
    ctx: &RequestCtx,
    events_sent: usize,
) -> Vec<u8> {
    match format {
        WireFormat::AnthropicMessages => anthropic::error_event(kind, message, ctx).to_bytes(),
        WireFormat::OpenAiCompletions => openai_completions::error_event(kind, message).to_bytes(),
        WireFormat::OpenAiResponses => {
            openai_responses::error_event(kind, message, events_sent).to_bytes()
        }
        WireFormat::Google => google::error_chunk(kind, message),
        WireFormat::Mistral => mistral::error_event(kind, message).to_bytes(),
        WireFormat::Bedrock => bedrock::error_frame(kind, message),
    }
}

/// An event whose data is not JSON. Named formats keep a real event name, because clients
/// (pi's Anthropic reader, for one) skip events with names they do not know.
pub(crate) fn malformed_bytes(format: WireFormat) -> Vec<u8> {
    if format == WireFormat::Bedrock {
        return bedrock::malformed_frame();
    }
    let name = match format {
        WireFormat::AnthropicMessages => Some("content_block_delta"),
        WireFormat::OpenAiResponses => Some("response.output_text.delta"),
        WireFormat::OpenAiCompletions
        | WireFormat::Google
        | WireFormat::Mistral
        | WireFormat::Bedrock => None,
    };
    SseEvent {
        event: name.map(str::to_owned),
        data: r#"{"type": this is not json"#.to_owned(),
    }
    .to_bytes()
}

/// A JSON error body in the format's shape for an HTTP `status`, with `message`.
pub(crate) fn error_body(format: WireFormat, status: u16, message: &str) -> String {
    let kind = kind_for_status(status);
    let value = match format {
        WireFormat::AnthropicMessages => anthropic::error_body(status, kind, message),
        WireFormat::OpenAiCompletions | WireFormat::OpenAiResponses => {
            openai_completions::error_body(status, kind, message)
        }
        WireFormat::Google => google::error_body(status, kind, message),
        WireFormat::Mistral => mistral::error_object(status, kind, message),
        WireFormat::Bedrock => bedrock::error_body(message),
    };
    value.to_string()
}

/// The error body a real service typically sends for `status`.
pub(crate) fn default_error_body(format: WireFormat, status: u16) -> String {
    let message = default_message(format, kind_for_status(status));
    error_body(format, status, message)
}

/// The error kind a status code usually means.
fn kind_for_status(status: u16) -> MockErrorKind {
    match status {
        429 => MockErrorKind::RateLimit,
        503 | 529 => MockErrorKind::Overloaded,
        500..=599 => MockErrorKind::Server,
        _ => MockErrorKind::InvalidRequest,
    }
}

/// Typical message of an error kind, in the wording of each service.
pub(crate) fn default_message(format: WireFormat, kind: MockErrorKind) -> &'static str {
    match (format, kind) {
        (WireFormat::AnthropicMessages, MockErrorKind::Overloaded) => "Overloaded",
        (WireFormat::AnthropicMessages, MockErrorKind::ContextOverflow) => {
            "prompt is too long: 210000 tokens > 200000 maximum"
        }
        (WireFormat::Google, MockErrorKind::ContextOverflow) => {
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
        }
        (_, MockErrorKind::ContextOverflow) => {
            "This model's maximum context length is 128000 tokens. However, your messages \
             resulted in 130000 tokens. Please reduce the length of the messages."
        }
        (WireFormat::Google, MockErrorKind::Overloaded) => {
            "The model is overloaded. Please try again later."
        }
        (_, MockErrorKind::Overloaded) => "The server is overloaded, please try again later.",
        (_, MockErrorKind::RateLimit) => "Rate limit exceeded, please try again later.",
        (_, MockErrorKind::Server) => "Internal server error",
        (_, MockErrorKind::InvalidRequest) => "Invalid request",
    }
}

/// Output tokens as a non-zero-safe split: Anthropic and others report a small running count
/// in the first event before the final one.
pub(crate) fn initial_output_tokens(output: u64) -> u64 {
    output.min(1)
}
