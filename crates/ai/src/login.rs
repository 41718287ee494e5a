//! Logging in to a subscription: the authorization-code flow with PKCE that the reference's
//! `/login` runs for Claude Pro/Max, written to `auth.json` in the reference's shape
//! (`{"type": "oauth", "refresh", "access", "expires"}`) so either agent uses the other's login.
//!
//! The flow is split into steps a front end drives in its own way: [`AnthropicLogin::start`]
//! prepares the verifier and listens on the loopback callback, [`AnthropicLogin::url`] is what
//! the browser opens, then either [`AnthropicLogin::callback`] (the browser came back to this
//! machine) or [`AnthropicLogin::parse_pasted`] (the person pasted `code#state` or the address
//! the browser ended on, for a browser on another machine) gives the code, and
//! [`AnthropicLogin::exchange`] turns it into tokens. [`CodexLogin`] (ChatGPT Plus/Pro) takes
//! the same steps with OpenAI's service; [`BrowserLogin`] runs either for a provider id.

use std::time::Duration;

use base64::Engine as _;
use knightcode_loopback::CallbackListener;
use knightcode_loopback::CallbackRequest;
use reqwest::Url;
use serde_json::Map;
use serde_json::Value;

use crate::config_value::EnvSource;
use crate::error::LoginError;
use crate::oauth::ANTHROPIC_CLIENT_ID;

mod codex;
pub use codex::CODEX_AUTHORIZE_URL_ENV;
pub use codex::CodexLogin;

/// Where the browser logs in to Claude.
const ANTHROPIC_AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
/// Replaces [`ANTHROPIC_AUTHORIZE_URL`] (tests, proxies), like the token endpoint's variable.
pub const ANTHROPIC_AUTHORIZE_URL_ENV: &str = "KNIGHTCODE_ANTHROPIC_OAUTH_AUTHORIZE_URL";
/// The loopback port the login service redirects to: the one registered for the client, so
/// it is fixed outside tests.
const CALLBACK_PORT: u16 = 53692;
/// Replaces [`CALLBACK_PORT`]; `0` takes any free port (tests run in parallel). The redirect
/// address then names that port, which a stand-in service accepts and the real one does not.
pub const OAUTH_CALLBACK_PORT_ENV: &str = "KNIGHTCODE_OAUTH_CALLBACK_PORT";
const CALLBACK_PATH: &str = "/callback";
/// What a Claude Code login may do: the scopes the reference asks for.
const ANTHROPIC_SCOPES: &str = "org:create_api_key user:profile user:inference \
     user:sessions:claude_code user:mcp_servers user:file_upload";
/// How long the token endpoint may take.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// The subscriptions this build can log in to: provider id and the name a picker shows.
pub const SUBSCRIPTION_LOGINS: [(&str, &str); 3] = [
    ("anthropic", "Anthropic (Claude Pro/Max)"),
    ("openai-codex", "ChatGPT Plus/Pro (Codex Subscription)"),
    ("github-copilot", "GitHub Copilot"),
];

/// Opens `url` in the browser: `$BROWSER` when set (as other command-line tools honour it),
/// else the desktop's opener. The address is on screen anyway.
pub fn open_browser(url: &str) {
    let opener = std::env::var_os("BROWSER")
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open".into()
            } else {
                "xdg-open".into()
            }
        });
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    // Reaped on a thread: the opener may outlive the moment.
    if let Ok(mut child) = spawned {
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

/// Whether `provider` has a subscription login here.
pub fn has_subscription_login(provider: &str) -> bool {
    SUBSCRIPTION_LOGINS.iter().any(|(id, _)| *id == provider)
}

/// The name a picker shows for a provider: the reference's names for its built-in providers.
pub fn provider_display_name(provider: &str) -> &str {
    match provider {
        "anthropic" => "Anthropic",
        "amazon-bedrock" => "Amazon Bedrock",
        "azure-openai-responses" => "Azure OpenAI Responses",
        "cerebras" => "Cerebras",
        "cloudflare-ai-gateway" => "Cloudflare AI Gateway",
        "cloudflare-workers-ai" => "Cloudflare Workers AI",
        "deepseek" => "DeepSeek",
        "fireworks" => "Fireworks",
        "google" => "Google Gemini",
        "google-vertex" => "Google Vertex AI",
        "groq" => "Groq",
        "huggingface" => "Hugging Face",
        "kimi-coding" => "Kimi For Coding",
        "mistral" => "Mistral",
        "minimax" => "MiniMax",
        "minimax-cn" => "MiniMax (China)",
        "moonshotai" => "Moonshot AI",
        "moonshotai-cn" => "Moonshot AI (China)",
        "opencode" => "OpenCode Zen",
        "opencode-go" => "OpenCode Go",
        "openai" => "OpenAI",
        "openrouter" => "OpenRouter",
        "vercel-ai-gateway" => "Vercel AI Gateway",
        "xai" => "xAI",
        "zai" => "ZAI",
        "xiaomi" => "Xiaomi MiMo",
        "xiaomi-token-plan-cn" => "Xiaomi MiMo Token Plan (China)",
        "xiaomi-token-plan-ams" => "Xiaomi MiMo Token Plan (Amsterdam)",
        "xiaomi-token-plan-sgp" => "Xiaomi MiMo Token Plan (Singapore)",
        "github-copilot" => "GitHub Copilot",
        "openai-codex" => "ChatGPT Plus/Pro (Codex Subscription)",
        other => other,
    }
}

/// How a provider is logged in to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginKind {
    /// A subscription, through the browser ([`SUBSCRIPTION_LOGINS`]).
    Subscription,
    /// An API key typed in and stored in `auth.json`.
    ApiKey,
}

/// One choice of a login picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginChoice {
    pub provider: String,
    pub name: String,
    pub kind: LoginKind,
}

/// What `/login` and `knightcode auth login` offer: the subscriptions first, then every
/// provider of `registry` an API key is typed in for, by name. The catalog's providers whose
/// only login is a subscription (`github-copilot`, `openai-codex`) are left
/// out of the keys, as the reference leaves its subscription providers out of the key list.
pub fn login_choices(registry: &crate::ModelRegistry) -> Vec<LoginChoice> {
    let mut choices: Vec<LoginChoice> = SUBSCRIPTION_LOGINS
        .iter()
        .map(|(id, name)| LoginChoice {
            provider: (*id).to_owned(),
            name: (*name).to_owned(),
            kind: LoginKind::Subscription,
        })
        .collect();
    let mut providers: Vec<&str> = registry
        .models()
        .iter()
        .map(|m| m.provider.as_str())
        .collect();
    providers.sort_unstable();
    providers.dedup();
    let mut keyed: Vec<LoginChoice> = providers
        .into_iter()
        .filter(|p| !SUBSCRIPTION_ONLY.contains(p))
        .map(|p| LoginChoice {
            provider: p.to_owned(),
            name: provider_display_name(p).to_owned(),
            kind: LoginKind::ApiKey,
        })
        .collect();
    keyed.sort_by_key(|c| c.name.to_lowercase());
    choices.extend(keyed);
    choices
}

/// Catalog providers that take a subscription login and no API key.
pub const SUBSCRIPTION_ONLY: [&str; 2] = ["github-copilot", "openai-codex"];

/// What to say about a provider that is not logged in to with a key or a subscription here:
/// the cloud platforms use their own credential chains.
pub fn login_unavailable(provider: &str) -> Option<&'static str> {
    match provider {
        "amazon-bedrock" => Some(
            "Amazon Bedrock uses AWS credentials instead of a single API key: configure an AWS profile, IAM keys, a bearer token (AWS_BEARER_TOKEN_BEDROCK) or role-based credentials. See docs/providers.md.",
        ),
        _ => None,
    }
}

/// A browser login of either subscription, for front ends that run any of them.
#[derive(Debug)]
pub enum BrowserLogin {
    Anthropic(AnthropicLogin),
    OpenAiCodex(CodexLogin),
}

impl BrowserLogin {
    /// Starts `provider`'s login; an error names a provider without one.
    pub async fn start(provider: &str, env: &dyn EnvSource) -> Result<Self, LoginError> {
        match provider {
            "openai-codex" => CodexLogin::start(env).await.map(Self::OpenAiCodex),
            "anthropic" => AnthropicLogin::start(env).await.map(Self::Anthropic),
            other => Err(LoginError::Setup(format!(
                "there is no browser login for provider \"{other}\""
            ))),
        }
    }

    pub fn url(&self) -> String {
        match self {
            Self::Anthropic(login) => login.url(),
            Self::OpenAiCodex(login) => login.url(),
        }
    }

    pub fn has_callback(&self) -> bool {
        match self {
            Self::Anthropic(login) => login.has_callback(),
            Self::OpenAiCodex(login) => login.has_callback(),
        }
    }

    pub async fn callback(&self) -> AuthCode {
        match self {
            Self::Anthropic(login) => login.callback().await,
            Self::OpenAiCodex(login) => login.callback().await,
        }
    }

    pub fn parse_pasted(&self, input: &str) -> Result<AuthCode, LoginError> {
        match self {
            Self::Anthropic(login) => login.parse_pasted(input),
            Self::OpenAiCodex(login) => login.parse_pasted(input),
        }
    }

    pub async fn exchange(&self, code: &AuthCode) -> Result<Map<String, Value>, LoginError> {
        match self {
            Self::Anthropic(login) => login.exchange(code).await,
            Self::OpenAiCodex(login) => login.exchange(code).await,
        }
    }
}

/// A PKCE pair: the secret verifier and the challenge (its SHA-256, URL-safe base64) that
/// the authorize address carries.
#[derive(Debug, Clone)]
struct Pkce {
    verifier: String,
    challenge: String,
}

impl Pkce {
    fn new() -> Result<Self, LoginError> {
        use ring::rand::SecureRandom as _;
        let mut bytes = [0u8; 32];
        ring::rand::SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| LoginError::Setup("no random numbers from the system".into()))?;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let verifier = b64.encode(bytes);
        let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
        Ok(Self {
            challenge: b64.encode(digest.as_ref()),
            verifier,
        })
    }
}

/// An authorization code and the state it came back with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthCode {
    pub code: String,
    pub state: String,
}

/// One Claude Pro/Max login in progress.
#[derive(Debug)]
pub struct AnthropicLogin {
    authorize_url: String,
    token_url: String,
    pkce: Pkce,
    redirect_uri: String,
    /// The loopback callback; `None` when its port was taken (the code is pasted then).
    listener: Option<CallbackListener>,
}

impl AnthropicLogin {
    /// A fresh verifier, and the callback listening on the loopback port.
    pub async fn start(env: &dyn EnvSource) -> Result<Self, LoginError> {
        let setting = |name: &str| env.var(name).filter(|v| !v.is_empty());
        let (listener, port) = bind_callback(env, CALLBACK_PORT).await?;
        Ok(Self {
            authorize_url: setting(ANTHROPIC_AUTHORIZE_URL_ENV)
                .unwrap_or_else(|| ANTHROPIC_AUTHORIZE_URL.to_owned()),
            token_url: crate::oauth::anthropic_token_url(env),
            pkce: Pkce::new()?,
            redirect_uri: format!("http://localhost:{port}{CALLBACK_PATH}"),
            listener,
        })
    }

    /// The address to open in a browser.
    pub fn url(&self) -> String {
        let params = [
            ("code", "true"),
            ("client_id", ANTHROPIC_CLIENT_ID),
            ("response_type", "code"),
            ("redirect_uri", self.redirect_uri.as_str()),
            ("scope", ANTHROPIC_SCOPES),
            ("code_challenge", self.pkce.challenge.as_str()),
            ("code_challenge_method", "S256"),
            // The reference sends the verifier as the state and checks it on the way back.
            ("state", self.pkce.verifier.as_str()),
        ];
        match Url::parse_with_params(&self.authorize_url, params) {
            Ok(url) => url.to_string(),
            Err(_) => self.authorize_url.clone(),
        }
    }

    /// Whether the browser can come back to this machine by itself.
    pub fn has_callback(&self) -> bool {
        self.listener.is_some()
    }

    /// Waits for the browser's redirect to the loopback callback and answers it with a page
    /// that says how it went. Requests that carry no valid code get an error page and the
    /// wait goes on. Never completes when there is no callback (the code is pasted then).
    pub async fn callback(&self) -> AuthCode {
        let expect = Expected {
            path: CALLBACK_PATH,
            state: &self.pkce.verifier,
            service: "Anthropic",
        };
        wait_for_callback(self.listener.as_ref(), &expect).await
    }

    /// Reads what the person pasted: the address the browser ended on, `code#state`, a
    /// `code=…&state=…` query, or the bare code.
    pub fn parse_pasted(&self, input: &str) -> Result<AuthCode, LoginError> {
        parse_pasted(input, &self.pkce.verifier)
    }

    /// Exchanges the code for tokens: the `auth.json` entry, `type` first as the reference
    /// writes it.
    pub async fn exchange(&self, code: &AuthCode) -> Result<Map<String, Value>, LoginError> {
        let body = serde_json::json!({
            "grant_type": "authorization_code",
            "client_id": ANTHROPIC_CLIENT_ID,
            "code": code.code,
            "state": code.state,
            "redirect_uri": self.redirect_uri,
            "code_verifier": self.pkce.verifier,
        });
        let url = self.token_url.clone();
        let request = |message: String| LoginError::Request {
            url: url.clone(),
            message,
        };
        let client = crate::http::http_client_builder()
            .and_then(|builder| {
                builder
                    .timeout(EXCHANGE_TIMEOUT)
                    .build()
                    .map_err(|e| crate::error::AiError::HttpClient(e.to_string()))
            })
            .map_err(|e| LoginError::Setup(e.to_string()))?;
        let response = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .json(&body)
            .send()
            .await
            .map_err(|e| request(e.to_string()))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| request(e.to_string()))?;
        if !status.is_success() {
            return Err(LoginError::Refused {
                url,
                status: status.as_u16(),
                body: text,
            });
        }
        let bad = || LoginError::BadAnswer {
            url: url.clone(),
            body: text.clone(),
        };
        let answer: Value = serde_json::from_str(&text).map_err(|_| bad())?;
        let text_field = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(access), Some(refresh), Some(expires_in)) = (
            text_field("access_token"),
            text_field("refresh_token"),
            answer.get("expires_in").and_then(Value::as_f64),
        ) else {
            return Err(bad());
        };
        let mut entry = Map::new();
        entry.insert("type".into(), Value::String("oauth".into()));
        entry.insert("refresh".into(), Value::String(refresh));
        entry.insert("access".into(), Value::String(access));
        entry.insert(
            "expires".into(),
            serde_json::json!(crate::oauth::expires_at(expires_in) as i64),
        );
        Ok(entry)
    }
}

/// Listens for the browser on `127.0.0.1` (the redirect says `localhost`, as the
/// reference's does) on `default_port`, or the port [`OAUTH_CALLBACK_PORT_ENV`] names. `None`
/// when the port is taken: the code is pasted then. Also the port the redirect names.
async fn bind_callback(
    env: &dyn EnvSource,
    default_port: u16,
) -> Result<(Option<CallbackListener>, u16), LoginError> {
    let port = match env.var(OAUTH_CALLBACK_PORT_ENV).filter(|v| !v.is_empty()) {
        Some(text) => text.parse::<u16>().map_err(|_| {
            LoginError::Setup(format!("{OAUTH_CALLBACK_PORT_ENV}={text} is not a port"))
        })?,
        None => default_port,
    };
    let listener = CallbackListener::bind(port).await.ok();
    let port = listener
        .as_ref()
        .and_then(|l| l.port().ok())
        .unwrap_or(port);
    Ok((listener, port))
}

/// The code in pasted text, checked against the login's `state` when the text carries one.
fn parse_pasted(input: &str, state: &str) -> Result<AuthCode, LoginError> {
    let (code, pasted_state) = parse_authorization_input(input);
    let code = code
        .filter(|c| !c.is_empty())
        .ok_or(LoginError::MissingCode)?;
    match pasted_state {
        Some(pasted) if pasted != state => Err(LoginError::StateMismatch),
        _ => Ok(AuthCode {
            code,
            state: state.to_owned(),
        }),
    }
}

/// What a loopback callback accepts: its path, the state the authorize address carried, and
/// the service's name for the page the browser shows.
struct Expected<'a> {
    path: &'a str,
    state: &'a str,
    service: &'a str,
}

/// Answers browser requests on `listener` until one brings a code with the expected state;
/// never completes without a listener.
async fn wait_for_callback(listener: Option<&CallbackListener>, expect: &Expected<'_>) -> AuthCode {
    let Some(listener) = listener else {
        return std::future::pending().await;
    };
    loop {
        if let Some(code) = serve_callback(listener.next().await, expect).await {
            return code;
        }
    }
}

async fn serve_callback(request: CallbackRequest, expect: &Expected<'_>) -> Option<AuthCode> {
    let done = format!(
        "{} authentication completed. You can close this window.",
        expect.service
    );
    let failed = format!("{} authentication did not complete.", expect.service);
    let (status, message, code) = match &request.url {
        None => (400, "The request could not be read.", None),
        Some(url) if url.path() != expect.path => (404, "Callback route not found.", None),
        Some(_) => match (
            request.param("error"),
            request.param("code"),
            request.param("state"),
        ) {
            (Some(_), _, _) => (400, failed.as_str(), None),
            (None, Some(code), Some(state)) if state == expect.state => {
                (200, done.as_str(), Some(AuthCode { code, state }))
            }
            (None, Some(_), Some(_)) => (400, "State mismatch.", None),
            _ => (400, "Missing code or state parameter.", None),
        },
    };
    request.respond(status, "KnightCode login", message).await;
    code
}

/// `(code, state)` from pasted text, read the way the reference reads it.
fn parse_authorization_input(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    let from_query = |url: &Url| {
        (
            knightcode_loopback::query_param(url, "code"),
            knightcode_loopback::query_param(url, "state"),
        )
    };
    if let Ok(url) = Url::parse(value) {
        return from_query(&url);
    }
    if let Some((code, state)) = value.split_once('#') {
        return (Some(code.to_owned()), Some(state.to_owned()));
    }
    if value.contains("code=")
        && let Ok(url) = Url::parse(&format!("http://localhost/?{value}"))
    {
        return from_query(&url);
    }
    (Some(value.to_owned()), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_text_is_read_in_every_form_the_reference_accepts() {
        let both = |c: &str, s: &str| (Some(c.to_owned()), Some(s.to_owned()));
        assert_eq!(parse_authorization_input(" abc#xyz \n"), both("abc", "xyz"));
        assert_eq!(
            parse_authorization_input("http://localhost:53692/callback?code=abc&state=xyz"),
            both("abc", "xyz")
        );
        assert_eq!(
            parse_authorization_input("code=abc&state=xyz"),
            both("abc", "xyz")
        );
        assert_eq!(
            parse_authorization_input("abc"),
            (Some("abc".to_owned()), None)
        );
        assert_eq!(parse_authorization_input("  "), (None, None));
    }

    #[test]
    fn the_challenge_is_the_verifiers_digest() {
        let pkce = Pkce::new().unwrap();
        assert_eq!(pkce.verifier.len(), 43);
        let digest = ring::digest::digest(&ring::digest::SHA256, pkce.verifier.as_bytes());
        let expected = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref());
        assert_eq!(pkce.challenge, expected);
        assert_ne!(Pkce::new().unwrap().verifier, pkce.verifier);
    }
}
