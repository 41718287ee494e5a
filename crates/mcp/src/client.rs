//! One connection to one server over `rmcp`: starting it (a child process in its own process
//! group, or streamable HTTP), `initialize` at protocol 2025-11-25 with the session's folder
//! as the one root, the paginated tool list, calls, and stopping it.

// rmcp marks roots deprecated (SEP-2577, protocol 2026-07-28); at 2025-11-25, the version
// spoken here, they are current and servers (server-filesystem) rely on them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::ServiceExt as _;
use rmcp::model::ClientRequest;
use rmcp::model::ListRootsResult;
use rmcp::model::ProtocolVersion;
use rmcp::model::Root;
use rmcp::model::ServerResult;
use rmcp::service::NotificationContext;
use rmcp::service::PeerRequestOptions;
use rmcp::service::RequestContext;
use rmcp::service::RunningService;
use serde_json::Value;
use tokio::io::AsyncReadExt as _;
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::config::Transport;
use crate::error::McpError;
use crate::interpolate::Resolver;
use crate::resource_cache::ResourceCache;
use crate::resource_cache::ResourceList;

/// How much of a stdio server's stderr errors quote.
const STDERR_TAIL: usize = 2_000;
/// How long a failed connection waits for the rest of the server's stderr before quoting it.
const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// A tool a server offers, as it described it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// An object schema (`type: object` and `properties` added when missing).
    pub input_schema: Value,
    /// `annotations` as sent (`readOnlyHint`, `destructiveHint`, …).
    pub annotations: Option<Value>,
}

/// The last characters a server wrote to stderr.
#[derive(Clone, Default)]
pub(crate) struct StderrTail {
    text: Arc<Mutex<String>>,
    done: Arc<tokio::sync::Notify>,
    finished: Arc<AtomicBool>,
}

impl StderrTail {
    pub fn text(&self) -> String {
        self.text
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn push(&self, chunk: &str) {
        let mut text = self.text.lock().unwrap_or_else(PoisonError::into_inner);
        text.push_str(chunk);
        let chars = text.chars().count();
        if chars > STDERR_TAIL {
            let cut = text
                .char_indices()
                .nth(chars - STDERR_TAIL)
                .map_or(0, |(i, _)| i);
            text.drain(..cut);
        }
    }

    fn finish(&self) {
        self.finished.store(true, Ordering::SeqCst);
        self.done.notify_waiters();
    }

    /// Waits (at most [`STDERR_DRAIN`]) until the pipe closed, so a crash's last words are in.
    async fn drained(&self) {
        let wait = async {
            loop {
                let notified = self.done.notified();
                if self.finished.load(Ordering::SeqCst) {
                    return;
                }
                notified.await;
            }
        };
        let _ = tokio::time::timeout(STDERR_DRAIN, wait).await;
    }
}

/// Receives a call's progress as text (`Progress 2/5`, or the server's message).
pub type ProgressSink = Arc<dyn Fn(String) + Send + Sync>;

/// The progress sinks of the calls in flight, by progress token (as JSON).
type ProgressSinks = Arc<Mutex<HashMap<String, ProgressSink>>>;

/// Answers the server: `roots/list` with the session's folder; notes `tools/list_changed`
/// and `resources/list_changed`; passes progress to the call it belongs to.
#[derive(Clone)]
pub(crate) struct Handler {
    roots: Vec<Root>,
    pub tools_changed: Arc<AtomicBool>,
    resources: Arc<ResourceCache>,
    progress: ProgressSinks,
    /// Told when the tool list changed, so waiters look again.
    changes: Arc<tokio::sync::watch::Sender<u64>>,
    /// Where the server's log messages go (`mcp.log`), with the server's name.
    log: Option<(Arc<crate::ServerLog>, String)>,
}

impl ClientHandler for Handler {
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        Ok(ListRootsResult::new(self.roots.clone()))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
        self.changes.send_modify(|n| *n += 1);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.resources.invalidate();
        self.changes.send_modify(|n| *n += 1);
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let key = serde_json::to_string(&params.progress_token).unwrap_or_default();
        let sink = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        if let Some(sink) = sink {
            let text = match (params.message, params.total) {
                (Some(message), _) => message,
                (None, Some(total)) => format!("Progress {}/{total}", params.progress),
                (None, None) => format!("Progress {}", params.progress),
            };
            sink(text);
        }
    }

    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some((log, server)) = &self.log {
            let level = serde_json::to_value(params.level).unwrap_or_default();
            let level = level.as_str().unwrap_or("info");
            log.write(server, level, params.logger.as_deref(), &params.data);
        }
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let capabilities =
            serde_json::from_value(serde_json::json!({"roots": {}})).unwrap_or_default();
        let client = rmcp::model::Implementation::new("knightcode", env!("CARGO_PKG_VERSION"));
        // 2025-11-25 is the newest version that still has `initialize`; servers on the older
        // ones negotiate down.
        rmcp::model::ClientConfig::new(capabilities, client)
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// A live connection.
pub(crate) struct Connection {
    service: RunningService<RoleClient, Handler>,
    pub stderr: StderrTail,
    pub tools: Vec<ToolInfo>,
    pub tools_changed: Arc<AtomicBool>,
    resources: Arc<ResourceCache>,
    progress: ProgressSinks,
}

/// Removes a call's progress sink when the call ends, however it ends.
struct ProgressGuard {
    sinks: ProgressSinks,
    key: String,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.sinks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

/// What connecting needs besides the server's entry.
pub(crate) struct ConnectContext<'a> {
    pub resolver: Resolver<'a>,
    pub http: Option<reqwest::Client>,
    /// The manager's change counter.
    pub changes: Arc<tokio::sync::watch::Sender<u64>>,
    pub log: Option<Arc<crate::ServerLog>>,
    /// Where OAuth tokens are kept; `None`: none are sent.
    pub store: Option<Arc<crate::auth::store::AuthStore>>,
    /// A KnightCode provider's token, for `auth.provider`.
    pub provider_token: Option<crate::ProviderToken>,
}

pub(crate) async fn connect(
    server: &ServerConfig,
    context: &ConnectContext<'_>,
) -> Result<Connection, McpError> {
    let stderr = StderrTail::default();
    let tools_changed = Arc::new(AtomicBool::new(false));
    let progress = ProgressSinks::default();
    let resources = Arc::new(ResourceCache::default());
    let handler = Handler {
        roots: vec![root(context.resolver.cwd)],
        tools_changed: Arc::clone(&tools_changed),
        resources: Arc::clone(&resources),
        progress: Arc::clone(&progress),
        changes: Arc::clone(&context.changes),
        log: context
            .log
            .as_ref()
            .map(|log| (Arc::clone(log), server.name.clone())),
    };
    let fail = |reason: String, stderr: &StderrTail| McpError::Connect {
        server: server.name.clone(),
        reason,
        stderr: stderr.text(),
    };
    let started = match &server.transport {
        Transport::Stdio { .. } => {
            let transport = spawn(server, context, &stderr).await?;
            bounded(server, handler.serve(transport))
                .await
                .map_err(Started::Failed)
        }
        Transport::Http {
            url,
            headers,
            auth_provider,
            ..
        } => {
            let Some(http) = context.http.clone() else {
                return Err(fail("no HTTP client is available".to_owned(), &stderr));
            };
            let config = http_config(server, context, url, headers).await?;
            if let Some(provider) = auth_provider {
                let token = match &context.provider_token {
                    Some(token) => token(provider.clone()).await,
                    None => None,
                };
                let Some(token) = token else {
                    return Err(McpError::NeedsAuth {
                        server: server.name.clone(),
                        provider: Some(provider.clone()),
                        step_up: None,
                    });
                };
                let mut config = config;
                config.auth_header = Some(token);
                serve_http(server, &handler, http, config).await
            } else if let (None, Some(store)) = (&config.auth_header, &context.store) {
                let client = crate::auth::oauth_client(url, store, http)
                    .await
                    .map_err(|reason| fail(reason, &stderr))?;
                serve_http(server, &handler, client, config).await
            } else {
                serve_http(server, &handler, http, config).await
            }
        }
    };
    let service = match started {
        Ok(service) => service,
        Err(Started::NeedsAuth { step_up }) => {
            return Err(McpError::NeedsAuth {
                server: server.name.clone(),
                provider: None,
                step_up,
            });
        }
        Err(Started::Failed(reason)) => {
            stderr.drained().await;
            return Err(fail(reason, &stderr));
        }
    };
    let mut connection = Connection {
        service,
        stderr,
        tools: Vec::new(),
        tools_changed,
        resources,
        progress,
    };
    connection.tools = connection.list_tools(&server.name).await?;
    Ok(connection)
}

/// How long an HTTP server's connection waits before each retry after a transient failure.
const HTTP_CONNECT_RETRIES: [Duration; 2] = [Duration::from_millis(250), Duration::from_secs(1)];

async fn bounded<F, E>(
    server: &ServerConfig,
    start: F,
) -> Result<RunningService<RoleClient, Handler>, String>
where
    F: std::future::Future<Output = Result<RunningService<RoleClient, Handler>, E>>,
    E: std::fmt::Display,
{
    initialized(server, tokio::time::timeout(server.timeout, start).await)
}

/// The outcome of `initialize` within the server's timeout.
fn initialized<E: std::fmt::Display>(
    server: &ServerConfig,
    answer: Result<Result<RunningService<RoleClient, Handler>, E>, tokio::time::error::Elapsed>,
) -> Result<RunningService<RoleClient, Handler>, String> {
    match answer {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "no answer to initialize within {} s",
            server.timeout.as_secs_f64()
        )),
    }
}

/// Whether an HTTP server's failure to initialize may pass: 408, 429 and 5xx except 501
/// (not implemented stays so), or no connection at all (a server still starting).
fn is_transient(error: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match http_error(error) {
        Some(StreamableHttpError::HttpStatus(status)) => {
            matches!(status.status, 408 | 429)
                || (500..600).contains(&status.status) && status.status != 501
        }
        Some(StreamableHttpError::UnexpectedServerResponse(text)) => text.starts_with("HTTP 408 "),
        Some(StreamableHttpError::Client(error)) => error.is_connect() || error.is_timeout(),
        _ => false,
    }
}

fn root(cwd: &Path) -> Root {
    let mut root = Root::new(format!("file://{}", cwd.display()));
    root.name = cwd.file_name().map(|n| n.to_string_lossy().into_owned());
    root
}

async fn spawn(
    server: &ServerConfig,
    context: &ConnectContext<'_>,
    tail: &StderrTail,
) -> Result<rmcp::transport::TokioChildProcess, McpError> {
    let Transport::Stdio {
        command,
        args,
        env,
        cwd,
    } = &server.transport
    else {
        return Err(McpError::UnknownServer(server.name.clone()));
    };
    let resolver = &context.resolver;
    let mut cmd = tokio::process::Command::new(resolver.home_path(command));
    cmd.args(args.iter().map(|a| resolver.home_path(a)));
    for (key, value) in env {
        cmd.env(key, resolver.value(&server.name, key, value).await?);
    }
    cmd.current_dir(match cwd {
        Some(dir) => resolver.dir(dir),
        None => resolver.cwd.to_path_buf(),
    });
    let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
    // Its own group: stopping it reaches whatever it started (npx, shells, workers).
    wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(wrapped)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| McpError::Connect {
            server: server.name.clone(),
            reason: format!("cannot start {command}: {e}"),
            stderr: String::new(),
        })?;
    match stderr {
        Some(mut stderr) => {
            let tail = tail.clone();
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 4096];
                while let Ok(n) = stderr.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    tail.push(&String::from_utf8_lossy(&buffer[..n]));
                }
                tail.finish();
            });
        }
        None => tail.finish(),
    }
    Ok(transport)
}

/// Why a connection did not start.
enum Started {
    /// The server answered 401 (or 403 `insufficient_scope`, with the scope it wants): it
    /// wants a sign-in.
    NeedsAuth {
        step_up: Option<String>,
    },
    Failed(String),
}

/// Connects over streamable HTTP through `client` (plain, or rmcp's OAuth client that adds
/// the stored token and refreshes it). A server that is starting or overloaded answers 408,
/// 429 or 5xx (or does not answer yet): it is tried again after a short wait, twice.
async fn serve_http<C>(
    server: &ServerConfig,
    handler: &Handler,
    client: C,
    config: rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig,
) -> Result<RunningService<RoleClient, Handler>, Started>
where
    C: rmcp::transport::streamable_http_client::StreamableHttpClient<Error = reqwest::Error>
        + Clone
        + Send
        + Sync
        + 'static,
{
    let mut waits = HTTP_CONNECT_RETRIES.iter();
    loop {
        let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
            client.clone(),
            config.clone(),
        );
        match tokio::time::timeout(server.timeout, handler.clone().serve(transport)).await {
            Ok(Err(error)) if wants_sign_in(&error) => {
                let step_up = error
                    .auth_challenge()
                    .and_then(crate::auth::insufficient_scope);
                break Err(Started::NeedsAuth { step_up });
            }
            Ok(Err(error)) if is_transient(&error) => match waits.next() {
                Some(wait) => tokio::time::sleep(*wait).await,
                None => break Err(Started::Failed(error.to_string())),
            },
            answer => break initialized(server, answer).map_err(Started::Failed),
        }
    }
}

/// The HTTP error inside a failed `initialize`, if that is what failed.
fn http_error(
    error: &rmcp::service::ClientInitializeError,
) -> Option<&rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>> {
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = error else {
        return None;
    };
    error.error.downcast_ref()
}

/// Whether the server refused for want of a (valid, wide enough) token.
fn wants_sign_in(error: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::transport::auth::AuthError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match http_error(error) {
        Some(StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_)) => {
            true
        }
        Some(StreamableHttpError::HttpStatus(status)) => status.status == 401,
        Some(StreamableHttpError::Auth(AuthError::AuthorizationRequired)) => true,
        _ => false,
    }
}

/// The request settings of an HTTP server: its headers (values resolved), an
/// `Authorization` header as the bearer token rmcp sends itself.
async fn http_config(
    server: &ServerConfig,
    context: &ConnectContext<'_>,
    url: &str,
    headers: &[(String, String)],
) -> Result<rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig, McpError>
{
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    for (key, value) in headers {
        let value = context.resolver.value(&server.name, key, value).await?;
        let invalid = |what: &str| McpError::Value {
            server: server.name.clone(),
            reason: format!("header {key:?} has an invalid {what}"),
        };
        if key.eq_ignore_ascii_case("authorization") {
            // rmcp sends the token itself (`bearer_auth`).
            let token = value.strip_prefix("Bearer ").unwrap_or(&value);
            config.auth_header = Some(token.to_owned());
            continue;
        }
        let name = http::HeaderName::from_bytes(key.as_bytes()).map_err(|_| invalid("name"))?;
        let value = http::HeaderValue::from_str(&value).map_err(|_| invalid("value"))?;
        config.custom_headers.insert(name, value);
    }
    Ok(config)
}

impl Connection {
    /// The `instructions` of the server's initialize answer.
    pub fn instructions(&self) -> Option<String> {
        self.service
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .filter(|text| !text.trim().is_empty())
    }

    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// Every page of `tools/list` (none asked of a server without the `tools` capability).
    pub async fn list_tools(&self, server: &str) -> Result<Vec<ToolInfo>, McpError> {
        let offers_tools = self
            .service
            .peer_info()
            .is_none_or(|info| info.capabilities.tools.is_some());
        if !offers_tools {
            return Ok(Vec::new());
        }
        let tools = self
            .service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| self.request_error(server, &e))?;
        Ok(tools.into_iter().map(tool_info).collect())
    }

    /// `tools/call`, bounded by `timeout` (renewed by progress, which also goes to
    /// `progress`), cancelled on `cancel`.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<Value, McpError> {
        let mut params = rmcp::model::CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(params));
        let mut options = PeerRequestOptions::with_timeout(timeout);
        options.reset_timeout_on_progress = true;
        let peer = self.service.peer().clone();
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.request_error(server, &e))?;
        let id = handle.id.clone();
        let _progress = progress.map(|sink| {
            let key = serde_json::to_string(&handle.progress_token).unwrap_or_default();
            self.progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key.clone(), sink);
            ProgressGuard {
                sinks: Arc::clone(&self.progress),
                key,
            }
        });
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            () = cancel.cancelled() => {
                let params = serde_json::from_value(serde_json::json!({
                    "requestId": id,
                    "reason": "aborted by the user",
                }));
                if let Ok(params) = params {
                    let _ = peer.notify_cancelled(params).await;
                }
                return Err(McpError::Aborted);
            }
        };
        match answer {
            Ok(ServerResult::CallToolResult(result)) => {
                serde_json::to_value(result).map_err(|e| McpError::Request {
                    server: server.to_owned(),
                    reason: e.to_string(),
                    stderr: String::new(),
                })
            }
            Ok(_) => Err(McpError::Request {
                server: server.to_owned(),
                reason: format!("{tool} answered with something other than a tool result"),
                stderr: String::new(),
            }),
            Err(rmcp::ServiceError::Timeout { timeout }) => Err(McpError::Timeout {
                server: server.to_owned(),
                tool: tool.to_owned(),
                seconds: timeout.as_secs_f64(),
            }),
            Err(e) => {
                if self.is_closed() {
                    self.stderr.drained().await;
                }
                Err(self.request_error(server, &e))
            }
        }
    }

    /// Whether the server has the `resources` capability.
    pub fn offers_resources(&self) -> bool {
        self.service
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some())
    }

    /// Whether the server announces changes to its resources (`resources.listChanged`), so
    /// its lists can be kept until it does.
    fn announces_resource_changes(&self) -> bool {
        self.service.peer_info().is_some_and(|info| {
            info.capabilities
                .resources
                .as_ref()
                .is_some_and(|r| r.list_changed == Some(true))
        })
    }

    /// Every page of `resources/list`, as the server described each resource.
    pub async fn list_resources(&self, server: &str) -> Result<Vec<Value>, McpError> {
        self.kept(ResourceList::Resources, async {
            let resources = self
                .service
                .peer()
                .list_all_resources()
                .await
                .map_err(|e| self.request_error(server, &e))?;
            Ok(resources
                .into_iter()
                .filter_map(|r| serde_json::to_value(r).ok())
                .collect())
        })
        .await
    }

    /// Every page of `resources/templates/list`; a server without the method has none.
    pub async fn list_resource_templates(&self, server: &str) -> Result<Vec<Value>, McpError> {
        self.kept(ResourceList::Templates, async {
            match self.service.peer().list_all_resource_templates().await {
                Ok(templates) => Ok(templates
                    .into_iter()
                    .filter_map(|t| serde_json::to_value(t).ok())
                    .collect()),
                Err(rmcp::ServiceError::McpError(error))
                    if error.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
                {
                    Ok(Vec::new())
                }
                Err(e) => Err(self.request_error(server, &e)),
            }
        })
        .await
    }

    /// The kept `list`, or `listing`'s answer (kept when the server announces changes).
    async fn kept(
        &self,
        list: ResourceList,
        listing: impl std::future::Future<Output = Result<Vec<Value>, McpError>>,
    ) -> Result<Vec<Value>, McpError> {
        if !self.announces_resource_changes() {
            return listing.await;
        }
        let (kept, generation) = self.resources.get(list);
        if let Some(items) = kept {
            return Ok(items);
        }
        let items = listing.await?;
        self.resources.put(list, generation, items.clone());
        Ok(items)
    }

    /// `resources/read`: the result's `contents`.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, McpError> {
        let result = self
            .service
            .peer()
            .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| self.request_error(server, &e))?;
        Ok(serde_json::to_value(result.contents).unwrap_or(Value::Null))
    }

    fn request_error(&self, server: &str, error: &rmcp::ServiceError) -> McpError {
        // The token was revoked or expired for good (its refresh refused), or the server
        // wants more scopes: a sign-in is needed again.
        if error.is_authorization_required() || error.auth_challenge().is_some() {
            return McpError::NeedsAuth {
                server: server.to_owned(),
                provider: None,
                step_up: error
                    .auth_challenge()
                    .and_then(crate::auth::insufficient_scope),
            };
        }
        match error {
            rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
                McpError::Closed {
                    server: server.to_owned(),
                    stderr: self.stderr.text(),
                }
            }
            other => McpError::Request {
                server: server.to_owned(),
                reason: other.to_string(),
                stderr: String::new(),
            },
        }
    }

    /// Closes stdin, then SIGTERM, then SIGKILL to the process group (rmcp's shutdown with
    /// the group wrapper); for HTTP, ends the session.
    pub async fn stop(mut self) {
        let _ = self.service.close().await;
    }
}

fn tool_info(tool: rmcp::model::Tool) -> ToolInfo {
    let mut schema = Value::Object((*tool.input_schema).clone());
    if let Some(map) = schema.as_object_mut() {
        map.entry("type").or_insert_with(|| Value::from("object"));
        map.entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    ToolInfo {
        name: tool.name.into_owned(),
        title: tool.title,
        description: tool.description.map(std::borrow::Cow::into_owned),
        input_schema: schema,
        annotations: tool.annotations.and_then(|a| serde_json::to_value(a).ok()),
    }
}
