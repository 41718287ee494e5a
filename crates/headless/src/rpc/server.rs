//! The RPC server: `knightcode --mode rpc` (spec `rpc.md`).
//!
//! One task, the runner, owns the [`AgentSession`] and writes every response and session
//! event, so the output has a single order: events a command caused (`queue_update`,
//! `thinking_level_changed`, `session_info_changed`) precede its response, a prompt's
//! response precedes its `agent_start`, and an `abort` is answered after the run's last
//! event. A reader task turns stdin lines into inputs; user shell commands run in their own
//! tasks and stream `bash_execution_update`s directly.
//!
//! While a prompt runs, the runner keeps serving commands: queueing (`steer`, `follow_up`,
//! `prompt` with `streamingBehavior`), `abort`, and everything that only reads the session
//! answer at once. Commands that change the model, the thinking level or the session itself
//! are answered when the run has ended (the ones that replace the session abort the run
//! first).
//!
//! Lifecycle: EOF on stdin aborts the running prompt and user shell commands, waits for
//! them to finish (so the aborted messages are saved and their events written), answers
//! every command read before the EOF and exits 0. SIGTERM and SIGHUP stop at once, killing
//! the process groups of running tools and shell commands, and exit 143 and 129.

mod bash_jobs;
mod handlers;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use knightcode_agent::AgentHandle;
use knightcode_agent::EventReceiver;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::BashExecutionMessage;
use knightcode_protocol::rpc::ModelInfo;
use knightcode_protocol::rpc::RpcCommand;
use knightcode_protocol::rpc::RpcInput;
use knightcode_protocol::rpc::RpcResponse;
use knightcode_runtime::AgentSession;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::agent_session::operations::SessionView;
use knightcode_runtime::agent_session::operations::UserBash;
use serde::Serialize;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

use self::bash_jobs::BashDone;
use self::bash_jobs::BashJobs;
use super::framing::CommandReader;
use super::framing::DEFAULT_OUTPUT_CAPACITY;
use super::framing::LineWriter;
use super::framing::spawn_writer;
use super::ui_bridge::UiBridge;

/// Commands read ahead of the runner before the reader waits (stdin backpressure).
const INPUT_CAPACITY: usize = 256;

/// How long a signal-triggered exit waits for queued output to reach a slow reader.
const SIGNAL_FLUSH_LIMIT: Duration = Duration::from_secs(1);

/// Where diagnostics go (stderr in `knightcode --mode rpc`); stdout carries only protocol.
pub type Diagnostics = Arc<dyn Fn(&str) + Send + Sync>;

/// Runs RPC mode over this process's stdin and stdout until EOF or SIGTERM/SIGHUP and returns
/// the exit code: 0 after EOF, 143 / 129 after a signal, 1 when the session cannot start.
/// Diagnostics go to stderr.
pub fn run_stdio(setup: SessionSetup) -> u8 {
    let diagnostics: Diagnostics = Arc::new(|line: &str| {
        use std::io::Write as _;
        // If stderr is gone there is nowhere left to report anything.
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            diagnostics(&format!(
                "Error: could not start the async runtime: {error}"
            ));
            return 1;
        }
    };
    let code = runtime.block_on(async {
        // Handlers go in before anything is read, so an early signal is not fatal.
        let shutdown = match termination_signal() {
            Ok(signal) => signal,
            Err(error) => {
                diagnostics(&format!(
                    "Error: could not install SIGTERM/SIGHUP handlers: {error}"
                ));
                return 1;
            }
        };
        let (session, events) = match AgentSession::start(setup).await {
            Ok(started) => started,
            Err(error) => {
                diagnostics(&format!("Error: {error}"));
                return 1;
            }
        };
        for notice in session.notices() {
            diagnostics(&format!("Warning: {notice}"));
        }
        serve(
            session,
            events,
            tokio::io::stdin(),
            tokio::io::stdout(),
            shutdown,
            diagnostics.clone(),
        )
        .await
    });
    // A blocking stdin read may still be pending after a signal; do not wait for it.
    runtime.shutdown_background();
    code
}

/// Resolves with the exit code of the first SIGTERM (143) or SIGHUP (129).
fn termination_signal() -> std::io::Result<impl Future<Output = u8>> {
    use tokio::signal::unix::SignalKind;
    use tokio::signal::unix::signal;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => 143,
            _ = hup.recv() => 129,
        }
    })
}

/// Serves one session over `input` / `output` until EOF (exit code 0) or until `shutdown`
/// resolves with an exit code. Must run inside a tokio runtime.
pub async fn serve<R, W, S>(
    session: AgentSession,
    events: EventReceiver,
    input: R,
    output: W,
    shutdown: S,
    diagnostics: Diagnostics,
) -> u8
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    S: Future<Output = u8>,
{
    let (out, writer) = spawn_writer(output, DEFAULT_OUTPUT_CAPACITY);
    let (inputs_tx, inputs) = mpsc::channel(INPUT_CAPACITY);
    let reader = tokio::spawn(read_inputs(input, inputs_tx, UiBridge::new(out.clone())));
    let mut ctx = Ctx::new(&session, events, out, inputs, diagnostics.clone());
    let code = run(session, &mut ctx, shutdown).await;
    reader.abort();
    drop(ctx);
    let flushed = if code == 0 {
        Ok(writer.close().await)
    } else {
        tokio::time::timeout(SIGNAL_FLUSH_LIMIT, writer.close()).await
    };
    match flushed {
        Ok(Err(error)) if !is_broken_pipe(&error) => {
            diagnostics(&format!("Error: could not write the RPC output: {error}"));
        }
        _ => {}
    }
    code
}

fn is_broken_pipe(error: &crate::HeadlessError) -> bool {
    matches!(error, crate::HeadlessError::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// What the reader hands the runner.
enum Input {
    Command(RpcCommand),
    /// The answer to a line that is not a command (parse error, unknown or invalid command).
    Reply(RpcResponse),
    Eof,
}

async fn read_inputs<R: AsyncRead + Unpin>(
    input: R,
    inputs: mpsc::Sender<Input>,
    bridge: UiBridge,
) {
    let mut reader = CommandReader::new(input);
    loop {
        let next = match reader.next_input().await {
            Ok(Some(RpcInput::Command(command))) => Input::Command(command),
            Ok(Some(RpcInput::UiResponse(response))) => {
                // Unknown ids are ignored, never answered.
                bridge.resolve(response);
                continue;
            }
            Ok(Some(other)) => match other.error_response() {
                Some(response) => Input::Reply(response),
                None => continue,
            },
            // A read error ends the input like EOF: nothing more can arrive.
            Ok(None) | Err(_) => Input::Eof,
        };
        let eof = matches!(next, Input::Eof);
        if inputs.send(next).await.is_err() || eof {
            return;
        }
    }
}

/// A command whose work waits until the running prompt has ended.
enum Deferred {
    /// Handle it then and write its response.
    Command(RpcCommand),
    /// Handle it then for its lasting effect (settings); it was answered already.
    Silent(RpcCommand),
    /// `abort`: answered once the run is over.
    AbortDone(RpcCommand),
}

/// What the runner continues with after an idle command.
enum Flow {
    Continue,
    Run(Vec<AgentMessage>),
}

/// Everything the runner uses besides the session, so that it stays usable while a run
/// borrows the session.
struct Ctx {
    out: LineWriter,
    events: EventReceiver,
    inputs: mpsc::Receiver<Input>,
    bash: BashJobs,
    handle: AgentHandle,
    /// Read access during runs; refreshed after every change.
    view: SessionView,
    /// A user shell command with the current settings and folder, minus the command.
    bash_template: UserBash,
    /// Available models, once asked for (they change only with credentials).
    models: Option<Vec<ModelInfo>>,
    deferred: Vec<Deferred>,
    /// User shell results that finished during a run; stored when it ends.
    pending_bash: Vec<BashExecutionMessage>,
    /// An auto-retry backoff is in progress (`abort_retry` has something to stop).
    retrying: bool,
    /// Entries already reported or known (see `entry_appended`).
    entries_seen: usize,
    eof: bool,
    /// stdout is gone; nothing more can be written.
    closed: bool,
    diagnostics: Diagnostics,
}

impl Ctx {
    fn new(
        session: &AgentSession,
        events: EventReceiver,
        out: LineWriter,
        inputs: mpsc::Receiver<Input>,
        diagnostics: Diagnostics,
    ) -> Self {
        let view = session.view();
        let (_, entries_seen) = view.entries_outside_message_flow(usize::MAX);
        Self {
            out,
            events,
            inputs,
            bash: BashJobs::new(),
            handle: session.handle(),
            bash_template: session.user_bash("", false),
            view,
            models: None,
            deferred: Vec::new(),
            pending_bash: Vec::new(),
            retrying: false,
            entries_seen,
            eof: false,
            closed: false,
            diagnostics,
        }
    }

    /// Takes up changes made to the session (model, thinking level, settings, a new session).
    fn refresh(&mut self, session: &mut AgentSession) {
        self.view = session.view();
        self.bash_template = session.user_bash("", false);
        for warning in session.take_warnings() {
            (self.diagnostics)(&format!("Warning: {warning}"));
        }
    }

    /// After the session was replaced: its entries are not news.
    fn forget_entries(&mut self) {
        let (_, count) = self.view.entries_outside_message_flow(usize::MAX);
        self.entries_seen = count;
    }

    async fn write<T: Serialize + ?Sized>(&mut self, record: &T) {
        if self.closed {
            return;
        }
        if self.out.send(record).await.is_err() {
            self.closed = true;
        }
    }

    /// Writes the events the agent has queued so far.
    async fn drain_events(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.forward(event).await;
        }
    }

    async fn forward(&mut self, event: AgentEvent) {
        let scan = match &event {
            AgentEvent::AutoRetryStart { .. } => {
                self.retrying = true;
                true
            }
            AgentEvent::AgentStart | AgentEvent::AutoRetryEnd { .. } => {
                self.retrying = false;
                true
            }
            AgentEvent::AgentSettled { .. } => {
                self.retrying = false;
                true
            }
            AgentEvent::TurnEnd { .. } | AgentEvent::AgentEnd { .. } => true,
            _ => false,
        };
        self.write(&event).await;
        if scan {
            self.report_new_entries().await;
        }
    }

    /// `entry_appended` for entries the message flow did not produce.
    async fn report_new_entries(&mut self) {
        let (entries, count) = self.view.entries_outside_message_flow(self.entries_seen);
        self.entries_seen = count;
        for entry in entries {
            self.write(&AgentEvent::EntryAppended { entry }).await;
        }
    }

    /// Writes a response after the events queued before it.
    async fn reply(&mut self, response: RpcResponse) {
        self.drain_events().await;
        self.write(&response).await;
    }

    fn diagnose(&self, line: &str) {
        (self.diagnostics)(line);
    }
}

/// The runner's main loop: idle until a prompt, then [`run_prompt`].
async fn run<S: Future<Output = u8>>(mut session: AgentSession, ctx: &mut Ctx, shutdown: S) -> u8 {
    tokio::pin!(shutdown);
    loop {
        if (ctx.eof || ctx.closed) && ctx.bash.is_empty() {
            ctx.drain_events().await;
            return 0;
        }
        let flow = tokio::select! {
            biased;
            code = &mut shutdown => {
                terminate(ctx).await;
                return code;
            }
            Some(event) = ctx.events.recv() => {
                ctx.forward(event).await;
                Flow::Continue
            }
            Some(done) = ctx.bash.next_done() => {
                bash_done(&mut session, ctx, done).await;
                Flow::Continue
            }
            input = ctx.inputs.recv(), if !ctx.eof && !ctx.closed => match input {
                Some(Input::Command(command)) => handlers::idle(&mut session, ctx, command, true).await,
                Some(Input::Reply(response)) => {
                    ctx.reply(response).await;
                    Flow::Continue
                }
                Some(Input::Eof) | None => {
                    end_of_input(ctx);
                    Flow::Continue
                }
            },
        };
        if let Flow::Run(user) = flow
            && let Some(code) = run_prompt(&mut session, ctx, user, shutdown.as_mut()).await
        {
            return code;
        }
    }
}

fn end_of_input(ctx: &mut Ctx) {
    ctx.eof = true;
    ctx.handle.abort();
    ctx.bash.abort_all();
}

/// A signal: stop everything now. Running tools die with the run's future (their process
/// groups are killed when dropped); user shell commands are killed here.
async fn terminate(ctx: &mut Ctx) {
    ctx.handle.abort();
    ctx.bash.kill_all().await;
}

/// Runs one prompt while serving commands; `Some(code)` when a signal ended the process.
async fn run_prompt<S: Future<Output = u8>>(
    session: &mut AgentSession,
    ctx: &mut Ctx,
    user: Vec<AgentMessage>,
    mut shutdown: std::pin::Pin<&mut S>,
) -> Option<u8> {
    let outcome = {
        let run = session.run_prompt(user);
        tokio::pin!(run);
        loop {
            tokio::select! {
                biased;
                code = &mut shutdown => {
                    terminate(ctx).await;
                    return Some(code);
                }
                Some(event) = ctx.events.recv() => ctx.forward(event).await,
                outcome = &mut run => break outcome,
                Some(done) = ctx.bash.next_done() => busy_bash_done(ctx, done).await,
                input = ctx.inputs.recv(), if !ctx.eof => match input {
                    Some(Input::Command(command)) => handlers::busy(ctx, command).await,
                    Some(Input::Reply(response)) => ctx.reply(response).await,
                    Some(Input::Eof) | None => end_of_input(ctx),
                },
            }
            if ctx.closed && !ctx.eof {
                // Nobody reads the output any more: stop the run as on EOF.
                end_of_input(ctx);
            }
        }
    };
    ctx.drain_events().await;
    if let Err(error) = outcome {
        ctx.diagnose(&format!("Error: the run failed: {error}"));
    }
    for message in std::mem::take(&mut ctx.pending_bash) {
        if let Err(error) = session.record_bash_execution(message) {
            ctx.diagnose(&format!("Error: could not save a shell command: {error}"));
        }
    }
    ctx.report_new_entries().await;
    ctx.refresh(session);
    for deferred in std::mem::take(&mut ctx.deferred) {
        match deferred {
            Deferred::Command(command) => {
                // Prompts are never deferred, so this cannot start another run.
                handlers::idle(session, ctx, command, true).await;
            }
            Deferred::Silent(command) => {
                handlers::idle(session, ctx, command, false).await;
            }
            Deferred::AbortDone(command) => {
                ctx.reply(RpcResponse::ok(command.id, command.body.command_type()))
                    .await;
            }
        }
    }
    None
}

/// A user shell command finished while idle: store it now and answer.
async fn bash_done(session: &mut AgentSession, ctx: &mut Ctx, done: BashDone) {
    let response = match done.result {
        Ok(outcome) => {
            if let Err(error) = session.record_bash_execution(outcome.message) {
                ctx.diagnose(&format!("Error: could not save a shell command: {error}"));
            }
            handlers::data(done.id, "bash", &outcome.result)
        }
        Err(error) => RpcResponse::error(done.id, "bash", error.to_string()),
    };
    ctx.reply(response).await;
}

/// A user shell command finished during a run: its message waits for the run to end, so it
/// cannot land between a tool call and its result.
async fn busy_bash_done(ctx: &mut Ctx, done: BashDone) {
    let response = match done.result {
        Ok(outcome) => {
            ctx.pending_bash.push(outcome.message);
            handlers::data(done.id, "bash", &outcome.result)
        }
        Err(error) => RpcResponse::error(done.id, "bash", error.to_string()),
    };
    ctx.reply(response).await;
}
