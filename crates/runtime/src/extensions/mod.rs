//! The extension host as a session's hooks: `knightcode-ext` implements the loop's points;
//! this adds the session's (`input` and commands, `before_agent_start`) and the session
//! actions extensions call (`SessionPort`). With no extension configured nothing here runs
//! and the JS runtime is never started.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use serde_json::Value;
use serde_json::json;

mod actions;
mod adapter;
pub(crate) use actions::ExtensionActions;
pub use adapter::ExtensionHooks;
pub(crate) use adapter::command_of;
pub mod hook_chain;
pub mod login;
pub mod models;
mod port;
pub mod resources;
pub(crate) mod virtual_models;
pub(crate) use virtual_models::restored_model;

pub(crate) use port::Port;

use crate::RuntimeError;
use crate::trust::TrustDecision;
use crate::trust::TrustResolution;
use crate::trust::TrustSource;
use crate::trust::TrustStore;

/// Which extensions a session loads (spec §2).
#[derive(Debug, Clone, Default)]
pub struct ExtensionSources {
    /// `-e` values (files or directories, relative to the working directory).
    pub cli: Vec<String>,
    /// `--no-extensions`: only the `-e` ones load.
    pub no_extensions: bool,
    /// Flags no built-in option claimed, for `registerFlag` / `getFlag`.
    pub flags: serde_json::Map<String, Value>,
    /// The argument after `--plan`, which the built-in's boolean flag leaves to be a
    /// message: an extension that replaces plan mode and declares `--plan` as a string flag
    /// takes it as the flag's value instead, as the reference's flag parsing gives a string
    /// flag the next argument ([`crate::AgentSession::plan_argument_taken`]).
    pub plan_argument: Option<String>,
    /// `ctx.mode`: `print`, `json`, `rpc` or `tui`.
    pub mode: String,
}

/// The entry files for `sources`, with the `extensions` settings entries and the
/// extensions of installed packages; the project's folder, entries and packages only when it
/// is trusted (`settings` were loaded that way).
pub fn discover(
    sources: &ExtensionSources,
    settings: &crate::Settings,
    cwd: &std::path::Path,
    agent_dir: &std::path::Path,
    home: Option<&std::path::Path>,
    project_trusted: bool,
) -> Vec<PathBuf> {
    let mut packages = Vec::new();
    let project_base = cwd.join(".knightcode");
    if !sources.no_extensions {
        // Entries resolve against their file's folder; `+path` is a plain path here, and
        // the exclusion forms (`!glob`, `-path`) only narrow what others found (below).
        for (project, base) in [(false, agent_dir), (true, project_base.as_path())] {
            if project && !project_trusted {
                continue;
            }
            for entry in settings.layer_strings("extensions", project) {
                if entry.starts_with(['!', '-']) {
                    continue;
                }
                let entry = entry.trim_start_matches('+');
                packages.push(knightcode_packages::source::resolve(entry, base, home));
            }
        }
        let layout = knightcode_packages::Layout {
            agent_dir: agent_dir.to_path_buf(),
            cwd: cwd.to_path_buf(),
            home: home.map(std::path::Path::to_path_buf),
        };
        packages.extend(
            knightcode_packages::installed_resources(&layout, project_trusted)
                .into_iter()
                .flat_map(|(_, found)| found.extensions),
        );
    }
    // A `-e` folder that is a package stands for its own extension entries.
    let cli_entries = resources::cli_entries(&sources.cli, cwd);
    let found = knightcode_ext::discover::discover(&knightcode_ext::discover::Sources {
        cli: cli_entries.clone(),
        no_extensions: sources.no_extensions,
        cwd: cwd.to_path_buf(),
        agent_dir: agent_dir.to_path_buf(),
        project_trusted,
        packages,
    });
    // `-e` always loads; the settings lists' `!glob`/`+path`/`-path` entries choose among
    // the rest (the user's against `<agentDir>`, then the project's against `.knightcode/`).
    let cli: Vec<PathBuf> =
        knightcode_ext::discover::discover(&knightcode_ext::discover::Sources {
            cli: cli_entries,
            no_extensions: true,
            cwd: cwd.to_path_buf(),
            ..knightcode_ext::discover::Sources::default()
        });
    let mut layers = vec![(
        settings.layer_strings("extensions", false),
        agent_dir.to_path_buf(),
    )];
    if project_trusted {
        layers.push((settings.layer_strings("extensions", true), project_base));
    }
    found
        .into_iter()
        .filter(|path| {
            cli.contains(path)
                || layers.iter().all(|(patterns, base)| {
                    knightcode_packages::enabled_by_overrides(path, patterns, base)
                })
        })
        .collect()
}

/// `KNIGHTCODE_EXTENSION_MEMORY_MB`: the extensions' JS heap limit (default 2 GiB).
fn memory_limit() -> Option<usize> {
    std::env::var("KNIGHTCODE_EXTENSION_MEMORY_MB")
        .ok()?
        .trim()
        .parse::<usize>()
        .ok()
        .map(|mb| mb << 20)
}

fn host_config(setup: &crate::agent_session::SessionSetup, paths: Vec<PathBuf>) -> HostConfig {
    HostConfig {
        paths,
        cwd: setup.cwd.clone(),
        mode: match setup.extensions.mode.as_str() {
            "" => "print".to_owned(),
            other => other.to_owned(),
        },
        flags: setup.extensions.flags.clone(),
        memory_limit: memory_limit(),
    }
}

fn load_error(error: knightcode_ext::ExtError) -> RuntimeError {
    RuntimeError::Setup(format!(
        "{error}\nStart without extensions using \"knightcode -ne\""
    ))
}

/// Starts the JS runtime with `paths`' extensions (a failure ends start-up, with the hint).
pub(crate) async fn load_host(
    setup: &crate::agent_session::SessionSetup,
    paths: Vec<PathBuf>,
) -> Result<Arc<ExtensionHost>, RuntimeError> {
    ExtensionHost::load(host_config(setup, paths))
        .await
        .map_err(load_error)
}

/// The second pass: the extensions trust allowed beyond the first pass's.
pub(crate) async fn load_more(
    host: &ExtensionHost,
    paths: Vec<PathBuf>,
) -> Result<(), RuntimeError> {
    host.load_more(&paths).await.map_err(load_error)
}

/// The first pass of the two around project trust (`spec/trust-security.md` §2): the
/// project's trust is undecided, so the user's own and `-e` extensions load with the project
/// untrusted and hear `project_trust`; the first `yes`/`no` decides (and with `remember`
/// is saved to trust.json), otherwise the project stays untrusted as it would without them.
/// Returns the decision and the host with what it loaded, for the second pass.
pub(crate) async fn first_pass(
    setup: &crate::agent_session::SessionSetup,
    protected: Vec<PathBuf>,
    store: &mut TrustStore,
    notices: &mut Vec<String>,
) -> Result<(TrustDecision, Option<(Arc<ExtensionHost>, Vec<PathBuf>)>), RuntimeError> {
    let undecided = TrustResolution::Ask {
        protected: protected.clone(),
    }
    .without_prompt();
    // The user's settings only: the project is not trusted yet.
    let settings = crate::Settings::load(&setup.agent_dir, &setup.cwd, false);
    let paths = discover(
        &setup.extensions,
        &settings,
        &setup.cwd,
        &setup.agent_dir,
        setup.home.as_deref(),
        false,
    );
    if paths.is_empty() {
        return Ok((undecided, None));
    }
    let host = load_host(setup, paths.clone()).await?;
    let verdict = host
        .dispatch("project_trust", json!({ "cwd": setup.cwd }))
        .await;
    let trusted = match verdict
        .as_ref()
        .and_then(|v| v.get("trusted"))
        .and_then(Value::as_str)
    {
        Some("yes") => true,
        Some("no") => false,
        _ => return Ok((undecided, Some((host, paths)))),
    };
    let remember = verdict
        .as_ref()
        .and_then(|v| v.get("remember"))
        .and_then(Value::as_bool)
        == Some(true);
    if remember && let Err(error) = store.set(&setup.cwd, Some(trusted)) {
        notices.push(format!(
            "Could not save the extension's trust decision: {error}"
        ));
    }
    let decision = TrustDecision {
        trusted,
        source: TrustSource::Extension,
        protected,
    };
    Ok((decision, Some((host, paths))))
}

/// The first trust pass run ahead of a front end's own trust question: the host with the
/// user's and `-e` extensions (reused by the session) and their decision, if any.
#[derive(Debug, Clone)]
pub struct FirstPass {
    pub(crate) host: Option<(Arc<ExtensionHost>, Vec<PathBuf>)>,
    /// What an extension decided (`project_trust`); `None` leaves it to the front end.
    pub(crate) decision: Option<TrustDecision>,
    pub(crate) notices: Vec<String>,
}

impl FirstPass {
    /// `Some(trusted)` when an extension decided the project's trust.
    pub fn decided(&self) -> Option<bool> {
        self.decision.as_ref().map(|d| d.trusted)
    }
}

/// For a front end that asks about trust itself (the terminal's prompt): the user's own and
/// `-e` extensions load first and hear `project_trust`, as in the reference, so an
/// extension's decision spares the question. Put the result in
/// [`crate::SessionSetup::first_pass`] (and `approve` the decision) so the session keeps
/// this host instead of loading them again.
pub async fn ask_extensions_about_trust(
    setup: &crate::agent_session::SessionSetup,
    protected: Vec<PathBuf>,
) -> Result<FirstPass, RuntimeError> {
    let mut store = TrustStore::load(&setup.agent_dir).unwrap_or_default();
    let mut notices = Vec::new();
    let (decision, host) = first_pass(setup, protected, &mut store, &mut notices).await?;
    let decided = (decision.source == TrustSource::Extension).then_some(decision);
    Ok(FirstPass {
        host,
        decision: decided,
        notices,
    })
}

/// Warnings for the CLI flags no loaded extension declares (the reference ignores them
/// silently; a typo deserves a word). A value the flag swallowed is named: it may have been
/// meant as the message.
pub(crate) fn undeclared_flags(
    flags: &serde_json::Map<String, Value>,
    host: Option<&ExtensionHost>,
) -> Vec<String> {
    let declared: Vec<String> = host
        .map(|h| h.registry().flags.into_iter().map(|f| f.name).collect())
        .unwrap_or_default();
    flags
        .iter()
        .filter(|(name, _)| !declared.contains(name))
        .map(|(name, value)| match value.as_str() {
            Some(value) => format!(
                "unknown flag --{name} (no loaded extension declares it); ignoring it and its value \"{value}\"."
            ),
            None => {
                format!("unknown flag --{name} (no loaded extension declares it); ignoring it.")
            }
        })
        .collect()
}

/// The agent's lifecycle events, heard by the extensions as the loop emits them (an
/// [`knightcode_agent::EventObserver`] of the session's event channel): awaited, so handlers
/// see them in order with the loop's hooks (`turn_start` before that turn's `tool_call` and
/// `turn_end`), as in the reference. Only events some handler listens to cross to the JS
/// thread.
pub(crate) struct ExtensionEvents {
    host: Arc<ExtensionHost>,
    /// Turns of the current run so far (`turn_start`'s `turnIndex`).
    turns: std::sync::atomic::AtomicU64,
}

impl ExtensionEvents {
    pub(crate) fn new(host: Arc<ExtensionHost>) -> Self {
        Self {
            host,
            turns: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

fn lifecycle_name(event: &knightcode_protocol::AgentEvent) -> Option<&'static str> {
    use knightcode_protocol::AgentEvent as E;
    Some(match event {
        E::AgentStart => "agent_start",
        E::AgentEnd { .. } => "agent_end",
        E::AgentSettled { .. } => "agent_settled",
        E::TurnStart => "turn_start",
        E::MessageStart { .. } => "message_start",
        E::MessageUpdate { .. } => "message_update",
        // `message_end` handlers run as the loop's hook, before the event goes out: they may
        // replace the message (`ExtensionHost::message_end`).
        E::ToolExecutionStart { .. } => "tool_execution_start",
        E::ToolExecutionUpdate { .. } => "tool_execution_update",
        E::ToolExecutionEnd { .. } => "tool_execution_end",
        _ => return None,
    })
}

impl knightcode_agent::EventObserver for ExtensionEvents {
    fn wants(&self, event: &knightcode_protocol::AgentEvent) -> bool {
        use std::sync::atomic::Ordering;
        match lifecycle_name(event) {
            // Counted whether or not anyone listens, so `turnIndex` stays right.
            Some("agent_start") => {
                self.turns.store(0, Ordering::Relaxed);
                self.host.handles("agent_start")
            }
            Some("turn_start") => true,
            Some(name) => self.host.handles(name),
            None => false,
        }
    }

    fn observe<'a>(
        &'a self,
        event: &'a knightcode_protocol::AgentEvent,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            use std::sync::atomic::Ordering;
            let Some(name) = lifecycle_name(event) else {
                return;
            };
            let Ok(mut payload) = serde_json::to_value(event) else {
                return;
            };
            if name == "turn_start" {
                let index = self.turns.fetch_add(1, Ordering::Relaxed);
                if !self.host.handles(name) {
                    return;
                }
                // Extensions get the turn's number and time, which the wire event leaves out.
                if let Some(object) = payload.as_object_mut() {
                    object.insert("turnIndex".to_owned(), json!(index));
                    object.insert(
                        "timestamp".to_owned(),
                        json!(chrono::Utc::now().timestamp_millis()),
                    );
                }
            }
            self.host.dispatch(name, payload).await;
        })
    }
}

/// Delivers the session's own events to the extensions (`model_select`,
/// `thinking_level_select`) in order, on a task of its own, and `session_shutdown` last.
pub(crate) struct LifecycleEvents {
    host: Arc<ExtensionHost>,
    queue: tokio::sync::mpsc::UnboundedSender<(String, Value)>,
    delivered: tokio::task::JoinHandle<()>,
    /// The model (JSON) and thinking level last seen, for `model_select` and
    /// `thinking_level_select`.
    selected: Mutex<Option<(Value, String)>>,
    /// `model_select`'s `source` for the next change.
    source: Mutex<&'static str>,
}

impl LifecycleEvents {
    pub(crate) fn start(host: Arc<ExtensionHost>) -> Self {
        let (queue, mut pending) = tokio::sync::mpsc::unbounded_channel::<(String, Value)>();
        let delivering = Arc::clone(&host);
        let delivered = tokio::spawn(async move {
            while let Some((event, payload)) = pending.recv().await {
                delivering.dispatch(&event, payload).await;
            }
        });
        Self {
            host,
            queue,
            delivered,
            selected: Mutex::new(None),
            source: Mutex::new("set"),
        }
    }

    pub(crate) fn selection_source(&self, source: &'static str) {
        *crate::agent_session::lock_selection(&self.source) = source;
    }

    /// After a change to the session: tells extensions about a new model or thinking level
    /// (`model_select` with `source: "set"`, `thinking_level_select`) and keeps what
    /// `ctx.model` reads current. The first call only records the start-up selection.
    pub(crate) fn note_selection(&self, session: &crate::AgentSession) {
        let model = serde_json::to_value(session.model()).unwrap_or(Value::Null);
        let level = session.thinking_level().as_str().to_owned();
        let actions = session.extension_actions();
        // Before the first call, what the session started with (noted at start-up).
        let started = actions.selection();
        actions.note_selection(model.clone(), &level);
        let previous = crate::agent_session::lock_selection(&self.selected)
            .replace((model.clone(), level.clone()))
            .or(started);
        let Some((previous_model, previous_level)) = previous else {
            return;
        };
        let same_model = previous_model.get("provider") == model.get("provider")
            && previous_model.get("id") == model.get("id");
        if !same_model && self.host.handles("model_select") {
            let source = std::mem::replace(
                &mut *crate::agent_session::lock_selection(&self.source),
                "set",
            );
            let payload =
                json!({ "model": model, "previousModel": previous_model, "source": source });
            let _ = self.queue.send(("model_select".to_owned(), payload));
        }
        if previous_level != level && self.host.handles("thinking_level_select") {
            let payload = json!({ "level": level, "previousLevel": previous_level });
            let _ = self
                .queue
                .send(("thinking_level_select".to_owned(), payload));
        }
    }

    pub(crate) fn host(&self) -> &Arc<ExtensionHost> {
        &self.host
    }

    /// `mcp_servers_change`: the servers extensions registered, after one registered or
    /// unregistered one past loading.
    pub(crate) fn mcp_servers_changed(&self, servers: &[knightcode_ext::McpServerSpec]) {
        if self.host.handles("mcp_servers_change") {
            let payload = json!({ "servers": servers });
            let _ = self.queue.send(("mcp_servers_change".to_owned(), payload));
        }
    }

    /// Delivers what is queued, then `session_shutdown` (awaited: handlers clean up).
    pub(crate) async fn shut_down(self, reason: &str) {
        let Self {
            host,
            queue,
            delivered,
            ..
        } = self;
        drop(queue);
        // A handler that panicked the delivery task has nothing more to deliver.
        let _ = delivered.await;
        host.dispatch("session_shutdown", json!({ "reason": reason }))
            .await;
    }
}
