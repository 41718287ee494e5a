//! The subscription logins this crate refreshes itself (the reference's built-in OAuth
//! providers), and the lock that keeps two processes, ours or the reference's, from
//! refreshing one login at once.
//!
//! Logging in (the browser flow) is [`crate::login`]; both write `auth.json` in the
//! reference's shape.

use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use std::time::SystemTime;

use serde_json::Map;
use serde_json::Value;

use crate::config_value::EnvSource;
use crate::error::OAuthHookError;

pub(crate) mod codex;

/// Where Anthropic exchanges a refresh token for a new access token.
const ANTHROPIC_TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
/// The OAuth client the reference (and Claude Code) logs in as.
pub(crate) const ANTHROPIC_CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
/// Replaces [`ANTHROPIC_TOKEN_URL`]: for tests with a stand-in token server, and for
/// networks that reach the service through a proxy.
pub const ANTHROPIC_TOKEN_URL_ENV: &str = "KNIGHTCODE_ANTHROPIC_OAUTH_TOKEN_URL";
/// A new token is taken as expired this long before the service says, as the reference does,
/// so a request never starts with a token about to lapse.
const EXPIRY_MARGIN_MS: f64 = 5.0 * 60.0 * 1000.0;
/// How long the token endpoint may take.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(30);

/// A login this crate knows how to refresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BuiltinLogin {
    /// Claude Pro/Max: `token_url` answers the refresh.
    Anthropic { token_url: String },
    /// ChatGPT Plus/Pro (Codex): `token_url` answers the refresh.
    OpenAiCodex { token_url: String },
    /// GitHub Copilot: a new Copilot token for the stored GitHub token ([`crate::copilot`]);
    /// the environment's endpoint replacements.
    GithubCopilot { env: Vec<(&'static str, String)> },
}

impl BuiltinLogin {
    /// Whether `provider` has a built-in login.
    pub(crate) fn handles(provider: &str) -> bool {
        matches!(provider, "anthropic" | "openai-codex") || provider == crate::copilot::PROVIDER
    }

    /// The built-in login of `provider`, if it has one.
    pub(crate) fn of(provider: &str, env: &dyn EnvSource) -> Option<Self> {
        match provider {
            "anthropic" => Some(Self::Anthropic {
                token_url: anthropic_token_url(env),
            }),
            "openai-codex" => Some(Self::OpenAiCodex {
                token_url: codex::token_url(env),
            }),
            crate::copilot::PROVIDER => Some(Self::GithubCopilot {
                env: [
                    crate::copilot::GITHUB_URL_ENV,
                    crate::copilot::COPILOT_TOKEN_URL_ENV,
                ]
                .into_iter()
                .filter_map(|name| env.var(name).map(|value| (name, value)))
                .collect(),
            }),
            _ => None,
        }
    }

    /// New credentials (`refresh`, `access`, `expires`) for `credentials`.
    pub(crate) async fn refresh(
        &self,
        credentials: &Map<String, Value>,
    ) -> Result<Map<String, Value>, OAuthHookError> {
        match self {
            Self::Anthropic { token_url } => refresh_anthropic(token_url, credentials).await,
            Self::OpenAiCodex { token_url } => codex::refresh(token_url, credentials).await,
            Self::GithubCopilot { env } => {
                let env = crate::config_value::MapEnv::new(env.iter().cloned());
                crate::copilot::refresh(credentials, &env).await
            }
        }
    }
}

async fn refresh_anthropic(
    token_url: &str,
    credentials: &Map<String, Value>,
) -> Result<Map<String, Value>, OAuthHookError> {
    let refresh = credentials
        .get("refresh")
        .and_then(Value::as_str)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| OAuthHookError::Failed("the login has no refresh token".into()))?;
    let client = crate::http::http_client_builder()
        .and_then(|builder| {
            builder
                .timeout(REFRESH_TIMEOUT)
                .build()
                .map_err(|e| crate::error::AiError::HttpClient(e.to_string()))
        })
        .map_err(|e| OAuthHookError::Failed(e.to_string()))?;
    let body = serde_json::json!({
        "grant_type": "refresh_token",
        "client_id": ANTHROPIC_CLIENT_ID,
        "refresh_token": refresh,
    });
    let failed = |what: String| OAuthHookError::Failed(format!("{token_url}: {what}"));
    let response = client
        .post(token_url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .json(&body)
        .send()
        .await
        .map_err(|e| failed(format!("the request failed ({e})")))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| failed(format!("the answer could not be read ({e})")))?;
    if !status.is_success() {
        return Err(failed(format!("the service refused it ({status}: {text})")));
    }
    let answer: Value = serde_json::from_str(&text)
        .map_err(|e| failed(format!("the answer is not JSON ({e}): {text}")))?;
    let field = |key: &str| answer.get(key).cloned().filter(|v| !v.is_null());
    let (Some(access), Some(expires_in)) = (
        field("access_token"),
        field("expires_in").and_then(|v| v.as_f64()),
    ) else {
        return Err(failed(format!("the answer has no access token: {text}")));
    };
    let mut fresh = Map::new();
    fresh.insert(
        "refresh".into(),
        field("refresh_token").unwrap_or_else(|| Value::String(refresh.to_owned())),
    );
    fresh.insert("access".into(), access);
    fresh.insert(
        "expires".into(),
        serde_json::json!(expires_at(expires_in) as i64),
    );
    Ok(fresh)
}

/// Anthropic's token endpoint, or its replacement from the environment.
pub(crate) fn anthropic_token_url(env: &dyn EnvSource) -> String {
    env.var(ANTHROPIC_TOKEN_URL_ENV)
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| ANTHROPIC_TOKEN_URL.to_owned())
}

/// The `expires` to store for a token that lives `expires_in` seconds from now.
pub(crate) fn expires_at(expires_in: f64) -> f64 {
    now_ms() + expires_in * 1000.0 - EXPIRY_MARGIN_MS
}

/// Milliseconds since the epoch, as `expires` counts them.
pub(crate) fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64)
}

/// `auth.json`'s lock while a login is refreshed: the folder `auth.json.lock`, made and
/// removed, as the reference's lock library does, so the two agents exclude each other. A
/// lock older than [`AuthFileLock::STALE`] was left by a process that died and is taken over.
pub(crate) struct AuthFileLock {
    dir: PathBuf,
}

/// Why the lock could not be had.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    #[error("{} is held by another process", .0.display())]
    Busy(PathBuf),
    #[error("cannot create {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl AuthFileLock {
    const STALE: Duration = Duration::from_secs(30);
    /// Waits between tries, doubling from 50 ms: about 12 s in all, longer than a refresh
    /// normally takes and shorter than the stale age of a dead holder's lock plus one try.
    const TRIES: u32 = 9;

    /// Takes the lock of `file`, waiting for another holder within a bound.
    pub(crate) async fn acquire(file: &Path) -> Result<Self, LockError> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let dir = PathBuf::from(name);
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(|source| LockError::Io {
                path: parent.to_owned(),
                source,
            })?;
        }
        let mut wait = Duration::from_millis(50);
        for _ in 0..Self::TRIES {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Self { dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if Self::is_stale(&dir) {
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                }
                Err(source) => return Err(LockError::Io { path: dir, source }),
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(3));
        }
        Err(LockError::Busy(dir))
    }

    fn is_stale(dir: &Path) -> bool {
        std::fs::metadata(dir)
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > Self::STALE)
    }
}

impl Drop for AuthFileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}
