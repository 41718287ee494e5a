//! `ExtensionHost`: the extensions of one session, loaded into the process's JS runtime,
//! and what the session asks of them (events, tools, commands). The JS runtime starts only
//! when a host is loaded, so a session without extensions never starts it.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_agent::EventSender;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use serde::Deserialize;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::error::CallError;
use crate::error::ExtError;
use crate::ops::Ops;
use crate::session_op::SessionPort;

/// How the host runs: which extensions, where, and in which mode.
#[derive(Debug, Clone, Default)]
pub struct HostConfig {
    /// Entry files, in load order (see [`crate::discover`]).
    pub paths: Vec<PathBuf>,
    pub cwd: PathBuf,
    /// `ctx.mode`: `print`, `json`, `rpc` or `tui`.
    pub mode: String,
    /// Values of CLI flags no built-in option claimed (`--name` / `--name value`).
    pub flags: serde_json::Map<String, Value>,
    /// The JS heap limit in bytes (`None`: 2 GiB). Past it the allocating call throws
    /// `InternalError: out of memory`, reported like any other exception.
    pub memory_limit: Option<usize>,
}

/// A tool an extension registered, as the session declares it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    pub label: String,
    pub description: String,
    pub parameters: Value,
    #[serde(default)]
    pub prompt_snippet: Option<String>,
    #[serde(default)]
    pub prompt_guidelines: Vec<String>,
    #[serde(default)]
    pub execution_mode: String,
    pub extension_path: String,
    /// `direct` (the default), `model-only`, `codemode`, `deferred` or `hidden`.
    #[serde(default)]
    pub exposure: Option<String>,
    #[serde(default)]
    pub default_active: Option<bool>,
    /// `constrainedSampling` as registered (`false` or a config), kept as JSON: a value the
    /// protocol cannot read is dropped when the tool is made, not the whole registration.
    #[serde(default)]
    pub constrained_sampling: Option<Value>,
    /// `outputSchema`: the JSON schema of the results' `structuredContent`, which scripts
    /// get instead of the text.
    #[serde(default)]
    pub output_schema: Option<Value>,
    /// The tool has a `prepareLoadout` hook.
    #[serde(default)]
    pub prepare_loadout: bool,
}

/// Which tool calls and custom messages extensions' renderers may draw, so the terminal
/// asks only for those.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RendererSpec {
    /// Tools with `renderCall`/`renderResult`/`renderShell` of their own.
    #[serde(default)]
    pub tools: Vec<String>,
    /// A `registerToolRenderer` resolver exists: any tool may be drawn.
    #[serde(default)]
    pub resolvers: bool,
    /// Custom types with a `registerMessageRenderer`.
    #[serde(default)]
    pub messages: Vec<String>,
    /// Custom types with a `registerEntryRenderer`.
    #[serde(default)]
    pub entries: Vec<String>,
    /// Some extension registered a markdown transformer (`registerMarkdownTransformer`).
    #[serde(default)]
    pub markdown: bool,
}

impl RendererSpec {
    pub fn draws_tool(&self, name: &str) -> bool {
        self.resolvers || self.tools.iter().any(|t| t == name)
    }

    pub fn draws_message(&self, custom_type: &str) -> bool {
        self.messages.iter().any(|t| t == custom_type)
    }

    pub fn draws_entry(&self, custom_type: &str) -> bool {
        self.entries.iter().any(|t| t == custom_type)
    }
}

/// A keyboard shortcut an extension registered: the key id as written (`ctrl+shift+p`).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ShortcutSpec {
    pub shortcut: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub extension_path: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CommandSpec {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The file of the extension that registered it.
    #[serde(default)]
    pub extension_path: String,
}

/// A provider an extension registered (`pi.registerProvider(name, config)`): the config's
/// JSON parts (`streamSimple: true` and `oauth: {name}` mark the functions JS keeps).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSpec {
    pub name: String,
    pub config: serde_json::Map<String, Value>,
    #[serde(default)]
    pub extension_path: String,
}

/// A virtual model an extension registered (`pi.registerVirtualModel(def)`): its catalog
/// entry (`api` "knightcode-virtual"); `route` stays in JS.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct VirtualModelSpec {
    pub model: knightcode_ai::Model,
    #[serde(default)]
    pub extension_path: String,
}

/// An MCP server an extension registered for the session (`pi.registerMcpServer(name,
/// config)`): the config is an `mcp.json` entry, already checked when it was registered.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McpServerSpec {
    pub name: String,
    pub config: Value,
    pub extension_path: String,
}

/// A CLI flag an extension declared (`registerFlag`).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct FlagSpec {
    pub name: String,
    /// Its `type`: a string flag takes the argument after it.
    #[serde(rename = "type", default)]
    pub kind: FlagKind,
}

/// The `type` of a flag an extension declared.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FlagKind {
    #[default]
    Boolean,
    String,
    /// A type the API does not define (read as a boolean, as `getFlag` reads it).
    #[serde(other)]
    Other,
}

/// What the extensions registered so far.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Registry {
    pub tools: Vec<ToolSpec>,
    pub commands: Vec<CommandSpec>,
    #[serde(default)]
    pub providers: Vec<ProviderSpec>,
    #[serde(default, rename = "virtualModels")]
    pub virtual_models: Vec<VirtualModelSpec>,
    #[serde(default, rename = "mcpServers")]
    pub mcp_servers: Vec<McpServerSpec>,
    /// APIs implemented in JS (`streamSimple` of a provider, `registerApiProvider`).
    #[serde(default)]
    pub apis: Vec<String>,
    #[serde(default)]
    pub flags: Vec<FlagSpec>,
    /// Keyboard shortcuts (`registerShortcut`), for the terminal.
    #[serde(default)]
    pub shortcuts: Vec<ShortcutSpec>,
    /// What extensions draw in the terminal (tool and message renderers).
    #[serde(default)]
    pub renderers: RendererSpec,
    /// Events at least one handler listens to.
    pub events: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct LoadFailure {
    path: String,
    message: String,
}

#[derive(Debug, Deserialize)]
struct Loaded {
    errors: Vec<LoadFailure>,
    #[serde(default)]
    diagnostics: Vec<String>,
    registry: Registry,
}

/// A handler failure (`ExtensionError`): reported as an `extension_error` event.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HandlerError {
    pub extension_path: String,
    pub event: String,
    pub error: String,
    #[serde(default)]
    pub stack: Option<String>,
}

/// The extensions of a session.
pub struct ExtensionHost {
    pub(crate) engine: Engine,
    pub(crate) ops: Arc<Ops>,
    registry: Mutex<Registry>,
    events: Mutex<Option<EventSender>>,
    diagnostics: Mutex<Vec<String>>,
    /// How it was started, for the files a second pass adds.
    config: HostConfig,
}

impl std::fmt::Debug for ExtensionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHost").finish_non_exhaustive()
    }
}

impl ExtensionHost {
    /// Starts the JS runtime and runs every extension's factory, in order. The first
    /// extension that fails to load fails the whole start (the CLI exits 1, as the
    /// reference does).
    ///
    /// Files load through the load cache the environment names (`KNIGHTCODE_EXT_CACHE=0`
    /// turns it off; see `cache.rs`).
    pub async fn load(config: HostConfig) -> Result<Arc<Self>, ExtError> {
        Self::load_with_cache(config, crate::cache::dir_from_env()).await
    }

    /// [`ExtensionHost::load`] with the load cache in `cache_dir` (`None`: no cache).
    pub async fn load_with_cache(
        config: HostConfig,
        cache_dir: Option<PathBuf>,
    ) -> Result<Arc<Self>, ExtError> {
        let ops = Arc::new(Ops::with_cache(crate::cache::Cache::new(cache_dir)));
        *ops.providers
            .main
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = tokio::runtime::Handle::try_current().ok();
        let engine = Engine::start(Arc::clone(&ops), config.memory_limit)?;
        *ops.providers
            .engine
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(engine.downgrade());
        let loaded = run_factories(&engine, &config, &config.paths).await?;
        Ok(Arc::new(Self {
            engine,
            ops,
            registry: Mutex::new(loaded.registry),
            events: Mutex::new(None),
            diagnostics: Mutex::new(loaded.diagnostics),
            config,
        }))
    }

    /// Loads more extensions into the same runtime (the project's, after the first pass
    /// decided the project's trust); as with [`ExtensionHost::load`], the first failure
    /// fails it.
    pub async fn load_more(&self, paths: &[PathBuf]) -> Result<(), ExtError> {
        if paths.is_empty() {
            return Ok(());
        }
        let loaded = run_factories(&self.engine, &self.config, paths).await?;
        *self.registry.lock().unwrap_or_else(PoisonError::into_inner) = loaded.registry;
        let mut diagnostics = self
            .diagnostics
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for notice in loaded.diagnostics {
            if !diagnostics.contains(&notice) {
                diagnostics.push(notice);
            }
        }
        Ok(())
    }

    /// Conflicts and other notices from loading (`Tool "x" conflicts with …`).
    pub fn diagnostics(&self) -> Vec<String> {
        self.diagnostics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Connects the host to its session: the actions extensions call, and where
    /// `extension_error` events go.
    pub fn bind(&self, port: Arc<dyn SessionPort>, events: EventSender) {
        self.ops.bind(port);
        // Errors outside any call (unhandled rejections, throwing timers) arrive on a
        // channel and leave as `extension_error` events in the order they happened.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (sink, mut arriving) = tokio::sync::mpsc::unbounded_channel::<Vec<Value>>();
            let reporting = events.clone();
            runtime.spawn(async move {
                while let Some(errors) = arriving.recv().await {
                    let errors: Vec<HandlerError> = errors
                        .into_iter()
                        .filter_map(|e| serde_json::from_value(e).ok())
                        .collect();
                    report_to(Some(&reporting), errors).await;
                }
            });
            self.ops.report_uncaught_to(sink);
        }
        *self.events.lock().unwrap_or_else(PoisonError::into_inner) = Some(events);
    }

    /// Where `ctx.modelRegistry`, `getModels` and JS calls of our providers get models,
    /// credentials and the provider from.
    pub fn bind_models(&self, port: Arc<dyn crate::ModelPort>) {
        self.ops.providers.bind_port(port);
    }

    /// A provider for each API an extension implements in JS (`streamSimple`), for the
    /// session's [`knightcode_ai::ApiRouter`].
    pub fn custom_apis(&self) -> Vec<Arc<crate::JsApiProvider>> {
        let apis = self.registry().apis;
        apis.into_iter().map(|api| self.api_provider(api)).collect()
    }

    /// The provider of one API implemented in JS (also one registered after loading).
    pub fn api_provider(&self, api: impl Into<String>) -> Arc<crate::JsApiProvider> {
        Arc::new(crate::JsApiProvider::new(
            api.into(),
            self.engine.clone(),
            Arc::clone(&self.ops.providers),
        ))
    }

    /// Asks the `route()` of a virtual model which model answers a request; `request` is
    /// `{provider, id, thinkingLevel, reason, failed?, systemPrompt?, previous?}` and the
    /// answer `{model, thinkingLevel}`. `messages` (the request's, shared) are what JS
    /// converts if the router reads `request.messages`, kept only while the call runs. A
    /// throwing `route` is the error.
    pub async fn route_virtual(
        &self,
        mut request: Value,
        messages: Vec<Arc<AgentMessage>>,
    ) -> Result<Value, CallError> {
        let held = self.ops.routes.hold(messages);
        if let Some(fields) = request.as_object_mut() {
            fields.insert("routeId".to_owned(), Value::from(held.id));
        }
        let answer = self.engine.call("routeVirtual", &request).await;
        drop(held);
        answer
    }

    /// Gives the CLI flag `name` the value `value` from now on (`getFlag`).
    pub async fn set_flag(&self, name: &str, value: Value) -> Result<(), CallError> {
        self.engine
            .call("setFlag", &json!({ "name": name, "value": value }))
            .await
            .map(|_| ())
    }

    /// How many `route()` calls' conversations the host keeps now (each only while its
    /// call runs).
    pub fn routes_in_flight(&self) -> usize {
        self.ops.routes.len()
    }

    /// Draws tool calls with extensions' renderers for the HTML export: `request` is
    /// `{tools: [{toolCallId, toolName, args, result?}], width}`, the answer
    /// `{<toolCallId>: {call?, collapsed?, expanded?}}` as terminal lines.
    pub async fn export_tool_renders(&self, request: &Value) -> Result<Value, CallError> {
        self.engine.call("exportRenderTools", request).await
    }

    /// Sends `method` to the JS side without waiting (terminal input and size for
    /// extensions' components): no reply, and nothing waits if JS is busy.
    pub fn post(&self, method: &str, payload: &Value) {
        self.engine.post(method, payload);
    }

    /// Stops the extension JS running now (a user abort reached a handler stuck in a
    /// synchronous loop).
    pub fn interrupt(&self) {
        self.engine.interrupt();
    }

    pub fn registry(&self) -> Registry {
        self.registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The renderers part of the registry alone (asked on every tool event).
    pub fn renderers(&self) -> RendererSpec {
        self.registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .renderers
            .clone()
    }

    /// Reads the registrations again (tools registered in `session_start`).
    pub async fn refresh(&self) {
        if let Ok(value) = self.engine.call("registry", &Value::Null).await
            && let Ok(registry) = serde_json::from_value::<Registry>(value)
        {
            *self.registry.lock().unwrap_or_else(PoisonError::into_inner) = registry;
        }
    }

    /// Tears the extensions' runtime down and runs their factories again on fresh API
    /// objects (session replacement, `reload` also imports the modules afresh): every API
    /// object and `ctx` of before is stale from now on. Load failures are reported as
    /// `extension_error` events; the extensions that loaded stay.
    pub async fn restart(&self, reload: bool) {
        let reply = self
            .engine
            .call("restart", &json!({ "reload": reload }))
            .await
            .and_then(|value| {
                serde_json::from_value::<Loaded>(value)
                    .map_err(|e| CallError::Malformed(e.to_string()))
            });
        match reply {
            Ok(loaded) => {
                *self.registry.lock().unwrap_or_else(PoisonError::into_inner) = loaded.registry;
                let errors = loaded
                    .errors
                    .into_iter()
                    .map(|failure| HandlerError {
                        extension_path: failure.path,
                        event: "load".to_owned(),
                        error: failure.message,
                        stack: None,
                    })
                    .collect();
                self.report(errors).await;
            }
            Err(message) => {
                self.report(vec![HandlerError {
                    extension_path: "<host>".to_owned(),
                    event: "load".to_owned(),
                    error: message.to_string(),
                    stack: None,
                }])
                .await;
            }
        }
    }

    /// Whether any handler listens to `event` (no cross-thread message otherwise).
    pub fn handles(&self, event: &str) -> bool {
        self.registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .events
            .iter()
            .any(|e| e == event)
    }

    pub fn has_command(&self, name: &str) -> bool {
        self.registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .commands
            .iter()
            .any(|c| c.name == name)
    }

    pub(crate) async fn report(&self, errors: Vec<HandlerError>) {
        let events = self
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        report_to(events.as_ref(), errors).await;
    }

    /// Runs `event`'s handlers with `payload`; returns the composed result (see
    /// `js/api.js`), `None` when no handler listens or none changed anything. Handler
    /// failures are reported as `extension_error` events; the caller goes on.
    pub async fn dispatch(&self, event: &str, payload: Value) -> Option<Value> {
        self.dispatch_until(event, payload, &CancellationToken::new())
            .await
    }

    /// [`ExtensionHost::dispatch`] that an abort (`cancel`) ends, interrupting a handler
    /// stuck in a loop; the interrupted handler is reported as failed.
    pub async fn dispatch_until(
        &self,
        event: &str,
        payload: Value,
        cancel: &CancellationToken,
    ) -> Option<Value> {
        if !self.handles(event) {
            return None;
        }
        let reply = self
            .engine
            .call_until(
                "dispatch",
                &json!({ "event": event, "payload": payload }),
                cancel,
            )
            .await;
        match reply {
            Ok(mut value) => {
                self.report(take_errors(&mut value)).await;
                value
                    .get_mut("result")
                    .map(Value::take)
                    .filter(|v| !v.is_null())
            }
            Err(message) => {
                self.report(vec![HandlerError {
                    extension_path: "<host>".to_owned(),
                    event: event.to_owned(),
                    error: message.to_string(),
                    stack: None,
                }])
                .await;
                None
            }
        }
    }

    /// Runs `/name args` if an extension registered `name`; `false` when none did.
    pub async fn run_command(self: &Arc<Self>, name: &str, args: &str) -> bool {
        self.start_command(name, args).await
    }

    /// [`ExtensionHost::run_command`], queued on the JS thread before this returns: commands
    /// run in the order they were issued, whichever task awaits them (a command's
    /// `sendUserMessage` of another command must not be overtaken by the next prompt's).
    pub fn start_command(
        self: &Arc<Self>,
        name: &str,
        args: &str,
    ) -> impl std::future::Future<Output = bool> + Send + 'static + use<> {
        let call = self.has_command(name).then(|| {
            self.engine
                .queue_call("command", &json!({ "name": name, "args": args }))
        });
        let host = Arc::clone(self);
        async move {
            let Some(call) = call else {
                return false;
            };
            match call.await {
                Ok(mut value) => {
                    host.report(take_errors(&mut value)).await;
                    value.get("found").and_then(Value::as_bool).unwrap_or(false)
                }
                Err(message) => {
                    host.report(vec![HandlerError {
                        extension_path: "<host>".to_owned(),
                        event: "command".to_owned(),
                        error: message.to_string(),
                        stack: None,
                    }])
                    .await;
                    true
                }
            }
        }
    }
}

/// Handler errors where no session hears them (before the host is bound): stderr, one
/// line each, in the one format every such fallback uses.
pub(crate) fn write_to_stderr(errors: &[HandlerError]) {
    let mut stderr = std::io::stderr().lock();
    for error in errors {
        let _ = writeln!(
            stderr,
            "Extension error ({}, {}): {}",
            error.extension_path, error.event, error.error
        );
    }
}

/// Emits `errors` as `extension_error` events, or writes them to stderr before the host
/// is bound to a session.
async fn report_to(events: Option<&EventSender>, errors: Vec<HandlerError>) {
    for error in errors {
        match events {
            Some(events) => {
                events
                    .emit(AgentEvent::ExtensionError {
                        extension_path: error.extension_path,
                        event: error.event,
                        error: error.error,
                    })
                    .await;
            }
            None => write_to_stderr(std::slice::from_ref(&error)),
        }
    }
}

/// Runs the factories of `paths` (JS `load`); the first failure is the error.
async fn run_factories(
    engine: &Engine,
    config: &HostConfig,
    paths: &[PathBuf],
) -> Result<Loaded, ExtError> {
    let payload = json!({
        "paths": paths.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
        "cwd": config.cwd.to_string_lossy(),
        "mode": config.mode,
        "flags": config.flags,
    });
    let loaded = engine
        .call("load", &payload)
        .await
        .map_err(|e| ExtError::Stopped(e.to_string()))?;
    let mut loaded: Loaded =
        serde_json::from_value(loaded).map_err(|e| ExtError::Stopped(e.to_string()))?;
    if !loaded.errors.is_empty() {
        let failure = loaded.errors.swap_remove(0);
        return Err(ExtError::Load {
            path: failure.path,
            message: failure.message,
        });
    }
    Ok(loaded)
}

/// The OAuth logins of the extensions' providers, for [`knightcode_ai::AuthStorage`]. It
/// holds the host weakly: the storage is reachable from the host's own model port.
struct ExtensionOAuth(std::sync::Weak<ExtensionHost>);

impl ExtensionHost {
    /// Hooks that refresh and use stored OAuth logins through the extensions' `oauth`.
    pub fn oauth_hooks(self: &Arc<Self>) -> Arc<dyn knightcode_ai::OAuthProviders> {
        Arc::new(ExtensionOAuth(Arc::downgrade(self)))
    }
}

impl ExtensionHost {
    /// The providers whose `oauth` has `modifyModels`, in registration order.
    pub fn providers_modifying_models(&self) -> Vec<String> {
        self.registry()
            .providers
            .iter()
            .filter(|p| {
                p.config
                    .get("oauth")
                    .and_then(|o| o.get("modifyModels"))
                    .is_some_and(|m| m == &Value::Bool(true))
            })
            .map(|p| p.name.clone())
            .collect()
    }

    /// `oauth.modifyModels(models, credentials)` of `provider`'s registration: the whole
    /// model list as the provider changed it for the stored login.
    pub async fn modify_models(
        &self,
        provider: &str,
        models: &[knightcode_ai::Model],
        credentials: &serde_json::Map<String, Value>,
    ) -> Result<Vec<knightcode_ai::Model>, CallError> {
        let answer = self
            .engine
            .call(
                "oauth",
                &json!({
                    "provider": provider,
                    "op": "modifyModels",
                    "credentials": credentials,
                    "models": models,
                }),
            )
            .await?;
        serde_json::from_value(answer).map_err(|e| {
            CallError::Threw(format!(
                "modifyModels of provider \"{provider}\" returned an invalid model list: {e}"
            ))
        })
    }
}

impl ExtensionOAuth {
    async fn call(
        &self,
        provider: &str,
        op: &str,
        credentials: &serde_json::Map<String, Value>,
    ) -> Result<Value, CallError> {
        let host = self.0.upgrade().ok_or(CallError::Stopped)?;
        host.engine
            .call(
                "oauth",
                &json!({ "provider": provider, "op": op, "credentials": credentials }),
            )
            .await
    }
}

impl knightcode_ai::OAuthProviders for ExtensionOAuth {
    fn handles(&self, provider: &str) -> bool {
        self.0.upgrade().is_some_and(|host| {
            host.registry()
                .providers
                .iter()
                .any(|p| p.name == provider && p.config.get("oauth").is_some_and(|o| !o.is_null()))
        })
    }

    fn refresh<'a>(
        &'a self,
        provider: &'a str,
        credentials: &'a serde_json::Map<String, Value>,
    ) -> knightcode_ai::OAuthFuture<'a, serde_json::Map<String, Value>> {
        Box::pin(async move {
            match self
                .call(provider, "refresh", credentials)
                .await
                .map_err(|e| e.to_string())?
            {
                Value::Object(fresh) => Ok(fresh),
                other => Err(knightcode_ai::OAuthHookError::UnexpectedAnswer {
                    hook: "refreshToken",
                    answer: other,
                }),
            }
        })
    }

    fn api_key<'a>(
        &'a self,
        provider: &'a str,
        credentials: &'a serde_json::Map<String, Value>,
    ) -> knightcode_ai::OAuthFuture<'a, String> {
        Box::pin(async move {
            match self
                .call(provider, "apiKey", credentials)
                .await
                .map_err(|e| e.to_string())?
            {
                Value::String(key) => Ok(key),
                other => Err(knightcode_ai::OAuthHookError::UnexpectedAnswer {
                    hook: "getApiKey",
                    answer: other,
                }),
            }
        })
    }
}

/// The handler errors a JS reply carries in `errors` (taken out of it).
fn take_errors(reply: &mut Value) -> Vec<HandlerError> {
    reply
        .get_mut("errors")
        .map(Value::take)
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}
