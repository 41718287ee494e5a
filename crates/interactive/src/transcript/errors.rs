//! Provider failures in words: what happened (`Rate limited by anthropic`), the provider's
//! own message without its JSON, and what to do or what happens next. The stored
//! `errorMessage` keeps the full text; only the screen says it this way.

use knightcode_ai::ErrorClass;
use knightcode_ai::ErrorSummary;

/// What a failed call's error text tells a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// What happened, naming the provider: `Rate limited by mock`.
    pub headline: String,
    /// The provider's own message (may be empty).
    pub detail: String,
    /// What to do about it when nothing more is tried automatically.
    pub advice: &'static str,
}

pub fn describe(error_message: &str, provider: &str) -> Described {
    let summary = ErrorSummary::parse(error_message);
    let provider = if provider.is_empty() {
        "the provider"
    } else {
        provider
    };
    let status = summary
        .status
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    let (headline, advice) = match summary.class {
        ErrorClass::RateLimit => (
            format!("Rate limited by {provider}"),
            "Wait a minute and send again, or switch models with /model.",
        ),
        ErrorClass::Overloaded if summary.status.is_some_and(|s| s != 529) => (
            format!("{provider} had a server error{status}"),
            "Try again in a moment, or switch models with /model.",
        ),
        ErrorClass::Overloaded => (
            format!("{provider} is overloaded{status}"),
            "Try again in a moment, or switch models with /model.",
        ),
        ErrorClass::Network => (
            format!("Could not reach {provider}"),
            "Check the network connection (and any proxy), then send again.",
        ),
        ErrorClass::Auth => (
            format!("{provider} refused the credentials{status}"),
            "Check the API key (knightcode --list-models shows which providers have one).",
        ),
        ErrorClass::Quota => (
            format!("{provider} says a quota or billing limit is reached{status}"),
            "Check the plan and billing with the provider, or switch models with /model.",
        ),
        ErrorClass::ContextOverflow => (
            "The conversation no longer fits the model's context window".to_owned(),
            "Start a new session with /new, or continue an earlier point with /tree.",
        ),
        ErrorClass::Aborted => ("The request was aborted".to_owned(), ""),
        ErrorClass::Other => (format!("{provider} returned an error{status}"), ""),
    };
    let detail = if summary.detail.eq_ignore_ascii_case(&headline) {
        String::new()
    } else {
        summary.detail
    };
    Described {
        headline,
        detail,
        advice,
    }
}

/// The line of a retry about to happen: `Rate limited by mock — retrying in 2 s (1/3)`,
/// then the provider's message.
pub fn retry_text(
    error_message: &str,
    provider: &str,
    delay_ms: u64,
    attempt: u32,
    max: u32,
) -> String {
    let described = describe(error_message, provider);
    let seconds = delay_ms.div_ceil(1000).max(1);
    let mut text = format!(
        "{} — retrying in {seconds} s ({attempt}/{max})",
        described.headline
    );
    if !described.detail.is_empty() {
        text.push('\n');
        text.push_str(&described.detail);
    }
    text
}

/// The ending of a reply that failed for good: what happened, the provider's message, and
/// what to do.
pub fn final_text(error_message: &str, provider: &str, retries: Option<u32>) -> String {
    let described = describe(error_message, provider);
    let mut text = described.headline;
    if let Some(retries) = retries {
        let plural = if retries == 1 { "retry" } else { "retries" };
        text.push_str(&format!(" (gave up after {retries} {plural})"));
    }
    if !described.detail.is_empty() {
        text.push_str(": ");
        text.push_str(&described.detail);
    }
    if !described.advice.is_empty() {
        text.push('\n');
        text.push_str(described.advice);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_limit_names_the_provider_and_keeps_its_message() {
        let text = retry_text(
            r#"429 {"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}"#,
            "anthropic",
            2000,
            1,
            3,
        );
        assert_eq!(
            text,
            "Rate limited by anthropic — retrying in 2 s (1/3)\nSlow down"
        );
    }

    #[test]
    fn final_errors_say_what_to_do() {
        let text = final_text("401 Incorrect API key provided", "openai", None);
        assert_eq!(
            text,
            "openai refused the credentials (401): Incorrect API key provided\nCheck the API key (knightcode --list-models shows which providers have one)."
        );
        let text = final_text("503 status code (no body)", "mock", Some(3));
        assert_eq!(
            text,
            "mock had a server error (503) (gave up after 3 retries)\nTry again in a moment, or switch models with /model."
        );
        let text = final_text("error sending request: connection refused", "mock", None);
        assert!(
            text.starts_with("Could not reach mock: error sending request"),
            "{text}"
        );
    }
}
