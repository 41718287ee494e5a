//! GitHub Copilot's sign-in, as the reference does it: GitHub's device flow (a code typed in
//! at github.com, or a GitHub Enterprise host) gives a GitHub token, and Copilot's token
//! endpoint trades that for a short-lived Copilot token. `auth.json` keeps both in the
//! reference's shape, `{"type": "oauth", "refresh": <GitHub token>, "access": <Copilot token>,
//! "expires", "enterpriseUrl"?}`, so either agent uses the other's login; a refresh is the
//! same trade again.
//!
//! The Copilot token names the API host it is for (`proxy-ep=…`), which is where requests
//! go ([`base_url`]).

use std::time::Duration;

use serde_json::Map;
use serde_json::Value;

use crate::config_value::EnvSource;
use crate::error::OAuthHookError;

/// The provider id.
pub const PROVIDER: &str = "github-copilot";
/// The OAuth app the reference (and VS Code's Copilot Chat) logs in as.
const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
/// The identity Copilot's endpoints expect: the same as the catalog's model headers.
pub(crate) const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", "GitHubCopilotChat/0.35.0"),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];
/// Where requests go when the token names no host and there is no enterprise.
const DEFAULT_API_URL: &str = "https://api.individual.githubcopilot.com";
/// Replaces `https://<domain>` for the device-code and access-token endpoints (tests,
/// proxies), as [`crate::ANTHROPIC_TOKEN_URL_ENV`] does for Anthropic.
pub const GITHUB_URL_ENV: &str = "KNIGHTCODE_GITHUB_OAUTH_URL";
/// Replaces Copilot's token endpoint (`https://api.<domain>/copilot_internal/v2/token`).
pub const COPILOT_TOKEN_URL_ENV: &str = "KNIGHTCODE_GITHUB_COPILOT_TOKEN_URL";
/// Replaces the Copilot API address a token names, for requests and for enabling models.
pub const COPILOT_API_URL_ENV: &str = "KNIGHTCODE_GITHUB_COPILOT_API_URL";
/// The prompt for the host, the reference's words.
pub const ENTERPRISE_PROMPT: &str = "GitHub Enterprise URL/domain (blank for github.com)";
pub const ENTERPRISE_PLACEHOLDER: &str = "company.ghe.com";
/// How much longer than GitHub's interval the first polls wait, and after a `slow_down`: the
/// reference's margins, which keep a drifting clock from being told to slow down again.
const POLL_MARGIN: f64 = 1.2;
const SLOW_DOWN_MARGIN: f64 = 1.4;
/// A Copilot token counts as expired this long before the service says.
const EXPIRY_MARGIN_MS: f64 = 5.0 * 60.0 * 1000.0;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a Copilot login failed.
#[derive(Debug, thiserror::Error)]
pub enum CopilotLoginError {
    #[error("Invalid GitHub Enterprise URL/domain: \"{0}\"")]
    BadDomain(String),
    #[error("Could not reach {url}: {message}. Check the network and try again.")]
    Request { url: String, message: String },
    #[error("{url} refused the request ({status}: {body})")]
    Refused {
        url: String,
        status: u16,
        body: String,
    },
    #[error("{url} gave an answer that is not what GitHub sends: {body}")]
    BadAnswer { url: String, body: String },
    #[error(
        "GitHub denied the authorization (access_denied). Run the login again and approve it in the browser."
    )]
    Denied,
    #[error(
        "The device code expired before it was approved (expired_token). Run the login again and enter the new code."
    )]
    Expired,
    #[error("Device flow failed: {0}")]
    Failed(String),
    #[error("Device flow timed out; run the login again.")]
    TimedOut,
    #[error(
        "Device flow timed out after one or more slow_down responses. This is often caused by clock drift in WSL or VM environments. Please sync or restart the VM clock and try again."
    )]
    TimedOutSlowedDown,
    #[error("Could not set up the HTTP client: {0}")]
    Setup(String),
}

/// GitHub's host for a typed URL or domain: `None` for a blank answer (github.com).
pub fn normalize_domain(input: &str) -> Result<Option<String>, CopilotLoginError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let text = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("https://{trimmed}")
    };
    reqwest::Url::parse(&text)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .filter(|host| !host.is_empty())
        .map(Some)
        .ok_or_else(|| CopilotLoginError::BadDomain(trimmed.to_owned()))
}

/// The endpoints of one GitHub host, or their replacements from the environment.
#[derive(Debug, Clone)]
struct Endpoints {
    device_code: String,
    access_token: String,
    copilot_token: String,
}

impl Endpoints {
    fn of(domain: &str, env: &dyn EnvSource) -> Self {
        let setting = |name: &str| {
            env.var(name)
                .filter(|v| !v.is_empty())
                .map(|v| v.trim_end_matches('/').to_owned())
        };
        let github = setting(GITHUB_URL_ENV).unwrap_or_else(|| format!("https://{domain}"));
        Self {
            device_code: format!("{github}/login/device/code"),
            access_token: format!("{github}/login/oauth/access_token"),
            copilot_token: setting(COPILOT_TOKEN_URL_ENV)
                .unwrap_or_else(|| format!("https://api.{domain}/copilot_internal/v2/token")),
        }
    }
}

/// What GitHub answered for a device code: what the person types, and where.
#[derive(Debug, Clone)]
pub struct DeviceCode {
    pub user_code: String,
    pub verification_uri: String,
    device_code: String,
    interval_secs: f64,
    expires_in_secs: f64,
}

/// One Copilot login in progress.
#[derive(Debug)]
pub struct CopilotLogin {
    enterprise: Option<String>,
    endpoints: Endpoints,
    api_url: Option<String>,
    client: reqwest::Client,
}

fn http_client() -> Result<reqwest::Client, CopilotLoginError> {
    crate::http::http_client_builder()
        .and_then(|builder| {
            builder
                .timeout(REQUEST_TIMEOUT)
                .build()
                .map_err(|e| crate::error::AiError::HttpClient(e.to_string()))
        })
        .map_err(|e| CopilotLoginError::Setup(e.to_string()))
}

/// `pairs` as an `application/x-www-form-urlencoded` body.
fn form(pairs: &[(&str, &str)]) -> String {
    reqwest::Url::parse_with_params("http://form.invalid/", pairs)
        .ok()
        .and_then(|url| url.query().map(str::to_owned))
        .unwrap_or_default()
}

/// Sends `request` and reads a JSON object back (the reference's `fetchJson`).
async fn fetch_json(
    url: &str,
    request: reqwest::RequestBuilder,
) -> Result<Map<String, Value>, CopilotLoginError> {
    let failed = |e: reqwest::Error| CopilotLoginError::Request {
        url: url.to_owned(),
        message: e.to_string(),
    };
    let response = request.send().await.map_err(failed)?;
    let status = response.status();
    let body = response.text().await.map_err(failed)?;
    if !status.is_success() {
        return Err(CopilotLoginError::Refused {
            url: url.to_owned(),
            status: status.as_u16(),
            body,
        });
    }
    match serde_json::from_str(&body) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(CopilotLoginError::BadAnswer {
            url: url.to_owned(),
            body,
        }),
    }
}

impl CopilotLogin {
    /// A login at github.com, or at the GitHub Enterprise host `enterprise` names (what the
    /// person typed at [`ENTERPRISE_PROMPT`]; blank for github.com).
    pub fn new(enterprise: &str, env: &dyn EnvSource) -> Result<Self, CopilotLoginError> {
        let enterprise = normalize_domain(enterprise)?;
        let domain = enterprise.as_deref().unwrap_or("github.com");
        Ok(Self {
            endpoints: Endpoints::of(domain, env),
            api_url: api_url_override(env),
            enterprise,
            client: http_client()?,
        })
    }

    /// Asks GitHub for a device code.
    pub async fn device_code(&self) -> Result<DeviceCode, CopilotLoginError> {
        let url = &self.endpoints.device_code;
        let request = self
            .client
            .post(url)
            .header("Accept", "application/json")
            .header("User-Agent", COPILOT_HEADERS[0].1)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form(&[("client_id", CLIENT_ID), ("scope", "read:user")]));
        let answer = fetch_json(url, request).await?;
        let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        let number = |key: &str| answer.get(key).and_then(Value::as_f64);
        match (
            text("device_code"),
            text("user_code"),
            text("verification_uri"),
            number("interval"),
            number("expires_in"),
        ) {
            (Some(device_code), Some(user_code), Some(verification_uri), Some(i), Some(e)) => {
                Ok(DeviceCode {
                    user_code,
                    verification_uri,
                    device_code,
                    interval_secs: i,
                    expires_in_secs: e,
                })
            }
            _ => Err(CopilotLoginError::BadAnswer {
                url: url.clone(),
                body: Value::Object(answer).to_string(),
            }),
        }
    }

    /// Polls until the person has entered the code: GitHub's token. Waits as GitHub asks
    /// (its interval, longer after `slow_down`) and gives up when the code expires. Dropping
    /// the future cancels the login.
    pub async fn wait_for_github_token(
        &self,
        device: &DeviceCode,
    ) -> Result<String, CopilotLoginError> {
        let url = &self.endpoints.access_token;
        let deadline =
            tokio::time::Instant::now() + Duration::from_secs_f64(device.expires_in_secs.max(0.0));
        let mut interval_ms = (device.interval_secs * 1000.0).floor().max(1000.0);
        let mut margin = POLL_MARGIN;
        let mut slowed_down = false;
        loop {
            let now = tokio::time::Instant::now();
            if now >= deadline {
                break;
            }
            let wait = Duration::from_millis((interval_ms * margin).ceil() as u64);
            tokio::time::sleep(wait.min(deadline - now)).await;
            let request = self
                .client
                .post(url)
                .header("Accept", "application/json")
                .header("User-Agent", COPILOT_HEADERS[0].1)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(form(&[
                    ("client_id", CLIENT_ID),
                    ("device_code", device.device_code.as_str()),
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ]));
            let answer = fetch_json(url, request).await?;
            if let Some(token) = answer.get("access_token").and_then(Value::as_str) {
                return Ok(token.to_owned());
            }
            let Some(error) = answer.get("error").and_then(Value::as_str) else {
                // Neither a token nor an error: asked again, as the reference does.
                continue;
            };
            match error {
                "authorization_pending" => {}
                "slow_down" => {
                    slowed_down = true;
                    interval_ms = match answer.get("interval").and_then(Value::as_f64) {
                        Some(secs) if secs > 0.0 => secs * 1000.0,
                        _ => (interval_ms + 5000.0).max(1000.0),
                    };
                    margin = SLOW_DOWN_MARGIN;
                }
                "access_denied" => return Err(CopilotLoginError::Denied),
                "expired_token" => return Err(CopilotLoginError::Expired),
                other => {
                    let description = answer
                        .get("error_description")
                        .and_then(Value::as_str)
                        .filter(|d| !d.is_empty())
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default();
                    return Err(CopilotLoginError::Failed(format!("{other}{description}")));
                }
            }
        }
        Err(if slowed_down {
            CopilotLoginError::TimedOutSlowedDown
        } else {
            CopilotLoginError::TimedOut
        })
    }

    /// Trades GitHub's token for a Copilot token: the `auth.json` entry, `type` first.
    pub async fn copilot_entry(
        &self,
        github_token: &str,
    ) -> Result<Map<String, Value>, CopilotLoginError> {
        let mut entry = Map::new();
        entry.insert("type".into(), Value::String("oauth".into()));
        entry.extend(
            exchange(
                &self.client,
                &self.endpoints.copilot_token,
                github_token,
                self.enterprise.as_deref(),
            )
            .await?,
        );
        Ok(entry)
    }

    /// Turns on every catalog model for the account (Copilot asks once per model, for some
    /// of them, before they answer), as the reference does after a login. Best effort: the
    /// number of models turned on.
    pub async fn enable_models(&self, access: &str) -> usize {
        let base = self
            .api_url
            .clone()
            .unwrap_or_else(|| base_url(access, self.enterprise.as_deref()));
        let catalog = crate::models::LazyCatalog::builtin();
        let calls = catalog.models(PROVIDER).iter().map(|model| {
            let url = format!("{base}/models/{}/policy", model.id);
            let mut request = self
                .client
                .post(url)
                .header("Content-Type", "application/json")
                .header("Authorization", format!("Bearer {access}"));
            for (name, value) in COPILOT_HEADERS {
                request = request.header(name, value);
            }
            let request = request
                .header("openai-intent", "chat-policy")
                .header("x-interaction-type", "chat-policy")
                .body(r#"{"state":"enabled"}"#);
            async move { request.send().await.is_ok_and(|r| r.status().is_success()) }
        });
        futures_util::future::join_all(calls)
            .await
            .into_iter()
            .filter(|ok| *ok)
            .count()
    }
}

/// The Copilot token for `github_token`: `refresh`, `access`, `expires` and the enterprise
/// host when there is one.
async fn exchange(
    client: &reqwest::Client,
    url: &str,
    github_token: &str,
    enterprise: Option<&str>,
) -> Result<Map<String, Value>, CopilotLoginError> {
    let mut request = client
        .get(url)
        .header("Accept", "application/json")
        .header("Authorization", format!("Bearer {github_token}"));
    for (name, value) in COPILOT_HEADERS {
        request = request.header(name, value);
    }
    let answer = fetch_json(url, request).await?;
    let (Some(token), Some(expires_at)) = (
        answer.get("token").and_then(Value::as_str),
        answer.get("expires_at").and_then(Value::as_f64),
    ) else {
        return Err(CopilotLoginError::BadAnswer {
            url: url.to_owned(),
            body: Value::Object(answer).to_string(),
        });
    };
    let mut fresh = Map::new();
    fresh.insert("refresh".into(), Value::String(github_token.to_owned()));
    fresh.insert("access".into(), Value::String(token.to_owned()));
    fresh.insert(
        "expires".into(),
        serde_json::json!((expires_at * 1000.0 - EXPIRY_MARGIN_MS) as i64),
    );
    if let Some(domain) = enterprise {
        fresh.insert("enterpriseUrl".into(), Value::String(domain.to_owned()));
    }
    Ok(fresh)
}

/// A new Copilot token for a stored login (its GitHub token, its enterprise host).
pub(crate) async fn refresh(
    credentials: &Map<String, Value>,
    env: &dyn EnvSource,
) -> Result<Map<String, Value>, OAuthHookError> {
    let github_token = credentials
        .get("refresh")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| OAuthHookError::Failed("the login has no GitHub token".into()))?;
    let enterprise = credentials
        .get("enterpriseUrl")
        .and_then(Value::as_str)
        .and_then(|e| normalize_domain(e).ok().flatten());
    let domain = enterprise.as_deref().unwrap_or("github.com");
    let endpoints = Endpoints::of(domain, env);
    let client = http_client().map_err(|e| OAuthHookError::Failed(e.to_string()))?;
    exchange(
        &client,
        &endpoints.copilot_token,
        github_token,
        enterprise.as_deref(),
    )
    .await
    .map_err(|e| OAuthHookError::Failed(e.to_string()))
}

/// The Copilot API address for a Copilot token: the host it names (`proxy-ep=proxy.X` is
/// served at `api.X`), else the enterprise's, else the individual plan's.
pub fn base_url(token: &str, enterprise: Option<&str>) -> String {
    if let Some(host) = proxy_endpoint(token) {
        let host = host
            .strip_prefix("proxy.")
            .map_or_else(|| host.to_owned(), |rest| format!("api.{rest}"));
        return format!("https://{host}");
    }
    match enterprise {
        Some(domain) => format!("https://copilot-api.{domain}"),
        None => DEFAULT_API_URL.to_owned(),
    }
}

/// The `proxy-ep` field of a Copilot token (`tid=…;exp=…;proxy-ep=…;…`).
pub(crate) fn proxy_endpoint(token: &str) -> Option<&str> {
    let start = token.find("proxy-ep=")? + "proxy-ep=".len();
    let rest = &token[start..];
    let host = rest.split(';').next().unwrap_or(rest);
    (!host.is_empty()).then_some(host)
}

/// [`COPILOT_API_URL_ENV`], when set.
pub(crate) fn api_url_override(env: &dyn EnvSource) -> Option<String> {
    env.var(COPILOT_API_URL_ENV)
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.trim().trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_read_as_the_reference_reads_them() {
        assert_eq!(normalize_domain("  ").unwrap(), None);
        assert_eq!(
            normalize_domain("company.ghe.com").unwrap().as_deref(),
            Some("company.ghe.com")
        );
        assert_eq!(
            normalize_domain("https://company.ghe.com/some/path")
                .unwrap()
                .as_deref(),
            Some("company.ghe.com")
        );
        assert!(normalize_domain("https://").is_err());
    }

    #[test]
    fn the_token_names_the_api_host() {
        let token = "tid=1;exp=2;sku=x;proxy-ep=proxy.business.githubcopilot.com;st=dotcom";
        assert_eq!(
            base_url(token, None),
            "https://api.business.githubcopilot.com"
        );
        assert_eq!(
            base_url("tid=1", Some("ghe.example")),
            "https://copilot-api.ghe.example"
        );
        assert_eq!(base_url("ghu_plain", None), DEFAULT_API_URL);
    }
}
