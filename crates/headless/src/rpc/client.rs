//! A typed client for `knightcode --mode rpc`, for Rust programs that embed KnightCode as a
//! subprocess (or talk to it over any byte pipe).
//!
//! ```no_run
//! # async fn demo() -> Result<(), knightcode_headless::HeadlessError> {
//! use knightcode_headless::rpc::{RpcClientBuilder, RpcEvent, SpawnOptions};
//! use knightcode_protocol::AgentEvent;
//!
//! let (client, mut events) = RpcClientBuilder::new().spawn(&SpawnOptions::default())?;
//! client.prompt("List the files in this directory").await?;
//! while let Some(event) = events.recv().await {
//!     if let RpcEvent::Agent(AgentEvent::AgentSettled { .. }) = event {
//!         break;
//!     }
//! }
//! drop(events);
//! client.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! Responses are matched to requests by id (`req_1`, `req_2`, …, generated per client), so
//! any number of requests may be in flight from several tasks. Everything else the server
//! writes arrives on [`RpcEvents`] in order. The event channel is bounded: read it
//! continuously (or drop it to discard events), because a full channel stops the reader and,
//! through the pipe, the server — that is the protocol's flow control.

mod commands;

use std::collections::HashMap;
use std::ffi::OsString;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitStatus;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::rpc::ExtensionUiRequest;
use knightcode_protocol::rpc::ExtensionUiResponse;
use knightcode_protocol::rpc::RpcCommand;
use knightcode_protocol::rpc::RpcCommandBody;
use knightcode_protocol::rpc::RpcOutput;
use knightcode_protocol::rpc::RpcResponse;
use knightcode_protocol::rpc::UiReply;
use serde::de::DeserializeOwned;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::process::Child;
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::framing::DEFAULT_MAX_LINE_BYTES;
use super::framing::DEFAULT_OUTPUT_CAPACITY;
use super::framing::LineReader;
use super::framing::LineWriter;
use super::framing::WriterTask;
use super::framing::spawn_writer;
use crate::HeadlessError;

/// Events buffered before the reader waits for the consumer.
pub const DEFAULT_EVENT_CAPACITY: usize = 1024;

/// Something the server wrote that is not the response to a pending request.
#[derive(Debug, Clone, PartialEq)]
pub enum RpcEvent {
    /// A session event, including `bash_execution_update` and `extension_error`.
    Agent(AgentEvent),
    /// An extension UI request, when no handler is installed. Answer dialogs with
    /// [`RpcClient::reply_ui`].
    UiRequest(ExtensionUiRequest),
    /// A response no request waits for: a parse error, one without id, or one whose request
    /// gave up (timeout, dropped future).
    Response(RpcResponse),
    /// A JSON object this version cannot type (newer or older event shapes).
    Other(serde_json::Value),
    /// A line that is not JSON; a conforming server never writes one.
    Unparsed { line: String, error: String },
}

/// The stream of [`RpcEvent`]s; ends when the server closes its output.
#[derive(Debug)]
pub struct RpcEvents {
    rx: mpsc::Receiver<RpcEvent>,
}

impl RpcEvents {
    /// The next event; `None` once the server's output has ended.
    pub async fn recv(&mut self) -> Option<RpcEvent> {
        self.rx.recv().await
    }

    /// Events up to and including the next `agent_settled` (the end of a prompt's work), or
    /// up to the end of the stream.
    pub async fn until_settled(&mut self) -> Vec<RpcEvent> {
        let mut events = Vec::new();
        while let Some(event) = self.rx.recv().await {
            let settled = matches!(event, RpcEvent::Agent(AgentEvent::AgentSettled { .. }));
            events.push(event);
            if settled {
                break;
            }
        }
        events
    }
}

type UiFuture = Pin<Box<dyn Future<Output = Option<UiReply>> + Send>>;
type UiHandler = Arc<dyn Fn(ExtensionUiRequest) -> UiFuture + Send + Sync>;

/// How to start the server process.
#[derive(Debug, Clone)]
pub struct SpawnOptions {
    /// The binary; `knightcode` from `PATH` by default.
    pub program: PathBuf,
    /// Arguments; `--mode rpc` by default. Add `--provider`, `--model`, `--no-session`, …
    pub args: Vec<OsString>,
    pub cwd: Option<PathBuf>,
    /// Variables set on top of the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// Whether the server's stderr goes to ours (default) or is discarded.
    pub inherit_stderr: bool,
}

impl Default for SpawnOptions {
    fn default() -> Self {
        Self {
            program: PathBuf::from("knightcode"),
            args: vec!["--mode".into(), "rpc".into()],
            cwd: None,
            env: Vec::new(),
            inherit_stderr: true,
        }
    }
}

impl SpawnOptions {
    /// `program --mode rpc`.
    pub fn program(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            ..Self::default()
        }
    }

    /// Appends an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// The command these options describe, with piped stdin/stdout.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if !self.inherit_stderr {
            command.stderr(Stdio::null());
        }
        command
    }
}

/// Configures and starts an [`RpcClient`].
#[derive(Clone)]
pub struct RpcClientBuilder {
    event_capacity: usize,
    output_capacity: usize,
    max_line_bytes: usize,
    request_timeout: Option<Duration>,
    ui_handler: Option<UiHandler>,
}

impl Default for RpcClientBuilder {
    fn default() -> Self {
        Self {
            event_capacity: DEFAULT_EVENT_CAPACITY,
            output_capacity: DEFAULT_OUTPUT_CAPACITY,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            request_timeout: None,
            ui_handler: None,
        }
    }
}

impl RpcClientBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Events buffered before the reader waits (default 1024).
    pub fn event_capacity(mut self, capacity: usize) -> Self {
        self.event_capacity = capacity.max(1);
        self
    }

    /// Longest accepted server line (default 64 MiB).
    pub fn max_line_bytes(mut self, max: usize) -> Self {
        self.max_line_bytes = max;
        self
    }

    /// Fail a request that gets no response within `timeout`. Off by default: `compact` and
    /// `bash` legitimately take long, and a server that exits fails pending requests anyway.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Handles extension UI requests instead of surfacing them as [`RpcEvent::UiRequest`].
    /// Each request runs in its own task; for a dialog the returned reply is sent back
    /// (`None` sends `cancelled`), for fire-and-forget requests it is ignored.
    pub fn on_ui_request<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ExtensionUiRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<UiReply>> + Send + 'static,
    {
        self.ui_handler = Some(Arc::new(move |request| Box::pin(handler(request))));
        self
    }

    /// Spawns the server process. Must be called inside a tokio runtime.
    pub fn spawn(self, options: &SpawnOptions) -> Result<(RpcClient, RpcEvents), HeadlessError> {
        let program = options.program.display().to_string();
        self.spawn_command(options.command(), &program)
    }

    /// Spawns a prepared command; stdin and stdout are replaced by pipes, and the process is
    /// killed if the client is dropped without [`RpcClient::shutdown`].
    pub fn spawn_command(
        self,
        mut command: Command,
        program: &str,
    ) -> Result<(RpcClient, RpcEvents), HeadlessError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let spawn_error = |source| HeadlessError::Spawn {
            program: program.to_owned(),
            source,
        };
        let mut child = command.spawn().map_err(spawn_error)?;
        let missing = || spawn_error(std::io::Error::other("the child has no piped stdio"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let (mut client, events) = self.connect(stdout, stdin);
        client.child = Some(child);
        Ok((client, events))
    }

    /// Talks to a server over any pipe pair: `reader` is the server's output, `writer` its
    /// input. Must be called inside a tokio runtime.
    pub fn connect<R, W>(self, reader: R, writer: W) -> (RpcClient, RpcEvents)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, writer_task) = spawn_writer(writer, self.output_capacity);
        let (events_tx, events_rx) = mpsc::channel(self.event_capacity);
        let shared = Arc::new(Shared::default());
        let lines = LineReader::new(reader).with_max_line_bytes(self.max_line_bytes);
        let reader = tokio::spawn(read_loop(
            lines,
            Arc::clone(&shared),
            events_tx,
            self.ui_handler,
            out.clone(),
        ));
        let client = RpcClient {
            out,
            writer: Some(writer_task),
            reader: Some(reader),
            child: None,
            shared,
            next_id: AtomicU64::new(0),
            request_timeout: self.request_timeout,
        };
        (client, RpcEvents { rx: events_rx })
    }
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    pending: HashMap<String, oneshot::Sender<RpcResponse>>,
    /// Why the server's output ended; set once, after which no request can be answered.
    closed: Option<String>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Inserts and removes cannot leave the map half-updated, so poisoning is harmless.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn disconnected(&self) -> HeadlessError {
        let reason = self
            .lock()
            .closed
            .clone()
            .unwrap_or_else(|| "its output ended".to_owned());
        HeadlessError::Disconnected { reason }
    }
}

/// Drops a request's waiter however the request ends.
struct PendingGuard<'a> {
    shared: &'a Shared,
    id: &'a str,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.shared.lock().pending.remove(self.id);
    }
}

/// A connection to one RPC server. Methods take `&self`: share it (e.g. in an `Arc`) to issue
/// requests from several tasks.
pub struct RpcClient {
    out: LineWriter,
    writer: Option<WriterTask>,
    reader: Option<JoinHandle<()>>,
    child: Option<Child>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
    request_timeout: Option<Duration>,
}

impl std::fmt::Debug for RpcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcClient")
            .field("child", &self.child.as_ref().and_then(Child::id))
            .field("request_timeout", &self.request_timeout)
            .finish_non_exhaustive()
    }
}

impl RpcClient {
    /// Sends a command with a fresh id and waits for its response, success or failure.
    pub async fn send(&self, body: RpcCommandBody) -> Result<RpcResponse, HeadlessError> {
        let command_type = body.command_type();
        let id = format!("req_{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        {
            let mut state = self.shared.lock();
            if let Some(reason) = &state.closed {
                return Err(HeadlessError::Disconnected {
                    reason: reason.clone(),
                });
            }
            state.pending.insert(id.clone(), tx);
        }
        let _guard = PendingGuard {
            shared: &self.shared,
            id: &id,
        };
        let command = RpcCommand::new(Some(id.clone()), body);
        match self.out.send(&command).await {
            Err(HeadlessError::OutputClosed) => return Err(self.shared.disconnected()),
            other => other?,
        }
        let response = async { rx.await.map_err(|_| self.shared.disconnected()) };
        match self.request_timeout {
            None => response.await,
            Some(timeout) => tokio::time::timeout(timeout, response).await.map_err(|_| {
                HeadlessError::Timeout {
                    command: command_type.to_owned(),
                    timeout,
                }
            })?,
        }
    }

    /// Sends a command and reads its `data` as `T` (`()` or `Option<_>` when there may be
    /// none). A failure response becomes [`HeadlessError::Command`] with the server's message.
    pub async fn call<T: DeserializeOwned>(
        &self,
        body: RpcCommandBody,
    ) -> Result<T, HeadlessError> {
        let response = self.send(body).await?;
        if let Some(message) = response.error_message() {
            return Err(HeadlessError::Command {
                command: response.command.clone(),
                message: message.to_owned(),
            });
        }
        response.data_as().map_err(|source| HeadlessError::BadData {
            command: response.command.clone(),
            source,
        })
    }

    /// Like [`RpcClient::call`] for commands whose data does not matter.
    pub async fn call_unit(&self, body: RpcCommandBody) -> Result<(), HeadlessError> {
        self.call::<serde::de::IgnoredAny>(body).await.map(drop)
    }

    /// Answers an extension UI dialog surfaced as [`RpcEvent::UiRequest`].
    pub async fn reply_ui(
        &self,
        id: impl Into<String>,
        reply: UiReply,
    ) -> Result<(), HeadlessError> {
        self.out.send(&ExtensionUiResponse::new(id, reply)).await
    }

    /// The server's process id, for a spawned server that is still running.
    pub fn process_id(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Closes the server's input (it shuts down gracefully on EOF), waits until its output
    /// ends and, for a spawned server, until it exits. Events written meanwhile still arrive
    /// on [`RpcEvents`]; hold it only if you keep reading it.
    pub async fn shutdown(mut self) -> Result<Option<ExitStatus>, HeadlessError> {
        if let Some(writer) = self.writer.take() {
            match writer.close().await {
                // The server may have exited first; its stdin is then already gone.
                Err(HeadlessError::Io(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                }
                other => other?,
            }
        }
        if let Some(reader) = self.reader.take() {
            // A panicked reader has nothing left to deliver; the exit status still matters.
            let _ = reader.await;
        }
        match self.child.take() {
            Some(mut child) => Ok(Some(child.wait().await?)),
            None => Ok(None),
        }
    }

    /// Kills a spawned server and waits for it; for a connected pipe this only stops writing.
    pub async fn kill(mut self) -> Result<(), HeadlessError> {
        if let Some(mut child) = self.child.take() {
            child.kill().await?;
        }
        if let Some(writer) = self.writer.take() {
            // Whatever was queued has nowhere to go now.
            let _ = writer.close().await;
        }
        Ok(())
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut lines: LineReader<R>,
    shared: Arc<Shared>,
    events: mpsc::Sender<RpcEvent>,
    ui_handler: Option<UiHandler>,
    out: LineWriter,
) {
    let mut events = Some(events);
    let reason = loop {
        let event = match lines.next_line().await {
            Ok(Some(line)) => match RpcOutput::parse(&line) {
                Ok(RpcOutput::Response(response)) => match deliver(&shared, response) {
                    Some(unmatched) => RpcEvent::Response(unmatched),
                    None => continue,
                },
                Ok(RpcOutput::UiRequest(request)) => {
                    let events_open = events.as_ref().is_some_and(|sender| !sender.is_closed());
                    match handle_ui(request, ui_handler.as_ref(), events_open, &out) {
                        Some(request) => RpcEvent::UiRequest(request),
                        None => continue,
                    }
                }
                Ok(RpcOutput::Event(event)) => RpcEvent::Agent(event),
                Ok(RpcOutput::Other(value)) => RpcEvent::Other(value),
                Err(error) => RpcEvent::Unparsed {
                    line,
                    error: error.to_string(),
                },
            },
            Err(error @ HeadlessError::LineTooLong { .. }) => RpcEvent::Unparsed {
                line: String::new(),
                error: error.to_string(),
            },
            Ok(None) => break "its output ended".to_owned(),
            Err(error) => break error.to_string(),
        };
        if let Some(sender) = &events
            && sender.send(event).await.is_err()
        {
            // The consumer dropped RpcEvents: keep reading so responses still arrive.
            events = None;
        }
    };
    let mut state = shared.lock();
    state.closed = Some(reason);
    // Dropping the waiters wakes every pending request with `Disconnected`.
    state.pending.clear();
}

/// Hands a response to its waiter; returns it when nobody waits for it.
fn deliver(shared: &Shared, response: RpcResponse) -> Option<RpcResponse> {
    let waiter = match &response.id {
        Some(id) => shared.lock().pending.remove(id),
        None => None,
    };
    match waiter {
        Some(waiter) => waiter.send(response).err(),
        None => Some(response),
    }
}

/// Routes a UI request to the handler, or returns it for the event stream. Without either, a
/// dialog is cancelled at once so that the extension does not wait for an answer that cannot
/// come (`editor` has no timeout).
fn handle_ui(
    request: ExtensionUiRequest,
    handler: Option<&UiHandler>,
    events_open: bool,
    out: &LineWriter,
) -> Option<ExtensionUiRequest> {
    let dialog = request.kind.expects_response();
    if let Some(handler) = handler {
        let id = request.id.clone();
        let reply = handler(request);
        let out = out.clone();
        tokio::spawn(async move {
            let reply = reply.await;
            if dialog {
                let response = ExtensionUiResponse::new(id, reply.unwrap_or(UiReply::Cancelled));
                // A closed output means the server is gone; nothing waits for this answer.
                let _ = out.send(&response).await;
            }
        });
        return None;
    }
    if events_open {
        return Some(request);
    }
    if dialog {
        let response = ExtensionUiResponse::new(request.id, UiReply::Cancelled);
        let out = out.clone();
        tokio::spawn(async move {
            let _ = out.send(&response).await;
        });
    }
    None
}
