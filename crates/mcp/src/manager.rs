//! Every configured server's connection: started in the background, watched, reconnected on
//! the next call after it dropped, stopped together.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::client::Connection;
pub use crate::client::ProgressSink;
pub use crate::client::ToolInfo;
use crate::config::ServerConfig;
use crate::error::McpError;
use crate::interpolate::EnvLookup;
use crate::interpolate::Resolver;
use crate::result::CallOutput;

/// How long a failed read-only request (resources) waits before its one retry.
const READ_RETRY: Duration = Duration::from_millis(250);

/// What connections need from the session.
#[derive(Clone)]
pub struct ConnectOptions {
    /// The session's folder: the servers' root, and where relative `cwd`s start.
    pub cwd: PathBuf,
    /// For a leading `~/` in commands, arguments and folders.
    pub home: Option<PathBuf>,
    /// For `${NAME}` values.
    pub env: EnvLookup,
    /// For streamable HTTP servers (built by the caller with the workspace's TLS setup).
    pub http: Option<reqwest::Client>,
    /// Where servers' log messages go (`<agentDir>/mcp.log`); `None` drops them.
    pub log: Option<Arc<crate::ServerLog>>,
    /// `<agentDir>/mcp-auth.json`, the OAuth tokens; `None` sends none (and signs in nowhere).
    pub auth: Option<Arc<crate::AuthStore>>,
    /// A KnightCode provider's token, for servers with `auth.provider`.
    pub provider_token: Option<crate::ProviderToken>,
}

/// Where a server's connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    Connecting,
    Connected,
    /// It was connected and the connection dropped; the next call reconnects.
    Disconnected,
    Failed,
    /// The server answered 401: it waits for a sign-in (`/mcp login`, `knightcode mcp login`).
    NeedsAuth,
    /// `enabled: false`.
    Disabled,
}

impl ServerState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Disconnected => "disconnected",
            Self::Failed => "failed",
            Self::NeedsAuth => "needs-auth",
            Self::Disabled => "disabled",
        }
    }
}

/// One server as the manager sees it now.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub config: ServerConfig,
    pub state: ServerState,
    /// The tools of its last successful listing.
    pub tools: Vec<ToolInfo>,
    /// It has the `resources` capability (as of its last connection).
    pub resources: bool,
    /// Why it failed or dropped (with the stderr tail of a stdio server).
    pub error: Option<String>,
    /// What the server said about itself when it connected (`instructions`).
    pub instructions: Option<String>,
}

struct Slot {
    config: ServerConfig,
    status: Mutex<SlotStatus>,
    /// Held while connecting, so two callers never start the same server twice.
    connecting: tokio::sync::Mutex<()>,
    /// Taken out of the manager (an extension unregistered it): a connection that completes
    /// afterwards is stopped, not kept.
    removed: std::sync::atomic::AtomicBool,
    /// Its background connection was started (by `add`, or by `start` for the configured
    /// servers); `start` skips it then, so no server is started twice.
    spawned: std::sync::atomic::AtomicBool,
}

struct SlotStatus {
    state: ServerState,
    connection: Option<Arc<Connection>>,
    tools: Vec<ToolInfo>,
    resources: bool,
    error: Option<String>,
    instructions: Option<String>,
    /// The server's `mcp-auth.json` entry when it last connected (to notice a sign-in made
    /// by another process).
    auth_seen: Option<String>,
}

/// The session's MCP servers.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

struct Inner {
    options: ConnectOptions,
    /// The files' servers, then the extensions' (added and removed during the session).
    slots: Mutex<Vec<Arc<Slot>>>,
    changes: Arc<tokio::sync::watch::Sender<u64>>,
    /// [`McpManager::start`] was called: servers added from now on connect at once.
    started: std::sync::atomic::AtomicBool,
}

impl McpManager {
    pub fn new(servers: Vec<ServerConfig>, options: ConnectOptions) -> Self {
        let slots = servers
            .into_iter()
            .map(|config| Arc::new(Slot::new(config)))
            .collect();
        let (changes, _) = tokio::sync::watch::channel(0);
        Self {
            inner: Arc::new(Inner {
                options,
                slots: Mutex::new(slots),
                changes: Arc::new(changes),
                started: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// Connects every enabled server not connecting yet, each on its own task; returns at
    /// once. Until then a configured server shows as connecting, and a call connects it.
    pub fn start(&self) {
        self.inner.started.store(true, Ordering::SeqCst);
        for slot in self.inner.slots() {
            self.inner.spawn_connect(&slot);
        }
    }

    /// Adds a server during the session (an extension's `registerMcpServer`, a change made
    /// in `/mcp`) and, once [`Self::start`] was called, starts connecting it when enabled;
    /// one of the same name is stopped and replaced in its place. Returns whether one was
    /// replaced.
    pub fn add(&self, config: ServerConfig) -> bool {
        let slot = Arc::new(Slot::new(config));
        let old = {
            let mut slots = self.inner.lock_slots();
            match slots.iter().position(|s| s.config.name == slot.config.name) {
                // In its place: the servers keep their order.
                Some(i) => Some(std::mem::replace(&mut slots[i], Arc::clone(&slot))),
                None => {
                    slots.push(Arc::clone(&slot));
                    None
                }
            }
        };
        let replaced = old.is_some();
        if let Some(old) = old {
            Slot::retire(old);
        }
        if self.inner.started.load(Ordering::SeqCst) {
            self.inner.spawn_connect(&slot);
        }
        self.inner.changes.send_modify(|n| *n += 1);
        replaced
    }

    /// Takes `server` out (an extension's `unregisterMcpServer`): its connection is
    /// stopped and its tools become unreachable. Whether it was there.
    pub fn remove(&self, server: &str) -> bool {
        let old = {
            let mut slots = self.inner.lock_slots();
            slots
                .iter()
                .position(|s| s.config.name == server)
                .map(|i| slots.remove(i))
        };
        let Some(old) = old else {
            return false;
        };
        Slot::retire(old);
        self.inner.changes.send_modify(|n| *n += 1);
        true
    }

    /// Bumped whenever a server's state or tools change, or a server says its tool list
    /// changed (then [`McpManager::refresh_changed_tools`] lists them again).
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// Waits until no server is connecting, at most `limit`; whether they all settled.
    pub async fn wait_settled(&self, limit: Duration) -> bool {
        let mut changes = self.changes();
        let settled = async {
            loop {
                if !self
                    .statuses()
                    .iter()
                    .any(|s| s.state == ServerState::Connecting)
                {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(limit, settled).await.is_ok()
    }

    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.inner
            .slots()
            .iter()
            .map(|slot| {
                let status = slot.status.lock().unwrap_or_else(PoisonError::into_inner);
                ServerStatus {
                    config: slot.config.clone(),
                    state: status.state,
                    tools: status.tools.clone(),
                    resources: status.resources,
                    error: status.error.clone(),
                    instructions: status.instructions.clone(),
                }
            })
            .collect()
    }

    /// Lists again the tools of servers that said their list changed.
    pub async fn refresh_changed_tools(&self) {
        for slot in self.inner.slots() {
            let connection = slot.status().connection.clone();
            let Some(connection) = connection else {
                continue;
            };
            if !connection.tools_changed.swap(false, Ordering::SeqCst) {
                continue;
            }
            if let Ok(tools) = connection.list_tools(&slot.config.name).await {
                slot.status().tools = tools;
                self.inner.changes.send_modify(|n| *n += 1);
            }
        }
    }

    /// Calls `tool` of `server`: reconnects first when the connection dropped, never retries
    /// the call itself. The server's progress notifications go to `progress` as text.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<CallOutput, McpError> {
        let slot = self.inner.enabled_slot(server)?;
        let live = slot.status().connection.clone().filter(|c| !c.is_closed());
        let connection = match live {
            Some(connection) => connection,
            None => tokio::select! {
                connected = self.inner.connect(&slot) => connected?,
                () = cancel.cancelled() => return Err(McpError::Aborted),
            },
        };
        let answer = connection
            .call(
                server,
                tool,
                arguments,
                slot.config.timeout,
                cancel,
                progress,
            )
            .await;
        match answer {
            Ok(result) => Ok(crate::result::call_output(server, tool, result)),
            Err(error) => {
                if connection.is_closed() || matches!(error, McpError::NeedsAuth { .. }) {
                    self.inner.dropped(&slot, &error);
                }
                Err(error)
            }
        }
    }

    /// The resources of `server` (`resources/list`, every page). Read-only, so a failure is
    /// retried once after [`READ_RETRY`]; a dropped connection is reconnected first.
    pub async fn list_resources(
        &self,
        server: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<Value>, McpError> {
        self.read_only(
            server,
            cancel,
            |c| async move { c.list_resources(server).await },
        )
        .await
    }

    /// The resource templates of `server` (`resources/templates/list`), as
    /// [`McpManager::list_resources`].
    pub async fn list_resource_templates(
        &self,
        server: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<Value>, McpError> {
        self.read_only(server, cancel, |c| async move {
            c.list_resource_templates(server).await
        })
        .await
    }

    /// The `contents` of the resource `uri` of `server` (`resources/read`), as
    /// [`McpManager::list_resources`].
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<Value, McpError> {
        self.read_only(server, cancel, |c| async move {
            c.read_resource(server, uri).await
        })
        .await
    }

    async fn read_only<'a, T, F, Fut>(
        &'a self,
        server: &'a str,
        cancel: &CancellationToken,
        request: F,
    ) -> Result<T, McpError>
    where
        F: Fn(Arc<Connection>) -> Fut,
        Fut: std::future::Future<Output = Result<T, McpError>> + 'a,
    {
        let slot = self.inner.enabled_slot(server)?;
        let mut last = None;
        for attempt in 0..2 {
            if attempt > 0 {
                tokio::select! {
                    () = tokio::time::sleep(READ_RETRY) => {}
                    () = cancel.cancelled() => return Err(McpError::Aborted),
                }
            }
            let live = slot.status().connection.clone().filter(|c| !c.is_closed());
            let connection = match live {
                Some(connection) => connection,
                None => tokio::select! {
                    connected = self.inner.connect(&slot) => match connected {
                        Ok(connection) => connection,
                        Err(error) => { last = Some(error); continue; }
                    },
                    () = cancel.cancelled() => return Err(McpError::Aborted),
                },
            };
            let answer = tokio::select! {
                answer = request(Arc::clone(&connection)) => answer,
                () = cancel.cancelled() => return Err(McpError::Aborted),
            };
            match answer {
                Ok(value) => return Ok(value),
                Err(error) => {
                    if connection.is_closed() || matches!(error, McpError::NeedsAuth { .. }) {
                        self.inner.dropped(&slot, &error);
                    }
                    last = Some(error);
                }
            }
        }
        Err(last.unwrap_or_else(|| McpError::UnknownServer(server.to_owned())))
    }

    /// Closes `server`'s connection, if any, and connects it again (`/mcp reconnect`): a
    /// server restarted, or one whose configuration problem was fixed outside, is taken up
    /// without restarting the session; returns how many tools it listed. A call still
    /// running on the old connection keeps it until it ends.
    pub async fn reconnect(&self, server: &str) -> Result<usize, McpError> {
        let slot = self.inner.enabled_slot(server)?;
        let old = {
            let _connecting = slot.connecting.lock().await;
            slot.status().connection.take()
        };
        if let Some(connection) = old.and_then(|c| Arc::try_unwrap(c).ok()) {
            connection.stop().await;
        }
        let connection = self.inner.connect(&slot).await?;
        Ok(connection.tools.len())
    }

    /// Signs in to `server` with OAuth in the browser (`/mcp login`, `knightcode mcp
    /// login`), storing its tokens in `mcp-auth.json`; the connection is not touched (the
    /// caller reconnects). [`McpError::NotOAuth`] for a server that signs in otherwise.
    pub async fn sign_in(&self, server: &str, person: crate::SignIn) -> Result<(), McpError> {
        let slot = self.inner.any_slot(server)?;
        let store = self.inner.auth_store()?;
        let context = crate::auth::login::SignInContext {
            resolver: self.inner.resolver(),
            http: self.inner.options.http.clone(),
            store,
        };
        crate::auth::login::sign_in(&slot.config, context, person).await
    }

    /// Forgets `server`'s OAuth tokens (`/mcp logout`, `knightcode mcp logout`); whether
    /// there were any. The connection is not touched (the caller reconnects).
    pub fn sign_out(&self, server: &str) -> Result<bool, McpError> {
        let slot = self.inner.any_slot(server)?;
        let store = self.inner.auth_store()?;
        crate::auth::login::sign_out(&slot.config, &store)
    }

    /// Whether `server` signs in with OAuth (an HTTP server without another credential).
    pub fn uses_oauth(&self, server: &str) -> bool {
        self.inner
            .any_slot(server)
            .is_ok_and(|slot| crate::auth::login::oauth_target(&slot.config).is_ok())
    }

    /// Reconnects the servers waiting for a sign-in whose tokens another process stored since
    /// they last tried (`knightcode mcp login` run from a shell, or by the agent through
    /// bash); called at the start of each turn. Returns their names.
    pub async fn pick_up_sign_ins(&self) -> Vec<String> {
        let Some(store) = self.inner.options.auth.clone() else {
            return Vec::new();
        };
        let mut picked = Vec::new();
        for slot in self.inner.slots() {
            let Ok((url, _)) = crate::auth::login::oauth_target(&slot.config) else {
                continue;
            };
            let seen = {
                let status = slot.status();
                if status.state != ServerState::NeedsAuth {
                    continue;
                }
                status.auth_seen.clone()
            };
            if store.entry_text(url) != seen && self.inner.connect(&slot).await.is_ok() {
                picked.push(slot.config.name.clone());
            }
        }
        picked
    }

    /// Stops every server (stdio: stdin closed, SIGTERM, SIGKILL to its group).
    pub async fn stop(&self) {
        for slot in self.inner.slots() {
            slot.stop_connection().await;
        }
    }
}

impl Slot {
    fn new(config: ServerConfig) -> Self {
        let state = if config.enabled {
            ServerState::Connecting
        } else {
            ServerState::Disabled
        };
        Self {
            config,
            status: Mutex::new(SlotStatus {
                state,
                connection: None,
                tools: Vec::new(),
                resources: false,
                error: None,
                instructions: None,
                auth_seen: None,
            }),
            connecting: tokio::sync::Mutex::new(()),
            removed: std::sync::atomic::AtomicBool::new(false),
            spawned: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn status(&self) -> std::sync::MutexGuard<'_, SlotStatus> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops its connection, if any (a call still running on it keeps it until it ends).
    async fn stop_connection(&self) {
        let connection = self.status().connection.take();
        if let Some(connection) = connection.and_then(|c| Arc::try_unwrap(c).ok()) {
            connection.stop().await;
        }
    }

    /// Out of the manager for good: its connection is stopped in the background, after a
    /// connection under way completes (so that one is stopped too, not kept).
    fn retire(slot: Arc<Self>) {
        slot.removed.store(true, Ordering::SeqCst);
        tokio::spawn(async move {
            let _connecting = slot.connecting.lock().await;
            slot.stop_connection().await;
        });
    }
}

impl Inner {
    fn lock_slots(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Slot>>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The servers now (a copy: adding or removing one never waits for a call).
    fn slots(&self) -> Vec<Arc<Slot>> {
        self.lock_slots().clone()
    }

    fn resolver(&self) -> Resolver<'_> {
        Resolver {
            env: &self.options.env,
            home: self.options.home.as_deref(),
            cwd: &self.options.cwd,
        }
    }

    /// A server by name, enabled or not (signing in to a disabled server is allowed).
    fn any_slot(&self, server: &str) -> Result<Arc<Slot>, McpError> {
        self.lock_slots()
            .iter()
            .find(|s| s.config.name == server)
            .cloned()
            .ok_or_else(|| McpError::UnknownServer(server.to_owned()))
    }

    fn auth_store(&self) -> Result<Arc<crate::AuthStore>, McpError> {
        self.options.auth.clone().ok_or_else(|| {
            McpError::Invalid("MCP sign-in needs an agent folder for mcp-auth.json".to_owned())
        })
    }

    fn enabled_slot(&self, server: &str) -> Result<Arc<Slot>, McpError> {
        self.lock_slots()
            .iter()
            .find(|s| s.config.name == server && s.config.enabled)
            .cloned()
            .ok_or_else(|| McpError::UnknownServer(server.to_owned()))
    }

    fn spawn_connect(self: &Arc<Self>, slot: &Arc<Slot>) {
        if slot.config.enabled && !slot.spawned.swap(true, Ordering::SeqCst) {
            let inner = Arc::clone(self);
            let slot = Arc::clone(slot);
            tokio::spawn(async move {
                let _ = inner.connect(&slot).await;
            });
        }
    }

    async fn connect(&self, slot: &Slot) -> Result<Arc<Connection>, McpError> {
        let _connecting = slot.connecting.lock().await;
        if slot.removed.load(Ordering::SeqCst) {
            return Err(McpError::UnknownServer(slot.config.name.clone()));
        }
        if let Some(live) = slot.status().connection.clone().filter(|c| !c.is_closed()) {
            return Ok(live);
        }
        let auth_seen = match (&self.options.auth, &slot.config.transport) {
            (Some(store), crate::Transport::Http { url, .. }) => store.entry_text(url),
            _ => None,
        };
        self.set(slot, |s| {
            s.state = ServerState::Connecting;
            s.auth_seen = auth_seen;
        });
        let context = crate::client::ConnectContext {
            resolver: self.resolver(),
            http: self.options.http.clone(),
            changes: Arc::clone(&self.changes),
            log: self.options.log.clone(),
            store: self.options.auth.clone(),
            provider_token: self.options.provider_token.clone(),
        };
        match crate::client::connect(&slot.config, &context).await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                self.set(slot, |s| {
                    s.state = ServerState::Connected;
                    s.tools = connection.tools.clone();
                    s.resources = connection.offers_resources();
                    s.instructions = connection.instructions();
                    s.error = None;
                    s.connection = Some(Arc::clone(&connection));
                });
                Ok(connection)
            }
            Err(error) => {
                self.note_step_up(slot, &error);
                let state = match error {
                    McpError::NeedsAuth { .. } => ServerState::NeedsAuth,
                    _ => ServerState::Failed,
                };
                self.set(slot, |s| {
                    s.state = state;
                    s.error = Some(error.to_string());
                    s.connection = None;
                });
                Err(error)
            }
        }
    }

    /// The connection dropped, or the server stopped taking its token (then it waits for a
    /// sign-in rather than reconnecting on the next call).
    fn dropped(&self, slot: &Slot, error: &McpError) {
        self.note_step_up(slot, error);
        let state = match error {
            McpError::NeedsAuth { .. } => ServerState::NeedsAuth,
            _ => ServerState::Disconnected,
        };
        self.set(slot, |s| {
            s.state = state;
            s.error = Some(error.to_string());
            s.connection = None;
        });
    }

    /// A server that wants more scope (403 `insufficient_scope`): the scope goes into
    /// `mcp-auth.json` for the next sign-in, this session's or a shell's, and the entry as it
    /// now stands counts as seen (noting the scope is not a sign-in to pick up).
    fn note_step_up(&self, slot: &Slot, error: &McpError) {
        let McpError::NeedsAuth {
            step_up: Some(scope),
            ..
        } = error
        else {
            return;
        };
        let (Some(store), Ok((url, _))) = (
            &self.options.auth,
            crate::auth::login::oauth_target(&slot.config),
        ) else {
            return;
        };
        if store.want_scope(url, scope).is_ok() {
            slot.status().auth_seen = store.entry_text(url);
        }
    }

    fn set(&self, slot: &Slot, change: impl FnOnce(&mut SlotStatus)) {
        change(&mut slot.status());
        self.changes.send_modify(|n| *n += 1);
    }
}
