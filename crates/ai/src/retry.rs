//! Retry policy (providers.md §6).
//!
//! Two layers exist. The agent retries a whole turn when the assistant message failed with a
//! transient error ([`is_retryable_assistant_error`], [`RetryPolicy::delay_ms`]); that loop
//! lives with the agent, which owns the session. The provider layer can re-issue the initial
//! HTTP request ([`ProviderRetry`]); it never retries once a stream has started.

use std::sync::LazyLock;
use std::time::Duration;

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::StopReason;
use regex::Regex;

use crate::error::ErrorClass;
use crate::error::StreamFailure;

/// Subscription, quota and billing limits: they do not go away in seconds.
const NON_RETRYABLE_PATTERNS: &[&str] = &[
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota",
    "out of budget",
    "quota exceeded",
    "billing",
    "subscription_sharing_usage_limit_exceeded",
];

/// Transient provider, transport and stream failures.
const RETRYABLE_PATTERNS: &[&str] = &[
    "overloaded",
    "server_busy",
    "servers are currently busy",
    "currently experiencing high demand",
    "model is at capacity",
    "rate.?limit",
    "too many requests",
    // Status codes only as whole words: a 400 mentioning "15200 tokens" is permanent. The
    // boundaries are ASCII ones (digits are ASCII): a Unicode `\b` makes the regex crate's
    // fast engines give up on non-ASCII text, and matching an 830-byte message of mixed
    // scripts took about 1 ms instead of 5 µs (found by the `stream_openai_completions`
    // fuzz target).
    r"(?-u:\b)(?:429|500|502|503|504|520|524)(?-u:\b)",
    "service.?unavailable",
    "server.?error",
    "internal.?error",
    "provider.?returned.?error",
    "exceeded request buffer limit while retrying upstream",
    "network.?error",
    "connection.?error",
    "connection.?refused",
    "connection.?lost",
    "other side closed",
    "fetch failed",
    "getaddrinfo",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "socket connection was closed",
    "timed? out",
    "timeout",
    "terminated",
    "websocket.?closed",
    "websocket.?error",
    "ended without",
    "stream ended before message_stop",
    "stream ended before a terminal response event",
    "http2 request did not get a response",
    "pending stream has been canceled",
    "retry delay",
    "you can retry your request",
    "try your request again",
    "please retry your request",
    "ResourceExhausted",
    "subscription_sharing_usage_unavailable",
    "subscription_sharing_user_unavailable",
];

/// Compiles a case-insensitive alternation. The patterns are constants of this crate and a
/// unit test compiles them, so `None` never happens in practice; it only avoids a panic path.
pub(crate) fn alternation(patterns: &[&str]) -> Option<Regex> {
    Regex::new(&format!("(?i){}", patterns.join("|"))).ok()
}

static NON_RETRYABLE: LazyLock<Option<Regex>> =
    LazyLock::new(|| alternation(NON_RETRYABLE_PATTERNS));
static RETRYABLE: LazyLock<Option<Regex>> = LazyLock::new(|| alternation(RETRYABLE_PATTERNS));

/// Quota / billing exhaustion: never retried automatically.
pub fn is_non_retryable_limit(error_message: &str) -> bool {
    NON_RETRYABLE
        .as_ref()
        .is_some_and(|re| re.is_match(error_message))
}

/// Whether an error message looks like a transient failure (non-retryable limits excluded).
pub fn is_retryable_error_message(error_message: &str) -> bool {
    !is_non_retryable_limit(error_message)
        && RETRYABLE
            .as_ref()
            .is_some_and(|re| re.is_match(error_message))
}

/// Whether a failed assistant message should be retried by the agent. Callers check context
/// overflow first ([`crate::is_context_overflow`]): overflow is compacted, not retried.
///
/// The class decided where the failure arose answers. Without one the text does, with the
/// reference's rule (which decides everything by text): messages read from a session file,
/// and failures that exist only as text (an extension's provider, a scripted test provider).
pub fn is_retryable_assistant_error(message: &AssistantMessage) -> bool {
    if message.stop_reason.known() != Some(StopReason::Error) {
        return false;
    }
    let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) else {
        return false;
    };
    match message.error_class.get() {
        Some(class) => class.is_transient(),
        None => is_retryable_error_message(text),
    }
}

/// Agent-level retry settings (`retry.*` in settings.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
    pub max_agent_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
            max_agent_delay_ms: 60_000,
        }
    }
}

impl RetryPolicy {
    /// Delay before retry `attempt` (1-based): `base × 2^(attempt−1)`, capped; no jitter.
    pub fn delay_ms(&self, attempt: u32) -> u64 {
        let shift = attempt.saturating_sub(1).min(62);
        let delay = self.base_delay_ms.saturating_mul(1u64 << shift);
        delay.min(self.max_agent_delay_ms)
    }
}

/// Provider-level HTTP retry settings (`retry.provider.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderRetry {
    /// Re-issues of the initial request; 0 (the default) disables the layer.
    pub max_retries: u32,
    /// A server-requested delay above this fails at once; 0 means no limit.
    pub max_retry_delay_ms: u64,
    /// Idle timeout for connecting and between body chunks.
    pub timeout_ms: u64,
}

impl Default for ProviderRetry {
    fn default() -> Self {
        Self {
            max_retries: 0,
            max_retry_delay_ms: 60_000,
            timeout_ms: 300_000,
        }
    }
}

/// What an HTTP failure tells the provider-level retry.
#[derive(Debug, Clone, Default)]
pub struct HttpFailure {
    /// `None` when no response arrived (connection error).
    pub status: Option<u16>,
    pub should_retry_header: Option<String>,
    pub retry_after_ms: Option<String>,
    pub retry_after: Option<String>,
}

impl HttpFailure {
    /// The SDK retry rule: `x-should-retry` wins; else network errors, 408, 409, 429, ≥500.
    pub fn is_retryable(&self) -> bool {
        match self.should_retry_header.as_deref() {
            Some("true") => return true,
            Some("false") => return false,
            _ => {}
        }
        match self.status {
            None => true,
            Some(status) => matches!(status, 408 | 409 | 429) || status >= 500,
        }
    }

    /// The server-requested delay in milliseconds, if it gave a usable one.
    pub fn server_delay_ms(&self, now_ms: i64) -> Option<f64> {
        if let Some(value) = self.retry_after_ms.as_deref()
            && let Some(ms) = parse_js_float(value)
        {
            return Some(ms);
        }
        let value = self.retry_after.as_deref()?;
        if let Some(seconds) = parse_js_float(value) {
            return Some(seconds * 1000.0);
        }
        let date = parse_http_date_ms(value)?;
        Some((date - now_ms) as f64)
    }
}

/// Delay before provider retry number `retry_index` (0-based).
///
/// Server-requested delays above `max_retry_delay_ms` (when non-zero) are an error whose text
/// matches the agent-level "retry delay" pattern. It stays transient: the agent retries it
/// later, with its own delays (a non-transient class of the response becomes `RateLimit`: the
/// server asked to wait).
pub fn provider_retry_delay(
    failure: &HttpFailure,
    retry_index: u32,
    policy: &ProviderRetry,
    now_ms: i64,
    jitter: f64,
    provider_failure: &StreamFailure,
) -> Result<Duration, StreamFailure> {
    if let Some(delay) = failure.server_delay_ms(now_ms) {
        let max = policy.max_retry_delay_ms as f64;
        if max > 0.0 && delay > max {
            let class = if provider_failure.class.is_transient() {
                provider_failure.class
            } else {
                ErrorClass::RateLimit
            };
            return Err(StreamFailure::new(
                class,
                format!(
                    "Server requested {}s retry delay (max: {}s). {}",
                    (delay / 1000.0).ceil(),
                    (max / 1000.0).ceil(),
                    provider_failure.message
                ),
            ));
        }
        return Ok(Duration::from_millis(delay.max(0.0) as u64));
    }
    let exponential = (0.5 * 2f64.powi(retry_index.min(16) as i32)).min(8.0) * 1000.0;
    let jittered = exponential * (1.0 - jitter.clamp(0.0, 1.0) * 0.25);
    Ok(Duration::from_millis(jittered as u64))
}

/// `Number.parseFloat`: a leading decimal number, trailing garbage ignored.
fn parse_js_float(text: &str) -> Option<f64> {
    let text = text.trim_start();
    let mut end = 0;
    let bytes = text.as_bytes();
    if end < bytes.len() && (bytes[end] == b'-' || bytes[end] == b'+') {
        end += 1;
    }
    let digits_start = end;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    if end < bytes.len() && bytes[end] == b'.' {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    }
    if end == digits_start {
        return None;
    }
    text[..end].parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) into Unix milliseconds.
fn parse_http_date_ms(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if !zone.eq_ignore_ascii_case("GMT") {
        return None;
    }
    let day: i64 = day.parse().ok()?;
    let month = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    .iter()
    .position(|m| m.eq_ignore_ascii_case(month))? as i64
        + 1;
    let year: i64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    // Days from civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + m) * 60_000 + s * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile() {
        assert!(alternation(RETRYABLE_PATTERNS).is_some());
        assert!(alternation(NON_RETRYABLE_PATTERNS).is_some());
    }

    #[test]
    fn classifier() {
        assert!(is_retryable_error_message("529 overloaded_error"));
        assert!(is_retryable_error_message("HTTP 503 Service Unavailable"));
        assert!(is_retryable_error_message("Rate limit exceeded"));
        assert!(!is_retryable_error_message("400 request has 15200 tokens"));
        assert!(!is_retryable_error_message(
            "429 insufficient_quota rate limit"
        ));
        assert!(is_retryable_error_message(
            "Anthropic stream ended before message_stop"
        ));
    }

    #[test]
    fn status_codes_are_whole_numbers_among_other_scripts_too() {
        assert!(is_retryable_error_message(
            "Fehler 503: Dienst nicht verfügbar"
        ));
        assert!(is_retryable_error_message("エラー 502 ゲートウェイ"));
        assert!(!is_retryable_error_message(
            "Anfrage mit 15029 Tokens abgelehnt"
        ));
        assert!(!is_retryable_error_message("ungültig: 4290 Zeichen"));
    }

    #[test]
    fn agent_delays() {
        let policy = RetryPolicy::default();
        assert_eq!(
            [1, 2, 3, 10].map(|a| policy.delay_ms(a)),
            [2000, 4000, 8000, 60_000]
        );
    }

    #[test]
    fn provider_delays() {
        let policy = ProviderRetry::default();
        let header = |ms: Option<&str>, s: Option<&str>| HttpFailure {
            status: Some(429),
            retry_after_ms: ms.map(str::to_owned),
            retry_after: s.map(str::to_owned),
            ..HttpFailure::default()
        };
        let x = StreamFailure::new(ErrorClass::RateLimit, "x");
        let delay = |f: &HttpFailure, i| provider_retry_delay(f, i, &policy, 0, 0.0, &x);
        assert_eq!(
            delay(&header(Some("1500"), Some("9")), 0),
            Ok(Duration::from_millis(1500))
        );
        assert_eq!(
            delay(&header(None, Some("2")), 0),
            Ok(Duration::from_secs(2))
        );
        assert_eq!(
            delay(&header(None, None), 0),
            Ok(Duration::from_millis(500))
        );
        assert_eq!(delay(&header(None, None), 10), Ok(Duration::from_secs(8)));
        let err = delay(&header(None, Some("120")), 0);
        assert_eq!(
            err,
            Err(StreamFailure::new(
                ErrorClass::RateLimit,
                "Server requested 120s retry delay (max: 60s). x"
            ))
        );
        assert_eq!(
            parse_http_date_ms("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777_000)
        );
        let date = header(None, Some("Thu, 01 Jan 1970 00:00:03 GMT"));
        assert_eq!(
            provider_retry_delay(&date, 0, &policy, 1000, 0.0, &StreamFailure::other("")),
            Ok(Duration::from_secs(2))
        );
    }

    #[test]
    fn retryable_statuses() {
        let status = |s| HttpFailure {
            status: s,
            ..HttpFailure::default()
        };
        assert!(status(None).is_retryable());
        assert!(status(Some(529)).is_retryable());
        assert!(status(Some(429)).is_retryable());
        assert!(!status(Some(400)).is_retryable());
        let forbidden = HttpFailure {
            status: Some(500),
            should_retry_header: Some("false".into()),
            ..HttpFailure::default()
        };
        assert!(!forbidden.is_retryable());
    }
}
