//! The ChatGPT Plus/Pro (Codex) login's token endpoint: exchanging a code and refreshing,
//! both form-encoded as OpenAI's service takes them, into the reference's `auth.json` entry
//! (`access`, `refresh`, `expires`, `accountId`).

use std::time::Duration;

use serde_json::Map;
use serde_json::Value;

use crate::config_value::EnvSource;

/// Where OpenAI's login service issues tokens.
const TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
/// Replaces [`TOKEN_URL`] (tests with a stand-in service, proxies).
pub const CODEX_TOKEN_URL_ENV: &str = "KNIGHTCODE_OPENAI_CODEX_OAUTH_TOKEN_URL";
/// The OAuth client the reference (and OpenAI's Codex CLI) logs in as.
pub(crate) const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
/// How long the token endpoint may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The token endpoint, or its replacement from the environment.
pub(crate) fn token_url(env: &dyn EnvSource) -> String {
    env.var(CODEX_TOKEN_URL_ENV)
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| TOKEN_URL.to_owned())
}

/// Why the token endpoint gave no login.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    #[error("could not set up the HTTP client: {0}")]
    Setup(String),
    #[error("the request failed ({0})")]
    Request(String),
    #[error("the service refused it ({status}: {body})")]
    Refused { status: u16, body: String },
    #[error("the answer lacks tokens: {0}")]
    BadAnswer(String),
    #[error("the access token names no ChatGPT account")]
    NoAccount,
}

/// Posts `form` to `url` and reads the login it answers with: `type` first, then the fields
/// in the order the reference writes them. `expires` is when the token lapses (no margin:
/// the reference refreshes a ChatGPT login only once it has).
pub(crate) async fn request_tokens(
    url: &str,
    form: &[(&str, &str)],
) -> Result<Map<String, Value>, TokenError> {
    let client = crate::http::http_client_builder()
        .and_then(|builder| {
            builder
                .timeout(TIMEOUT)
                .build()
                .map_err(|e| crate::error::AiError::HttpClient(e.to_string()))
        })
        .map_err(|e| TokenError::Setup(e.to_string()))?;
    let response = client
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(crate::google_adc::form_encode(form))
        .send()
        .await
        .map_err(|e| TokenError::Request(e.to_string()))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| TokenError::Request(e.to_string()))?;
    if !status.is_success() {
        return Err(TokenError::Refused {
            status: status.as_u16(),
            body: text,
        });
    }
    let answer: Value =
        serde_json::from_str(&text).map_err(|_| TokenError::BadAnswer(text.clone()))?;
    let field = |key: &str| {
        answer
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let (Some(access), Some(refresh), Some(expires_in)) = (
        field("access_token"),
        field("refresh_token"),
        answer.get("expires_in").and_then(Value::as_f64),
    ) else {
        return Err(TokenError::BadAnswer(text));
    };
    let account =
        crate::providers::openai_codex::account_id(access).ok_or(TokenError::NoAccount)?;
    let mut entry = Map::new();
    entry.insert("type".into(), Value::String("oauth".into()));
    entry.insert("access".into(), Value::String(access.to_owned()));
    entry.insert("refresh".into(), Value::String(refresh.to_owned()));
    entry.insert(
        "expires".into(),
        serde_json::json!((super::now_ms() + expires_in * 1000.0) as i64),
    );
    entry.insert("accountId".into(), Value::String(account));
    Ok(entry)
}

/// A fresh login for `credentials` (its `refresh` token).
pub(crate) async fn refresh(
    token_url: &str,
    credentials: &Map<String, Value>,
) -> Result<Map<String, Value>, crate::error::OAuthHookError> {
    let refresh = credentials
        .get("refresh")
        .and_then(Value::as_str)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| {
            crate::error::OAuthHookError::Failed("the login has no refresh token".into())
        })?;
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh),
        ("client_id", CLIENT_ID),
    ];
    let mut fresh = request_tokens(token_url, &form)
        .await
        .map_err(|e| crate::error::OAuthHookError::Failed(format!("{token_url}: {e}")))?;
    // The caller writes `type` itself.
    fresh.remove("type");
    Ok(fresh)
}
