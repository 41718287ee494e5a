//! A failed model call told briefly, for people: its class, the HTTP status and the
//! provider's own words pulled out of the body the error text carries
//! (`429 {"type":"error","error":{"type":"rate_limit_error","message":"..."}}`).
//!
//! The `errorMessage` of the assistant message and of `auto_retry_*` events stays exactly as
//! it is (sessions and RPC clients keep the full text, as the reference does); front ends
//! that show errors to a person read it through [`ErrorSummary::parse`].

use serde_json::Value;

use crate::error::ErrorClass;
use crate::error::classify_error_message;

/// The provider's message is cut to this many characters: a screen line or two.
const MAX_DETAIL_CHARS: usize = 240;

/// What a failed call's error text says, in parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorSummary {
    pub class: ErrorClass,
    /// The HTTP status the text starts with (`429 ...`), if any.
    pub status: Option<u16>,
    /// The provider's message without JSON around it; empty when it said nothing useful.
    pub detail: String,
}

impl ErrorSummary {
    pub fn parse(message: &str) -> Self {
        let class = classify_error_message(message);
        let trimmed = message.trim();
        let digits: String = trimmed.chars().take_while(char::is_ascii_digit).collect();
        let status = (digits.len() == 3)
            .then(|| digits.parse::<u16>().ok())
            .flatten()
            .filter(|s| (100..600).contains(s));
        let rest = match status {
            Some(_) => trimmed[3..].trim_start(),
            None => trimmed,
        };
        let detail = match provider_message(rest) {
            Some(text) => text,
            // An SDK's stand-in for an empty body says nothing the status does not.
            None if rest == "status code (no body)" => String::new(),
            None => rest.to_owned(),
        };
        Self {
            class,
            status,
            detail: shorten(detail.trim()),
        }
    }
}

/// The message inside a JSON error body (`{"error":{"message":…}}`, `{"message":…}`,
/// Gemini's one-element array, or a JSON body after a prefix such as `Provider error: {…}`).
fn provider_message(text: &str) -> Option<String> {
    let start = text.find(['{', '['])?;
    let json: Value = serde_json::from_str(&text[start..]).ok()?;
    let found = message_in(&json)?;
    let prefix = text[..start].trim().trim_end_matches(':').trim();
    Some(if prefix.is_empty() {
        found
    } else {
        format!("{prefix}: {found}")
    })
}

fn message_in(value: &Value) -> Option<String> {
    match value {
        Value::Array(items) => items.iter().find_map(message_in),
        Value::Object(map) => {
            if let Some(error) = map.get("error") {
                if let Some(text) = error.as_str() {
                    return Some(text.to_owned());
                }
                if let Some(text) = message_in(error) {
                    return Some(text);
                }
            }
            ["message", "detail", "error_description"]
                .iter()
                .find_map(|key| map.get(*key).and_then(Value::as_str))
                .map(str::to_owned)
        }
        _ => None,
    }
}

fn shorten(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= MAX_DETAIL_CHARS {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(MAX_DETAIL_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_json_bodies_give_their_message() {
        let summary = ErrorSummary::parse(
            r#"429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
        );
        assert_eq!(summary.class, ErrorClass::RateLimit);
        assert_eq!(summary.status, Some(429));
        assert_eq!(
            summary.detail,
            "Number of request tokens has exceeded your per-minute rate limit"
        );
    }

    #[test]
    fn plain_texts_and_other_shapes() {
        let summary = ErrorSummary::parse("529 Overloaded");
        assert_eq!(summary.class, ErrorClass::Overloaded);
        assert_eq!(
            (summary.status, summary.detail.as_str()),
            (Some(529), "Overloaded")
        );

        let summary = ErrorSummary::parse("503 status code (no body)");
        assert_eq!((summary.status, summary.detail.as_str()), (Some(503), ""));

        let summary = ErrorSummary::parse(
            r#"400 [{"error":{"code":400,"message":"API key not valid","status":"INVALID_ARGUMENT"}}]"#,
        );
        assert_eq!(summary.detail, "API key not valid");
        assert_eq!(summary.class, ErrorClass::Auth);

        let summary = ErrorSummary::parse("error sending request: connection refused");
        assert_eq!(summary.status, None);
        assert_eq!(summary.class, ErrorClass::Network);
        assert_eq!(summary.detail, "error sending request: connection refused");

        let summary = ErrorSummary::parse(r#"Provider error: {"message":"busy"}"#);
        assert_eq!(summary.detail, "Provider error: busy");
    }

    #[test]
    fn long_messages_are_cut_to_a_line_or_two() {
        let long = format!("500 {}", "word ".repeat(200));
        let summary = ErrorSummary::parse(&long);
        assert_eq!(summary.detail.chars().count(), MAX_DETAIL_CHARS);
        assert!(summary.detail.ends_with('…'));
    }
}
