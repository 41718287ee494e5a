//! What a long-lived front end (RPC mode, an editor integration) does with a session besides
//! prompting: switch model and thinking level, change queue modes and persisted toggles,
//! replace the session (new, open, fork, clone), run user shell commands, and read state
//! through a [`SessionView`] that stays usable while a prompt runs.
//!
//! Texts of refusals follow the reference agent (`spec/rpc.md` §2): they reach clients
//! verbatim as RPC error responses.

mod extension_ops;
mod models;
mod settings_file;
mod user_bash;
mod view;

use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::QueueMode;
use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::Model;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::BashExecutionMessage;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::SessionEntry;
use knightcode_session::NewSession;
use knightcode_session::SessionError;
use knightcode_session::SessionManager;
use knightcode_session::SessionStore;
use serde_json::Value;

pub use self::user_bash::BashOutcome;
pub use self::user_bash::BashOutput;
pub use self::user_bash::UserBash;
pub use self::view::SessionView;
pub use self::view::model_info;
pub use super::prompt::PromptStart;
pub use super::prompt::user_message;

use super::AgentSession;
use super::SessionSetup;
use super::lock;
use crate::compaction::context_messages;
use crate::error::Result;
use crate::error::RuntimeError;
use crate::model_select::ScopedModel;

/// Shown when a fork or clone needs the source file on disk and it is not there yet.
const NOT_SAVED_YET: &str = "This session has not been saved yet. Wait for the first assistant response before cloning or forking it.";

/// What operations need after start-up: the session store (one ownership registry per
/// process), the model registry and credentials, and where global settings live.
pub(super) struct OpsState {
    store: SessionStore,
    pub(super) home: Option<PathBuf>,
    pub(super) registry: ModelRegistry,
    auth_storage: AuthStorage,
    /// `--api-key`, by provider.
    runtime_keys: HashMap<String, String>,
    /// The model `--model` chose; it wins over a session's own model whenever a session is
    /// opened or created later, as it did at start-up.
    cli_model: Option<Model>,
    /// `--thinking` (or a `:level` model suffix), likewise.
    cli_thinking: Option<ThinkingLevel>,
    /// Problems since the last [`AgentSession::take_warnings`] (a settings file that could
    /// not be written).
    pub(super) warnings: Vec<String>,
    /// Writes the global settings file off the async thread.
    settings_writer: settings_file::SettingsWriter,
    /// The `--models` / `enabledModels` scope: what model cycling goes through.
    pub(super) scope: Vec<ScopedModel>,
    /// Where API keys come from.
    pub(super) env: Arc<dyn knightcode_ai::EnvSource>,
    /// What `/reload` reads again: the agent folder, the resource flags, `-nc`.
    pub(super) agent_dir: PathBuf,
    pub(super) resource_flags: crate::resources::ResourceFlags,
    pub(super) no_context_files: bool,
    /// Set while an extension changes the model or level: nothing goes to settings.json.
    session_only: bool,
    /// `images.blockImages`, shared with the hook that strips images from requests.
    pub(super) block_images: Arc<std::sync::atomic::AtomicBool>,
    /// The local model servers' answer, once it came (see `crate::local_models`).
    pub(super) local: crate::local_models::LocalProbe,
}

impl OpsState {
    pub(super) fn new(
        setup: &SessionSetup,
        store: &SessionStore,
        registry: ModelRegistry,
        auth_storage: AuthStorage,
        runtime_keys: HashMap<String, String>,
        cli: (Option<Model>, Option<ThinkingLevel>),
        env: Arc<dyn knightcode_ai::EnvSource>,
    ) -> Self {
        Self {
            store: store.clone(),
            home: setup.home.clone(),
            registry,
            auth_storage,
            runtime_keys,
            cli_model: cli.0,
            cli_thinking: cli.1,
            warnings: Vec::new(),
            settings_writer: settings_file::SettingsWriter::new(&setup.agent_dir),
            scope: Vec::new(),
            env,
            agent_dir: setup.agent_dir.clone(),
            resource_flags: setup.resources.clone(),
            no_context_files: setup.no_context_files,
            session_only: false,
            block_images: Arc::default(),
            local: crate::local_models::LocalProbe::default(),
        }
    }

    /// Credentials as a request resolves them: `--api-key`, `auth.json`, the environment.
    fn auth(&self) -> AuthContext<'_> {
        AuthContext {
            storage: &self.auth_storage,
            env: self.env.as_ref(),
            runtime_keys: &self.runtime_keys,
        }
    }

    /// `model`'s key and headers from the session's credentials; `None` without any.
    async fn resolve_auth(&self, model: &Model) -> Result<Option<knightcode_ai::ResolvedAuth>> {
        let resolved = self
            .registry
            .resolve_auth(model, &self.auth())
            .await
            .map_err(|e| RuntimeError::Rejected(e.to_string()))?;
        if resolved.is_none() && self.late_local_model(&model.provider, &model.id).is_some() {
            return Ok(Some(knightcode_ai::ResolvedAuth {
                api_key: Some(knightcode_ai::local::LOCAL_API_KEY.to_owned()),
                headers: serde_json::Map::new(),
                source: knightcode_ai::AuthSource::ModelsJsonKey,
            }));
        }
        Ok(resolved)
    }

    /// A model a local server serves that the registry does not hold (the probe answered
    /// after the start).
    fn late_local_model(&self, provider: &str, id: &str) -> Option<&Model> {
        self.local
            .ready()
            .iter()
            .find(|m| m.provider == provider && m.id == id)
            .filter(|_| self.registry.find(provider, id).is_none())
    }

    fn available_models(&self) -> Vec<Model> {
        let mut models = self.registry.available(&self.auth());
        let late = self
            .local
            .ready()
            .iter()
            .filter(|m| self.late_local_model(&m.provider, &m.id).is_some());
        models.extend(late.cloned());
        models
    }

    /// What a codemode script's `models.classify` uses: the registry and credentials now.
    pub(super) fn classify_access(&self) -> crate::classify::ClassifyAccess {
        crate::classify::ClassifyAccess {
            registry: self.registry.clone(),
            // auth.json as it is now (the session's own copy is not shared).
            storage: Arc::new(
                AuthStorage::load(&self.agent_dir)
                    .unwrap_or_else(|_| AuthStorage::empty(&self.agent_dir)),
            ),
            env: Arc::clone(&self.env),
            runtime_keys: self.runtime_keys.clone(),
        }
    }

    /// `--api-key`, by provider (what extensions' model calls resolve keys with too).
    pub(super) fn runtime_keys(&self) -> &HashMap<String, String> {
        &self.runtime_keys
    }
}

/// What a model switch did.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSwitch {
    pub model: Model,
    /// The effective thinking level afterwards.
    pub thinking: ThinkingLevel,
    /// Set when the thinking level changed (a `thinking_level_changed` event is due).
    pub thinking_changed: bool,
    /// The model came from the scoped list (`--models` / `enabledModels`).
    pub scoped: bool,
}

/// What a thinking-level change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkingChange {
    pub level: ThinkingLevel,
    pub changed: bool,
}

impl AgentSession {
    /// A read-only view of the session for use while a prompt runs (the session itself is
    /// borrowed by the run then). Take a new one after changing model or thinking level.
    pub fn view(&self) -> SessionView {
        SessionView::new(
            Arc::clone(&self.session),
            self.handle.clone(),
            self.model.clone(),
            self.thinking,
            self.auto_compaction_enabled(),
            self.compaction.compacting.clone(),
            Arc::clone(&self.file_history),
        )
        .with_routed(self.routed_model())
        .with_resources(
            Arc::clone(&self.resources),
            Arc::clone(&self.command_sources),
        )
        .with_cache_warming(self.cache_warming.clone())
    }

    /// The bash tool's `KNIGHTCODE_*` variables and the read tool's image policy follow
    /// model, thinking, settings and session changes.
    pub(super) fn refresh_session_env(&self) {
        *self
            .image_policy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            super::image_policy(self.settings.values(), &self.model);
        let (id, file) = {
            let session = lock(&self.session);
            (
                session.session_id().to_owned(),
                session.session_file().map(Path::to_path_buf),
            )
        };
        let mut env = self
            .session_env
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *env = knightcode_tools::SessionEnv {
            session_id: Some(id),
            session_file: file,
            provider: Some(self.model.provider.clone()),
            model: Some(self.model.id.clone()),
            reasoning_level: Some(self.thinking.as_str().to_owned()),
        };
    }

    /// Listing, renaming and deleting sessions, and the open session's tree and labels,
    /// through this session's store; usable while a prompt runs.
    pub fn library(&self) -> crate::sessions::SessionLibrary {
        crate::sessions::SessionLibrary::new(
            self.ops.store.clone(),
            Arc::clone(&self.session),
            self.cwd.clone(),
        )
    }

    /// Problems worth telling the user (on stderr) that happened since the last call; a
    /// settings write still under way reports here once it failed (see
    /// [`AgentSession::settings_saved`]).
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut warnings = std::mem::take(&mut self.ops.warnings);
        warnings.extend(
            self.ops
                .settings_writer
                .take_errors()
                .iter()
                .map(ToString::to_string),
        );
        warnings
    }

    /// Waits, without blocking the thread, until every settings change made so far is in
    /// the global settings file or has failed (then [`AgentSession::take_warnings`] says so).
    pub fn settings_saved(&self) -> impl Future<Output = ()> + Send + 'static {
        // Owns a handle to the writer, so the session (not `Sync`) is not held across awaits.
        let writer = self.ops.settings_writer.clone();
        async move { writer.saved().await }
    }

    /// Steering delivery mode; saved to the global settings.
    pub fn set_steering_mode(&mut self, mode: QueueMode) {
        self.handle.set_steering_mode(mode);
        self.persist_settings(&[("steeringMode", Value::String(mode.as_str().to_owned()))]);
    }

    /// Follow-up delivery mode; saved to the global settings.
    pub fn set_follow_up_mode(&mut self, mode: QueueMode) {
        self.handle.set_follow_up_mode(mode);
        self.persist_settings(&[("followUpMode", Value::String(mode.as_str().to_owned()))]);
    }

    /// `compaction.enabled`, saved to the global settings.
    pub fn set_auto_compaction(&mut self, enabled: bool) {
        self.persist_settings(&[("compaction.enabled", Value::Bool(enabled))]);
    }

    pub fn auto_compaction_enabled(&self) -> bool {
        self.settings.values().compaction_enabled
    }

    /// `/tools`: applies a web-tools change (the active list, `tools.json`, the live search
    /// settings) and reports the state; applies from the next request.
    pub fn configure_web_tools(
        &mut self,
        change: &crate::web_tools::WebToolsChange,
    ) -> crate::web_tools::WebToolsStatus {
        let mut active = self.agent.config().active_tools.clone().unwrap_or_default();
        let status = self.web_tools.apply(change, &mut active);
        self.extension_actions.note_active_tools(&active);
        self.agent.config_mut().active_tools = Some(active);
        status
    }

    /// Offers exactly `names` (those that name a registered tool, in the order given;
    /// hidden tools never) from the next request on: an extension's `setActiveTools`.
    pub fn set_active_tools(&mut self, names: &[String]) {
        let allowed = super::loadout::activatable_names(&self.agent.config().tools);
        let mut active: Vec<String> = Vec::new();
        for name in names {
            if allowed.contains(name) && !active.contains(name) {
                active.push(name.clone());
            }
        }
        self.extension_actions.note_active_tools(&active);
        self.agent.config_mut().active_tools = Some(active);
    }

    /// `retry.enabled`, saved to the global settings; applies from the next run.
    pub fn set_auto_retry(&mut self, enabled: bool) {
        self.persist_settings(&[("retry.enabled", Value::Bool(enabled))]);
        self.agent.config_mut().retry.enabled = enabled;
    }

    /// `/settings`: saves values (dotted keys) to the global file and the loaded settings.
    /// Settings read when used (`images.autoResize`, `enableSkillCommands`) apply from now
    /// on; the interface applies its own.
    pub fn save_settings(&mut self, values: &[(String, Value)]) {
        let values: Vec<(&str, Value)> = values
            .iter()
            .map(|(key, value)| (key.as_str(), value.clone()))
            .collect();
        self.persist_settings(&values);
    }

    /// Applies settings to the loaded settings and queues them for the global file (written
    /// in the background, see [`AgentSession::settings_saved`]). A global file that could not
    /// be read is never written (its content would be lost); the change then holds for this
    /// process only.
    fn persist_settings(&mut self, values: &[(&str, Value)]) {
        if self.ops.session_only {
            return;
        }
        let mut overrides = serde_json::Map::new();
        for (key, value) in values {
            settings_file::insert_dotted(&mut overrides, key, value.clone());
        }
        self.settings = self.settings.clone().with_overrides(&overrides);
        self.ops.block_images.store(
            self.settings.values().images_block_images,
            std::sync::atomic::Ordering::Relaxed,
        );
        if self.settings.global_file_unusable() {
            return;
        }
        self.ops.settings_writer.save(values);
    }

    /// Starts a new, empty session (in the current session's folder, or in memory when the
    /// current one is). Returns the thinking level change, if any.
    pub async fn new_session(&mut self, parent_session: Option<String>) -> Result<ThinkingChange> {
        let replacement = {
            let current = lock(&self.session);
            match current.session_file().and_then(Path::parent) {
                None => self.ops.store.in_memory(&self.cwd),
                Some(dir) => self.ops.store.create(
                    dir,
                    &self.cwd,
                    NewSession {
                        session_id: None,
                        parent_session,
                    },
                )?,
            }
        };
        self.replace_session(replacement, "new").await;
        self.adopt_session_settings().await
    }

    /// Opens another session file and continues there, with its model and thinking level
    /// when they are usable. A path without a file starts a new session that will be written
    /// there, as in the reference. Returns the thinking level change, if any.
    pub async fn switch_session(&mut self, path: &Path) -> Result<ThinkingChange> {
        let opened = self.ops.store.open(path, &self.cwd)?;
        self.replace_session(opened, "resume").await;
        self.adopt_session_settings().await
    }

    /// Continues the session file at `path` in a new, independently owned file holding all
    /// of its entries (its `parentSession` names the source), as `--fork` does: for a
    /// session another process owns. The source is only read. The fork goes beside the
    /// current session (or the source, when the current one is not saved).
    pub async fn fork_session_file(&mut self, path: &Path) -> Result<ThinkingChange> {
        let dir = {
            let current = lock(&self.session);
            current
                .session_file()
                .and_then(Path::parent)
                .or_else(|| path.parent())
                .map(Path::to_path_buf)
        };
        let Some(dir) = dir else {
            return Err(RuntimeError::Rejected(format!(
                "Cannot fork {}: it is not in a folder",
                path.display()
            )));
        };
        let forked = self.ops.store.fork_from(path, &dir, &self.cwd, None)?;
        self.replace_session(forked, "fork").await;
        self.adopt_session_settings().await
    }

    /// Continues in a new session holding the path before the user message `entry_id`;
    /// returns that message's text (for the editor) and the thinking level change, if any.
    pub async fn fork(&mut self, entry_id: &str) -> Result<(String, ThinkingChange)> {
        let (forked, text) = {
            let current = lock(&self.session);
            let (parent, _) = knightcode_session::fork_point(&current, entry_id)?;
            let text = current
                .entry(entry_id)
                .and_then(SessionEntry::message)
                .map(user_text)
                .unwrap_or_default();
            let forked = self
                .ops
                .store
                .create_branched(&current, parent.as_deref())
                .map_err(not_saved_yet)?;
            (forked, text)
        };
        self.file_history.fork_to(forked.session_id());
        self.replace_session(forked, "fork").await;
        let change = self.adopt_session_settings().await?;
        Ok((text, change))
    }

    /// Moves the session's leaf within its tree (`/tree`): a user message leaves its parent
    /// as the leaf and returns its text for the editor (submitting it starts a new branch);
    /// any other entry becomes the leaf itself. `None` goes back to before the first entry.
    /// Nothing is written but the target's `label`; the next prompt continues from the new
    /// leaf.
    pub fn navigate_tree(
        &mut self,
        entry_id: Option<&str>,
        label: Option<&str>,
    ) -> Result<Option<String>> {
        let mut session = lock(&self.session);
        // Plan mode fails closed: a target it cannot enforce is refused before the move.
        let leaf = entry_id.map(|id| match knightcode_session::fork_point(&session, id) {
            Ok((parent, _)) => parent,
            Err(_) => Some(id.to_owned()),
        });
        if let Some(why) = self
            .plan
            .tree_target_refusal(&session, leaf.flatten().as_deref())
        {
            return Err(RuntimeError::PlanModeRefused(why));
        }
        if let (Some(id), Some(label)) = (entry_id, label) {
            session.set_label(id, Some(label))?;
        }
        let text = match entry_id {
            None => {
                session.reset_leaf();
                None
            }
            Some(id) => match knightcode_session::fork_point(&session, id) {
                Ok((parent, text)) => {
                    match parent {
                        Some(parent) => session.navigate(&parent)?,
                        None => session.reset_leaf(),
                    }
                    Some(text)
                }
                Err(_) => {
                    session.navigate(id)?;
                    None
                }
            },
        };
        let context = context_messages(&session);
        drop(session);
        self.agent.replace_messages(context);
        Ok(text)
    }

    /// Continues in a copy of the active branch; returns the thinking level change, if any.
    pub async fn clone_session(&mut self) -> Result<ThinkingChange> {
        self.clone_session_at(None).await
    }

    /// Continues in a copy of the branch ending at `entry_id` (the active one with `None`;
    /// an extension's `ctx.fork(id, {position: "at"})`).
    pub async fn clone_session_at(&mut self, entry_id: Option<&str>) -> Result<ThinkingChange> {
        let cloned = {
            let current = lock(&self.session);
            let leaf = match entry_id {
                Some(id) => {
                    if current.entry(id).is_none() {
                        return Err(RuntimeError::Rejected(
                            "Invalid entry ID for forking".to_owned(),
                        ));
                    }
                    id.to_owned()
                }
                None => match current.leaf_id() {
                    Some(leaf) => leaf.to_owned(),
                    None => {
                        return Err(RuntimeError::Rejected(
                            "Cannot clone session: no current entry selected".to_owned(),
                        ));
                    }
                },
            };
            self.ops
                .store
                .create_branched(&current, Some(&leaf))
                .map_err(not_saved_yet)?
        };
        self.file_history.fork_to(cloned.session_id());
        self.replace_session(cloned, "fork").await;
        self.adopt_session_settings().await
    }

    /// Swaps the session behind the shared handle (the agent's recorder writes to whatever is
    /// there) and releases the old one's ownership. Extensions hear `session_shutdown`
    /// (`reason`, the new file) while the old session is still there, their runtime is
    /// rebuilt (every old `ctx` goes stale), then `session_start` (`reason`, the old file).
    async fn replace_session(&mut self, replacement: SessionManager, reason: &str) {
        let host = self.extension_host.clone();
        let previous = lock(&self.session)
            .session_file()
            .map(|p| p.to_string_lossy().into_owned());
        if let Some(host) = &host {
            let mut payload = serde_json::json!({ "reason": reason });
            if let Some(target) = replacement.session_file() {
                payload["targetSessionFile"] = Value::String(target.to_string_lossy().into_owned());
            }
            host.dispatch("session_shutdown", payload).await;
        }
        self.swap_session(replacement);
        if let Some(host) = host {
            host.restart(false).await;
            let mut payload = serde_json::json!({ "reason": reason });
            if let Some(previous) = previous {
                payload["previousSessionFile"] = Value::String(previous);
            }
            host.dispatch("session_start", payload).await;
            // Commands and tools registered in `session_start` count too.
            host.refresh().await;
            self.resync_extension_mcp_servers();
            if self.rediscover_extension_resources("startup").await {
                self.reload_resources();
            }
        }
    }

    /// `/reload` for extensions: `session_shutdown` and `session_start` with reason
    /// `reload` around a fresh import of every extension, then `resources_discover`
    /// (the resources are read after this).
    pub(crate) async fn reload_extensions(&mut self) {
        if let Some(host) = self.extension_host.clone() {
            host.dispatch(
                "session_shutdown",
                serde_json::json!({ "reason": "reload" }),
            )
            .await;
            host.restart(true).await;
            host.dispatch("session_start", serde_json::json!({ "reason": "reload" }))
                .await;
            host.refresh().await;
            // What the extensions register now replaces what they registered before: a
            // provider or virtual model no longer registered leaves the listing.
            self.reload_model_registry().await;
            self.resync_extension_mcp_servers();
            self.rediscover_extension_resources("reload").await;
        }
    }

    /// Gives the session file up at the end (its ownership lock goes with it, whoever still
    /// holds the session for reading).
    pub(crate) fn close_session_file(&self) {
        lock(&self.session).close();
    }

    fn swap_session(&mut self, replacement: SessionManager) {
        let mut session = lock(&self.session);
        let mut old = std::mem::replace(&mut *session, replacement);
        old.close();
        let id = session.session_id().to_owned();
        self.file_history.switch_session(&id);
        let context = context_messages(&session);
        drop(session);
        self.agent.config_mut().options.session_id = Some(id);
        self.agent.replace_messages(context);
    }

    /// After a session replacement, the reference's rule for a new runtime: the model is
    /// `--model`'s, else the session's last one when usable, else the current one; the
    /// thinking level is `--thinking`'s, else the session's last recorded one, else the saved
    /// default, clamped to the model. A session without messages records both; one without a
    /// thinking level records that.
    async fn adopt_session_settings(&mut self) -> Result<ThinkingChange> {
        let (restored_model, selection, restored_level, has_messages) = {
            let session = lock(&self.session);
            let context = session.build_context();
            let has_messages = context
                .messages
                .iter()
                .any(|m| !matches!(*m.message, AgentMessage::System(_)));
            let level = super::restored_thinking_level(&session);
            (context.model, context.selection, level, has_messages)
        };
        let model = match &self.ops.cli_model {
            Some(model) => Some(model.clone()),
            None if has_messages => {
                let available = self.available_models();
                let (model, notice) = crate::extensions::restored_model(
                    selection.as_ref(),
                    restored_model.as_ref(),
                    &available,
                    &self.ops.registry,
                );
                self.ops.warnings.extend(notice);
                model.cloned()
            }
            None => None,
        };
        if let Some(model) = model
            && (model.provider != self.model.provider || model.id != self.model.id)
        {
            // Without credentials for the session's model, the current one stays.
            if let Some(resolved) = self.ops.resolve_auth(&model).await? {
                self.agent.config_mut().model = model.clone();
                self.use_auth(resolved);
                self.model = model;
            }
        }
        let saved_default = || self.settings.values().default_thinking_level;
        let level = self
            .ops
            .cli_thinking
            .or(if has_messages {
                restored_level.flatten()
            } else {
                None
            })
            .unwrap_or_else(saved_default);
        let level = self.model.clamp_thinking_level(level);
        {
            let mut session = lock(&self.session);
            if !has_messages {
                // A session without a model yet records the first one picked instead.
                if !self.model.is_unselected() {
                    session.append_model_change(&self.model.provider, &self.model.id)?;
                }
                session.append_thinking_level_change(level.as_str())?;
            } else if restored_level.is_none() {
                session.append_thinking_level_change(level.as_str())?;
            }
        }
        let previous = self.thinking;
        self.thinking = level;
        self.agent.config_mut().options.thinking = level;
        Ok(ThinkingChange {
            level,
            changed: level != previous,
        })
    }

    /// A user shell command (`!cmd`, RPC `bash`) in the session's folder, with the
    /// `shellPath` and `shellCommandPrefix` settings applied. Run it with [`UserBash::run`].
    pub fn user_bash(&self, command: &str, exclude_from_context: bool) -> UserBash {
        UserBash {
            command: command.to_owned(),
            exclude_from_context,
            cwd: PathBuf::from(lock(&self.session).cwd()),
            shell_path: self.settings.values().shell_path(self.ops.home.as_deref()),
            prefix: self.settings.values().shell_command_prefix.clone(),
            sandbox: self.sandbox.user_command_launcher(),
        }
    }

    /// The session's hooks (extensions first), for work that runs beside the session
    /// task (user shell commands).
    pub fn session_hooks(&self) -> Arc<dyn crate::hooks::SessionHooks> {
        Arc::clone(&self.hooks)
    }

    /// Stores a finished user shell command in the session. Call it only between runs: a
    /// message appended while the agent streams would land between a tool call and its
    /// result.
    pub fn record_bash_execution(&self, message: BashExecutionMessage) -> Result<()> {
        lock(&self.session).append_message(AgentMessage::BashExecution(Box::new(message)))?;
        Ok(())
    }
}

/// A user message's text blocks joined without separator (the reference's rule for fork
/// texts).
fn user_text(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(user) => match &user.content {
            Content::Text(text) => text.clone(),
            Content::Blocks(blocks) => blocks.iter().filter_map(ContentBlock::as_text).collect(),
        },
        _ => String::new(),
    }
}

fn not_saved_yet(error: SessionError) -> RuntimeError {
    match error {
        SessionError::NotPersisted => RuntimeError::Rejected(NOT_SAVED_YET.to_owned()),
        other => RuntimeError::Session(other),
    }
}

/// Messages shared between the view and statistics: the session's current context without
/// the system prompt snapshots (those are the prompt, not conversation).
fn conversation(session: &Mutex<SessionManager>) -> Vec<AgentMessage> {
    let session = lock(session);
    session
        .build_context()
        .messages
        .iter()
        .filter(|m| !matches!(*m.message, AgentMessage::System(_)))
        .map(|m| (*m.message).clone())
        .collect()
}

/// One thing the transcript shows, in order: a message of the conversation, or a custom entry
/// (`appendEntry`) that an extension's entry renderer may draw.
#[derive(Debug, Clone, PartialEq)]
pub enum TranscriptItem {
    Message(AgentMessage),
    Entry(knightcode_protocol::CustomEntry),
}

/// The conversation as [`conversation`] gives it, with the branch's custom entries in place.
fn transcript(session: &Mutex<SessionManager>) -> Vec<TranscriptItem> {
    let session = lock(session);
    let tree = session.tree();
    let context = session.build_context();
    let entries =
        knightcode_session::context::custom_entry_positions(tree, tree.leaf(), &context.messages);
    let mut entries = entries.into_iter().peekable();
    let mut items = Vec::with_capacity(context.messages.len());
    for (at, projected) in context.messages.iter().enumerate() {
        while let Some((_, entry)) = entries.next_if(|(before, _)| *before <= at) {
            items.push(TranscriptItem::Entry(entry.clone()));
        }
        if !matches!(*projected.message, AgentMessage::System(_)) {
            items.push(TranscriptItem::Message((*projected.message).clone()));
        }
    }
    items.extend(entries.map(|(_, entry)| TranscriptItem::Entry(entry.clone())));
    items
}
