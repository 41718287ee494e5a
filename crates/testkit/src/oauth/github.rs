//! A stand-in for GitHub's device flow and Copilot's token endpoint, as the Copilot login
//! meets them: a device code for the Copilot client, polls answered from a script
//! (`authorization_pending`, `slow_down`, a token, `access_denied`, …), the Copilot token
//! traded only for a GitHub token the flow handed out, and the per-model policy switch.
//! Point `KNIGHTCODE_GITHUB_OAUTH_URL`, `KNIGHTCODE_GITHUB_COPILOT_TOKEN_URL` and
//! `KNIGHTCODE_GITHUB_COPILOT_API_URL` at it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::SystemTime;

use serde_json::Value;
use serde_json::json;
use tokio::io::BufReader;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::json_answer;
use super::params;
use crate::error::TestkitError;
use crate::http::read_request;
use crate::http::write_sized;

/// The OAuth client the Copilot login must identify as.
pub const COPILOT_CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
/// The device code and the code the person types.
pub const DEVICE_CODE: &str = "device-code-1";
pub const USER_CODE: &str = "ABCD-1234";
/// The GitHub token a successful poll hands out.
pub const GITHUB_TOKEN: &str = "ghu_stand_in_github_token";

/// One answer to a poll of the access-token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Poll {
    Pending,
    /// `slow_down`, with the new interval in seconds when given.
    SlowDown(Option<u64>),
    /// The person approved: [`GITHUB_TOKEN`].
    Approved,
    /// `access_denied`, `expired_token` or any other error code.
    Error(String),
}

#[derive(Debug)]
struct State {
    /// Answers for the polls in turn; the last one repeats.
    polls: Vec<Poll>,
    expires_in: u64,
    polled: usize,
    /// Copilot tokens handed out so far (each one names its number).
    exchanges: usize,
    /// How long a Copilot token lives, in seconds.
    token_lifetime: i64,
    /// The `Authorization` of every Copilot token request.
    token_requests: Vec<Vec<(String, String)>>,
    /// Models whose policy was switched on.
    enabled: Vec<String>,
    /// Every request's method and path, in arrival order.
    log: Vec<String>,
}

/// The stand-in on `127.0.0.1`, on a thread of its own (usable from blocking tests).
pub struct GithubServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Drop for GithubServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl GithubServer {
    /// A server whose polls are answered by `polls` in turn (the last repeats), with a device
    /// code that lives `expires_in` seconds.
    pub fn start(polls: Vec<Poll>, expires_in: u64) -> Result<Self, TestkitError> {
        let (std_listener, addr) = crate::thread_server::bind(([127, 0, 0, 1], 0).into())?;
        let state = Arc::new(Mutex::new(State {
            polls,
            expires_in,
            polled: 0,
            exchanges: 0,
            token_lifetime: 1800,
            token_requests: Vec::new(),
            enabled: Vec::new(),
            log: Vec::new(),
        }));
        let served = Arc::clone(&state);
        let (shutdown, _) = crate::thread_server::serve_on_thread(
            "knightcode-github-stand-in",
            std_listener,
            |l| serve(l, served),
        )?;
        Ok(Self {
            addr,
            state,
            shutdown: Some(shutdown),
        })
    }

    /// `https://github.com`'s stand-in (for `KNIGHTCODE_GITHUB_OAUTH_URL`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Copilot's token endpoint (for `KNIGHTCODE_GITHUB_COPILOT_TOKEN_URL`).
    pub fn copilot_token_url(&self) -> String {
        format!("{}/copilot_internal/v2/token", self.url())
    }

    /// The Copilot token the `n`th exchange hands out (from 1). It names an API host, as
    /// real ones do.
    pub fn copilot_token(n: usize) -> String {
        format!("tid=stand-in-{n};exp=0;sku=free;proxy-ep=proxy.stand-in.githubcopilot.test;8kp=1")
    }

    /// How many polls of the access-token endpoint came in.
    pub fn polls(&self) -> usize {
        self.lock().polled
    }

    /// The headers of each Copilot token request (names lower-cased).
    pub fn token_requests(&self) -> Vec<Vec<(String, String)>> {
        self.lock().token_requests.clone()
    }

    /// The models whose policy was switched on.
    pub fn enabled_models(&self) -> Vec<String> {
        self.lock().enabled.clone()
    }

    /// `METHOD /path` of every request.
    pub fn log(&self) -> Vec<String> {
        self.lock().log.clone()
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
                let (status, headers, body) = answer(&state, &request);
                let sent = write_sized(stream.get_mut(), status, headers, &body).await;
                if sent.is_err() || request.wants_close() {
                    return;
                }
            }
        });
    }
}

fn answer(state: &Mutex<State>, request: &crate::http::HttpRequest) -> super::Answer {
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    state
        .log
        .push(format!("{} {}", request.method, request.path));
    let form = params(&String::from_utf8_lossy(&request.body));
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    };
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let json_accepted = header("accept") == Some("application/json");
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/login/device/code") => {
            if field("client_id") != COPILOT_CLIENT_ID || field("scope") != "read:user" {
                return json_answer(400, &json!({"error": "unknown client"}));
            }
            json_answer(
                200,
                &json!({
                    "device_code": DEVICE_CODE,
                    "user_code": USER_CODE,
                    "verification_uri": "https://github.com/login/device",
                    // The client waits at least a second whatever GitHub says.
                    "interval": 0,
                    "expires_in": state.expires_in,
                }),
            )
        }
        ("POST", "/login/oauth/access_token") => {
            if field("client_id") != COPILOT_CLIENT_ID
                || field("device_code") != DEVICE_CODE
                || field("grant_type") != "urn:ietf:params:oauth:grant-type:device_code"
                || !json_accepted
            {
                return json_answer(200, &json!({"error": "incorrect_client_credentials"}));
            }
            let turn = state.polled.min(state.polls.len().saturating_sub(1));
            state.polled += 1;
            let poll = state.polls.get(turn).cloned().unwrap_or(Poll::Pending);
            let body = match poll {
                Poll::Pending => json!({"error": "authorization_pending"}),
                Poll::SlowDown(Some(interval)) => {
                    json!({"error": "slow_down", "interval": interval})
                }
                Poll::SlowDown(None) => json!({"error": "slow_down"}),
                Poll::Approved => {
                    json!({"access_token": GITHUB_TOKEN, "token_type": "bearer", "scope": "read:user"})
                }
                Poll::Error(code) => {
                    json!({"error": code, "error_description": format!("stand-in says {code}")})
                }
            };
            json_answer(200, &body)
        }
        ("GET", "/copilot_internal/v2/token") => {
            state.token_requests.push(request.headers.clone());
            if header("authorization") != Some(&format!("Bearer {GITHUB_TOKEN}")) {
                return json_answer(401, &json!({"message": "Bad credentials"}));
            }
            state.exchanges += 1;
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            json_answer(
                200,
                &json!({
                    "token": GithubServer::copilot_token(state.exchanges),
                    "expires_at": now + state.token_lifetime,
                    "refresh_in": 1500,
                }),
            )
        }
        ("POST", path) if path.starts_with("/models/") && path.ends_with("/policy") => {
            let id = &path["/models/".len()..path.len() - "/policy".len()];
            let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
            if header("authorization").is_none_or(|a| !a.starts_with("Bearer tid="))
                || body != json!({"state": "enabled"})
            {
                return json_answer(400, &json!({"error": "bad policy request"}));
            }
            state.enabled.push(id.to_owned());
            json_answer(200, &json!({"state": "enabled"}))
        }
        _ => (404, Vec::new(), b"not found".to_vec()),
    }
}
