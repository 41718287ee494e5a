//! `AgentSession`: one conversation wired together — session file, model and auth, tools,
//! system prompt and the agent loop. Print, JSON and RPC modes drive it; so can Rust code.

mod compacting;
mod loadout;
mod mcp_command;
mod mcp_menu;
mod mcp_sign_in;
pub mod operations;
mod prompt;
mod recorder;
mod request;
mod start;
mod tools;
mod undo;

pub use self::mcp_command::McpCommand;
pub use self::mcp_command::parse_mcp_command;
pub use self::undo::Navigated;
pub use self::undo::is_undo_command;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_agent::Agent;
use knightcode_agent::AgentHandle;
use knightcode_agent::EventReceiver;
use knightcode_agent::RunOutcome;
use knightcode_ai::Model;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::SessionHeader;
use knightcode_session::SessionManager;
use knightcode_session::SessionStore;
use knightcode_tools::ImagePolicy;
use knightcode_tools::SessionEnv;

use self::operations::PromptStart;
pub(crate) use self::tools::image_policy;
use crate::context_files::ContextFile;
use crate::context_files::PromptFiles;
use crate::context_files::discover_context_files;
use crate::dialogs::Dialogs;
use crate::error::Result;
use crate::file_history::FileHistory;
use crate::hooks::InputSource;
use crate::hooks::PromptInput;
use crate::hooks::SessionHooks;
use crate::services::Services;
use crate::settings::Settings;
use crate::trust::TrustDecision;
use crate::web_tools::WebTools;

/// Which session to work in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionTarget {
    /// `--no-session`: nothing is written.
    InMemory,
    /// A new session file in `dir` (written on the first reply).
    New {
        dir: PathBuf,
        session_id: Option<String>,
    },
    /// An existing file (or a path where a new session should be written).
    Open(PathBuf),
    /// `--fork <source>`: a copy of `source` in `dir`.
    Fork {
        source: PathBuf,
        dir: PathBuf,
        session_id: Option<String>,
    },
}

/// Which tools to offer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSelection {
    /// `--tools`: exactly these (names or `*` patterns, see `tool_selection`).
    pub allow: Option<Vec<String>>,
    /// `--exclude-tools` (names or `*` patterns).
    pub exclude: Vec<String>,
    /// `--no-builtin-tools`.
    pub no_builtin: bool,
    /// `--no-tools`.
    pub no_tools: bool,
}

/// Everything a run is started with; the CLI fills it from flags, an SDK user by hand.
#[derive(Debug, Clone)]
pub struct SessionSetup {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    pub home: Option<PathBuf>,
    pub target: SessionTarget,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<ThinkingLevel>,
    pub api_key: Option<String>,
    pub tools: ToolSelection,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Vec<String>,
    pub no_context_files: bool,
    /// `--approve` (Some(true)) / `--no-approve` (Some(false)).
    pub approve: Option<bool>,
    /// `--name`.
    pub name: Option<String>,
    /// `--models`: the scope for start-up and model cycling (else `enabledModels`).
    pub models: Option<Vec<String>>,
    /// How long a streaming response waits between small reads (see
    /// `knightcode_ai::Client::with_read_pacing`); zero reads at once.
    pub stream_read_pacing: std::time::Duration,
    /// Extensions to load (`-e`, `--no-extensions`, discovered directories).
    pub extensions: crate::extensions::ExtensionSources,
    /// `--skill`, `--no-skills`, `--prompt-template`, `--no-prompt-templates`.
    pub resources: crate::resources::ResourceFlags,
    /// Where the start-up installs of a trusted project's missing packages report.
    pub package_installs: crate::project_packages::InstallOutput,
    /// The first trust pass a front end ran ahead of its own trust question
    /// ([`crate::extensions::ask_extensions_about_trust`]); the session goes on with its host.
    pub first_pass: Option<crate::extensions::FirstPass>,
    /// What building this setup has to tell the user (an untrusted project's `sessionDir`
    /// left unused); shown first among the session's notices.
    pub notices: Vec<String>,
    /// `--no-mcp`: no `mcp.json` is read and no server started.
    pub no_mcp: bool,
    /// `--sandbox` and the binary that starts sandboxed commands.
    pub sandbox: crate::sandbox::SandboxRequest,
    /// With no model configured at all, start anyway on [`knightcode_ai::Model::unselected`]
    /// (the interactive mode's first run: it says how to get a model and takes one without a
    /// restart); otherwise the start fails with that advice.
    pub start_without_model: bool,
}

impl SessionSetup {
    pub fn new(cwd: PathBuf, agent_dir: PathBuf, target: SessionTarget) -> Self {
        Self {
            cwd,
            agent_dir,
            home: None,
            target,
            provider: None,
            model: None,
            thinking: None,
            api_key: None,
            tools: ToolSelection::default(),
            system_prompt: None,
            append_system_prompt: Vec::new(),
            no_context_files: false,
            approve: None,
            name: None,
            models: None,
            stream_read_pacing: std::time::Duration::ZERO,
            extensions: crate::extensions::ExtensionSources::default(),
            resources: crate::resources::ResourceFlags::default(),
            package_installs: crate::project_packages::InstallOutput::default(),
            first_pass: None,
            notices: Vec::new(),
            no_mcp: false,
            sandbox: crate::sandbox::SandboxRequest::default(),
            start_without_model: false,
        }
    }
}

/// Locks the extensions' record of the selected model (nothing panics while holding it).
pub(crate) fn lock_selection<T>(selection: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    selection.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn lock(session: &Mutex<SessionManager>) -> std::sync::MutexGuard<'_, SessionManager> {
    // Appends either complete or roll back inside the session store, so a panic elsewhere
    // cannot leave the manager half-updated.
    session.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One live conversation.
pub struct AgentSession {
    session: Arc<Mutex<SessionManager>>,
    agent: Agent,
    handle: AgentHandle,
    model: Model,
    thinking: ThinkingLevel,
    settings: Settings,
    trust: TrustDecision,
    prompt_files: PromptFiles,
    context_files: Vec<ContextFile>,
    /// Skills and prompt templates (shared with the actor, which expands queued messages).
    resources: Arc<knightcode_resources::Resources>,
    /// Where `get_commands` finds extension commands.
    command_sources: Arc<crate::resources::CommandSources>,
    cwd: PathBuf,
    /// Things worth telling the user on stderr (skipped project resources, bad files, …).
    notices: Vec<String>,
    /// What model switches and session replacement need later (see `operations`).
    ops: operations::OpsState,
    hooks: Arc<dyn SessionHooks>,
    /// The provider the loop streams with; summaries go through it too.
    provider: Arc<dyn knightcode_ai::Provider>,
    /// What compactions use (the loop's and the session's own), brought up to date
    /// before each run.
    compaction: compacting::CompactionState,
    /// The `KNIGHTCODE_*` variables the bash tool exports, brought up to date before each
    /// run.
    session_env: Arc<Mutex<SessionEnv>>,
    /// How `read` treats images (resize setting, the model's limits and vision), brought
    /// up to date before each run.
    image_policy: Arc<Mutex<ImagePolicy>>,
    /// `tools.json`: web tools on by default, the search provider and key (`/tools`).
    web_tools: WebTools,
    /// Backups of the files the tools change, for `/undo` and `/tree`.
    file_history: Arc<FileHistory>,
    /// The OS sandbox of tool commands and file writes (`--sandbox`).
    sandbox: crate::sandbox::SessionSandbox,
    /// Who the built-in `/undo` asks when the front end has no picker of its own.
    dialogs: Arc<dyn Dialogs>,
    /// The loaded extensions, for the lifecycle events the actor hands them.
    extension_host: Option<Arc<knightcode_ext::ExtensionHost>>,
    /// The registry extensions see (`ctx.modelRegistry`), updated with the session's.
    extension_models: Option<crate::extensions::models::SharedModels>,
    /// How extensions act on the session (`sendUserMessage`, `setActiveTools`).
    extension_actions: Arc<crate::extensions::ExtensionActions>,
    /// Resource paths of `-e` packages and `resources_discover`, and the `-e` values.
    extension_resources: crate::resources::ExtensionResources,
    extension_cli: Vec<String>,
    /// The MCP servers and the tools of theirs the model is offered.
    mcp: crate::mcp::McpSession,
    /// The built-in plan mode (inert when an extension replaced it).
    plan: Arc<crate::plan_mode::PlanMode>,
    /// What codemode scripts' `models` global lists, brought up to date before each run.
    script_models: Arc<crate::codemode_tools::ScriptModelList>,
    /// Keeps the last request's prompt cache warm (`cacheWarming`).
    cache_warming: crate::cache_warming::CacheWarming,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field(
                "model",
                &format_args!("{}/{}", self.model.provider, self.model.id),
            )
            .field("thinking", &self.thinking)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

impl AgentSession {
    /// Starts a session: trust, settings, session file, model, tools, prompt inputs.
    /// Returns the session and the receiver of its events.
    pub async fn start(setup: SessionSetup) -> Result<(Self, EventReceiver)> {
        Self::start_with_store(setup, SessionStore::default()).await
    }

    /// As [`Self::start`], with a caller-owned session store (shared ownership registry, clock).
    pub async fn start_with_store(
        setup: SessionSetup,
        store: SessionStore,
    ) -> Result<(Self, EventReceiver)> {
        Self::start_with(setup, Services::default().with_store(store)).await
    }

    /// Steering, queueing and abort while a prompt runs.
    pub fn handle(&self) -> AgentHandle {
        self.handle.clone()
    }

    /// Who the built-in `/undo` asks (RPC mode's extension-UI bridge); no one by default.
    pub fn set_dialogs(&mut self, dialogs: Arc<dyn Dialogs>) {
        self.extension_actions.set_dialogs(Arc::clone(&dialogs));
        self.plan.set_dialogs(Arc::clone(&dialogs));
        self.dialogs = dialogs;
    }

    /// The session's file history (backups for `/undo`).
    pub(crate) fn extension_actions(&self) -> &Arc<crate::extensions::ExtensionActions> {
        &self.extension_actions
    }

    /// Resolves when an extension called `ctx.shutdown()` (RPC mode then ends as on EOF).
    pub fn shutdown_requested(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let shutdown = self.extension_actions.shutdown_signal();
        async move { shutdown.notified().await }
    }

    /// The session's extensions, when any are loaded.
    pub fn extension_host(&self) -> Option<Arc<knightcode_ext::ExtensionHost>> {
        self.extension_host.clone()
    }

    /// The session's cache warmer.
    pub fn cache_warming(&self) -> &crate::cache_warming::CacheWarming {
        &self.cache_warming
    }

    /// Tells the warmer the setting, the model and the conversation as they are now.
    pub(crate) fn note_cache_context(&self) {
        self.cache_warming
            .set_mode(self.settings.values().cache_warming);
        self.cache_warming
            .check_context(&self.model, self.agent.messages());
    }

    /// What the warmer's timer task needs: refreshes go to the provider under the agent's
    /// (so they do not count as real requests) and records come back through `inbox`.
    pub(crate) fn cache_refresher(
        &self,
        inbox: tokio::sync::mpsc::WeakUnboundedSender<crate::actor::Envelope>,
    ) -> crate::cache_warming::task::Refresher {
        crate::cache_warming::task::Refresher {
            warming: self.cache_warming.clone(),
            provider: Arc::clone(&self.provider),
            host: self.extension_host.clone(),
            inbox,
        }
    }

    /// Where a terminal front end sends keys, size and theme to extensions' components.
    pub fn component_channel(&self) -> Option<crate::dialogs::ComponentChannel> {
        self.extension_host
            .clone()
            .map(crate::dialogs::ComponentChannel::new)
    }

    pub fn file_history(&self) -> &Arc<FileHistory> {
        &self.file_history
    }

    /// What plan mode told a front end without dialogs since the last call (print mode
    /// writes it to stderr).
    pub fn take_plan_notices(&self) -> Vec<(crate::dialogs::NoticeKind, String)> {
        self.plan.take_notices()
    }

    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        self.thinking
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The context files (AGENTS.md, CLAUDE.md, ...) loaded into the system prompt.
    pub fn context_files(&self) -> &[ContextFile] {
        &self.context_files
    }

    /// The skills and prompt templates loaded (with their diagnostics).
    pub fn resources(&self) -> &Arc<knightcode_resources::Resources> {
        &self.resources
    }

    /// `/reload`: skills, prompt templates and context files read again (with the settings
    /// files' `skills` and `prompts` lists as they are now). The next request carries the
    /// changed prompt.
    pub fn reload_resources(&mut self) -> &Arc<knightcode_resources::Resources> {
        // The `skills` and `prompts` lists as the files have them now; the session's own
        // settings (with this process's changes) stay as they are.
        let lists = Settings::load(&self.ops.agent_dir, &self.cwd, self.trust.trusted);
        self.context_files = if self.ops.no_context_files {
            Vec::new()
        } else {
            discover_context_files(&self.ops.agent_dir, &self.cwd)
        };
        self.resources = Arc::new(crate::resources::load(
            &self.ops.resource_flags,
            &lists,
            &self.cwd,
            &self.ops.agent_dir,
            self.ops.home.as_deref(),
            self.trust.trusted,
            &self.extension_resources,
        ));
        &self.resources
    }

    /// `resources_discover` again (after `/reload` or a session replacement): the paths
    /// extensions name now. `true` when they changed.
    pub(crate) async fn rediscover_extension_resources(&mut self, reason: &str) -> bool {
        let Some(host) = self.extension_host.clone() else {
            return false;
        };
        let found =
            crate::extensions::resources::discover(&host, &self.cwd, reason, &self.extension_cli)
                .await;
        let changed = found != self.extension_resources.discovered;
        self.extension_resources.discovered = found;
        changed
    }

    pub fn trust(&self) -> &TrustDecision {
        &self.trust
    }

    /// Whether the built-in plan mode answers `/plan` (an extension that registers `/plan`,
    /// `--plan` or a planning tool replaces it).
    pub fn builtin_plan_mode(&self) -> bool {
        self.plan.enabled()
    }

    /// Whether an extension that replaces plan mode declared `--plan` as a string flag and
    /// took the argument after it ([`crate::ExtensionSources::plan_argument`]): then that
    /// argument is no message, and front ends leave it out of the first prompts.
    pub fn plan_argument_taken(&self) -> bool {
        self.plan.argument_taken()
    }

    pub(crate) fn plan_mode(&self) -> Arc<crate::plan_mode::PlanMode> {
        Arc::clone(&self.plan)
    }

    /// The session header (the first record of `--mode json`).
    pub fn header(&self) -> SessionHeader {
        lock(&self.session).header().clone()
    }

    /// The session, for reads (tree, entries, stats).
    pub fn session(&self) -> Arc<Mutex<SessionManager>> {
        Arc::clone(&self.session)
    }

    /// Runs one user prompt to completion (tool calls, queued messages, retries). A prompt
    /// an input hook handled runs nothing and returns an empty outcome.
    pub async fn prompt(&mut self, text: &str, images: Vec<ContentBlock>) -> Result<RunOutcome> {
        let input = PromptInput {
            text: text.to_owned(),
            images,
            source: InputSource::Rpc,
        };
        match self.begin_prompt(input).await? {
            PromptStart::Handled => Ok(RunOutcome {
                messages: Vec::new(),
                aborted: false,
                error: None,
            }),
            PromptStart::Run(messages) => self.run_prompt(messages).await,
        }
    }
}

/// The thinking level the session's branch last recorded: `None` when it never recorded
/// one, `Some(None)` when the last one is not a level this build knows (the last entry
/// decides, as in the reference's context building).
pub(crate) fn restored_thinking_level(session: &SessionManager) -> Option<Option<ThinkingLevel>> {
    session.branch(None).ok().and_then(|path| {
        path.iter().rev().find_map(|entry| match entry {
            knightcode_protocol::SessionEntry::ThinkingLevelChange(change) => {
                Some(ThinkingLevel::parse(&change.thinking_level))
            }
            _ => None,
        })
    })
}

fn now_millis() -> Millis {
    Millis(chrono::Utc::now().timestamp_millis())
}
