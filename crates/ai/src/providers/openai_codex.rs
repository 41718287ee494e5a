//! `openai-codex-responses`: the Responses backend behind ChatGPT Plus/Pro plans, reached
//! with a ChatGPT login (`knightcode auth login openai-codex`). The stream is OpenAI's
//! Responses stream ([`super::openai_responses`]); what differs is read from the reference:
//!
//! - `POST <baseUrl>/codex/responses` (`https://chatgpt.com/backend-api` by default);
//! - the login's access token as a bearer token, and the ChatGPT account it belongs to (a
//!   claim of that token) in `chatgpt-account-id`, with `originator`, `OpenAI-Beta:
//!   responses=experimental` and the session as `session_id`;
//! - the body: the system prompt as `instructions`, never stored, encrypted reasoning always
//!   included, `text.verbosity: low`, the session as `prompt_cache_key`, tools with
//!   `strict: null`, no output cap, and no `reasoning` at all when thinking is off;
//! - in the stream, `response.done` ends a response as `response.completed` does, and errors
//!   read `Codex error: …`;
//! - the plan's usage and rate limits come back as an HTTP error the user is told about in
//!   words they can act on (which plan, when it resets).
//!
//! The reference first tries a WebSocket transport and falls back to this SSE request; this
//! build sends the SSE request only.

use base64::Engine as _;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::WireFormat;
use super::openai_responses;
use super::openai_responses::grammar::GrammarTools;
use super::openai_responses::stream::ResponsesDecoder;
use crate::driver::Decoder;
use crate::error::ErrorClass;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::model::LevelMapping;
use crate::model::Model;
use crate::model::ThinkingLevel;
use crate::options::Context;
use crate::options::StreamOptions;
use crate::output::Output;
use crate::sse::SseEvent;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |model, context, _| {
        Box::new(CodexDecoder {
            inner: ResponsesDecoder::new(GrammarTools::lenient(model, &context.tools)),
        })
    },
    error_style: ErrorStyle::Codex,
};

/// Where the backend is when the model names no base URL.
const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
/// The access token's claim that holds the ChatGPT account.
const JWT_CLAIM: &str = "https://api.openai.com/auth";
/// Who the requests say they come from: the reference's value, which the backend knows.
pub(crate) const ORIGINATOR: &str = "pi";
/// The system prompt when the conversation has none: the backend requires instructions.
const DEFAULT_INSTRUCTIONS: &str = "You are a helpful assistant.";

/// The ChatGPT account an access token of a ChatGPT login belongs to: the
/// `chatgpt_account_id` of its `https://api.openai.com/auth` claim.
pub(crate) fn account_id(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    // Tokens are URL-safe base64 without padding; accept padded or standard ones as well.
    let trimmed = payload.trim_end_matches('=');
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(trimmed)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(trimmed))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims
        .get(JWT_CLAIM)?
        .get("chatgpt_account_id")?
        .as_str()
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}

/// `<base>/codex/responses`, unless the base already ends there.
fn endpoint(base_url: &str) -> String {
    let base = match base_url.trim() {
        "" => DEFAULT_BASE_URL,
        other => other,
    }
    .trim_end_matches('/');
    if base.ends_with("/codex/responses") {
        base.to_owned()
    } else if base.ends_with("/codex") {
        format!("{base}/responses")
    } else {
        format!("{base}/codex/responses")
    }
}

fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    let token = options
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .ok_or_else(|| crate::auth::no_api_key_failure(&model.provider))?;
    let account = account_id(token).ok_or_else(|| {
        StreamFailure::new(
            ErrorClass::Auth,
            format!(
                "The key for {} is not a ChatGPT login (no account in its access token). Log in \
                 with /login or `knightcode auth login openai-codex`.",
                model.provider
            ),
        )
    })?;
    let mut headers = base_headers(model, user_agent);
    headers.merge(Some(&options.headers));
    headers.set("Authorization", format!("Bearer {token}"));
    headers.set("chatgpt-account-id", account);
    headers.set("originator", ORIGINATOR);
    headers.set("OpenAI-Beta", "responses=experimental");
    headers.set("accept", "text/event-stream");
    headers.set("content-type", "application/json");
    if let Some(session) = &options.session_id {
        headers.set("session_id", session.clone());
        headers.set("x-client-request-id", session.clone());
    }
    Ok(HttpRequest {
        url: endpoint(&model.base_url),
        headers,
        body: request_body(model, context, options)?,
    })
}

/// The JSON body, its fields in the reference's order.
fn request_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<Vec<u8>, StreamFailure> {
    let grammar = GrammarTools::resolve(model, &context.tools)?;
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(true));
    let instructions = context
        .system_prompt
        .as_deref()
        .filter(|p| !p.is_empty())
        .unwrap_or(DEFAULT_INSTRUCTIONS);
    body.insert("instructions".into(), json!(instructions));
    body.insert(
        "input".into(),
        Value::Array(openai_responses::input_without_system_prompt(
            model, context, &grammar,
        )?),
    );
    body.insert("text".into(), json!({"verbosity": "low"}));
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(session) = &options.session_id {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    body.insert("tool_choice".into(), json!("auto"));
    body.insert("parallel_tool_calls".into(), json!(true));
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                if let Some(custom) = grammar.custom_tool(tool) {
                    return custom;
                }
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": null,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(effort) = reasoning_effort(model, options.thinking) {
        body.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
    }
    serde_json::to_vec(&Value::Object(body)).map_err(|e| StreamFailure::other(e.to_string()))
}

/// The effort to ask for: none when thinking is off (the field is left out then), else the
/// level the model supports, named as its level map says (`null` there leaves it out too).
fn reasoning_effort(model: &Model, thinking: ThinkingLevel) -> Option<String> {
    if !model.reasoning || thinking == ThinkingLevel::Off {
        return None;
    }
    let level = model.clamp_thinking_level(thinking);
    if level == ThinkingLevel::Off {
        return None;
    }
    match model.level_map(level) {
        LevelMapping::Unsupported => None,
        mapping => Some(mapping.value().unwrap_or(level.as_str()).to_owned()),
    }
}

/// An error response of the backend. The plan's limits (`usage_limit_reached`,
/// `usage_not_included`, `rate_limit_exceeded`, any 429) say which plan and when the limit
/// resets, and are not retried: they last minutes to days. Other errors are the service's
/// message, classed as any provider's.
pub(crate) fn http_failure(status: u16, body: &str) -> StreamFailure {
    let raw = body.trim();
    let parsed = serde_json::from_str::<Value>(raw).ok();
    let error = parsed
        .as_ref()
        .and_then(|json| json.get("error"))
        .filter(|e| e.is_object());
    let codes = parsed
        .as_ref()
        .map(crate::http::error_codes)
        .unwrap_or_default();
    if let Some(error) = error {
        let text = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or("");
        let code = [text("code"), text("type")]
            .into_iter()
            .find(|c| !c.is_empty())
            .unwrap_or("");
        let limit = [
            "usage_limit_reached",
            "usage_not_included",
            "rate_limit_exceeded",
        ]
        .iter()
        .any(|known| code.eq_ignore_ascii_case(known));
        if limit || status == 429 {
            return StreamFailure::new(
                ErrorClass::Quota,
                usage_limit_message(error, crate::oauth::now_ms()),
            );
        }
        if !text("message").is_empty() {
            return StreamFailure::provider(Some(status), &codes, text("message").to_owned());
        }
    }
    let message = if raw.is_empty() {
        format!("{status} status code (no body)")
    } else {
        raw.to_owned()
    };
    StreamFailure::provider(Some(status), &codes, message)
}

/// "You have hit your ChatGPT usage limit (plus plan). Try again in ~42 min."
fn usage_limit_message(error: &Value, now_ms: f64) -> String {
    let plan = error
        .get("plan_type")
        .and_then(Value::as_str)
        .map(|plan| format!(" ({} plan)", plan.to_lowercase()))
        .unwrap_or_default();
    let when = error
        .get("resets_at")
        .and_then(Value::as_f64)
        .filter(|at| *at != 0.0)
        .map(|at| {
            let minutes = ((at * 1000.0 - now_ms) / 60_000.0).round().max(0.0);
            format!(" Try again in ~{minutes} min.")
        })
        .unwrap_or_default();
    format!("You have hit your ChatGPT usage limit{plan}.{when}")
}

/// The Responses decoder, with the backend's own terminal and error events.
struct CodexDecoder {
    inner: ResponsesDecoder,
}

/// The statuses a finished response may have; others are dropped, as the reference does.
const STATUSES: [&str; 6] = [
    "completed",
    "incomplete",
    "failed",
    "cancelled",
    "queued",
    "in_progress",
];

impl Decoder for CodexDecoder {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        let Ok(mut data) = serde_json::from_slice::<Value>(event.data) else {
            // Unparsable data: the Responses decoder repairs or reports it.
            return self.inner.event(event, out);
        };
        let kind = data.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "error" => {
                let text = |key: &str| data.get(key).and_then(Value::as_str).unwrap_or("");
                let code = text("code");
                let detail = [text("message"), code]
                    .into_iter()
                    .find(|t| !t.is_empty())
                    .map_or_else(|| data.to_string(), str::to_owned);
                Err(StreamFailure::provider(
                    None,
                    &[code],
                    format!("Codex error: {detail}"),
                ))
            }
            "response.failed" => {
                let error = data.get("response").and_then(|r| r.get("error"));
                let message = error
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .unwrap_or("Codex response failed");
                let codes = error.map(crate::http::error_codes).unwrap_or_default();
                Err(StreamFailure::provider(None, &codes, message.to_owned()))
            }
            "response.done" | "response.completed" | "response.incomplete" => {
                if let Some(object) = data.as_object_mut() {
                    object.insert("type".into(), json!("response.completed"));
                }
                if let Some(response) = data.get_mut("response").and_then(Value::as_object_mut) {
                    let known = response
                        .get("status")
                        .and_then(Value::as_str)
                        .is_some_and(|s| STATUSES.contains(&s));
                    if !known {
                        response.remove("status");
                    }
                }
                let bytes = data.to_string();
                self.inner.event(
                    SseEvent {
                        event: event.event,
                        data: bytes.as_bytes(),
                    },
                    out,
                )
            }
            _ => self.inner.event(event, out),
        }
    }

    fn finish(
        &mut self,
        out: &mut Output,
    ) -> Result<knightcode_protocol::StopReason, StreamFailure> {
        self.inner.finish(out)
    }

    fn before_fail(&mut self, out: &mut Output) {
        self.inner.before_fail(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(claims: &Value) -> String {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.sig",
            b64.encode(br#"{"alg":"none"}"#),
            b64.encode(claims.to_string())
        )
    }

    #[test]
    fn the_account_comes_from_the_tokens_claim() {
        let claims = json!({JWT_CLAIM: {"chatgpt_account_id": "acct_1"}});
        assert_eq!(account_id(&token(&claims)).as_deref(), Some("acct_1"));
        assert_eq!(account_id(&token(&json!({"sub": "x"}))), None);
        assert_eq!(account_id("not-a-jwt"), None);
        assert_eq!(account_id("a.%%%.c"), None);
    }

    #[test]
    fn the_endpoint_is_under_codex() {
        assert_eq!(
            endpoint("https://chatgpt.com/backend-api/"),
            "https://chatgpt.com/backend-api/codex/responses"
        );
        assert_eq!(endpoint("http://h/codex"), "http://h/codex/responses");
        assert_eq!(
            endpoint("http://h/codex/responses"),
            "http://h/codex/responses"
        );
        assert_eq!(
            endpoint(""),
            "https://chatgpt.com/backend-api/codex/responses"
        );
    }

    #[test]
    fn plan_limits_say_which_plan_and_when() {
        let body = json!({"error": {"code": "usage_limit_reached", "message": "limit",
                                    "plan_type": "PLUS", "resets_at": 4_000}});
        let failure = http_failure(429, &body.to_string());
        assert_eq!(failure.class, ErrorClass::Quota);
        assert!(
            failure
                .message
                .starts_with("You have hit your ChatGPT usage limit (plus plan)."),
            "{}",
            failure.message
        );
        let message = usage_limit_message(&json!({"resets_at": 4_000}), 4_000_000.0 - 600_000.0);
        assert_eq!(
            message,
            "You have hit your ChatGPT usage limit. Try again in ~10 min."
        );
        let other = http_failure(400, r#"{"error": {"message": "Bad model"}}"#);
        assert_eq!(other.message, "Bad model");
        assert_eq!(http_failure(502, "").message, "502 status code (no body)");
    }
}
