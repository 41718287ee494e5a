//! The browser sign-in of one server: discovery (the server's 401 challenge, protected
//! resource metadata, then the authorization server's), a dynamic client registration when
//! no `clientId` is configured (or KnightCode's metadata document's address as the client
//! id, `cimd`), the PKCE authorize address opened in a browser, the code
//! taken from the loopback callback or from the address the person pastes, and the token
//! exchange, whose tokens rmcp saves through [`FileCredentials`] into `mcp-auth.json`.
//! A connection never opens a browser; only this does.

use std::sync::Arc;
use std::time::Duration;

use knightcode_loopback::CallbackListener;
use rmcp::transport::auth::AuthorizationMetadata;
use rmcp::transport::auth::AuthorizationRequest;
use rmcp::transport::auth::AuthorizationSession;

use super::OAuthConfig;
use super::store::AuthStore;
use super::store::FileCredentials;
use crate::config::ServerConfig;
use crate::config::Transport;
use crate::error::McpError;
use crate::interpolate::Resolver;

/// How long the unauthenticated probe for the server's challenge may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);
/// `knightcode mcp login`'s default wait for the browser.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// How the person signing in is involved.
pub struct SignIn {
    /// Opens the authorize address in a browser (the address is also shown).
    pub open_browser: Arc<dyn Fn(&str) + Send + Sync>,
    /// What the person reads: the address, and what to do.
    pub show: Arc<dyn Fn(&str) + Send + Sync>,
    /// Lines the person pastes (the address the browser ended on, for a browser on another
    /// machine); `None` when nothing can be pasted.
    pub pasted: Option<tokio::sync::mpsc::Receiver<String>>,
    /// How long to wait for the browser or a paste.
    pub timeout: Duration,
}

/// What a sign-in needs besides the server and the person.
pub(crate) struct SignInContext<'a> {
    pub resolver: Resolver<'a>,
    pub http: Option<reqwest::Client>,
    pub store: Arc<AuthStore>,
}

/// The address and the OAuth settings of a server that signs in with OAuth, or
/// [`McpError::NotOAuth`].
pub(crate) fn oauth_target(
    server: &ServerConfig,
) -> Result<(&str, Option<&OAuthConfig>), McpError> {
    match &server.transport {
        Transport::Http {
            url,
            headers,
            oauth,
            auth_provider: None,
        } if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization")) =>
        {
            Ok((url, oauth.as_ref()))
        }
        _ => Err(McpError::NotOAuth(server.name.clone())),
    }
}

/// Forgets the server's tokens (`logout`); whether there were any.
pub(crate) fn sign_out(server: &ServerConfig, store: &AuthStore) -> Result<bool, McpError> {
    let (url, _) = oauth_target(server)?;
    store.remove(url)
}

pub(crate) async fn sign_in(
    server: &ServerConfig,
    context: SignInContext<'_>,
    mut person: SignIn,
) -> Result<(), McpError> {
    let (url, oauth) = oauth_target(server)?;
    let default = OAuthConfig::default();
    let oauth = oauth.unwrap_or(&default);
    let failed = |reason: String| McpError::SignIn {
        server: server.name.clone(),
        reason,
    };
    let http = context
        .http
        .clone()
        .ok_or_else(|| failed("no HTTP client is available".to_owned()))?;
    let mut manager = super::manager(url, &http)
        .await
        .map_err(|e| failed(e.to_string()))?;
    manager.set_credential_store(FileCredentials {
        store: Arc::clone(&context.store),
        url: url.to_owned(),
    });
    let challenge = probe(&http, url).await;
    let metadata = match &oauth.auth_server_metadata_url {
        Some(metadata_url) => fetch_metadata(&http, metadata_url).await.map_err(failed)?,
        None => {
            let resolution = manager
                .resolve_metadata_from_challenge(challenge.as_deref())
                .await
                .map_err(|e| failed(e.to_string()))?;
            // Nothing published, nothing asked, nothing configured: not an OAuth server.
            if !resolution.source.is_discovered()
                && challenge.is_none()
                && server_oauth_unset(server)
            {
                return Err(McpError::NotOAuth(server.name.clone()));
            }
            resolution.metadata
        }
    };
    let document = if oauth.cimd {
        super::cimd::document(&metadata, url)
    } else {
        None
    };
    manager.set_metadata(metadata);
    let scopes = requested_scopes(&manager, &context.store, url, oauth);

    let callback_path = document.as_ref().map(|d| d.callback_path.as_str());
    let (listener, redirect_uri) = callback_listener(oauth, callback_path)
        .await
        .map_err(failed)?;
    if listener.is_none() && person.pasted.is_none() {
        return Err(failed(format!(
            "the callback address {redirect_uri} cannot be listened on (its port is taken)"
        )));
    }
    let mut request = AuthorizationRequest::new(redirect_uri.clone()).with_client_name(
        oauth
            .client_name
            .clone()
            .unwrap_or_else(|| super::DEFAULT_CLIENT_NAME.to_owned()),
    );
    if let Some(client_id) = &oauth.client_id {
        request = request.with_preregistered_client(client_id.clone());
        if let Some(secret) = &oauth.client_secret {
            let secret = context
                .resolver
                .value(&server.name, "oauth.clientSecret", secret)
                .await?;
            request = request.with_client_secret(secret);
        }
    }
    if let Some(document) = &document {
        request = request.with_client_metadata_url(document.client_id.clone());
    }
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(challenge) = &challenge {
        request = request.with_challenge(challenge.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed(e.to_string()))?;
    let auth_url = session.get_authorization_url().to_owned();
    let state = query_param(&auth_url, "state").unwrap_or_default();
    (person.show)(&format!(
        "Sign in to MCP server \"{}\" in your browser:\n{auth_url}\n{}",
        server.name,
        if person.pasted.is_some() {
            "If the browser is on another machine, paste the address it ends on here."
        } else {
            "Waiting for the browser…"
        }
    ));
    (person.open_browser)(&auth_url);

    let wait = async {
        let callback = wait_callback(listener.as_ref(), &redirect_uri, &state);
        let pasted = wait_pasted(person.pasted.as_mut(), &state);
        tokio::select! {
            answer = callback => answer,
            answer = pasted => answer,
        }
    };
    let answer = tokio::time::timeout(person.timeout, wait)
        .await
        .map_err(|_| {
            failed(format!(
                "no answer from the browser within {} s",
                person.timeout.as_secs()
            ))
        })?
        .map_err(failed)?;
    session
        .handle_callback_with_issuer(&answer.code, &answer.state, answer.issuer.as_deref())
        .await
        .map_err(|e| failed(e.to_string()))?;
    Ok(())
}

/// The scopes to ask for: the configured ones (none: rmcp picks the advertised ones); after
/// the server asked for more (403 `insufficient_scope`), those on top of what was granted
/// and configured, since a challenge may name only the missing scope and a token with just
/// that would lose the access the old one had (SEP-2350). A refresh cannot widen a grant,
/// so this always goes through the browser.
fn requested_scopes(
    manager: &rmcp::transport::auth::AuthorizationManager,
    store: &AuthStore,
    url: &str,
    oauth: &OAuthConfig,
) -> Vec<String> {
    let configured = oauth.scope.as_deref().unwrap_or("");
    let Some(wanted) = store.step_up_scope(url) else {
        return super::union_scopes([configured]);
    };
    let mut granted = store
        .load(url)
        .ok()
        .flatten()
        .map(|c| c.granted_scopes)
        .unwrap_or_default();
    if granted.is_empty() && configured.is_empty() {
        granted = manager.select_scopes(None, &[]);
    }
    let granted = granted.join(" ");
    super::union_scopes([configured, granted.as_str(), wanted.as_str()])
}

fn server_oauth_unset(server: &ServerConfig) -> bool {
    matches!(&server.transport, Transport::Http { oauth: None, .. })
}

/// The `WWW-Authenticate` challenge of an unauthenticated `initialize`, if the server
/// answers 401 with one (it names the resource metadata and the scopes wanted).
async fn probe(http: &reqwest::Client, url: &str) -> Option<String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "knightcode", "version": env!("CARGO_PKG_VERSION")}}
    });
    let response = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string())
        .timeout(PROBE_TIMEOUT)
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get("www-authenticate")?
        .to_str()
        .ok()
        .map(str::to_owned)
}

async fn fetch_metadata(
    http: &reqwest::Client,
    url: &str,
) -> Result<AuthorizationMetadata, String> {
    let response = http
        .get(url)
        .timeout(PROBE_TIMEOUT)
        .send()
        .await
        .map_err(|e| format!("cannot read {url}: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|e| format!("cannot read {url}: {e}"))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{url} is not authorization server metadata: {e}"))
}

/// Listens for the browser's redirect: on `callbackUrl`/`callbackPort` when set (a fixed
/// port that is taken leaves only pasting), else on a free loopback port; at `path` when
/// the client's metadata document says where (`cimd`).
async fn callback_listener(
    oauth: &OAuthConfig,
    path: Option<&str>,
) -> Result<(Option<CallbackListener>, String), String> {
    let configured = match &oauth.callback_url {
        Some(text) => Some(url::Url::parse(text).map_err(|e| e.to_string())?),
        None => None,
    };
    let fixed = configured
        .as_ref()
        .and_then(url::Url::port)
        .or(oauth.callback_port);
    let listener = CallbackListener::bind(fixed.unwrap_or(0)).await.ok();
    let port = match (&listener, fixed) {
        (_, Some(port)) => port,
        (Some(listener), None) => listener.port().map_err(|e| e.to_string())?,
        (None, None) => return Err("no loopback port is free for the callback".to_owned()),
    };
    let redirect = match configured {
        Some(mut url) => {
            url.set_port(Some(port))
                .map_err(|()| "invalid oauth.callbackUrl".to_owned())?;
            if let Some(path) = path {
                url.set_path(path);
            }
            url.to_string()
        }
        None => format!("http://127.0.0.1:{port}{}", path.unwrap_or("/callback")),
    };
    Ok((listener, redirect))
}

/// The code and state the browser came back with.
struct Answer {
    code: String,
    state: String,
    issuer: Option<String>,
}

/// The value of the query parameter `name` of the address `url`.
fn query_param(url: &str, name: &str) -> Option<String> {
    knightcode_loopback::query_param(&url::Url::parse(url).ok()?, name)
}

/// What a redirect address says.
enum Redirect {
    Answer(Answer),
    /// No code and no error: not an answer at all.
    Nothing,
    /// A code of another sign-in (a stale browser tab).
    OtherState,
    /// The authorization server's `error` (and its description).
    Refused(String),
}

/// Reads a redirect address: an `error` ends the sign-in, a wrong `state` is refused, an
/// empty `iss` counts as absent.
fn read_answer(url: &url::Url, state: &str) -> Redirect {
    let param = |name: &str| knightcode_loopback::query_param(url, name);
    if let Some(error) = param("error") {
        let detail = param("error_description")
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        return Redirect::Refused(format!("the authorization server answered {error}{detail}"));
    }
    let (Some(code), Some(got_state)) = (param("code"), param("state")) else {
        return Redirect::Nothing;
    };
    if got_state != state {
        return Redirect::OtherState;
    }
    Redirect::Answer(Answer {
        code,
        state: got_state,
        issuer: param("iss").filter(|i| !i.is_empty()),
    })
}

/// Serves the loopback callback until a request brings this sign-in's code (or its error).
/// Requests that bring neither get an error page and the wait goes on.
async fn wait_callback(
    listener: Option<&CallbackListener>,
    redirect_uri: &str,
    state: &str,
) -> Result<Answer, String> {
    let Some(listener) = listener else {
        return std::future::pending().await;
    };
    let path = url::Url::parse(redirect_uri)
        .map(|u| u.path().to_owned())
        .unwrap_or_else(|_| "/callback".to_owned());
    loop {
        let request = listener.next().await;
        let outcome = match &request.url {
            Some(url) if url.path() == path => read_answer(url, state),
            _ => Redirect::Nothing,
        };
        let (status, message) = match &outcome {
            Redirect::Answer(_) => (
                200,
                "Signed in. You can close this window and return to KnightCode.",
            ),
            Redirect::Nothing => (404, "This is not the sign-in callback."),
            Redirect::OtherState => (400, "This address belongs to another sign-in."),
            Redirect::Refused(_) => (400, "The sign-in did not complete; see KnightCode."),
        };
        request.respond(status, "KnightCode sign-in", message).await;
        match outcome {
            Redirect::Answer(answer) => return Ok(answer),
            Redirect::Refused(reason) => return Err(reason),
            // A stale tab or a stray request: keep waiting for the right one.
            Redirect::Nothing | Redirect::OtherState => {}
        }
    }
}

/// Waits for a pasted address that answers this sign-in.
async fn wait_pasted(
    pasted: Option<&mut tokio::sync::mpsc::Receiver<String>>,
    state: &str,
) -> Result<Answer, String> {
    let Some(pasted) = pasted else {
        return std::future::pending().await;
    };
    while let Some(line) = pasted.recv().await {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let url = url::Url::parse(line).or_else(|_| {
            url::Url::parse(&format!(
                "http://localhost/?{}",
                line.trim_start_matches('?')
            ))
        });
        return match url.map(|u| read_answer(&u, state)) {
            Ok(Redirect::Answer(answer)) => Ok(answer),
            Ok(Redirect::Refused(reason)) => Err(reason),
            Ok(Redirect::OtherState) => {
                Err("the pasted address belongs to another sign-in (its state differs)".to_owned())
            }
            Ok(Redirect::Nothing) | Err(_) => {
                Err("the pasted address has no code and state".to_owned())
            }
        };
    }
    std::future::pending().await
}
