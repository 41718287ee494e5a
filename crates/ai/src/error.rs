//! The crate's error type and the classification of provider failures.
//!
//! Two kinds of failure exist here. Configuration problems (a broken `models.json`, an
//! unreadable `auth.json`) are returned as [`AiError`]. Failures of a model call
//! never are: they end the stream with an assistant message whose `stopReason` is `error` or
//! `aborted` and whose `errorMessage` says what happened, exactly like the TypeScript agent, so
//! the session can store them. [`classify_error_message`] sorts such messages into classes.

use std::path::PathBuf;

/// Errors of the provider layer that are not part of a model response.
#[derive(Debug, thiserror::Error)]
pub enum AiError {
    #[error("Could not read {path}: {source}. Check that the file exists and is readable.")]
    ReadFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("Could not write {path}: {source}. Check the folder's permissions and free space.")]
    WriteFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path} is not valid JSON: {message}. Fix the file or move it aside.")]
    InvalidJson { path: PathBuf, message: String },

    #[error("Invalid models.json at {path}: {message}")]
    InvalidModelsJson { path: String, message: String },

    #[error("Unknown API \"{api}\" for model {provider}/{model}. Use one of: {supported}.")]
    UnsupportedApi {
        api: String,
        provider: String,
        model: String,
        supported: String,
    },

    #[error("Command `{command}` for {what} failed: {message}")]
    Command {
        command: String,
        what: String,
        message: String,
    },

    #[error(
        "Environment variable {names} is not set (needed for the {what}). Set it or change the value."
    )]
    MissingEnv { names: String, what: String },

    #[error(
        "Could not refresh the OAuth login of provider \"{provider}\": {message}. Log in again with /login {provider}."
    )]
    OAuthRefresh { provider: String, message: String },
    #[error("The OAuth login of provider \"{provider}\" gave no API key: {message}")]
    OAuthApiKey { provider: String, message: String },
    #[error("Could not set up the HTTP client: {0}. This is a bug or a broken TLS installation.")]
    HttpClient(String),
}

/// Broad classes of model-call failures, for retries, compaction and user guidance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// Missing, invalid or expired credentials (401/403).
    Auth,
    /// Too many requests right now (429 and friends); transient.
    RateLimit,
    /// Quota, billing or subscription limits; not worth retrying.
    Quota,
    /// The prompt does not fit the model's context window; compaction helps.
    ContextOverflow,
    /// Connection failures, resets, timeouts, truncated streams; transient.
    Network,
    /// The provider is overloaded or failed internally (5xx, 529, mid-stream error events);
    /// transient.
    Overloaded,
    /// The user cancelled the request.
    Aborted,
    /// Anything else (bad request, refusal, unknown stop reason).
    Other,
}

impl ErrorClass {
    /// Whether retrying the same request later may succeed.
    pub fn is_transient(self) -> bool {
        matches!(self, Self::RateLimit | Self::Network | Self::Overloaded)
    }
}

/// Classifies the `errorMessage` of a failed assistant message.
///
/// Order matters: overflow first (it is never retried as-is but compacted), then quota (which
/// also often says "rate limit"), then auth, then the transient classes.
pub fn classify_error_message(message: &str) -> ErrorClass {
    let lower = message.to_ascii_lowercase();
    if lower.contains("request was aborted") || lower == "aborted" {
        return ErrorClass::Aborted;
    }
    if crate::overflow::matches_overflow_text(message) {
        return ErrorClass::ContextOverflow;
    }
    if crate::retry::is_non_retryable_limit(message) {
        return ErrorClass::Quota;
    }
    if is_auth_text(&lower) {
        return ErrorClass::Auth;
    }
    if [
        "rate limit",
        "rate_limit",
        "ratelimit",
        "too many requests",
        "429",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
        || lower.contains("resourceexhausted")
        || lower.contains("resource_exhausted")
    {
        return ErrorClass::RateLimit;
    }
    if [
        "overloaded",
        "529",
        "server_busy",
        "servers are currently busy",
        "high demand",
        "at capacity",
        "internal error",
        "internal_error",
        "server error",
        "server_error",
        "service unavailable",
        "provider returned error",
        "you can retry your request",
        "try your request again",
        "please retry your request",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
        || starts_with_status(&lower, |status| status >= 500)
    {
        return ErrorClass::Overloaded;
    }
    if crate::retry::is_retryable_error_message(message) {
        // Everything else the transient list accepts is a transport problem.
        return ErrorClass::Network;
    }
    ErrorClass::Other
}

fn is_auth_text(lower: &str) -> bool {
    starts_with_status(lower, |status| status == 401 || status == 403)
        || [
            "no api key",
            "invalid x-api-key",
            "invalid api key",
            "invalid_api_key",
            "incorrect api key",
            "authentication_error",
            "permission_error",
            "unauthorized",
            "unauthenticated",
            "api key not valid",
        ]
        .iter()
        .any(|needle| lower.contains(needle))
}

/// True when the message starts with an HTTP status code accepted by `pred` (how HTTP errors
/// are formatted: `429 {...}`).
fn starts_with_status(lower: &str, pred: impl Fn(u16) -> bool) -> bool {
    let digits: String = lower.chars().take_while(char::is_ascii_digit).collect();
    digits.len() == 3 && digits.parse::<u16>().is_ok_and(pred)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let cases = [
            (
                r#"529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                ErrorClass::Overloaded,
            ),
            ("429 Rate limit reached for requests", ErrorClass::RateLimit),
            (
                "429 You exceeded your current quota: insufficient_quota",
                ErrorClass::Quota,
            ),
            ("401 Incorrect API key provided", ErrorClass::Auth),
            (
                "prompt is too long: 213462 tokens > 200000 maximum",
                ErrorClass::ContextOverflow,
            ),
            (
                "Anthropic stream ended before message_stop",
                ErrorClass::Network,
            ),
            (
                "error sending request: connection refused",
                ErrorClass::Network,
            ),
            ("500 Internal server error", ErrorClass::Overloaded),
            ("Request was aborted", ErrorClass::Aborted),
            ("400 invalid tool schema", ErrorClass::Other),
        ];
        for (message, class) in cases {
            assert_eq!(classify_error_message(message), class, "{message}");
        }
        assert!(ErrorClass::Overloaded.is_transient());
        assert!(!ErrorClass::Quota.is_transient());
    }
}
