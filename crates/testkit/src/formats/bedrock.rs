//! Amazon Bedrock's `ConverseStream` (`POST /model/{modelId}/converse-stream`): not SSE but
//! AWS event-stream frames (`application/vnd.amazon.eventstream`), each a binary message
//! with a CRC-checked prelude, string headers (`:event-type`, `:content-type`,
//! `:message-type`) and a JSON payload. Events in the service's order: `messageStart`;
//! per block `contentBlockStart` (tool use only; text and reasoning have none),
//! `contentBlockDelta`s (`text`, `reasoningContent.text` then `.signature`, `toolUse.input`
//! pieces), `contentBlockStop`; `messageStop` with `stopReason`; `metadata` with `usage`
//! and `metrics`. Every payload carries the service's `p` padding field. A mid-stream error
//! is an `exception` message (`:exception-type: throttlingException`, `{"message"}`); an
//! HTTP error is `{"message"}` with its type in `x-amzn-errortype`.
//!
//! Requests must be signed as the AWS SDK signs them: [`check_auth`] refuses (403, as AWS
//! does) a request whose `Authorization` is neither `Bearer …` nor a well-formed SigV4
//! header for service `bedrock` that signs `host` and `x-amz-date`.

use serde_json::{Value, json};

use super::RequestCtx;
use crate::script::{MockErrorKind, MockStop, ReplyPart, ScriptedReply, split_chars};
use crate::sse::SseEvent;

/// The padding the service adds to every payload (its length varies; its value is noise).
const PADDING: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";

fn stop_reason(stop: &MockStop) -> String {
    match stop {
        MockStop::Stop | MockStop::PauseTurn => "end_turn".into(),
        MockStop::Length => "max_tokens".into(),
        MockStop::ToolUse => "tool_use".into(),
        MockStop::Refusal => "content_filtered".into(),
        MockStop::Other(other) => other.clone(),
    }
}

fn event(name: &str, mut payload: Value) -> SseEvent {
    if let Some(object) = payload.as_object_mut() {
        object.insert("p".into(), json!(PADDING));
    }
    SseEvent::named(name, &payload)
}

fn delta(index: usize, delta: Value) -> SseEvent {
    event(
        "contentBlockDelta",
        json!({"contentBlockIndex": index, "delta": delta}),
    )
}

pub(super) fn events(reply: &ScriptedReply, _ctx: &RequestCtx) -> Vec<SseEvent> {
    let mut out = vec![event("messageStart", json!({"role": "assistant"}))];
    for (index, part) in reply.parts.iter().enumerate() {
        match part {
            // Only the Responses API has custom tool calls; `stream_events` turns them
            // into function calls for the other formats.
            ReplyPart::CustomToolCall { .. } => {}
            ReplyPart::Text(text) => {
                for piece in split_chars(text, reply.chunking.text_chars) {
                    out.push(delta(index, json!({"text": piece})));
                }
            }
            ReplyPart::Thinking {
                text, signature, ..
            } => {
                for piece in split_chars(text, reply.chunking.text_chars) {
                    out.push(delta(index, json!({"reasoningContent": {"text": piece}})));
                }
                if let Some(signature) = signature {
                    out.push(delta(
                        index,
                        json!({"reasoningContent": {"signature": signature}}),
                    ));
                }
            }
            ReplyPart::ToolCall {
                id,
                name,
                arguments_json,
            } => {
                out.push(event(
                    "contentBlockStart",
                    json!({"contentBlockIndex": index,
                           "start": {"toolUse": {"toolUseId": id, "name": name}}}),
                ));
                for piece in split_chars(arguments_json, reply.chunking.args_chars) {
                    out.push(delta(index, json!({"toolUse": {"input": piece}})));
                }
            }
        }
        out.push(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
    }
    out.push(event(
        "messageStop",
        json!({"stopReason": stop_reason(&reply.effective_stop())}),
    ));
    let usage = reply.usage;
    out.push(event(
        "metadata",
        json!({
            "metrics": {"latencyMs": 120},
            "usage": {
                "inputTokens": usage.input,
                "outputTokens": usage.output,
                "totalTokens": usage.input + usage.output + usage.cache_read + usage.cache_write,
                "cacheReadInputTokens": usage.cache_read,
                "cacheWriteInputTokens": usage.cache_write,
            },
        }),
    ));
    out
}

/// An event-stream message with string headers.
fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        head.push(name.len() as u8);
        head.extend_from_slice(name.as_bytes());
        head.push(7);
        head.extend_from_slice(&(value.len() as u16).to_be_bytes());
        head.extend_from_slice(value.as_bytes());
    }
    let total = 12 + head.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude = crc32fast::hash(&out);
    out.extend_from_slice(&prelude.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// The frame of one event.
pub(super) fn event_bytes(event: &SseEvent) -> Vec<u8> {
    frame(
        &[
            (":event-type", event.event.as_deref().unwrap_or("")),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        event.data.as_bytes(),
    )
}

/// The exception (union member) name and the status AWS answers an error kind with.
fn exception(kind: MockErrorKind) -> (&'static str, u16) {
    match kind {
        MockErrorKind::RateLimit => ("throttlingException", 429),
        MockErrorKind::Overloaded => ("serviceUnavailableException", 503),
        MockErrorKind::Server => ("internalServerException", 500),
        MockErrorKind::ContextOverflow | MockErrorKind::InvalidRequest => {
            ("validationException", 400)
        }
    }
}

pub(super) fn error_frame(kind: MockErrorKind, message: &str) -> Vec<u8> {
    frame(
        &[
            (":exception-type", exception(kind).0),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        json!({"message": message}).to_string().as_bytes(),
    )
}

/// An event frame whose payload is not JSON.
pub(super) fn malformed_frame() -> Vec<u8> {
    frame(
        &[
            (":event-type", "contentBlockDelta"),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        br#"{"contentBlockIndex": this is not json"#,
    )
}

pub(super) fn error_body(message: &str) -> Value {
    json!({"message": message})
}

/// The `x-amzn-errortype` of an HTTP error status.
pub(super) fn error_type(status: u16) -> &'static str {
    match status {
        400 => "ValidationException",
        401 | 403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        _ => "InternalServerException",
    }
}

/// Why the request's credentials would be refused, if they would: AWS's
/// `x-amzn-errortype` and message.
pub(crate) fn check_auth(headers: &[(String, String)]) -> Option<(&'static str, String)> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let missing = || {
        Some((
            "MissingAuthenticationTokenException",
            "Missing Authentication Token".to_owned(),
        ))
    };
    let Some(authorization) = header("authorization") else {
        return missing();
    };
    if let Some(token) = authorization.strip_prefix("Bearer ") {
        return token.trim().is_empty().then(missing).flatten();
    }
    let invalid = |why: &str| {
        Some((
            "InvalidSignatureException",
            format!(
                "The request signature we calculated does not match the signature you provided: {why}"
            ),
        ))
    };
    let Some(rest) = authorization.strip_prefix("AWS4-HMAC-SHA256 ") else {
        return invalid("not AWS4-HMAC-SHA256");
    };
    let fields: Vec<(&str, &str)> = rest
        .split(", ")
        .filter_map(|part| part.split_once('='))
        .collect();
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let (Some(credential), Some(signed), Some(signature)) = (
        field("Credential"),
        field("SignedHeaders"),
        field("Signature"),
    ) else {
        return invalid("Credential, SignedHeaders and Signature are required");
    };
    let scope: Vec<&str> = credential.split('/').collect();
    let date = header("x-amz-date").unwrap_or("");
    let date_ok = date.len() == 16
        && date.as_bytes()[8] == b'T'
        && date.ends_with('Z')
        && scope.get(1).is_some_and(|day| date.starts_with(day));
    if scope.len() != 5 || scope[3] != "bedrock" || scope[4] != "aws4_request" || !date_ok {
        return invalid("bad credential scope or x-amz-date");
    }
    let names: Vec<&str> = signed.split(';').collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    if names != sorted || !names.contains(&"host") || !names.contains(&"x-amz-date") {
        return invalid("SignedHeaders must be sorted and include host and x-amz-date");
    }
    if names.iter().any(|name| header(name).is_none()) {
        return invalid("a signed header is missing");
    }
    if signature.len() != 64 || !signature.bytes().all(|b| b.is_ascii_hexdigit()) {
        return invalid("the signature is not 64 hex digits");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    const SIGNED: &str = "AWS4-HMAC-SHA256 Credential=AKID/20261205/us-east-1/bedrock/aws4_request, \
        SignedHeaders=content-type;host;x-amz-date, \
        Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn signatures_of_the_sdks_shape_pass_and_others_are_refused() {
        let good = [
            ("host", "127.0.0.1:1"),
            ("content-type", "application/json"),
            ("x-amz-date", "20261205T080000Z"),
            ("authorization", SIGNED),
        ];
        assert_eq!(check_auth(&headers(&good)), None);
        assert_eq!(check_auth(&headers(&[("authorization", "Bearer k")])), None);
        assert_eq!(
            check_auth(&headers(&[])).map(|e| e.0),
            Some("MissingAuthenticationTokenException")
        );
        let refused = |pairs: &[(&str, &str)]| check_auth(&headers(pairs)).map(|e| e.0);
        // The date in the scope must be the request's.
        let mut stale = good;
        stale[2] = ("x-amz-date", "20261204T080000Z");
        assert_eq!(refused(&stale), Some("InvalidSignatureException"));
        // Every signed header must be there.
        assert_eq!(refused(&good[1..]), Some("InvalidSignatureException"));
        let mut other_service = good;
        let wrong = SIGNED.replace("/bedrock/", "/s3/");
        other_service[3] = ("authorization", &wrong);
        assert_eq!(refused(&other_service), Some("InvalidSignatureException"));
        let mut short = good;
        let cut = &SIGNED[..SIGNED.len() - 1];
        short[3] = ("authorization", cut);
        assert_eq!(refused(&short), Some("InvalidSignatureException"));
    }

    #[test]
    fn frames_carry_their_checksums() {
        let bytes = frame(&[(":event-type", "x")], b"{}");
        assert_eq!(bytes.len(), 12 + (1 + 11 + 1 + 2 + 1) + 2 + 4);
        let total = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        assert_eq!(total, bytes.len());
        let crc = crc32fast::hash(&bytes[..total - 4]).to_be_bytes();
        assert_eq!(&bytes[total - 4..], &crc);
    }
}
