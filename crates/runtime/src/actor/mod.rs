//! The session actor: one task owns the [`AgentSession`] (and so is the single writer of its
//! session file); front ends hold a [`SessionHandle`], send [`Command`]s and read one stream
//! of [`SessionEvent`]s.
//!
//! Every command is accepted at any time. While a prompt runs, queueing (`steer`,
//! `follow_up`, a prompt with a [`Queueing`]), `abort`, user shell commands and every read
//! are served at once; changes to the model, thinking level, settings and the session itself
//! wait for the run to end (the ones that replace the conversation abort it first); a prompt
//! without a queueing mode is refused with the reference's message.
//!
//! Order: the events a command causes precede its reply, a prompt's reply precedes its
//! `agent_start`, and an `abort` is answered after the aborted run's last event. Replies
//! sent with [`Responder::Stream`] travel in the event stream itself, so a front end that
//! writes the stream in order (RPC mode) keeps that order without bookkeeping.

mod bash_jobs;
mod command_error;
mod export;
mod extension_commands;
mod handlers;
mod policy;
mod task;

pub use command_error::CommandError;
pub use handlers::ALREADY_PROCESSING;
pub use handlers::BRANCH_SUMMARY_BUSY;
pub use handlers::COMPACTION_BUSY;
pub use handlers::NAVIGATION_BUSY;
pub use task::NAVIGATION_CANCELLED;

use std::path::PathBuf;

use knightcode_agent::AgentHandle;
use knightcode_agent::QueueMode;
use knightcode_agent::QueuedMessages;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::rpc::BashResult;
use knightcode_protocol::rpc::EntriesResult;
use knightcode_protocol::rpc::ForkMessage;
use knightcode_protocol::rpc::ModelInfo;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_protocol::rpc::SessionState;
use knightcode_protocol::rpc::SessionStats;
use tokio::sync::mpsc;
use tokio::sync::oneshot;

use crate::AgentSession;
use crate::agent_session::operations::ModelSwitch;
use crate::agent_session::operations::SessionView;
use crate::agent_session::operations::ThinkingChange;
pub use crate::compaction::branch::SummaryRequest;
use crate::diagnostics::Diagnostic;
use crate::hooks::InputSource;

/// Events buffered for the front end before the session waits for it to read.
pub const EVENT_CAPACITY: usize = 256;

/// How a prompt sent while a run goes on is queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queueing {
    Steer,
    FollowUp,
}

/// What a front end asks of the session.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Runs a prompt; while a run goes on it is queued as `queueing` says, or refused.
    Prompt {
        text: String,
        images: Vec<ContentBlock>,
        queueing: Option<Queueing>,
        source: InputSource,
    },
    Steer {
        text: String,
        images: Vec<ContentBlock>,
    },
    FollowUp {
        text: String,
        images: Vec<ContentBlock>,
    },
    ClearQueue,
    /// Aborts the run; answered once it has ended.
    Abort,
    /// Stops an auto-retry backoff (nothing else).
    AbortRetry,
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel {
        forward: bool,
    },
    SetThinkingLevel(ThinkingLevel),
    /// An extension's `pi.setModel`: as `SetModel`, leaving the saved defaults alone.
    SetModelForSession {
        provider: String,
        model_id: String,
    },
    /// An extension's `pi.setThinkingLevel`: as `SetThinkingLevel`, not saved.
    SetThinkingLevelForSession(ThinkingLevel),
    CycleThinkingLevel,
    SetSteeringMode(QueueMode),
    SetFollowUpMode(QueueMode),
    SetAutoCompaction(bool),
    SetAutoRetry(bool),
    /// Saves settings (dotted key, value) to the global file and the loaded settings, as
    /// `/settings` changes them; the session takes up those it acts on. Waits for a running
    /// prompt.
    SaveSettings(Vec<(String, serde_json::Value)>),
    /// `/tools`: switch a web tool, pick the search provider (and Brave key), or with an
    /// empty change just report; answered with [`Reply::WebTools`]. Waits for a running
    /// prompt (the tool list of a request does not change mid-run).
    ConfigureWebTools(crate::web_tools::WebToolsChange),
    /// Offer exactly these tools (unknown names are left out); an extension's
    /// `setActiveTools`. Waits for a running prompt.
    SetActiveTools(Vec<String>),
    /// An extension registered tools after `session_start` (`registerTool` from a command
    /// or a tool, `refreshTools`): they join the registry and are offered from the next
    /// request. Waits for a running prompt.
    RefreshExtensionTools,
    /// An extension registered (or unregistered) a provider after loading: the registry
    /// takes it at once.
    ExtensionProvider {
        name: String,
        /// `None`: unregistered.
        spec: Option<Box<knightcode_ext::ProviderSpec>>,
    },
    /// An extension registered (`Some` model) or unregistered a virtual model after loading.
    ExtensionVirtualModel {
        provider: String,
        id: String,
        model: Option<Box<knightcode_ai::Model>>,
    },
    /// An extension registered or unregistered an MCP server after loading: every server
    /// extensions registered now. Waits for a running prompt.
    ExtensionMcpServers(Vec<knightcode_ext::McpServerSpec>),
    /// An extension's `pi.sendMessage`: while a run goes on it is steering, or a follow-up
    /// with `follow_up`; when idle it starts a run with `trigger_turn`, else it only joins
    /// the conversation.
    SendCustomMessage {
        message: Box<AgentMessage>,
        trigger_turn: bool,
        follow_up: bool,
    },
    NewSession {
        parent_session: Option<String>,
    },
    SwitchSession(PathBuf),
    /// Continues the session file at this path in a fork of all of it (one another process
    /// owns); answered with [`Reply::SessionReplaced`].
    ForkSessionFile(PathBuf),
    Fork(String),
    Clone,
    SetSessionName(String),
    /// Moves the leaf within the tree (`/tree`); while a run goes on it is aborted first.
    /// With `summary` the branch left behind is summarised first (abort cancels it all);
    /// `label` goes on the summary entry, or on the target without one. With
    /// `restore_files` the files the abandoned turns changed are put back once the leaf
    /// has moved (see `SessionView::restore_plan` for what that would be).
    NavigateTree {
        entry_id: Option<String>,
        summary: Option<SummaryRequest>,
        label: Option<String>,
        restore_files: bool,
    },
    /// `ctx.fork(entryId, {position})`: `before` a user message as [`Command::Fork`],
    /// `at` an entry as a clone of the branch ending there.
    ExtensionFork {
        entry_id: String,
        at: bool,
    },
    /// `auth.json` changed here (`/login`, `/logout`): the credentials are read again and
    /// the model registry rebuilt, so a new provider's models are usable at once. A session
    /// without a model takes `provider`'s default model; answered with
    /// [`Reply::CredentialsReloaded`]. Waits for a running prompt.
    ReloadCredentials {
        provider: Option<String>,
    },
    /// Replaces the model scope (`/scoped-models`); `save` also writes `enabledModels`.
    SetScopedModels {
        models: Vec<(String, String)>,
        save: bool,
    },
    /// A user shell command; answered when it has finished. Its output streams as
    /// `bash_execution_update` events tagged `id`.
    Bash {
        command: String,
        exclude_from_context: bool,
        id: Option<String>,
    },
    AbortBash,
    /// Summarise older history now (aborts a running prompt first).
    Compact {
        custom_instructions: Option<String>,
    },
    /// Writes the session as one HTML page (`output`, else `knightcode-session-<file>.html`
    /// in the working directory) in `colors`, else the built-in dark theme's; answered with
    /// [`Reply::Exported`].
    ExportHtml {
        output: Option<PathBuf>,
        colors: Option<crate::export::ExportColors>,
    },
    /// Writes the current branch as JSONL (`/export file.jsonl`).
    ExportJsonl {
        output: Option<PathBuf>,
    },
    GetState,
    GetMessages,
    GetAvailableModels,
    GetAvailableThinkingLevels,
    GetSessionStats,
    GetEntries {
        since: Option<String>,
    },
    GetTree,
    GetForkMessages,
    GetLastAssistantText,
    /// Everything a screen shows about the session: [`Reply::Snapshot`].
    Snapshot,
    /// `get_commands`: prompt templates and skills ([`Reply::Commands`]).
    GetCommands,
    /// `/reload`: skills, prompt templates and context files read again (after a running
    /// prompt); answered with [`Reply::Reloaded`].
    Reload,
    /// Puts a diagnostic into the event stream, in order (MCP servers, extensions).
    Report(Diagnostic),
    /// The cache warmer refreshed the prompt cache: its usage is recorded (a `usage` entry
    /// of kind `cache_warm`, reported as `entry_appended`), during a run too.
    RecordCacheWarm(Box<crate::cache_warming::CacheWarmUsage>),
    /// Does nothing; its [`Reply::Done`] comes back in order with the events (a front end
    /// that answers a line itself uses it to place that answer).
    Ping,
    /// Answered once the session is idle (`ctx.waitForIdle`): at once, or after the run.
    WaitForIdle,
    /// The agent takes up the session file's context again (after `newSession`'s `setup`
    /// wrote into it). Waits for a running prompt.
    ReloadContext,
    /// An extension command run from a prompt has finished; answers that prompt `handled`.
    ExtensionCommandDone,
    /// The front end's input ended: abort the run and shell commands, answer what is
    /// pending, then end (as when every handle is gone).
    EndOfInput,
    /// A signal: abort the run, kill running shell commands (waiting briefly until they are
    /// reaped), answer, and stop taking commands.
    Terminate,
}

/// The answer to a [`Command`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Done; nothing to report.
    Done,
    /// Refused or failed: what happened, and the message for the user.
    Failed(CommandError),
    Prompt(PromptDisposition),
    Cleared(QueuedMessages),
    ModelSet(ModelSwitch),
    /// `None` when there is no other model to go to.
    ModelCycled(Option<ModelSwitch>),
    /// `None` for a model without thinking levels.
    ThinkingCycled(Option<ThinkingChange>),
    /// A new, switched or cloned session (`cancelled` when a hook declined).
    SessionReplaced {
        cancelled: bool,
    },
    /// Forked; the text of the user message forked from.
    Forked {
        text: String,
    },
    /// The leaf moved; the text of the user message navigated to, for the editor, and what
    /// restoring files did when that was asked for.
    Navigated {
        text: Option<String>,
        restored: Option<crate::file_history::RestoreReport>,
    },
    Snapshot(Box<SessionSnapshot>),
    Bash(BashResult),
    State(SessionState),
    Messages(Vec<AgentMessage>),
    Models(Vec<ModelInfo>),
    ThinkingLevels(Vec<ThinkingLevel>),
    Stats(SessionStats),
    Entries(EntriesResult),
    /// `get_tree`'s data as JSON text (it is built as text: trees can be large).
    Tree(String),
    ForkMessages(Vec<ForkMessage>),
    LastAssistantText(Option<String>),
    Compacted(knightcode_protocol::rpc::CompactionResult),
    WebTools(crate::web_tools::WebToolsStatus),
    /// The file an export wrote.
    Exported(PathBuf),
    Commands(Vec<knightcode_protocol::rpc::SlashCommand>),
    /// What `/reload` loaded: the resources, and the report of their problems.
    Reloaded(std::sync::Arc<knightcode_resources::Resources>),
    /// The credentials were read again; the model a session without one took, if any.
    CredentialsReloaded(Option<ModelSwitch>),
}

/// The session as a screen shows it, taken at one moment.
#[derive(Debug, Clone)]
pub struct SessionSnapshot {
    /// Reads of the session file (stats, messages, state).
    pub view: SessionView,
    /// Models with credentials, in catalog order.
    pub models: Vec<knightcode_ai::Model>,
    /// The `--models` / `enabledModels` scope as (provider, id).
    pub scoped_models: Vec<(String, String)>,
    pub model: knightcode_ai::Model,
    pub thinking: ThinkingLevel,
    pub thinking_levels: Vec<ThinkingLevel>,
    /// `branchSummary.skipPrompt`: `/tree` leaves branches without offering a summary.
    pub skip_branch_summary_prompt: bool,
}

impl PartialEq for SessionSnapshot {
    fn eq(&self, other: &Self) -> bool {
        self.model == other.model
            && self.thinking == other.thinking
            && self.scoped_models == other.scoped_models
    }
}

impl AgentSession {
    /// The session as a screen shows it now.
    pub fn snapshot(&self) -> SessionSnapshot {
        SessionSnapshot {
            view: self.view(),
            models: self.available_models(),
            scoped_models: self
                .scoped_models()
                .iter()
                .map(|s| (s.model.provider.clone(), s.model.id.clone()))
                .collect(),
            model: self.model().clone(),
            thinking: self.thinking_level(),
            thinking_levels: self.available_thinking_levels(),
            skip_branch_summary_prompt: self.settings().values().branch_summary_skip_prompt,
        }
    }
}

/// Where the reply to a command goes.
#[derive(Debug)]
pub enum Responder {
    /// Into the event stream as [`SessionEvent::Reply`] with this tag, in order with events.
    Stream(u64),
    /// To whoever awaits this.
    Oneshot(oneshot::Sender<Reply>),
    /// Nowhere (the command is sent for its effect).
    Nobody,
}

/// What the session reports.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// An agent or session event, as `--mode json` and RPC write it.
    Agent(AgentEvent),
    /// The reply to a command sent with [`Responder::Stream`].
    Reply { tag: u64, reply: Reply },
    /// A problem worth telling the user (stderr in the headless modes).
    Diagnostic(Diagnostic),
    /// A run stopped on a failure of the runtime around the loop (the session file could
    /// not be written); the text says what to do.
    RunFailed(String),
}

pub(crate) struct Envelope {
    pub(crate) command: Command,
    pub(crate) responder: Responder,
}

/// A front end's way to the session; cheap to clone. The session ends when every handle is
/// gone and the work it was given has finished.
#[derive(Clone)]
pub struct SessionHandle {
    commands: mpsc::UnboundedSender<Envelope>,
    agent: AgentHandle,
    /// The session's extensions: an abort stops their running JS at once, from here,
    /// because a handler stuck in a loop can hold up the session task itself.
    extensions: Option<std::sync::Arc<knightcode_ext::ExtensionHost>>,
    /// Told once the front end has shown itself (see [`SessionHandle::front_end_ready`]).
    front_end_ready: std::sync::Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle").finish_non_exhaustive()
    }
}

/// The session's end of things: the stream of events. It ends after the session stopped.
pub type SessionEvents = mpsc::Receiver<SessionEvent>;

impl SessionHandle {
    /// Sends a command; its reply goes where `responder` says.
    pub fn send(&self, command: Command, responder: Responder) {
        if matches!(command, Command::Abort) {
            self.interrupt_extensions();
        }
        // A send fails only when the session task is gone; the responder then learns it
        // from its closed channel.
        let _ = self.commands.send(Envelope { command, responder });
    }

    /// Sends a command and waits for its reply.
    pub async fn request(&self, command: Command) -> Reply {
        let (tx, rx) = oneshot::channel();
        self.send(command, Responder::Oneshot(tx));
        rx.await
            .unwrap_or_else(|_| Reply::Failed(CommandError::Ended))
    }

    /// Says the front end has shown itself (the terminal drew its first frame): the
    /// configured MCP servers start connecting now rather than beside it. Without this they
    /// start after the first command, or at the latest `MCP_CONNECT_AT_LATEST` after the
    /// session task started.
    pub fn front_end_ready(&self) {
        self.front_end_ready.notify_one();
    }

    /// Empties both queues at once and returns what they held (Escape puts it back into the
    /// editor before the abort it sends).
    pub fn clear_queue_now(&self) -> QueuedMessages {
        self.agent.clear_queue()
    }

    /// Aborts the run in progress at once, without waiting for the session task (signals).
    pub fn abort_now(&self) {
        self.agent.abort();
        self.interrupt_extensions();
    }

    fn interrupt_extensions(&self) {
        if let Some(host) = &self.extensions {
            host.interrupt();
        }
    }

    /// The session's extensions that register an OAuth login (`/login` runs it).
    pub fn extension_logins(&self) -> Option<crate::extensions::login::ExtensionLogins> {
        self.extensions
            .clone()
            .map(crate::extensions::login::ExtensionLogins::new)
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        self.agent.is_running()
    }
}

/// What [`spawn`] needs besides the session: where its task runs.
impl AgentSession {
    /// Moves the session into its own task (on the current tokio runtime) and returns the
    /// handle to command it and the stream of its events. `events` is the receiver
    /// [`AgentSession::start`] returned.
    pub fn spawn(self, events: knightcode_agent::EventReceiver) -> (SessionHandle, SessionEvents) {
        let (commands, inbox) = mpsc::unbounded_channel();
        self.extension_actions().bind(&commands);
        let (out, stream) = mpsc::channel(EVENT_CAPACITY);
        // The warmer's timer runs beside the actor, which stops it when it ends.
        let warming_stop = tokio_util::sync::CancellationToken::new();
        tokio::spawn(crate::cache_warming::task::drive(
            self.cache_refresher(commands.downgrade()),
            warming_stop.clone(),
        ));
        let front_end_ready = std::sync::Arc::new(tokio::sync::Notify::new());
        let handle = SessionHandle {
            commands,
            agent: self.handle(),
            extensions: self.extension_host(),
            front_end_ready: std::sync::Arc::clone(&front_end_ready),
        };
        tokio::spawn(task::run(
            self,
            events,
            (inbox, front_end_ready),
            out,
            warming_stop,
        ));
        (handle, stream)
    }
}
