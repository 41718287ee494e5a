//! An MCP server behind OAuth, as a remote MCP service is: `POST /mcp` answers JSON-RPC
//! (initialize, tools/list with one `echo` tool, tools/call, ping) only with a valid bearer
//! token, else 401 with a `WWW-Authenticate` challenge naming its protected resource
//! metadata; the metadata documents, dynamic client registration, an authorize endpoint that
//! sends the browser straight back with a code, and a token endpoint (form-encoded, as OAuth
//! clients send) that checks PKCE and the redirect address, and rotates refresh tokens.
//! Tokens carry the scope their authorization asked for; a tool can demand a scope
//! ([`McpOAuthServer::demand_scope`]), and a call without it gets 403 `insufficient_scope`.
//! With [`McpOAuthServer::accept_client_documents`] the authorization server also takes a
//! Client ID Metadata Document's https address as a client id without registration.
//! `open()` is the same MCP server without any of it (a server that does not use OAuth).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;

use base64::Engine as _;
use serde_json::Value;
use serde_json::json;
use tokio::io::BufReader;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::Answer;
use super::encode;
use super::json_answer;
use super::params;
use crate::error::TestkitError;
use crate::http::HttpRequest;
use crate::http::read_request;
use crate::http::write_sized;

#[derive(Debug, Default)]
struct State {
    protected: bool,
    base: String,
    /// Registered clients: id -> redirect addresses.
    clients: HashMap<String, Vec<String>>,
    /// Codes handed out: code -> (challenge, redirect address, client, scope).
    codes: HashMap<String, (String, String, String, String)>,
    /// Valid access tokens and the scope each grants.
    access: Vec<(String, String)>,
    /// Valid refresh tokens and the scope of their grant.
    refresh: Vec<(String, String)>,
    /// Tools that need a scope: tool -> scope.
    demanded: HashMap<String, String>,
    /// `Some(iss advertised)`: client metadata documents are accepted.
    documents: Option<bool>,
    /// Every authorize request's query, in order.
    authorizations: Vec<String>,
    issued: usize,
    refreshes: usize,
    registrations: Vec<Value>,
    /// The `Authorization` header of every `POST /mcp`, in order.
    bearers: Vec<Option<String>>,
}

/// The stand-in on `127.0.0.1`, on a thread of its own.
pub struct McpOAuthServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Drop for McpOAuthServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl McpOAuthServer {
    /// A server that wants a token.
    pub fn start() -> Result<Self, TestkitError> {
        Self::spawn(true)
    }

    /// A server that wants none and publishes no OAuth metadata.
    pub fn open() -> Result<Self, TestkitError> {
        Self::spawn(false)
    }

    fn spawn(protected: bool) -> Result<Self, TestkitError> {
        let (std_listener, addr) = crate::thread_server::bind(([127, 0, 0, 1], 0).into())?;
        let state = Arc::new(Mutex::new(State {
            protected,
            base: format!("http://{addr}"),
            ..State::default()
        }));
        let served = Arc::clone(&state);
        let (shutdown, _) = crate::thread_server::serve_on_thread(
            "knightcode-mcp-oauth-stand-in",
            std_listener,
            |l| serve(l, served),
        )?;
        Ok(Self {
            addr,
            state,
            shutdown: Some(shutdown),
        })
    }

    /// The MCP endpoint (the `url` of an `mcp.json` entry).
    pub fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Makes every access token handed out so far invalid (as when they expire): the next
    /// request with one gets 401, and the client must refresh.
    pub fn expire_access_tokens(&self) {
        self.lock().access.clear();
    }

    /// Revokes every token handed out so far, refresh tokens too: only a new sign-in helps.
    pub fn revoke_tokens(&self) {
        let mut state = self.lock();
        state.access.clear();
        state.refresh.clear();
    }

    /// Makes `tool` need `scope`: a call with a token whose grant lacks it gets 403 with
    /// `WWW-Authenticate: Bearer error="insufficient_scope", scope="<scope>"`.
    pub fn demand_scope(&self, tool: &str, scope: &str) {
        self.lock()
            .demanded
            .insert(tool.to_owned(), scope.to_owned());
    }

    /// Advertises `client_id_metadata_document_supported` (and, when `iss` is true,
    /// `authorization_response_iss_parameter_supported`) and accepts KnightCode's documents'
    /// addresses as client ids: `…/client.json` with a loopback `/callback`, `…/<id>/client.json`
    /// with `/callback/<id>` (what those documents list; the stand-in cannot fetch them).
    pub fn accept_client_documents(&self, iss: bool) {
        self.lock().documents = Some(iss);
    }

    /// The queries of the authorize requests so far.
    pub fn authorizations(&self) -> Vec<String> {
        self.lock().authorizations.clone()
    }

    /// How many refresh grants were answered.
    pub fn refreshes(&self) -> usize {
        self.lock().refreshes
    }

    /// The dynamic registration requests, in order.
    pub fn registrations(&self) -> Vec<Value> {
        self.lock().registrations.clone()
    }

    /// The `Authorization` header of every MCP request, in order.
    pub fn bearers(&self) -> Vec<Option<String>> {
        self.lock().bearers.clone()
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
                let answer = {
                    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                    route(&mut state, &request)
                };
                let (status, headers, body) = answer;
                let sent = write_sized(stream.get_mut(), status, headers, &body).await;
                if sent.is_err() || request.wants_close() {
                    return;
                }
            }
        });
    }
}

fn not_found() -> Answer {
    (404, Vec::new(), b"not found".to_vec())
}

fn route(state: &mut State, request: &HttpRequest) -> Answer {
    let base = state.base.clone();
    let path = request.path.as_str();
    if path.starts_with("/.well-known/") && !state.protected {
        return not_found();
    }
    match (request.method.as_str(), path) {
        (
            "GET",
            "/.well-known/oauth-protected-resource/mcp" | "/.well-known/oauth-protected-resource",
        ) => json_answer(
            200,
            &json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
                        "scopes_supported": ["mcp"], "bearer_methods_supported": ["header"]}),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut metadata = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["mcp"],
            });
            if let Some(iss) = state.documents {
                metadata["client_id_metadata_document_supported"] = json!(true);
                metadata["authorization_response_iss_parameter_supported"] = json!(iss);
            }
            json_answer(200, &metadata)
        }
        ("POST", "/register") => register(state, &request.body),
        ("GET", "/authorize") => authorize(state, &request.query),
        ("POST", "/token") => token(state, &request.body),
        ("POST", "/mcp") => mcp(state, request),
        ("DELETE", "/mcp") => (200, Vec::new(), Vec::new()),
        ("GET", "/mcp") => (405, Vec::new(), Vec::new()),
        _ => not_found(),
    }
}

fn register(state: &mut State, body: &[u8]) -> Answer {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    state.registrations.push(request.clone());
    let redirects: Vec<String> = request["redirect_uris"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if redirects.is_empty() {
        return json_answer(400, &json!({"error": "invalid_redirect_uri"}));
    }
    let id = format!("client-{}", state.clients.len() + 1);
    state.clients.insert(id.clone(), redirects);
    let mut answer = request;
    answer["client_id"] = json!(id);
    answer["token_endpoint_auth_method"] = json!("none");
    json_answer(201, &answer)
}

fn authorize(state: &mut State, query: &str) -> Answer {
    let params = params(query);
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    state.authorizations.push(query.to_owned());
    let client = param("client_id");
    let redirect = param("redirect_uri");
    let known = state
        .clients
        .get(&client)
        .is_some_and(|r| r.contains(&redirect))
        || (state.documents.is_some() && document_allows(&client, &redirect));
    if !known || param("code_challenge_method") != "S256" || param("response_type") != "code" {
        return (400, Vec::new(), b"bad authorize request".to_vec());
    }
    let code = format!("code-{}", state.codes.len() + 1);
    let scope = match param("scope") {
        scope if scope.is_empty() => "mcp".to_owned(),
        scope => scope,
    };
    state.codes.insert(
        code.clone(),
        (param("code_challenge"), redirect.clone(), client, scope),
    );
    let location = format!(
        "{redirect}?code={}&state={}&iss={}",
        encode(&code),
        encode(&param("state")),
        encode(&state.base)
    );
    (302, vec![("location".into(), location)], Vec::new())
}

/// Whether `redirect` is one KnightCode's metadata document `client` lists: a loopback
/// `/callback` for `…/oauth/client.json`, `/callback/<id>` for `…/oauth/<id>/client.json`.
fn document_allows(client: &str, redirect: &str) -> bool {
    let Some(document) = client
        .strip_prefix("https://")
        .and_then(|c| c.strip_suffix("/client.json"))
    else {
        return false;
    };
    let id = document.split_once("/oauth").map_or("", |(_, id)| id);
    let Some(rest) = redirect
        .strip_prefix("http://127.0.0.1:")
        .or_else(|| redirect.strip_prefix("http://localhost:"))
    else {
        return false;
    };
    let path = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    path == format!("/callback{id}")
}

fn tokens(state: &mut State, scope: String) -> Answer {
    state.issued += 1;
    let access = format!("access-{}", state.issued);
    let refresh = format!("refresh-{}", state.issued);
    state.access.push((access.clone(), scope.clone()));
    state.refresh.push((refresh.clone(), scope.clone()));
    json_answer(
        200,
        &json!({"token_type": "Bearer", "access_token": access, "refresh_token": refresh,
                "expires_in": 3600, "scope": scope}),
    )
}

fn token(state: &mut State, body: &[u8]) -> Answer {
    let form = params(&String::from_utf8_lossy(body));
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let invalid = |why: &str| {
        json_answer(
            400,
            &json!({"error": "invalid_grant", "error_description": why}),
        )
    };
    match field("grant_type").as_str() {
        "authorization_code" => {
            let Some((challenge, redirect, client, scope)) = state.codes.remove(&field("code"))
            else {
                return invalid("unknown code");
            };
            let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
            let digest =
                ring::digest::digest(&ring::digest::SHA256, field("code_verifier").as_bytes());
            if b64.encode(digest.as_ref()) != challenge {
                return invalid("code_verifier does not match the challenge");
            }
            if redirect != field("redirect_uri") || client != field("client_id") {
                return invalid("redirect_uri or client_id differs from the authorize request's");
            }
            tokens(state, scope)
        }
        "refresh_token" => {
            let refresh = field("refresh_token");
            let Some(i) = state.refresh.iter().position(|(r, _)| *r == refresh) else {
                return invalid("unknown refresh token");
            };
            // Rotated: the old refresh token is spent; the new tokens keep its grant.
            let (_, scope) = state.refresh.remove(i);
            state.refreshes += 1;
            tokens(state, scope)
        }
        _ => invalid("unsupported grant"),
    }
}

fn mcp(state: &mut State, request: &HttpRequest) -> Answer {
    let bearer = request.header("authorization").map(str::to_owned);
    state.bearers.push(bearer.clone());
    let granted = bearer
        .as_deref()
        .and_then(|b| b.strip_prefix("Bearer "))
        .and_then(|token| state.access.iter().find(|(a, _)| a == token))
        .map(|(_, scope)| scope.clone());
    if state.protected && granted.is_none() {
        let challenge = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\"",
            state.base
        );
        return (
            401,
            vec![("www-authenticate".into(), challenge)],
            b"unauthorized".to_vec(),
        );
    }
    let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let Some(id) = message.get("id").cloned() else {
        return (202, Vec::new(), Vec::new());
    };
    let method = message["method"].as_str().unwrap_or_default();
    let tool = message["params"]["name"].as_str().unwrap_or_default();
    if let (true, "tools/call", Some(needed)) = (state.protected, method, state.demanded.get(tool))
        && !granted
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .any(|s| s == needed)
    {
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            state.base
        );
        return (
            403,
            vec![("www-authenticate".into(), challenge)],
            b"insufficient scope".to_vec(),
        );
    }
    let result = match method {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-stand-in", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{"name": "echo", "description": "Echoes its message",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}]}),
        "tools/call" => json!({"content": [{"type": "text",
            "text": message["params"]["arguments"]["message"].as_str().unwrap_or_default()}]}),
        "ping" => json!({}),
        _ => {
            let error = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("no {method}")}});
            return json_answer(200, &error);
        }
    };
    let mut answer = json_answer(200, &json!({"jsonrpc": "2.0", "id": id, "result": result}));
    answer
        .1
        .push(("mcp-session-id".into(), "stand-in-session".into()));
    answer
}
