//! The ChatGPT Plus/Pro (Codex) login, as the reference runs it: PKCE against OpenAI's
//! login service with the Codex CLI's client, a random `state`, the browser sent back to
//! `http://localhost:1455/auth/callback`, and the code exchanged (form-encoded) for tokens
//! whose access token names the ChatGPT account.

use knightcode_loopback::CallbackListener;
use reqwest::Url;
use serde_json::Map;
use serde_json::Value;

use super::AuthCode;
use super::Expected;
use super::Pkce;
use crate::config_value::EnvSource;
use crate::error::LoginError;
use crate::oauth::codex::CLIENT_ID;
use crate::oauth::codex::TokenError;

/// Where the browser logs in to ChatGPT.
const AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
/// Replaces [`AUTHORIZE_URL`] (tests, proxies), like the token endpoint's variable.
pub const CODEX_AUTHORIZE_URL_ENV: &str = "KNIGHTCODE_OPENAI_CODEX_OAUTH_AUTHORIZE_URL";
/// The loopback port registered for the client.
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";
const SCOPE: &str = "openid profile email offline_access";

/// One ChatGPT login in progress.
#[derive(Debug)]
pub struct CodexLogin {
    authorize_url: String,
    token_url: String,
    pkce: Pkce,
    state: String,
    redirect_uri: String,
    listener: Option<CallbackListener>,
}

impl CodexLogin {
    /// A fresh verifier and state, and the callback listening on the loopback port.
    pub async fn start(env: &dyn EnvSource) -> Result<Self, LoginError> {
        let (listener, port) = super::bind_callback(env, CALLBACK_PORT).await?;
        Ok(Self {
            authorize_url: env
                .var(CODEX_AUTHORIZE_URL_ENV)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| AUTHORIZE_URL.to_owned()),
            token_url: crate::oauth::codex::token_url(env),
            pkce: Pkce::new()?,
            state: random_state()?,
            redirect_uri: format!("http://localhost:{port}{CALLBACK_PATH}"),
            listener,
        })
    }

    /// The address to open in a browser: the reference's parameters, in its order.
    pub fn url(&self) -> String {
        let params = [
            ("response_type", "code"),
            ("client_id", CLIENT_ID),
            ("redirect_uri", self.redirect_uri.as_str()),
            ("scope", SCOPE),
            ("code_challenge", self.pkce.challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", self.state.as_str()),
            ("id_token_add_organizations", "true"),
            ("codex_cli_simplified_flow", "true"),
            ("originator", crate::providers::openai_codex::ORIGINATOR),
        ];
        match Url::parse_with_params(&self.authorize_url, params) {
            Ok(url) => url.to_string(),
            Err(_) => self.authorize_url.clone(),
        }
    }

    pub fn has_callback(&self) -> bool {
        self.listener.is_some()
    }

    /// Waits for the browser's redirect (see [`super::AnthropicLogin::callback`]).
    pub async fn callback(&self) -> AuthCode {
        let expect = Expected {
            path: CALLBACK_PATH,
            state: &self.state,
            service: "OpenAI",
        };
        super::wait_for_callback(self.listener.as_ref(), &expect).await
    }

    /// Reads a pasted redirect address, `code#state`, query or bare code.
    pub fn parse_pasted(&self, input: &str) -> Result<AuthCode, LoginError> {
        super::parse_pasted(input, &self.state)
    }

    /// Exchanges the code for the `auth.json` entry: `type`, `access`, `refresh`, `expires`,
    /// `accountId`.
    pub async fn exchange(&self, code: &AuthCode) -> Result<Map<String, Value>, LoginError> {
        let form = [
            ("grant_type", "authorization_code"),
            ("client_id", CLIENT_ID),
            ("code", code.code.as_str()),
            ("code_verifier", self.pkce.verifier.as_str()),
            ("redirect_uri", self.redirect_uri.as_str()),
        ];
        let url = self.token_url.clone();
        crate::oauth::codex::request_tokens(&url, &form)
            .await
            .map_err(|error| match error {
                TokenError::Setup(message) => LoginError::Setup(message),
                TokenError::Request(message) => LoginError::Request { url, message },
                TokenError::Refused { status, body } => LoginError::Refused { url, status, body },
                TokenError::BadAnswer(body) => LoginError::BadAnswer { url, body },
                TokenError::NoAccount => LoginError::BadAnswer {
                    url,
                    body: "the access token names no ChatGPT account (is this a ChatGPT Plus/Pro login?)"
                        .into(),
                },
            })
    }
}

/// 16 random bytes as hex, as the reference's state.
fn random_state() -> Result<String, LoginError> {
    use ring::rand::SecureRandom as _;
    let mut bytes = [0u8; 16];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| LoginError::Setup("no random numbers from the system".into()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
