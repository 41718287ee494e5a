//! A stand-in OAuth service for the subscription logins: an authorize endpoint that sends the
//! browser back to the client's redirect address with a code, and a token endpoint that
//! exchanges the code only with the matching PKCE verifier and redirect address (as the real
//! service does), answers refreshes, or refuses everything when told to. Plus a tiny
//! "browser" ([`browser_get`]) that follows one request by hand.

use std::io::Read as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;
use serde_json::json;
use tokio::io::BufReader;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub mod github;
mod google;
mod mcp;
mod openai;
pub use github::GithubServer;
pub use google::SERVICE_ACCOUNT_KEY;
pub use mcp::McpOAuthServer;
pub use openai::chatgpt_access_token;

use crate::error::TestkitError;
use crate::http::read_request;
use crate::http::write_sized;

/// What the token endpoint answers a valid request with.
#[derive(Debug, Clone)]
pub enum TokenAnswer {
    /// `200` with these tokens (`expires_in` seconds).
    Tokens {
        access: String,
        refresh: String,
        expires_in: u64,
    },
    /// This status and body, whatever was asked.
    Refuse { status: u16, body: String },
}

/// A code the authorize endpoint handed out, and what it was asked with.
#[derive(Debug, Clone)]
struct Issued {
    code: String,
    challenge: String,
    redirect_uri: String,
}

#[derive(Debug)]
struct State {
    answer: TokenAnswer,
    issued: Vec<Issued>,
    /// Every token request's JSON body, in arrival order.
    exchanges: Vec<Value>,
    /// Every authorize request's query, in arrival order.
    authorizations: Vec<String>,
}

/// The stand-in service on `127.0.0.1`, on a thread of its own (usable from blocking tests).
pub struct OAuthServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl OAuthServer {
    pub fn start(answer: TokenAnswer) -> Result<Self, TestkitError> {
        let (std_listener, addr) = crate::thread_server::bind(([127, 0, 0, 1], 0).into())?;
        let state = Arc::new(Mutex::new(State {
            answer,
            issued: Vec::new(),
            exchanges: Vec::new(),
            authorizations: Vec::new(),
        }));
        let served = Arc::clone(&state);
        let (shutdown, _) = crate::thread_server::serve_on_thread(
            "knightcode-oauth-stand-in",
            std_listener,
            |l| serve(l, served),
        )?;
        Ok(Self {
            addr,
            state,
            shutdown: Some(shutdown),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The authorize endpoint (for `KNIGHTCODE_ANTHROPIC_OAUTH_AUTHORIZE_URL`).
    pub fn authorize_url(&self) -> String {
        format!("{}/oauth/authorize", self.url())
    }

    /// The token endpoint (for `KNIGHTCODE_ANTHROPIC_OAUTH_TOKEN_URL`).
    pub fn token_url(&self) -> String {
        format!("{}/v1/oauth/token", self.url())
    }

    /// OpenAI's token endpoint (for `KNIGHTCODE_OPENAI_CODEX_OAUTH_TOKEN_URL`): form-encoded
    /// grants.
    pub fn openai_token_url(&self) -> String {
        format!("{}/oauth/token", self.url())
    }

    /// Google's token endpoint (a service account's `token_uri`): form-encoded JWT bearer
    /// grants signed with [`google::SERVICE_ACCOUNT_KEY`], and refresh grants.
    pub fn google_token_url(&self) -> String {
        format!("{}/google/token", self.url())
    }

    /// The JSON bodies of the token requests so far.
    pub fn exchanges(&self) -> Vec<Value> {
        self.lock().exchanges.clone()
    }

    /// The queries of the authorize requests so far.
    pub fn authorizations(&self) -> Vec<String> {
        self.lock().authorizations.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

async fn serve(listener: TcpListener, state: Arc<Mutex<State>>) {
    while let Ok((stream, _)) = listener.accept().await {
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let mut stream = BufReader::new(stream);
            while let Ok(Some(request)) = read_request(&mut stream).await {
                let (status, headers, body) = match (request.method.as_str(), request.path.as_str())
                {
                    ("GET", "/oauth/authorize") => authorize(&state, &request.query),
                    ("POST", "/v1/oauth/token") => token(&state, &request.body),
                    ("POST", "/google/token") => google::token(&state, &request.body),
                    ("POST", "/oauth/token") => openai::token(&state, &request.body),
                    _ => (404, Vec::new(), b"not found".to_vec()),
                };
                let sent = write_sized(stream.get_mut(), status, headers, &body).await;
                if sent.is_err() || request.wants_close() {
                    return;
                }
            }
        });
    }
}

/// Query parameters, decoded (`+` is a space, as forms encode it).
pub fn params(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub(crate) type Answer = (u16, Vec<(String, String)>, Vec<u8>);

pub(crate) fn json_answer(status: u16, body: &Value) -> Answer {
    (
        status,
        vec![("content-type".into(), "application/json".into())],
        body.to_string().into_bytes(),
    )
}

/// Hands out a code and sends the browser back to the redirect address with it.
fn authorize(state: &Mutex<State>, query: &str) -> Answer {
    let params = params(query);
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    state.authorizations.push(query.to_owned());
    if param("code_challenge_method") != "S256" || param("redirect_uri").is_empty() {
        return (400, Vec::new(), b"bad authorize request".to_vec());
    }
    let code = format!("code-{}", state.issued.len() + 1);
    state.issued.push(Issued {
        code: code.clone(),
        challenge: param("code_challenge"),
        redirect_uri: param("redirect_uri"),
    });
    let location = format!(
        "{}?code={}&state={}",
        param("redirect_uri"),
        encode(&code),
        encode(&param("state"))
    );
    (
        302,
        vec![("location".into(), location)],
        format!("{code}#{}", param("state")).into_bytes(),
    )
}

/// Exchanges a code (with its verifier) or a refresh token.
fn token(state: &Mutex<State>, body: &[u8]) -> Answer {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    state.exchanges.push(request.clone());
    let answer = state.answer.clone();
    let invalid = |why: &str| {
        json_answer(
            400,
            &json!({"error": "invalid_grant", "error_description": why}),
        )
    };
    let text = |key: &str| request[key].as_str().unwrap_or_default().to_owned();
    match text("grant_type").as_str() {
        "authorization_code" => {
            let Some(issued) = state.issued.iter().find(|i| i.code == text("code")) else {
                return invalid("unknown code");
            };
            let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
            let digest =
                ring::digest::digest(&ring::digest::SHA256, text("code_verifier").as_bytes());
            if b64.encode(digest.as_ref()) != issued.challenge {
                return invalid("code_verifier does not match the challenge");
            }
            if issued.redirect_uri != text("redirect_uri") {
                return invalid("redirect_uri differs from the authorize request's");
            }
        }
        "refresh_token" if !text("refresh_token").is_empty() => {}
        _ => return invalid("unsupported grant"),
    }
    match answer {
        TokenAnswer::Tokens {
            access,
            refresh,
            expires_in,
        } => json_answer(
            200,
            &json!({"token_type": "Bearer", "access_token": access, "refresh_token": refresh,
                    "expires_in": expires_in}),
        ),
        TokenAnswer::Refuse { status, body } => (
            status,
            vec![("content-type".into(), "application/json".into())],
            body.into_bytes(),
        ),
    }
}

/// What a browser gets for one `GET` of `url` (`http://` on loopback only; no redirects
/// followed): the status, the `location` header, the body.
pub fn browser_get(url: &str) -> Result<(u16, Option<String>, String), TestkitError> {
    let failed = |message: String| TestkitError::Spawn {
        what: format!("GET {url}"),
        source: std::io::Error::other(message),
    };
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| failed("not an http:// address".into()))?;
    let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let target = if target.is_empty() { "/" } else { target };
    // `localhost` is where the client listens on 127.0.0.1.
    let connect_to = host.replace("localhost", "127.0.0.1");
    let mut stream =
        std::net::TcpStream::connect(&connect_to).map_err(|e| failed(e.to_string()))?;
    let limit = Some(Duration::from_secs(30));
    let _ = stream.set_read_timeout(limit);
    let _ = stream.set_write_timeout(limit);
    // One write, as a browser sends its request: `write!` would write each piece apart.
    let request = format!("GET {target} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| failed(e.to_string()))?;
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .map_err(|e| failed(e.to_string()))?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| failed(format!("no status in {head:?}")))?;
    let location = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    Ok((status, location, body.to_owned()))
}
