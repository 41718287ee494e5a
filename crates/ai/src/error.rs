//! The crate's error type and the classification of provider failures.
//!
//! Two kinds of failure exist here. Configuration problems (a broken `models.json`, an
//! unreadable `auth.json`) are returned as [`AiError`]. Failures of a model call
//! never are: they end the stream with an assistant message whose `stopReason` is `error` or
//! `aborted` and whose `errorMessage` says what happened, exactly like the TypeScript agent, so
//! the session can store them. Where such a failure arises (an HTTP status and body, a
//! provider's error event, the transport) it is a [`StreamFailure`]: its text and its
//! [`ErrorClass`], decided there from the status and the provider's error code or type. The
//! class travels with the message in memory (`AssistantMessage::error_class`, never written)
//! and is what retry and overflow handling read. [`classify_error_message`] sorts a bare text
//! into classes: for what the user is shown, and for failures that come only as text.

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
        "Could not refresh the OAuth login of provider \"{provider}\": {source}. Log in again (`knightcode auth login {provider}`, or pi's /login: both write the same auth.json) or use an API key instead."
    )]
    OAuthRefresh {
        provider: String,
        source: OAuthHookError,
    },
    #[error("The OAuth login of provider \"{provider}\" gave no API key: {source}")]
    OAuthApiKey {
        provider: String,
        source: OAuthHookError,
    },
    #[error("Could not set up the HTTP client: {0}. This is a bug or a broken TLS installation.")]
    HttpClient(String),
    /// A `models.json` provider entry or an extension's `registerProvider` config the
    /// registry refuses; the text is the reference's.
    #[error("{0}")]
    ProviderConfig(String),
}

/// Why an OAuth hook ([`OAuthProviders`](crate::OAuthProviders), implemented outside this
/// crate by the extension host) failed. The implementation decides which; the provider's name
/// is added by [`AiError::OAuthRefresh`] and [`AiError::OAuthApiKey`], which carry it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OAuthHookError {
    /// The hook threw or could not be run: the extension's (or the host's) own words.
    #[error("{0}")]
    Failed(String),
    /// The hook answered, but not with what it must return; `hook` is its JavaScript name.
    #[error("{hook} returned {answer}")]
    UnexpectedAnswer {
        hook: &'static str,
        answer: serde_json::Value,
    },
}

/// Why a subscription login ([`crate::login`]) did not complete. A seam of its own: the front
/// ends that run a login (`knightcode auth login`, `/login`) show it to the person logging in,
/// who needs to tell a refused code from a mistyped paste.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error(
        "The pasted text has no authorization code. Paste the code shown after logging in (code#state) or the whole address the browser ended on."
    )]
    MissingCode,
    #[error(
        "The pasted code belongs to another login attempt (its state does not match). Start the login again and paste the code from that attempt."
    )]
    StateMismatch,
    #[error(
        "The login service at {url} refused the code ({status}: {body}). Start the login again; a code works only once and only for a few minutes."
    )]
    Refused {
        url: String,
        status: u16,
        body: String,
    },
    #[error(
        "Could not reach the login service at {url}: {message}. Check the network and try again."
    )]
    Request { url: String, message: String },
    #[error("The login service at {url} answered without tokens: {body}")]
    BadAnswer { url: String, body: String },
    #[error("Could not set up the login: {0}")]
    Setup(String),
}

impl From<String> for OAuthHookError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

/// A model call's failure, where it arose: the text the failed message's `errorMessage`
/// carries (the reference's wording) and the kind of failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StreamFailure {
    pub class: ErrorClass,
    pub message: String,
    /// The wait the server asked for before a retry (its `retry-after`), in milliseconds.
    pub retry_after_ms: Option<u64>,
}

impl StreamFailure {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
            retry_after_ms: None,
        }
    }

    /// Anything that is neither transient nor a limit: bad requests, refusals, unknown stop
    /// reasons, broken payloads.
    pub(crate) fn other(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::Other, message)
    }

    /// The connection broke, timed out or the stream ended early.
    pub(crate) fn network(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::Network, message)
    }

    /// A failure the provider reported only in words inside a successful (200) stream: an
    /// unusual finish reason, an incomplete response, an error event without an error object.
    /// Nothing structured says what it is, and the reference decides these by their text, so
    /// the text decides here too ([`class_from_text`]).
    pub(crate) fn from_text(message: impl Into<String>) -> Self {
        let message = message.into();
        Self::new(class_from_text(&message), message)
    }

    /// A provider's error (an HTTP error response, or an error event inside a stream), decided
    /// from the HTTP status (when there is one), the provider's error codes or types, and its
    /// message. See [`classify_provider_error`].
    pub(crate) fn provider(status: Option<u16>, codes: &[&str], message: String) -> Self {
        Self::new(classify_provider_error(status, codes, &message), message)
    }
}

/// The class of a provider's error. Overflow and exhausted quotas are recognised by the
/// provider's wording first: providers report both under generic codes (Anthropic's
/// `invalid_request_error` says "prompt is too long"; a used-up quota comes as a 429), and the
/// reference decides both by text. Then the provider's own code or type, then the HTTP
/// status. A status that says nothing definite (a 400, a 501) leaves it to the wording, as
/// the reference's retry rule does.
pub(crate) fn classify_provider_error(
    status: Option<u16>,
    codes: &[&str],
    message: &str,
) -> ErrorClass {
    let coded = codes.iter().find_map(|code| class_of_code(code));
    if coded == Some(ErrorClass::ContextOverflow) || crate::overflow::matches_overflow_text(message)
    {
        return ErrorClass::ContextOverflow;
    }
    if coded == Some(ErrorClass::Quota) || crate::retry::is_non_retryable_limit(message) {
        return ErrorClass::Quota;
    }
    if let Some(class) = coded {
        return class;
    }
    match status {
        Some(401 | 403) => ErrorClass::Auth,
        Some(429) => ErrorClass::RateLimit,
        // The statuses the reference retries, and Anthropic's "overloaded".
        Some(500 | 502 | 503 | 504 | 520 | 524 | 529) => ErrorClass::Overloaded,
        _ => class_from_text(message),
    }
}

/// Error codes and types of the providers we speak: Anthropic's `error.type`, OpenAI's
/// `error.code`/`error.type`, Gemini's `error.status`.
fn class_of_code(code: &str) -> Option<ErrorClass> {
    Some(match code {
        "overloaded_error"
        | "api_error"
        | "server_error"
        | "server_is_overloaded"
        | "slow_down"
        | "UNAVAILABLE"
        | "INTERNAL" => ErrorClass::Overloaded,
        "rate_limit_error" | "rate_limit_exceeded" | "RESOURCE_EXHAUSTED" => ErrorClass::RateLimit,
        "authentication_error"
        | "permission_error"
        | "invalid_api_key"
        | "UNAUTHENTICATED"
        | "PERMISSION_DENIED" => ErrorClass::Auth,
        "insufficient_quota" | "billing_error" => ErrorClass::Quota,
        "context_length_exceeded" | "request_too_large" | "model_context_window_exceeded" => {
            ErrorClass::ContextOverflow
        }
        "DEADLINE_EXCEEDED" => ErrorClass::Network,
        _ => return None,
    })
}

/// The class of a failure known only by its text, kept to the reference's decisions: transient
/// exactly when its retry rule retries the text ([`crate::retry::is_retryable_error_message`]),
/// an overflow exactly when its overflow rule matches. [`classify_error_message`] names the
/// class within those bounds.
pub(crate) fn class_from_text(message: &str) -> ErrorClass {
    if crate::overflow::matches_overflow_text(message) {
        return ErrorClass::ContextOverflow;
    }
    let named = classify_error_message(message);
    let retryable = crate::retry::is_retryable_error_message(message);
    match (retryable, named.is_transient()) {
        (true, true) | (false, false) => named,
        (true, false) => ErrorClass::Overloaded,
        (false, true) => ErrorClass::Other,
    }
}

pub use knightcode_protocol::ErrorClass;

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
    if ["rate limit", "rate_limit", "ratelimit", "too many requests"]
        .iter()
        .any(|needle| lower.contains(needle))
        || has_status_code(&lower, "429")
        || lower.contains("resourceexhausted")
        || lower.contains("resource_exhausted")
    {
        return ErrorClass::RateLimit;
    }
    if [
        "overloaded",
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
        || has_status_code(&lower, "529")
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

/// Whether `text` names the status `code` as a number of its own: not part of a longer
/// number, nor a port (`127.0.0.1:45299` is not a 529).
fn has_status_code(text: &str, code: &str) -> bool {
    text.match_indices(code).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + code.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit() || c == ':')
            && !after.is_some_and(|c| c.is_ascii_digit())
    })
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
            ("HTTP error: status 429", ErrorClass::RateLimit),
            // A port is not a status (this one failed a test when the port was 45299).
            (
                "Connection error: error sending request for url (https://127.0.0.1:45299/v1/chat/completions): client error (Connect)",
                ErrorClass::Network,
            ),
            (
                "Connection error: error sending request for url (http://127.0.0.1:4290/v1): connection refused",
                ErrorClass::Network,
            ),
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

    #[test]
    fn text_only_classes_keep_the_reference_decisions() {
        for text in [
            "501 Not Implemented",
            "529 status code (no body)",
            "401 Unauthorized: upstream timeout",
            "Provider finish_reason: network_error",
            "Provider stopped with: SAFETY",
            "Response incomplete: content_filter",
            "prompt is too long: 213462 tokens > 200000 maximum",
            "429 insufficient_quota rate limit",
        ] {
            let class = class_from_text(text);
            assert_eq!(
                class.is_transient(),
                crate::retry::is_retryable_error_message(text)
                    && !crate::overflow::matches_overflow_text(text),
                "{text}: {class:?}"
            );
            assert_eq!(
                class == ErrorClass::ContextOverflow,
                crate::overflow::matches_overflow_text(text),
                "{text}"
            );
        }
        assert_eq!(class_from_text("501 Not Implemented"), ErrorClass::Other);
    }

    #[test]
    fn provider_errors() {
        let class = classify_provider_error;
        // The code wins over the status, the status over silence.
        assert_eq!(
            class(Some(400), &["rate_limit_exceeded"], "400 x"),
            ErrorClass::RateLimit
        );
        assert_eq!(class(Some(503), &[], "503 x"), ErrorClass::Overloaded);
        assert_eq!(class(Some(403), &[], "403 x"), ErrorClass::Auth);
        assert_eq!(class(Some(400), &[], "400 x"), ErrorClass::Other);
        // Overflow and quota wording win over codes that say less.
        assert_eq!(
            class(
                Some(400),
                &["invalid_request_error"],
                "400 prompt is too long: 5 > 4"
            ),
            ErrorClass::ContextOverflow
        );
        assert_eq!(
            class(
                Some(429),
                &["rate_limit_error"],
                "429 You exceeded your current quota (billing)"
            ),
            ErrorClass::Quota
        );
        assert_eq!(
            class(
                None,
                &["context_length_exceeded"],
                "Error Code context_length_exceeded: x"
            ),
            ErrorClass::ContextOverflow
        );
    }
}
