//! Signing in to an HTTP server behind OAuth (the testkit's `McpOAuthServer`): a 401 makes
//! the server "needs-auth" with the message that says what to do; a sign-in through the
//! loopback callback (the test plays the browser) or a pasted address stores owner-only
//! tokens in `mcp-auth.json`; connections send them, refresh them under the refresh lock,
//! pick up another process's sign-in, and sign-out forgets them. A 403 `insufficient_scope`
//! makes the next sign-in ask for the wanted scope on top of the granted one; `cimd` names the
//! client by its metadata document instead of registering it.

use std::sync::Arc;
use std::time::Duration;

use knightcode_mcp::AuthStore;
use knightcode_mcp::McpError;
use knightcode_mcp::McpManager;
use knightcode_mcp::Scope;
use knightcode_mcp::ServerConfig;
use knightcode_mcp::ServerState;
use knightcode_mcp::SignIn;
use knightcode_mcp::Transport;
use knightcode_testkit::oauth::McpOAuthServer;
use knightcode_testkit::oauth::browser_get;
use tokio_util::sync::CancellationToken;

const NEEDS_SIGN_IN: &str = "MCP server \"web\" requires sign-in. Run /mcp to sign in.";

fn http_server(url: &str) -> ServerConfig {
    ServerConfig {
        name: "web".to_owned(),
        scope: Scope::User,
        source: "mcp.json".into(),
        overridden: false,
        transport: Transport::Http {
            url: url.to_owned(),
            headers: Vec::new(),
            oauth: None,
            auth_provider: None,
        },
        exposure: knightcode_mcp::Exposure::Direct,
        tool_exposure: Vec::new(),
        description: None,
        enabled: true,
        timeout: Duration::from_secs(30),
    }
}

/// A manager for `server` with its tokens in `agent`, started and settled.
async fn started(server: ServerConfig, agent: &std::path::Path) -> McpManager {
    let options = knightcode_mcp::ConnectOptions {
        http: Some(
            knightcode_ai::http_client_builder()
                .unwrap()
                .build()
                .unwrap(),
        ),
        auth: Some(Arc::new(AuthStore::new(agent))),
        ..crate::common::options(agent)
    };
    let manager = McpManager::new(vec![server], options);
    manager.start();
    assert!(manager.wait_settled(Duration::from_secs(30)).await);
    manager
}

/// A browser that follows the authorize address back to the loopback callback.
fn browser() -> SignIn {
    SignIn {
        open_browser: Arc::new(|url: &str| {
            let url = url.to_owned();
            std::thread::spawn(move || {
                let (status, location, _) = browser_get(&url).unwrap();
                assert_eq!(status, 302, "the authorize endpoint redirects");
                let (status, _, body) = browser_get(&location.unwrap()).unwrap();
                assert_eq!(status, 200, "{body}");
            });
        }),
        show: Arc::new(|_: &str| {}),
        pasted: None,
        timeout: Duration::from_secs(30),
    }
}

async fn echo(manager: &McpManager) -> Result<String, McpError> {
    let output = manager
        .call(
            "web",
            "echo",
            serde_json::json!({"message": "hi"}),
            &CancellationToken::new(),
            None,
        )
        .await?;
    Ok(format!("{output:?}"))
}

fn stored(agent: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(agent.join("mcp-auth.json")).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_needs_sign_in_and_the_browser_sign_in_connects() {
    let service = McpOAuthServer::start().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let manager = started(http_server(&service.mcp_url()), agent.path()).await;
    let status = manager.statuses().remove(0);
    assert_eq!(status.state, ServerState::NeedsAuth);
    assert_eq!(status.state.as_str(), "needs-auth");
    assert_eq!(status.error.as_deref(), Some(NEEDS_SIGN_IN));

    manager.sign_in("web", browser()).await.unwrap();
    let registration = &service.registrations()[0];
    assert_eq!(registration["client_name"], "KnightCode");

    let entry = &stored(agent.path())[&service.mcp_url()];
    assert_eq!(entry["client_id"], "client-1");
    assert_eq!(entry["token_response"]["access_token"], "access-1");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(agent.path().join("mcp-auth.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    assert_eq!(manager.reconnect("web").await.unwrap(), 1);
    assert_eq!(manager.statuses()[0].state, ServerState::Connected);
    assert!(echo(&manager).await.unwrap().contains("hi"));
    assert_eq!(
        service.bearers().last().unwrap().as_deref(),
        Some("Bearer access-1")
    );

    // Revoked for good (the refresh is refused too): the server waits for a sign-in.
    service.revoke_tokens();
    let error = echo(&manager).await.unwrap_err();
    assert_eq!(error.to_string(), NEEDS_SIGN_IN);
    assert_eq!(manager.statuses()[0].state, ServerState::NeedsAuth);
    manager.sign_in("web", browser()).await.unwrap();
    manager.reconnect("web").await.unwrap();
    assert!(echo(&manager).await.unwrap().contains("hi"));

    // Signing out forgets the tokens; the next connection needs a sign-in again.
    assert!(manager.sign_out("web").unwrap());
    assert!(stored(agent.path()).get(service.mcp_url()).is_none());
    assert!(!manager.sign_out("web").unwrap());
    let error = manager.reconnect("web").await.unwrap_err();
    assert_eq!(error.to_string(), NEEDS_SIGN_IN);
    assert_eq!(manager.statuses()[0].state, ServerState::NeedsAuth);
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_address_signs_in_and_a_wrong_one_is_refused() {
    let service = McpOAuthServer::start().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let manager = started(http_server(&service.mcp_url()), agent.path()).await;
    // The browser is on another machine: the person pastes where it ended up.
    let paste = |tamper: bool| {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        SignIn {
            open_browser: Arc::new(move |url: &str| {
                let url = url.to_owned();
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let (_, location, _) = browser_get(&url).unwrap();
                    let mut location = location.unwrap();
                    if tamper {
                        location = location.replace("state=", "state=x");
                    }
                    tx.blocking_send(location).unwrap();
                });
            }),
            show: Arc::new(|_: &str| {}),
            pasted: Some(rx),
            timeout: Duration::from_secs(30),
        }
    };
    let error = manager.sign_in("web", paste(true)).await.unwrap_err();
    assert!(
        error.to_string().starts_with(
            "Signing in to MCP server \"web\" failed: the pasted address belongs to another sign-in"
        ),
        "{error}"
    );
    manager.sign_in("web", paste(false)).await.unwrap();
    assert_eq!(manager.reconnect("web").await.unwrap(), 1);
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_refreshed_when_rejected_or_expired() {
    let service = McpOAuthServer::start().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let manager = started(http_server(&service.mcp_url()), agent.path()).await;
    manager.sign_in("web", browser()).await.unwrap();
    manager.reconnect("web").await.unwrap();

    // The server stops taking the token: one refresh, and the call goes through.
    service.expire_access_tokens();
    assert!(echo(&manager).await.unwrap().contains("hi"));
    assert_eq!(service.refreshes(), 1);
    let entry = &stored(agent.path())[&service.mcp_url()];
    assert_eq!(entry["token_response"]["access_token"], "access-2");
    assert_eq!(entry["token_response"]["refresh_token"], "refresh-2");

    // Stored long ago: the next connection refreshes before it sends anything.
    let mut all = stored(agent.path());
    all[&service.mcp_url()]["token_received_at"] = serde_json::json!(1);
    std::fs::write(agent.path().join("mcp-auth.json"), all.to_string()).unwrap();
    manager.reconnect("web").await.unwrap();
    assert_eq!(service.refreshes(), 2);
    let entry = &stored(agent.path())[&service.mcp_url()];
    assert_eq!(entry["token_response"]["access_token"], "access-3");
    // The refresh lock is released.
    let leftovers: Vec<String> = std::fs::read_dir(agent.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lock"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // A lock left behind by a process that died (older than 20 s) is taken over.
    let store = AuthStore::new(agent.path());
    let file = store.refresh_lock_path(&service.mcp_url());
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.len() == "mcp-auth-refresh-".len() + 16 && name.starts_with("mcp-auth-refresh-"),
        "{name}"
    );
    let mut lock = file.into_os_string();
    lock.push(".lock");
    std::fs::create_dir(&lock).unwrap();
    let long_ago = std::time::SystemTime::now() - Duration::from_secs(60);
    std::fs::File::open(&lock)
        .unwrap()
        .set_modified(long_ago)
        .unwrap();
    let mut all = stored(agent.path());
    all[&service.mcp_url()]["token_received_at"] = serde_json::json!(1);
    std::fs::write(agent.path().join("mcp-auth.json"), all.to_string()).unwrap();
    manager.reconnect("web").await.unwrap();
    assert_eq!(service.refreshes(), 3);
    assert!(!std::path::Path::new(&lock).exists());
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_by_another_process_is_picked_up() {
    let service = McpOAuthServer::start().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let session = started(http_server(&service.mcp_url()), agent.path()).await;
    assert_eq!(session.statuses()[0].state, ServerState::NeedsAuth);
    assert!(session.pick_up_sign_ins().await.is_empty());

    // `knightcode mcp login web` in a shell: its own manager, the same agent folder.
    let shell = started(http_server(&service.mcp_url()), agent.path()).await;
    shell.sign_in("web", browser()).await.unwrap();
    shell.stop().await;

    assert_eq!(session.pick_up_sign_ins().await, vec!["web".to_owned()]);
    assert_eq!(session.statuses()[0].state, ServerState::Connected);
    session.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_without_oauth_say_so() {
    let open = McpOAuthServer::open().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let manager = started(http_server(&open.mcp_url()), agent.path()).await;
    assert_eq!(manager.statuses()[0].state, ServerState::Connected);
    let error = manager.sign_in("web", browser()).await.unwrap_err();
    assert_eq!(error.to_string(), "MCP server \"web\" does not use OAuth.");
    // Nothing stored, nothing to forget.
    assert!(!manager.sign_out("web").unwrap());
    manager.stop().await;

    let mut with_header = http_server(&open.mcp_url());
    if let Transport::Http { headers, .. } = &mut with_header.transport {
        headers.push(("Authorization".to_owned(), "Bearer t".to_owned()));
    }
    let manager = started(with_header, agent.path()).await;
    assert!(!manager.uses_oauth("web"));
    assert!(matches!(
        manager.sign_in("web", browser()).await,
        Err(McpError::NotOAuth(_))
    ));
    assert!(matches!(
        manager.sign_out("web"),
        Err(McpError::NotOAuth(_))
    ));
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_provider_sends_the_providers_token_or_asks_for_its_login() {
    let open = McpOAuthServer::open().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let mut server = http_server(&open.mcp_url());
    if let Transport::Http { auth_provider, .. } = &mut server.transport {
        *auth_provider = Some("anthropic".to_owned());
    }
    let token: knightcode_mcp::ProviderToken = Arc::new(|provider: String| {
        Box::pin(async move { (provider == "anthropic").then(|| "provider-token".to_owned()) })
    });
    let options = knightcode_mcp::ConnectOptions {
        http: Some(
            knightcode_ai::http_client_builder()
                .unwrap()
                .build()
                .unwrap(),
        ),
        auth: Some(Arc::new(AuthStore::new(agent.path()))),
        provider_token: Some(token),
        ..crate::common::options(agent.path())
    };
    let manager = McpManager::new(vec![server.clone()], options.clone());
    manager.start();
    assert!(manager.wait_settled(Duration::from_secs(30)).await);
    assert_eq!(manager.statuses()[0].state, ServerState::Connected);
    assert_eq!(open.bearers()[0].as_deref(), Some("Bearer provider-token"));
    assert!(!manager.uses_oauth("web"));
    manager.stop().await;

    // Not logged in to the provider: the server waits for `/login anthropic`.
    let options = knightcode_mcp::ConnectOptions {
        provider_token: Some(Arc::new(|_: String| Box::pin(async { None }))),
        ..options
    };
    let manager = McpManager::new(vec![server], options);
    manager.start();
    assert!(manager.wait_settled(Duration::from_secs(30)).await);
    let status = manager.statuses().remove(0);
    assert_eq!(status.state, ServerState::NeedsAuth);
    assert_eq!(
        status.error.as_deref(),
        Some("MCP server \"web\" requires sign-in. Run /login anthropic.")
    );
}

/// A parameter of an authorize request's query.
fn query_param(query: &str, name: &str) -> String {
    knightcode_testkit::oauth::params(query)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_insufficient_scope_signs_in_again_for_the_old_and_the_new_scopes() {
    let service = McpOAuthServer::start().unwrap();
    service.demand_scope("echo", "mcp:write");
    let agent = tempfile::tempdir().unwrap();
    let manager = started(http_server(&service.mcp_url()), agent.path()).await;
    manager.sign_in("web", browser()).await.unwrap();
    assert_eq!(manager.reconnect("web").await.unwrap(), 1);

    // The token lacks the tool's scope: the server waits for a sign-in that asks for it.
    let error = echo(&manager).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "MCP server \"web\" needs more access (scope \"mcp:write\"). Run /mcp login web to sign in again."
    );
    assert_eq!(manager.statuses()[0].state, ServerState::NeedsAuth);
    assert_eq!(
        stored(agent.path())[&service.mcp_url()]["stepUpScope"],
        "mcp:write"
    );
    // Noting the wanted scope is no sign-in to pick up.
    assert!(manager.pick_up_sign_ins().await.is_empty());

    // `knightcode mcp login web` from a shell asks for what was granted and what is wanted.
    let shell = started(http_server(&service.mcp_url()), agent.path()).await;
    shell.sign_in("web", browser()).await.unwrap();
    shell.stop().await;
    let asked: Vec<String> = service
        .authorizations()
        .iter()
        .map(|q| query_param(q, "scope"))
        .collect();
    assert_eq!(asked, ["mcp", "mcp mcp:write"]);
    let entry = &stored(agent.path())[&service.mcp_url()];
    assert!(entry.get("stepUpScope").is_none(), "{entry}");

    assert_eq!(manager.pick_up_sign_ins().await, vec!["web".to_owned()]);
    assert!(echo(&manager).await.unwrap().contains("hi"));
    manager.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cimd_names_the_client_by_knightcodes_metadata_document() {
    let cimd_server = |url: &str| {
        let mut server = http_server(url);
        if let Transport::Http { oauth, .. } = &mut server.transport {
            *oauth = Some(knightcode_mcp::OAuthConfig {
                cimd: true,
                ..Default::default()
            });
        }
        server
    };
    // An authorization server that sends `iss`: the shared document and `/callback`.
    let service = McpOAuthServer::start().unwrap();
    service.accept_client_documents(true);
    let agent = tempfile::tempdir().unwrap();
    let manager = started(cimd_server(&service.mcp_url()), agent.path()).await;
    manager.sign_in("web", browser()).await.unwrap();
    assert!(service.registrations().is_empty());
    let query = service.authorizations().remove(0);
    let document = "https://knightcode.dev/oauth/client.json";
    assert_eq!(query_param(&query, "client_id"), document);
    let redirect = query_param(&query, "redirect_uri");
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
        "{redirect}"
    );
    assert_eq!(
        stored(agent.path())[&service.mcp_url()]["client_id"],
        document
    );
    manager.reconnect("web").await.unwrap();
    assert!(echo(&manager).await.unwrap().contains("hi"));
    manager.stop().await;

    // Without `iss`: a document and callback path of this server's own.
    let service = McpOAuthServer::start().unwrap();
    service.accept_client_documents(false);
    let agent = tempfile::tempdir().unwrap();
    let manager = started(cimd_server(&service.mcp_url()), agent.path()).await;
    manager.sign_in("web", browser()).await.unwrap();
    assert!(service.registrations().is_empty());
    let query = service.authorizations().remove(0);
    let client = query_param(&query, "client_id");
    let id = client
        .strip_prefix("https://knightcode.dev/oauth/")
        .and_then(|c| c.strip_suffix("/client.json"))
        .unwrap_or_else(|| panic!("{client}"));
    assert_eq!(id.len(), 12, "{id}");
    assert!(
        id.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    );
    let redirect = query_param(&query, "redirect_uri");
    assert!(redirect.ends_with(&format!("/callback/{id}")), "{redirect}");
    manager.reconnect("web").await.unwrap();
    assert!(echo(&manager).await.unwrap().contains("hi"));
    manager.stop().await;

    // An authorization server that takes no documents: dynamic registration, as without cimd.
    let service = McpOAuthServer::start().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let manager = started(cimd_server(&service.mcp_url()), agent.path()).await;
    manager.sign_in("web", browser()).await.unwrap();
    assert_eq!(service.registrations().len(), 1);
    manager.stop().await;
}
