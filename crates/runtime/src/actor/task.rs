//! The actor's task: idle until a prompt, then the run, serving commands throughout.
//!
//! While a run goes on it borrows the session, so the task keeps everything else in
//! [`Ctx`]: the output, the agent handle, a read view of the session, the shell jobs and
//! the commands that wait for the run to end.
//!
//! Lifecycle: when every handle is gone (the front end's input ended) the running prompt
//! and shell commands are aborted, the task waits for them to finish (so the aborted
//! messages are saved and their events sent), answers every command received before and
//! ends. [`Command`]s keep being read until then.

use knightcode_agent::AgentHandle;
use knightcode_agent::EventReceiver;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::BashExecutionMessage;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::rpc::ModelInfo;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Command;
use super::CommandError;
use super::Envelope;
use super::Reply;
use super::Responder;
use super::SessionEvent;
use super::SummaryRequest;
use super::bash_jobs::BashDone;
use super::bash_jobs::BashJobs;
use super::handlers;
use crate::AgentSession;
use crate::agent_session::operations::SessionView;
use crate::agent_session::operations::UserBash;
use crate::compaction::CompactionError;
use crate::diagnostics::Diagnostic;

/// The reply to a summarised `/tree` that was aborted: the session stayed where it was.
pub const NAVIGATION_CANCELLED: &str = "Navigation cancelled";

/// A command whose work waits until the running prompt has ended.
pub(super) enum Deferred {
    /// Handle it then and send its reply.
    Command(Envelope),
    /// `abort`: answered once the run is over.
    AbortDone(Responder),
}

/// What the task continues with after an idle command.
pub(super) enum Flow {
    Continue,
    Run(Vec<AgentMessage>),
    /// `compact`: answered when the compaction has ended.
    Compact {
        custom_instructions: Option<String>,
        responder: Responder,
    },
    /// `/tree` with a branch summary: answered when the summary is written.
    NavigateSummarized {
        entry_id: String,
        request: SummaryRequest,
        label: Option<String>,
        restore_files: bool,
        responder: Responder,
    },
    /// The built-in `/undo` of front ends without their own picker: its dialogs wait for
    /// the user while the task keeps serving (abort cancels them).
    Undo {
        responder: Responder,
    },
}

/// Everything the task uses besides the session, so that it stays usable while a run
/// borrows the session.
pub(super) struct Ctx {
    out: mpsc::Sender<SessionEvent>,
    events: EventReceiver,
    inbox: mpsc::UnboundedReceiver<Envelope>,
    pub(super) bash: BashJobs,
    pub(super) handle: AgentHandle,
    /// Read access during runs; refreshed after every change.
    pub(super) view: SessionView,
    /// A user shell command with the current settings and folder, minus the command.
    pub(super) bash_template: UserBash,
    /// The session's hooks, for `user_bash` (commands run beside the session task).
    pub(super) bash_hooks: std::sync::Arc<dyn crate::hooks::SessionHooks>,
    /// The built-in plan mode: its `/plan` commands are refused at once during a run.
    pub(super) plan: std::sync::Arc<crate::plan_mode::PlanMode>,
    /// Available models, once asked for (they change only with credentials).
    pub(super) models: Option<Vec<ModelInfo>>,
    pub(super) deferred: Vec<Deferred>,
    /// User shell results that finished during a run; stored when it ends.
    pending_bash: Vec<BashExecutionMessage>,
    /// An auto-retry backoff is in progress (`abort_retry` has something to stop).
    pub(super) retrying: bool,
    /// Entries already reported or known (see `entry_appended`).
    entries_seen: usize,
    /// Every handle is gone: no command will come any more.
    ended: bool,
    /// Nobody reads the events any more.
    closed: bool,
    /// Hands lifecycle events to the session's extensions (none without extensions).
    pub(super) extensions: Option<crate::extensions::LifecycleEvents>,
    /// What extensions read of the session without waiting for this task.
    pub(super) actions: std::sync::Arc<crate::extensions::ExtensionActions>,
    /// The session's cache warmer: told of responses and of the run's end.
    warming: crate::cache_warming::CacheWarming,
}

impl Ctx {
    /// Takes up changes made to the session (model, thinking level, settings, a new session).
    pub(super) async fn refresh(&mut self, session: &mut AgentSession) {
        self.view = session.view();
        if let Some(extensions) = &self.extensions {
            extensions.note_selection(session);
        }
        self.actions.note_view(&self.view);
        session.note_prompt_options();
        session.note_cache_context();
        self.bash_template = session.user_bash("", false);
        self.bash_hooks = session.session_hooks();
        self.plan = session.plan_mode();
        // A reply to a settings change means the file has it, as when writes were inline.
        session.settings_saved().await;
        for warning in session.take_warnings() {
            self.emit(SessionEvent::Diagnostic(Diagnostic::warning(
                "settings", warning,
            )))
            .await;
        }
    }

    /// What the next model change is, for extensions' `model_select` (`set`, `cycle`,
    /// `restore`).
    pub(super) fn selection_source(&self, source: &'static str) {
        if let Some(extensions) = &self.extensions {
            extensions.selection_source(source);
        }
    }

    /// After the session was replaced: its entries are not news.
    pub(super) fn forget_entries(&mut self) {
        let (_, count) = self.view.entries_outside_message_flow(usize::MAX, false);
        self.entries_seen = count;
    }

    pub(super) async fn emit(&mut self, event: SessionEvent) {
        if self.closed {
            return;
        }
        if self.out.send(event).await.is_err() {
            self.closed = true;
        }
    }

    pub(super) async fn emit_agent(&mut self, event: AgentEvent) {
        self.emit(SessionEvent::Agent(event)).await;
    }

    /// Sends the events the agent has queued so far.
    pub(super) async fn drain_events(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.forward(event).await;
        }
    }

    /// [`Self::forward`], except `agent_settled`, which goes into `held`.
    async fn forward_holding_settled(&mut self, event: AgentEvent, held: &mut Option<AgentEvent>) {
        if matches!(event, AgentEvent::AgentSettled { .. }) {
            *held = Some(event);
        } else {
            self.forward(event).await;
        }
    }

    async fn forward(&mut self, event: AgentEvent) {
        if let AgentEvent::MessageEnd {
            message: AgentMessage::Assistant(reply),
        } = &event
        {
            let usage = &reply.usage;
            self.warming
                .note_prompt_tokens(usage.input.0 + usage.cache_read.0 + usage.cache_write.0);
        }
        let scan = match &event {
            AgentEvent::AutoRetryStart { .. } => {
                self.retrying = true;
                true
            }
            AgentEvent::AgentStart
            | AgentEvent::AutoRetryEnd { .. }
            | AgentEvent::AgentSettled { .. } => {
                self.retrying = false;
                true
            }
            AgentEvent::TurnEnd { .. } | AgentEvent::AgentEnd { .. } => true,
            _ => false,
        };
        // What the run appended after its last other event (its turn end) is reported
        // before `agent_settled`, which stays the last event of a run.
        if matches!(event, AgentEvent::AgentSettled { .. }) {
            self.report_new_entries(false).await;
            self.emit_agent(event).await;
            return;
        }
        self.emit_agent(event).await;
        if scan {
            self.report_new_entries(true).await;
        }
    }

    /// `entry_appended` for entries the message flow did not produce; a run's turn end only
    /// when the run settles (`until_settled` false).
    pub(super) async fn report_new_entries(&mut self, until_settled: bool) {
        let (entries, count) = self
            .view
            .entries_outside_message_flow(self.entries_seen, until_settled);
        self.entries_seen = count;
        for entry in entries {
            self.emit_agent(AgentEvent::EntryAppended { entry }).await;
        }
    }

    /// Sends a reply after the events queued before it.
    pub(super) async fn reply(&mut self, responder: Responder, reply: Reply) {
        self.drain_events().await;
        match responder {
            Responder::Stream(tag) => self.emit(SessionEvent::Reply { tag, reply }).await,
            // The requester may have stopped waiting; nothing is lost by it.
            Responder::Oneshot(tx) => drop(tx.send(reply)),
            Responder::Nobody => {}
        }
    }
}

/// When the configured MCP servers start connecting if neither a command nor the front end
/// said it was ready before (an RPC client that only listens).
const MCP_CONNECT_AT_LATEST: std::time::Duration = std::time::Duration::from_millis(100);

/// The task's main loop.
pub(super) async fn run(
    mut session: AgentSession,
    events: EventReceiver,
    (inbox, front_end_ready): (
        mpsc::UnboundedReceiver<Envelope>,
        std::sync::Arc<tokio::sync::Notify>,
    ),
    out: mpsc::Sender<SessionEvent>,
    warming_stop: CancellationToken,
) {
    let _stop_warming = warming_stop.drop_guard();
    let view = session.view();
    let (_, entries_seen) = view.entries_outside_message_flow(usize::MAX, false);
    let mut ctx = Ctx {
        out,
        events,
        inbox,
        bash: BashJobs::new(),
        handle: session.handle(),
        bash_template: session.user_bash("", false),
        bash_hooks: session.session_hooks(),
        plan: session.plan_mode(),
        view,
        models: None,
        deferred: Vec::new(),
        pending_bash: Vec::new(),
        retrying: false,
        entries_seen,
        ended: false,
        closed: false,
        extensions: session
            .extension_host()
            .map(crate::extensions::LifecycleEvents::start),
        actions: std::sync::Arc::clone(session.extension_actions()),
        warming: session.cache_warming().clone(),
    };
    ctx.actions.note_view(&ctx.view);
    session.note_prompt_options();
    // The configured MCP servers start once the front end has shown itself: their own
    // start-up (a `node` or `npx` process each) would otherwise share the CPUs with the
    // first frame or the first answer (the reference waits for its first frame too).
    let mut mcp_waiting = true;
    let mcp_at_latest = tokio::time::sleep(MCP_CONNECT_AT_LATEST);
    tokio::pin!(mcp_at_latest);
    loop {
        if ctx.ended && ctx.bash.is_empty() {
            ctx.drain_events().await;
            if let Some(extensions) = ctx.extensions.take() {
                extensions.shut_down("quit").await;
            }
            ctx.warming.cancel();
            session.stop_mcp().await;
            // The session file (and its ownership lock) is given up before the event stream
            // closes: a front end exits once the stream ends, and a lock released after that
            // was left behind (1 in 2 print-mode runs kept its `.lock`).
            session.close_session_file();
            return;
        }
        let flow = tokio::select! {
            biased;
            Some(event) = ctx.events.recv() => {
                ctx.forward(event).await;
                Flow::Continue
            }
            Some(done) = ctx.bash.next_done() => {
                bash_done(&mut session, &mut ctx, done).await;
                Flow::Continue
            }
            envelope = ctx.inbox.recv(), if !ctx.ended => match envelope {
                Some(envelope) => {
                    let flow = handlers::idle(&mut session, &mut ctx, envelope).await;
                    // Its answer is out: the front end has shown itself.
                    if std::mem::take(&mut mcp_waiting) {
                        session.connect_mcp();
                    }
                    flow
                }
                None => {
                    end_of_input(&mut ctx);
                    Flow::Continue
                }
            },
            () = front_end_ready.notified(), if mcp_waiting => {
                mcp_waiting = false;
                session.connect_mcp();
                Flow::Continue
            }
            () = &mut mcp_at_latest, if mcp_waiting => {
                mcp_waiting = false;
                session.connect_mcp();
                Flow::Continue
            }
        };
        match flow {
            Flow::Run(messages) => run_prompt(&mut session, &mut ctx, messages).await,
            other => run_job(&mut session, &mut ctx, other).await,
        }
    }
}

fn end_of_input(ctx: &mut Ctx) {
    ctx.end_of_input();
}

/// Runs one prompt while serving commands; first compacts when the last response left too
/// little room for it.
async fn run_prompt(session: &mut AgentSession, ctx: &mut Ctx, messages: Vec<AgentMessage>) {
    if session.needs_compaction_before_prompt() {
        let reason = CompactionReason::Threshold;
        let aborted = run_compaction(session, ctx, reason, None, Responder::Nobody).await;
        if aborted {
            // The abort was meant for the prompt too.
            return;
        }
    }
    // `agent_settled` is held back until the run's outcome is known, so a run that failed
    // (a session write refused by a full disk) says so before front ends take the settle as
    // the end of it.
    let mut settled = None;
    let outcome = {
        let run = session.run_prompt(messages);
        tokio::pin!(run);
        loop {
            // The run's end is noticed before the next command: a command sent after an
            // abort sees the session idle, as the abort's own answer does.
            tokio::select! {
                biased;
                Some(event) = ctx.events.recv() => ctx.forward_holding_settled(event, &mut settled).await,
                outcome = &mut run => break outcome,
                Some(done) = ctx.bash.next_done() => busy_bash_done(ctx, done).await,
                envelope = ctx.inbox.recv(), if !ctx.ended => match envelope {
                    Some(envelope) => handlers::busy(ctx, envelope).await,
                    None => end_of_input(ctx),
                },
            }
            if ctx.closed && !ctx.ended {
                // Nobody reads the events any more: stop the run as when input ends.
                end_of_input(ctx);
            }
        }
    };
    while let Ok(event) = ctx.events.try_recv() {
        ctx.forward_holding_settled(event, &mut settled).await;
    }
    ctx.warming.settled();
    if let Err(error) = outcome {
        ctx.emit(SessionEvent::RunFailed(error.to_string())).await;
    }
    if let Some(event) = settled {
        ctx.forward(event).await;
    }
    for message in std::mem::take(&mut ctx.pending_bash) {
        if let Err(error) = session.record_bash_execution(message) {
            ctx.emit(SessionEvent::Diagnostic(Diagnostic::error(
                "session",
                format!("could not save a shell command: {error}"),
            )))
            .await;
        }
    }
    finish_deferred(session, ctx).await;
}

/// After a run or a compaction: take up what changed, then do what waited for it.
async fn finish_deferred(session: &mut AgentSession, ctx: &mut Ctx) {
    ctx.report_new_entries(false).await;
    ctx.refresh(session).await;
    for deferred in std::mem::take(&mut ctx.deferred) {
        match deferred {
            Deferred::Command(envelope) => {
                // Prompts are never deferred, so this cannot start another run; a
                // compaction or a summarised navigation can (it aborted the run it waited
                // for).
                let flow = handlers::idle(session, ctx, envelope).await;
                Box::pin(run_job(session, ctx, flow)).await;
            }
            Deferred::AbortDone(responder) => ctx.reply(responder, Reply::Done).await,
        }
    }
}

/// The session's own long jobs (`compact`, a summarised `/tree`), served like a run.
async fn run_job(session: &mut AgentSession, ctx: &mut Ctx, flow: Flow) {
    match flow {
        Flow::Compact {
            custom_instructions,
            responder,
        } => {
            let reason = CompactionReason::Manual;
            run_compaction(session, ctx, reason, custom_instructions, responder).await;
        }
        Flow::NavigateSummarized {
            entry_id,
            request,
            label,
            restore_files,
            responder,
        } => {
            let cancel = CancellationToken::new();
            let job = session.navigate_tree_summarized(
                &entry_id,
                &request,
                label.as_deref(),
                restore_files,
                &cancel,
            );
            let outcome = serve_during(ctx, &cancel, CommandError::BranchSummaryBusy, job).await;
            let reply = match outcome {
                Ok(navigated) => Reply::Navigated {
                    text: navigated.text,
                    restored: navigated.restored,
                },
                Err(CompactionError::Cancelled) => Reply::Failed(CommandError::NavigationCancelled),
                Err(error) => Reply::Failed(error.into()),
            };
            ctx.reply(responder, reply).await;
            finish_deferred(session, ctx).await;
        }
        Flow::Undo { responder } => {
            let cancel = CancellationToken::new();
            let job = session.undo_with_dialogs(&cancel);
            let outcome = serve_during(ctx, &cancel, CommandError::UndoBusy, job).await;
            let reply = match outcome {
                Ok(()) => Reply::Prompt(knightcode_protocol::rpc::PromptDisposition::Handled),
                Err(error) => Reply::Failed(error.into()),
            };
            ctx.reply(responder, reply).await;
            finish_deferred(session, ctx).await;
        }
        Flow::Run(_) | Flow::Continue => {}
    }
}

/// A compaction while serving commands (`compact`, or the check before a prompt). Returns
/// whether it was aborted.
async fn run_compaction(
    session: &mut AgentSession,
    ctx: &mut Ctx,
    reason: CompactionReason,
    custom_instructions: Option<String>,
    responder: Responder,
) -> bool {
    let cancel = CancellationToken::new();
    let job = session.compact(reason, custom_instructions.as_deref(), &cancel);
    let outcome = serve_during(ctx, &cancel, CommandError::CompactionBusy, job).await;
    let aborted = cancel.is_cancelled();
    let reply = match outcome {
        Ok(result) => Reply::Compacted(result),
        Err(CompactionError::Cancelled) => Reply::Failed(CommandError::CompactionCancelled),
        Err(error) => Reply::Failed(CommandError::Failed(
            error
                .message_for(reason)
                .unwrap_or_else(|| error.to_string()),
        )),
    };
    ctx.reply(responder, reply).await;
    finish_deferred(session, ctx).await;
    aborted
}

/// Runs one of the session's jobs while serving commands: `abort` cancels it (the session
/// stays as it was), prompts and compactions are refused with `busy`, reads answer at once
/// and the rest waits for its end.
async fn serve_during<T>(
    ctx: &mut Ctx,
    cancel: &CancellationToken,
    busy: CommandError,
    job: impl Future<Output = T>,
) -> T {
    tokio::pin!(job);
    let outcome = loop {
        tokio::select! {
            biased;
            Some(event) = ctx.events.recv() => ctx.forward(event).await,
            outcome = &mut job => break outcome,
            Some(done) = ctx.bash.next_done() => busy_bash_done(ctx, done).await,
            envelope = ctx.inbox.recv(), if !ctx.ended => match envelope {
                Some(Envelope { command: Command::Abort, responder }) => {
                    cancel.cancel();
                    ctx.deferred.push(Deferred::AbortDone(responder));
                }
                Some(Envelope { command: Command::Prompt { queueing: None, .. }, responder })
                | Some(Envelope { command: Command::Compact { .. }, responder }) => {
                    ctx.reply(responder, Reply::Failed(busy.clone())).await;
                }
                Some(envelope) => handlers::busy(ctx, envelope).await,
                None => end_of_input(ctx),
            },
        }
        if ctx.closed && !ctx.ended {
            end_of_input(ctx);
        }
        if ctx.ended {
            cancel.cancel();
        }
    };
    ctx.drain_events().await;
    outcome
}

/// A user shell command finished while idle: store it now and answer.
async fn bash_done(session: &mut AgentSession, ctx: &mut Ctx, done: BashDone) {
    let reply = match done.result {
        Ok(outcome) => {
            if let Err(error) = session.record_bash_execution(outcome.message) {
                ctx.emit(SessionEvent::Diagnostic(Diagnostic::error(
                    "session",
                    format!("could not save a shell command: {error}"),
                )))
                .await;
            }
            Reply::Bash(outcome.result)
        }
        Err(error) => Reply::Failed(error.into()),
    };
    ctx.reply(done.responder, reply).await;
}

/// A user shell command finished during a run: its message waits for the run to end, so it
/// cannot land between a tool call and its result.
async fn busy_bash_done(ctx: &mut Ctx, done: BashDone) {
    let reply = match done.result {
        Ok(outcome) => {
            ctx.pending_bash.push(outcome.message);
            Reply::Bash(outcome.result)
        }
        Err(error) => Reply::Failed(error.into()),
    };
    ctx.reply(done.responder, reply).await;
}

impl Ctx {
    /// An extension registered or unregistered an MCP server: the session reconciles its
    /// connections, and extensions hear `mcp_servers_change` in order with the session's other
    /// events (delivered before the session ends).
    pub(super) fn extension_mcp_servers(
        &self,
        session: &mut AgentSession,
        servers: &[knightcode_ext::McpServerSpec],
    ) {
        session.extension_mcp_servers(servers);
        if let Some(events) = &self.extensions {
            events.mcp_servers_changed(servers);
        }
    }

    /// An extension changed the models on offer (a provider, a virtual model, a reload of
    /// every extension): the next listing asks the session again.
    pub(super) fn forget_models_if_changed(&mut self, command: &super::Command) {
        use super::Command;
        if matches!(
            command,
            Command::ExtensionProvider { .. }
                | Command::ExtensionVirtualModel { .. }
                | Command::Reload
        ) {
            self.models = None;
        }
    }

    /// No command will come any more: abort what runs, then end.
    pub(super) fn end_of_input(&mut self) {
        self.ended = true;
        self.handle.abort();
        self.bash.abort_all();
    }

    /// A signal: stop everything now. Running tools die with the run (its abort kills their
    /// process groups); user shell commands are killed and reaped here.
    pub(super) async fn terminate(&mut self) {
        self.ended = true;
        self.handle.abort();
        self.bash.kill_all().await;
    }

    /// Starts a user shell command whose output streams as `bash_execution_update` events.
    pub(super) fn spawn_bash(&mut self, bash: UserBash, responder: Responder, id: Option<String>) {
        let hooks = std::sync::Arc::clone(&self.bash_hooks);
        self.bash
            .spawn(bash, hooks, responder, id, self.out.clone());
    }
}
