//! The extension host as a session's hooks: `knightcode-ext` implements the loop's points;
//! this adds the session's (`input` and commands, `before_agent_start`) and the session
//! actions extensions call (`SessionPort`). With no extension configured nothing here runs
//! and the JS runtime is never started.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::AgentHooks;
use knightcode_agent::HookFuture;
use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_session::SessionManager;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

mod port;
pub mod resources;

pub(crate) use port::Port;

use crate::RuntimeError;
use crate::agent_session::lock;
use crate::hooks::AgentStart;
use crate::hooks::AgentStartChanges;
use crate::hooks::InputAction;
use crate::hooks::PromptInput;
use crate::hooks::SessionHooks;
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

/// A session's hooks when extensions are loaded.
pub struct ExtensionHooks {
    pub host: Arc<ExtensionHost>,
    /// The session file, for the entries `session_compact` hands over.
    pub entries: Option<Arc<Mutex<SessionManager>>>,
}

impl AgentHooks for ExtensionHooks {
    fn inspects_provider_payload(&self) -> bool {
        self.host.inspects_provider_payload()
    }

    fn provider_payload<'a>(
        &'a self,
        payload: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<Value>> {
        self.host.provider_payload(payload, cancel)
    }

    fn transform_context<'a>(
        &'a self,
        messages: Vec<Arc<AgentMessage>>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        self.host.transform_context(messages, cancel)
    }

    fn before_tool_call<'a>(
        &'a self,
        call: knightcode_agent::PendingToolCall<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, knightcode_agent::ToolCallVerdict> {
        self.host.before_tool_call(call, cancel)
    }

    fn after_tool_result<'a>(
        &'a self,
        result: &'a knightcode_protocol::ToolResultMessage,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, knightcode_agent::ToolResultPatch> {
        self.host.after_tool_result(result, arguments, cancel)
    }

    fn turn_end<'a>(
        &'a self,
        turn: knightcode_agent::TurnSummary<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, knightcode_agent::BoundaryAction> {
        self.host.turn_end(turn, cancel)
    }

    fn replaces_messages(&self) -> bool {
        self.host.replaces_messages()
    }

    fn message_end<'a>(
        &'a self,
        message: &'a AgentMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<AgentMessage>> {
        self.host.message_end(message, cancel)
    }
}

/// `/name args` → (`name`, `args`).
pub(crate) fn command_of(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    (!name.is_empty()).then_some((name, args.trim_start()))
}

impl SessionHooks for ExtensionHooks {
    fn inspects_compaction_messages(&self) -> bool {
        self.inspects()
    }

    fn before_compact<'a>(
        &'a self,
        starting: crate::hooks::CompactionStarting<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, crate::hooks::CompactionDecision> {
        Box::pin(async move { before_compact(&self.host, &starting).await })
    }

    fn compacted<'a>(&'a self, ended: crate::hooks::CompactionEnded<'a>) -> HookFuture<'a, ()> {
        Box::pin(async move {
            if self.host.handles("session_compact") {
                let payload = json!({
                    "compactionEntry": self.entry(ended.entry_id),
                    "fromExtension": ended.from_hook,
                    "reason": compaction_reason(ended.reason),
                    "willRetry": ended.will_retry,
                });
                self.host.dispatch("session_compact", payload).await;
            }
        })
    }

    fn compaction_failed<'a>(
        &'a self,
        ended: crate::hooks::CompactionEnded<'a>,
    ) -> HookFuture<'a, ()> {
        Box::pin(async move {
            if self.host.handles("session_compact_failed") {
                let payload = json!({
                    "reason": compaction_reason(ended.reason),
                    "errorMessage": ended.error_message,
                    "aborted": ended.aborted,
                    "willRetry": ended.will_retry,
                    "fromExtension": ended.from_hook,
                });
                self.host.dispatch("session_compact_failed", payload).await;
            }
        })
    }

    fn before_tree<'a>(
        &'a self,
        navigation: crate::hooks::TreeNavigation<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, crate::hooks::TreeDecision> {
        use crate::hooks::TreeDecision;
        Box::pin(async move {
            let payload = json!({ "preparation": {
                "targetId": navigation.target_id,
                "oldLeafId": navigation.old_leaf_id,
                "commonAncestorId": navigation.common_ancestor_id,
                "entriesToSummarize": navigation.entries_to_summarize.iter().map(message_json).collect::<Vec<_>>(),
                "userWantsSummary": navigation.user_wants_summary,
                "customInstructions": navigation.custom_instructions,
                "replaceInstructions": navigation.replace_instructions,
                "label": navigation.label,
            }});
            let Some(result) = self.host.dispatch("session_before_tree", payload).await else {
                return TreeDecision::Proceed;
            };
            if result.get("cancel").and_then(Value::as_bool) == Some(true) {
                return TreeDecision::Cancel;
            }
            if let Some(summary) = result.pointer("/summary/summary").and_then(Value::as_str) {
                return TreeDecision::Supply {
                    summary: summary.to_owned(),
                    details: result
                        .pointer("/summary/details")
                        .cloned()
                        .filter(|d| !d.is_null()),
                };
            }
            let text = |key: &str| result.get(key).and_then(Value::as_str).map(str::to_owned);
            if ["customInstructions", "replaceInstructions", "label"]
                .iter()
                .any(|key| result.get(*key).is_some())
            {
                return TreeDecision::Override {
                    custom_instructions: text("customInstructions"),
                    replace_instructions: result
                        .get("replaceInstructions")
                        .and_then(Value::as_bool),
                    label: text("label"),
                };
            }
            TreeDecision::Proceed
        })
    }

    fn tree_changed<'a>(&'a self, changed: crate::hooks::TreeChanged<'a>) -> HookFuture<'a, ()> {
        Box::pin(async move {
            if self.host.handles("session_tree") {
                let mut payload = json!({
                    "newLeafId": changed.new_leaf_id,
                    "oldLeafId": changed.old_leaf_id,
                });
                if let Some(id) = changed.summary_entry_id {
                    payload["summaryEntry"] = self.entry(Some(id));
                    payload["fromExtension"] = Value::Bool(changed.from_hook);
                }
                self.host.dispatch("session_tree", payload).await;
            }
        })
    }

    fn user_bash<'a>(
        &'a self,
        command: &'a str,
        exclude_from_context: bool,
        cwd: &'a std::path::Path,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, crate::hooks::UserBashDecision> {
        Box::pin(async move {
            use crate::hooks::UserBashDecision;
            let payload = json!({
                "command": command,
                "excludeFromContext": exclude_from_context,
                "cwd": cwd.to_string_lossy(),
            });
            let Some(result) = self.host.dispatch_until("user_bash", payload, cancel).await else {
                return UserBashDecision::Run;
            };
            if let Some(reason) = result.get("blocked").and_then(Value::as_str) {
                return UserBashDecision::Blocked(format!(
                    "an extension's user_bash handler failed, so the command was not run: {reason}"
                ));
            }
            // `{result}` replaces the run; `{operations}` (running it elsewhere) is not
            // supported yet, so the command runs here.
            match result
                .get("result")
                .cloned()
                .map(serde_json::from_value::<knightcode_protocol::rpc::BashResult>)
            {
                Some(Ok(replaced)) => UserBashDecision::Replace(replaced),
                _ => UserBashDecision::Run,
            }
        })
    }

    fn transform_input<'a>(
        &'a self,
        input: &'a PromptInput,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, InputAction> {
        Box::pin(async move {
            // An extension's own `sendUserMessage` never runs commands (no loops).
            if input.source != crate::hooks::InputSource::Extension
                && let Some((name, args)) = command_of(&input.text)
                && self.host.has_command(name)
            {
                self.host.run_command(name, args).await;
                return InputAction::Handled;
            }
            let payload = json!({
                "text": input.text,
                "images": input.images,
                "source": input.source.as_str(),
            });
            let Some(result) = self.host.dispatch_until("input", payload, cancel).await else {
                return InputAction::Continue;
            };
            match result.get("action").and_then(Value::as_str) {
                Some("handled") => InputAction::Handled,
                Some("transform") => InputAction::Transform {
                    text: result
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or(&input.text)
                        .to_owned(),
                    images: result
                        .get("images")
                        .cloned()
                        .and_then(|v| serde_json::from_value::<Vec<ContentBlock>>(v).ok())
                        .unwrap_or_else(|| input.images.clone()),
                },
                _ => InputAction::Continue,
            }
        })
    }

    fn before_agent_start<'a>(
        &'a self,
        start: AgentStart<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, AgentStartChanges> {
        Box::pin(async move {
            let payload = match start.custom {
                Some(message) => json!({
                    "message": message,
                    "systemPrompt": start.system_prompt,
                    "systemPromptOptions": start.system_prompt_options,
                    "messageType": "custom",
                }),
                None => json!({
                    "prompt": start.prompt,
                    "images": start.images,
                    "systemPrompt": start.system_prompt,
                    "systemPromptOptions": start.system_prompt_options,
                    "messageType": "user",
                }),
            };
            let Some(result) = self
                .host
                .dispatch_until("before_agent_start", payload, cancel)
                .await
            else {
                return AgentStartChanges::default();
            };
            let messages = result
                .get("messages")
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(custom_message).collect())
                .unwrap_or_default();
            AgentStartChanges {
                messages,
                system_prompt: result
                    .get("systemPrompt")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }
        })
    }
}

impl ExtensionHooks {
    fn inspects(&self) -> bool {
        self.host.handles("session_before_compact")
    }
}

fn compaction_reason(reason: knightcode_protocol::CompactionReason) -> Value {
    serde_json::to_value(reason).unwrap_or(Value::Null)
}

/// `session_before_compact`: `{cancel}` or `{compaction: {summary, firstKeptEntryId,
/// tokensBefore, details?}}` from the handlers.
async fn before_compact(
    host: &ExtensionHost,
    starting: &crate::hooks::CompactionStarting<'_>,
) -> crate::hooks::CompactionDecision {
    use crate::hooks::CompactionDecision;
    let preparation = starting.preparation;
    let messages = |list: &[AgentMessage]| {
        list.iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect::<Vec<_>>()
    };
    let payload = json!({
        "preparation": {
            "firstKeptEntryId": preparation.first_kept_entry_id,
            "messagesToSummarize": messages(&preparation.messages_to_summarize),
            "turnPrefixMessages": messages(&preparation.turn_prefix),
            "isSplitTurn": preparation.is_split_turn,
            "tokensBefore": preparation.tokens_before,
            "previousSummary": preparation.previous_summary,
            "fileOps": {
                "read": preparation.files.read,
                "written": preparation.files.written,
                "edited": preparation.files.edited,
            },
        },
        "customInstructions": starting.custom_instructions,
        "reason": compaction_reason(starting.reason),
        "willRetry": starting.will_retry,
    });
    let Some(result) = host.dispatch("session_before_compact", payload).await else {
        return CompactionDecision::Proceed;
    };
    if result.get("cancel").and_then(Value::as_bool) == Some(true) {
        return CompactionDecision::Cancel;
    }
    let Some(compaction) = result.get("compaction") else {
        return CompactionDecision::Proceed;
    };
    let Some(summary) = compaction.get("summary").and_then(Value::as_str) else {
        return CompactionDecision::Proceed;
    };
    CompactionDecision::Supply(crate::hooks::SuppliedCompaction {
        summary: summary.to_owned(),
        first_kept_entry_id: compaction
            .get("firstKeptEntryId")
            .and_then(Value::as_str)
            .unwrap_or(&preparation.first_kept_entry_id)
            .to_owned(),
        tokens_before: compaction
            .get("tokensBefore")
            .and_then(Value::as_u64)
            .unwrap_or(preparation.tokens_before),
        usage: None,
        details: compaction.get("details").cloned().filter(|d| !d.is_null()),
    })
}

impl ExtensionHooks {
    /// The compaction entry a compaction wrote, as `session_compact` carries it.
    fn entry(&self, id: Option<&str>) -> Value {
        let Some(id) = id else {
            return Value::Null;
        };
        self.entries
            .as_ref()
            .and_then(|session| {
                lock(session)
                    .entry(id)
                    .and_then(|e| serde_json::to_value(e).ok())
            })
            .unwrap_or(Value::Null)
    }
}

fn message_json(message: &AgentMessage) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

/// `{customType, content, display, details}` as a `custom` message.
pub(crate) fn custom_message(value: &Value) -> Option<AgentMessage> {
    let mut message = value.clone();
    let object = message.as_object_mut()?;
    object.insert("role".to_owned(), json!("custom"));
    if object.get("content").is_some_and(Value::is_string) {
        let text = object.get("content").cloned().unwrap_or(Value::Null);
        object.insert("content".to_owned(), text);
    }
    object.entry("display").or_insert(Value::Bool(true));
    object
        .entry("timestamp")
        .or_insert(json!(chrono::Utc::now().timestamp_millis()));
    serde_json::from_value(message).ok()
}
