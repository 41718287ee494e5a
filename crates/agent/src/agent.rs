//! The [`Agent`]: conversation state, configuration and the handle other tasks use to steer,
//! queue and abort while a run goes on. The run itself is in [`crate::run`].

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;

use knightcode_ai::Model;
use knightcode_ai::Provider;
use knightcode_ai::RetryPolicy;
use knightcode_ai::StreamOptions;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::clock::SystemClock;
use crate::error::AgentError;
use crate::events::EventSender;
use crate::hooks::AgentHooks;
use crate::hooks::NoHooks;
use crate::persist::MessageStore;
use crate::persist::NoStore;
use crate::queue::QueueMode;
use crate::queue::QueuedMessages;
use crate::queue::Queues;
use crate::run::Start;
use crate::tool::ToolRegistry;

/// What the loop needs to talk to the model and run tools. Fields can change between runs
/// ([`Agent::config_mut`]): a new model, thinking level or tool set applies to the next run.
#[derive(Clone)]
pub struct AgentConfig {
    pub model: Model,
    /// API key, thinking level, token caps, cache settings for every request.
    pub options: StreamOptions,
    /// The rendered system prompt.
    pub system_prompt: Option<String>,
    /// Every tool the agent knows.
    pub tools: ToolRegistry,
    /// The tools the model is offered and may call, by name; `None` means all of `tools`.
    /// A call of any other tool gets a `Tool <name> not found` error result.
    pub active_tools: Option<Vec<String>>,
    /// What active orchestrating tools change in the declarations (`prepareLoadout`).
    pub loadout: crate::tool::Loadout,
    /// The working directory handed to tools.
    pub cwd: PathBuf,
    /// Agent-level auto-retry of failed turns (`retry.*` settings).
    pub retry: RetryPolicy,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field(
                "model",
                &format_args!("{}/{}", self.model.provider, self.model.id),
            )
            .field("tools", &self.tools)
            .field("active_tools", &self.active_tools)
            .field("cwd", &self.cwd)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl AgentConfig {
    /// Defaults: no system prompt, no tools, cwd `.`, default retry policy.
    pub fn new(model: Model) -> Self {
        Self {
            model,
            options: StreamOptions::default(),
            system_prompt: None,
            tools: ToolRegistry::new(),
            active_tools: None,
            loadout: crate::tool::Loadout::default(),
            cwd: PathBuf::from("."),
            retry: RetryPolicy::default(),
        }
    }
}

/// How a session-level run ended (after retries and queued continuations).
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Every message the run produced, in order, failed retry attempts included.
    pub messages: Vec<AgentMessage>,
    /// The run was aborted.
    pub aborted: bool,
    /// The final assistant message's error, when the run ended on a failed turn.
    pub error: Option<String>,
}

/// State shared between the agent and its handles.
pub(crate) struct Shared {
    queues: Mutex<Queues>,
    /// The abort token of the run in progress.
    run: Mutex<Option<CancellationToken>>,
    /// Set while `agent_end` is being delivered: the low-level run has ended, though the
    /// prompt has not returned yet (see [`AgentHandle::run_ending`]).
    pub(crate) ending: std::sync::atomic::AtomicBool,
    pub(crate) events: EventSender,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here is a plain push/pop/replace: a panic cannot leave the data
    // half-updated, so a poisoned lock is still usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Changes the queues and reports their new contents. The event is sent while the lock is
    /// held, so `queue_update`s reach the consumer in the order the changes happened.
    /// With `always`, the event goes out even when nothing changed (`clear_queue`).
    pub(crate) fn change_queues<R>(
        &self,
        always: bool,
        change: impl FnOnce(&mut Queues) -> R,
    ) -> R {
        let mut queues = lock(&self.queues);
        let before = queues.len();
        let result = change(&mut queues);
        if always || queues.len() != before {
            let (steering, follow_up) = queues.texts();
            self.events.emit_now(AgentEvent::QueueUpdate {
                steering,
                follow_up,
            });
        }
        result
    }

    pub(crate) fn queues_empty(&self) -> bool {
        lock(&self.queues).is_empty()
    }
}

/// Clears the run token when a run ends, however it ends (including its future being
/// dropped, which also cancels whatever still runs under the token).
pub(crate) struct RunGuard {
    shared: Arc<Shared>,
    pub(crate) cancel: CancellationToken,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        *lock(&self.shared.run) = None;
        self.cancel.cancel();
    }
}

/// Steering, queueing and abort for an [`Agent`], usable from other tasks while it runs.
#[derive(Clone)]
pub struct AgentHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for AgentHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentHandle")
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

impl AgentHandle {
    /// Queues a message for delivery after the current turn's tool calls, before the next
    /// model request. Emits `queue_update`.
    pub fn steer(&self, message: AgentMessage) {
        self.shared
            .change_queues(false, |q| q.push_steering(message));
    }

    /// Queues a message for delivery when the agent would otherwise stop. Emits
    /// `queue_update`.
    pub fn follow_up(&self, message: AgentMessage) {
        self.shared
            .change_queues(false, |q| q.push_follow_up(message));
    }

    /// Removes and returns every queued message. Emits `queue_update`.
    pub fn clear_queue(&self) -> QueuedMessages {
        self.shared.change_queues(true, Queues::clear)
    }

    /// The queued messages' texts: `(steering, follow_up)`.
    pub fn queued(&self) -> (Vec<String>, Vec<String>) {
        lock(&self.shared.queues).texts()
    }

    pub fn steering_mode(&self) -> QueueMode {
        lock(&self.shared.queues).steering_mode
    }

    pub fn follow_up_mode(&self) -> QueueMode {
        lock(&self.shared.queues).follow_up_mode
    }

    pub fn set_steering_mode(&self, mode: QueueMode) {
        lock(&self.shared.queues).steering_mode = mode;
    }

    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        lock(&self.shared.queues).follow_up_mode = mode;
    }

    /// Aborts the run in progress: the model stream ends `aborted`, running tools are
    /// cancelled, a retry backoff stops. Queued messages stay queued. No effect when idle.
    pub fn abort(&self) {
        if let Some(token) = lock(&self.shared.run).as_ref() {
            token.cancel();
        }
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        lock(&self.shared.run).is_some()
    }

    /// Whether the run is delivering `agent_end`: its turns are over, so a message queued
    /// now would start another run rather than join this one.
    pub fn run_ending(&self) -> bool {
        self.is_running() && self.shared.ending.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The agent: the conversation so far plus everything needed to extend it.
pub struct Agent {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) config: AgentConfig,
    /// The conversation the next request is built from, shared with each request instead
    /// of copied into it.
    pub(crate) messages: Vec<Arc<AgentMessage>>,
    pub(crate) store: Box<dyn MessageStore>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) hooks: Arc<dyn AgentHooks>,
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("config", &self.config)
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent with no messages, the system clock and no persistence. Events go to `events`,
    /// whose receiver must be read while a run goes on: the channel is bounded, so an unread
    /// one holds the loop back (drop the receiver, or use [`EventSender::discard`], to run
    /// without a listener).
    pub fn new(provider: Arc<dyn Provider>, config: AgentConfig, events: EventSender) -> Self {
        Self {
            provider,
            config,
            messages: Vec::new(),
            store: Box::new(NoStore),
            clock: Arc::new(SystemClock::new()),
            hooks: Arc::new(NoHooks),
            shared: Arc::new(Shared {
                queues: Mutex::new(Queues::default()),
                run: Mutex::new(None),
                ending: std::sync::atomic::AtomicBool::new(false),
                events,
            }),
        }
    }

    /// Replaces the clock (message timestamps, tool durations, retry backoff).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets the hooks the loop calls while it runs (see [`crate::hooks`]).
    pub fn with_hooks(mut self, hooks: Arc<dyn AgentHooks>) -> Self {
        self.hooks = hooks;
        self
    }

    /// Sets the persistence hook.
    pub fn with_store(mut self, store: Box<dyn MessageStore>) -> Self {
        self.store = store;
        self
    }

    /// Starts from an existing conversation (a resumed session's context).
    pub fn with_messages(mut self, messages: Vec<AgentMessage>) -> Self {
        self.messages = messages.into_iter().map(Arc::new).collect();
        self
    }

    /// Sets the queue modes.
    pub fn with_queue_modes(self, steering: QueueMode, follow_up: QueueMode) -> Self {
        let handle = self.handle();
        handle.set_steering_mode(steering);
        handle.set_follow_up_mode(follow_up);
        self
    }

    /// A handle for steering, queueing and aborting from other tasks.
    pub fn handle(&self) -> AgentHandle {
        AgentHandle {
            shared: self.shared.clone(),
        }
    }

    /// The conversation the next request is built from.
    pub fn messages(&self) -> &[Arc<AgentMessage>] {
        &self.messages
    }

    /// Replaces the conversation (after compaction, branch navigation, a session switch).
    pub fn replace_messages(&mut self, messages: Vec<Arc<AgentMessage>>) {
        self.messages = messages;
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    pub fn config_mut(&mut self) -> &mut AgentConfig {
        &mut self.config
    }

    /// Replaces the provider (e.g. after a model switch to another API).
    pub fn set_provider(&mut self, provider: Arc<dyn Provider>) {
        self.provider = provider;
    }

    pub(crate) fn begin_run(&self) -> RunGuard {
        let cancel = CancellationToken::new();
        *lock(&self.shared.run) = Some(cancel.clone());
        RunGuard {
            shared: self.shared.clone(),
            cancel,
        }
    }

    /// Runs `prompts` (normally one user message): streams responses, executes tool calls,
    /// delivers queued messages, retries transient failures, until the agent has nothing
    /// left to do. Emits `agent_start` … `agent_end` for each low-level run and one
    /// `agent_settled` at the end.
    pub async fn prompt(&mut self, prompts: Vec<AgentMessage>) -> Result<RunOutcome, AgentError> {
        self.run_session(Start::Prompts(prompts)).await
    }

    /// Continues from the current conversation without a new prompt (a resumed session
    /// whose last message is a user message or tool result). When the last message is the
    /// assistant's, queued messages are delivered instead.
    pub async fn continue_run(&mut self) -> Result<RunOutcome, AgentError> {
        match self.messages.last().map(|m| &**m) {
            None => Err(AgentError::CannotContinue("there are no messages".into())),
            Some(AgentMessage::Assistant(_)) => {
                let steering = self.shared.change_queues(false, Queues::take_steering);
                if !steering.is_empty() {
                    return self.run_session(Start::Queued(steering)).await;
                }
                let follow_up = self.shared.change_queues(false, Queues::take_follow_up);
                if !follow_up.is_empty() {
                    return self.run_session(Start::Prompts(follow_up)).await;
                }
                Err(AgentError::CannotContinue(
                    "the last message is the assistant's and nothing is queued".into(),
                ))
            }
            Some(_) => self.run_session(Start::Continue).await,
        }
    }
}
