//! HTTP plumbing: the TLS client, request sending with provider-level retry, error texts.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::header::HeaderName;
use reqwest::header::HeaderValue;
use serde_json::Map;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::error::AiError;
use crate::error::StreamFailure;
use crate::model::Model;
use crate::retry::HttpFailure;
use crate::retry::ProviderRetry;
use crate::retry::provider_retry_delay;
use crate::tls::LazyPlatformVerifier;

/// Builds the reqwest client with rustls + ring and the platform's certificate verifier,
/// without touching rustls' process-wide default provider. Building it reads no certificates:
/// the verifier loads the system's roots on the first `https://` handshake
/// ([`LazyPlatformVerifier`]), so plain `http://` models (local servers) never pay for them.
pub(crate) fn build_http_client() -> Result<reqwest::Client, AiError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(LazyPlatformVerifier::new(provider.clone()));
    build_http_client_with(provider, verifier)
}

pub(crate) fn build_http_client_with(
    provider: Arc<rustls::crypto::CryptoProvider>,
    verifier: Arc<LazyPlatformVerifier>,
) -> Result<reqwest::Client, AiError> {
    let tls = crate::tls::client_config(provider, verifier)
        .map_err(|e| AiError::HttpClient(e.to_string()))?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| AiError::HttpClient(e.to_string()))
}

/// A client builder with the same TLS as provider requests (rustls + ring, the platform's
/// verifier loaded on the first `https://` handshake), for other HTTP the agent makes (the
/// web tools), which set their own timeouts, redirects and resolution.
pub fn http_client_builder() -> Result<reqwest::ClientBuilder, AiError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(LazyPlatformVerifier::new(provider.clone()));
    let tls = crate::tls::client_config(provider, verifier)
        .map_err(|e| AiError::HttpClient(e.to_string()))?;
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(user_agent()))
}

/// The `User-Agent` every request carries: `knightcode (<platform> <release>; <arch>)`, with
/// Node's names for platform and architecture, as the TypeScript agent sends.
pub fn user_agent() -> String {
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    // Linux exposes the kernel release here; elsewhere the release is not worth a syscall.
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned());
    format!("knightcode ({platform} {release}; {arch})")
}

/// Header names are case-insensitive; later sources win, `null` removes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Headers(Vec<(String, String)>);

impl Headers {
    pub(crate) fn set(&mut self, name: &str, value: impl Into<String>) {
        self.remove(name);
        self.0.push((name.to_owned(), value.into()));
    }

    pub(crate) fn remove(&mut self, name: &str) {
        self.0.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether a header is present with a non-blank value.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| !v.trim().is_empty())
    }

    /// Applies a JSON header map (model or request headers).
    pub(crate) fn merge(&mut self, headers: Option<&Map<String, Value>>) {
        for (name, value) in headers.into_iter().flatten() {
            match value {
                Value::Null => self.remove(name),
                Value::String(s) => self.set(name, s.clone()),
                other => self.set(name, other.to_string()),
            }
        }
    }

    /// The headers as a JSON object (what `before_provider_headers` handlers edit).
    pub(crate) fn to_json(&self) -> Map<String, Value> {
        self.0
            .iter()
            .map(|(n, v)| (n.clone(), Value::String(v.clone())))
            .collect()
    }

    /// Headers from a JSON object: `null` values are dropped, others sent as text.
    pub(crate) fn from_json(headers: &Map<String, Value>) -> Self {
        let mut out = Self::default();
        out.merge(Some(headers));
        out
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    fn to_header_map(&self) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in &self.0 {
            // Invalid names or values (control characters) are skipped rather than sent broken.
            if let (Ok(n), Ok(v)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                map.insert(n, v);
            }
        }
        map
    }
}

/// One prepared HTTP request.
#[derive(Debug, Clone)]
pub(crate) struct HttpRequest {
    pub(crate) url: String,
    pub(crate) headers: Headers,
    pub(crate) body: Vec<u8>,
}

/// How a wire API formats error bodies into a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorStyle {
    /// `{status} {whole JSON body}` (Anthropic SDK).
    WholeBody,
    /// `{status} {error.message}` when the body has one (OpenAI SDK, Gemini).
    ErrorMessage,
    /// `Mistral API error ({status}): {body as sent}` (the reference's Mistral client).
    Mistral,
    /// The ChatGPT-plan backend's: the service's message, the plan's limits in words a user
    /// can act on ([`crate::providers::openai_codex::http_failure`]).
    Codex,
    /// `{error name}: {message}`, the name from `x-amzn-errortype` (the AWS SDK).
    Bedrock,
}

/// Why sending failed.
pub(crate) enum SendError {
    Aborted,
    Failed(StreamFailure),
}

/// Joins a base URL and a path without doubling the slash.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// Base headers: user agent, then model headers; callers add auth and request headers.
pub(crate) fn base_headers(model: &Model, user_agent: &str) -> Headers {
    let mut headers = Headers::default();
    headers.set("User-Agent", user_agent);
    headers.merge(model.headers.as_ref());
    headers
}

fn failure_from_response(response: &reqwest::Response) -> HttpFailure {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    HttpFailure {
        status: Some(response.status().as_u16()),
        should_retry_header: header("x-should-retry"),
        retry_after_ms: header("retry-after-ms"),
        retry_after: header("retry-after"),
    }
}

/// Formats a non-2xx response the way the TypeScript SDKs do.
pub(crate) fn format_http_error(status: u16, body: &str, style: ErrorStyle) -> String {
    let body = body.trim();
    if style == ErrorStyle::Mistral {
        let shown = truncate(body, 4000);
        let cut = body.len() - shown.len();
        return match (body.is_empty(), cut) {
            (true, _) => format!("Mistral API error ({status}): status code (no body)"),
            (false, 0) => format!("Mistral API error ({status}): {body}"),
            (false, cut) => {
                format!("Mistral API error ({status}): {shown}... [truncated {cut} chars]")
            }
        };
    }
    if body.is_empty() {
        return format!("{status} status code (no body)");
    }
    if style == ErrorStyle::ErrorMessage
        && let Ok(json) = serde_json::from_str::<Value>(body)
    {
        let error = json.get("error").unwrap_or(&json);
        let error = match error {
            // Gemini wraps errors in a one-element array on some endpoints.
            Value::Array(items) => items.first().and_then(|e| e.get("error")).unwrap_or(error),
            other => other,
        };
        if let Some(message) = error.get("message").and_then(Value::as_str) {
            return format!("{status} {message}");
        }
        return format!("{status} {}", compact_json(&json));
    }
    match serde_json::from_str::<Value>(body) {
        Ok(json) => format!("{status} {}", compact_json(&json)),
        Err(_) => format!("{status} {}", truncate(body, 4000)),
    }
}

/// The failure an error response stands for: its text as the SDKs format it, its class from
/// the status and the error codes or types the body names.
pub(crate) fn http_failure(status: u16, body: &str, style: ErrorStyle) -> StreamFailure {
    if style == ErrorStyle::Codex {
        return crate::providers::openai_codex::http_failure(status, body);
    }
    let message = format_http_error(status, body, style);
    let json = serde_json::from_str::<Value>(body.trim()).ok();
    let codes = json.as_ref().map(error_codes).unwrap_or_default();
    StreamFailure::provider(Some(status), &codes, message)
}

/// The codes and types an error object names (`error.type`, `error.code`, `error.status`),
/// in the shapes Anthropic, OpenAI and Gemini send, alone or wrapped in `{"error": …}` or a
/// one-element array.
pub(crate) fn error_codes(json: &Value) -> Vec<&str> {
    let json = match json {
        Value::Array(items) => items.first().unwrap_or(json),
        other => other,
    };
    let error = json.get("error").unwrap_or(json);
    ["type", "code", "status"]
        .iter()
        .filter_map(|key| error.get(*key).and_then(Value::as_str))
        .collect()
}

fn compact_json(value: &Value) -> String {
    truncate(&value.to_string(), 4000).to_owned()
}

fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Describes a transport error so that the transient classifier recognises it (the
/// `Request timed out`, `Connection error` and `Network error` prefixes), with what the user
/// can do about it where the error's kind says (read from the error's types, not its text).
pub(crate) fn describe_transport_error(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    let mut refused = false;
    let mut tls = false;
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        refused |= cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
        tls |= is_tls_error(cause);
        source = cause.source();
    }
    let server = error
        .url()
        .map(|url| format!("{}://{}", url.scheme(), url.authority()))
        .unwrap_or_else(|| "the server".to_owned());
    if error.is_timeout() {
        format!("Request timed out: {text}")
    } else if error.is_connect() && refused {
        format!(
            "Connection error: {text}. Nothing is listening at {server}: start the provider's \
             server, or check the provider's baseUrl (models.json)."
        )
    } else if error.is_connect() && tls {
        format!(
            "Connection error: {text}. The TLS handshake with {server} failed: check that the \
             address speaks HTTPS (or use http:// in baseUrl) and that its certificate is trusted."
        )
    } else if error.is_connect() {
        format!("Connection error: {text}")
    } else if error.is_body() || error.is_decode() {
        format!("Network error: {text}. The connection closed before the answer was complete.")
    } else {
        format!("Network error: {text}")
    }
}

/// Whether `error` is rustls's, directly or inside the `io::Error`s the connector wraps it in
/// (an `io::Error`'s `source` skips the error it wraps, so those are opened one by one).
fn is_tls_error(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = error;
    loop {
        if current.is::<rustls::Error>() {
            return true;
        }
        match current
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
        {
            Some(inner) => current = inner,
            None => return false,
        }
    }
}

/// A transport error as a failure: always the network's.
pub(crate) fn transport_failure(error: &reqwest::Error) -> StreamFailure {
    StreamFailure::network(describe_transport_error(error))
}

/// The idle timeout; 0 means "none", expressed as a year so timers stay in range.
pub(crate) fn idle_timeout(policy: &ProviderRetry) -> Duration {
    if policy.timeout_ms == 0 {
        Duration::from_secs(365 * 24 * 3600)
    } else {
        Duration::from_millis(policy.timeout_ms)
    }
}

/// Sends the request; retries the initial request per [`ProviderRetry`]. Returns the response
/// once it has a success status.
pub(crate) async fn send_with_retry(
    client: &reqwest::Client,
    request: &HttpRequest,
    policy: &ProviderRetry,
    clock: &dyn Clock,
    cancel: &CancellationToken,
    style: ErrorStyle,
) -> Result<reqwest::Response, SendError> {
    let mut retry_index = 0u32;
    loop {
        let builder = client
            .post(&request.url)
            .headers(request.headers.to_header_map())
            .body(request.body.clone());
        // The timeout covers waiting for the response head; the body has its own idle timeout.
        let timeout = idle_timeout(policy);
        let sent = tokio::select! {
            _ = cancel.cancelled() => return Err(SendError::Aborted),
            result = tokio::time::timeout(timeout, builder.send()) => result,
        };
        let (failure, failed) = match sent {
            Err(_) => (
                HttpFailure::default(),
                StreamFailure::network(format!(
                    "Request timed out after {} ms without a response",
                    policy.timeout_ms
                )),
            ),
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let failure = failure_from_response(&response);
                let status = response.status().as_u16();
                let error_type = response
                    .headers()
                    .get("x-amzn-errortype")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let body = tokio::select! {
                    _ = cancel.cancelled() => return Err(SendError::Aborted),
                    body = response.text() => body.unwrap_or_default(),
                };
                let failed = if style == ErrorStyle::Bedrock {
                    crate::providers::bedrock::http_failure(status, error_type.as_deref(), &body)
                } else {
                    http_failure(status, &body, style)
                };
                (failure, failed)
            }
            Ok(Err(error)) => (HttpFailure::default(), transport_failure(&error)),
        };
        if retry_index >= policy.max_retries || !failure.is_retryable() {
            return Err(SendError::Failed(with_server_delay(
                failed,
                &failure,
                policy,
                clock.now_ms(),
            )));
        }
        let delay = provider_retry_delay(
            &failure,
            retry_index,
            policy,
            clock.now_ms(),
            clock.random(),
            &failed,
        )
        .map_err(SendError::Failed)?;
        retry_index += 1;
        tokio::select! {
            _ = cancel.cancelled() => return Err(SendError::Aborted),
            _ = clock.sleep(delay) => {}
        }
    }
}

/// A failure the provider layer gives up on, with the wait its server asked for, for the
/// agent's retry to honour. A wait beyond `max_retry_delay_ms` says so in the message, in the
/// provider layer's own words, so the user learns why no retry follows.
fn with_server_delay(
    failed: StreamFailure,
    failure: &HttpFailure,
    policy: &ProviderRetry,
    now_ms: i64,
) -> StreamFailure {
    if !failure.is_retryable() {
        return failed;
    }
    let Some(delay) = failure.server_delay_ms(now_ms).filter(|d| *d >= 0.0) else {
        return failed;
    };
    // The provider layer's own rule decides whether the wait is beyond its cap and words it.
    let mut failed = match provider_retry_delay(failure, 0, policy, now_ms, 0.0, &failed) {
        Err(beyond_cap) => beyond_cap,
        Ok(_) => failed,
    };
    failed.retry_after_ms = Some(delay.ceil() as u64);
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts() {
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            format_http_error(529, anthropic, ErrorStyle::WholeBody),
            format!("529 {anthropic}")
        );
        assert_eq!(
            format_http_error(
                429,
                r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
                ErrorStyle::ErrorMessage
            ),
            "429 Rate limit reached"
        );
        assert_eq!(
            format_http_error(500, "", ErrorStyle::ErrorMessage),
            "500 status code (no body)"
        );
        assert_eq!(
            format_http_error(502, "Bad gateway", ErrorStyle::ErrorMessage),
            "502 Bad gateway"
        );
    }

    #[test]
    fn headers_are_case_insensitive() {
        let mut headers = Headers::default();
        headers.set("X-Api-Key", "a");
        headers.set("x-api-key", "b");
        assert_eq!(headers.iter().count(), 1);
        assert_eq!(headers.get("X-API-KEY"), Some("b"));
        let mut patch = Map::new();
        patch.insert("x-api-key".into(), Value::Null);
        headers.merge(Some(&patch));
        assert!(!headers.has("x-api-key"));
    }
}
