//! The RPC server: `knightcode --mode rpc` (spec `rpc.md`), a thin adapter over the session
//! actor ([`knightcode_runtime::actor`]).
//!
//! A reader task turns stdin lines into actor [`Command`]s (each tagged, its reply coming
//! back in the event stream); the main loop writes the stream in order — events and replies
//! as the actor produced them — so the events a command caused precede its response, a
//! prompt's response precedes its `agent_start`, and an `abort` is answered after the run's
//! last event. Lines that are not commands (parse errors, unknown commands) are answered in
//! the same order, through a `Ping` to the actor.
//!
//! Lifecycle: EOF on stdin tells the session to finish (abort the running prompt and user
//! shell commands, answer every command read before the EOF) and exits 0 once it has.
//! SIGTERM and SIGHUP stop at once, killing the process groups of running tools and shell
//! commands, and exit 143 and 129.

mod responses;

use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;

use knightcode_protocol::rpc::RpcInput;
use knightcode_runtime::AgentSession;
use knightcode_runtime::Command;
use knightcode_runtime::Responder;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::SessionHandle;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::shutdown;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;

use self::responses::Pending;
use super::framing::CommandReader;
use super::framing::DEFAULT_OUTPUT_CAPACITY;
use super::framing::LineWriter;
use super::framing::RecordSink;
use super::ui_bridge::UiBridge;

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
    let Some(runtime) = crate::start::runtime(diagnostics.as_ref()) else {
        return 1;
    };
    let code = runtime.block_on(async {
        let Some((mut signals, session, events)) =
            crate::start::session(setup, diagnostics.as_ref()).await
        else {
            return 1;
        };
        let shutdown = async move { signals.recv().await };
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

/// Serves one session over `input` / `output` until EOF (exit code 0) or until `shutdown`
/// resolves with an exit code. Must run inside a tokio runtime.
///
/// This loop writes stdout itself: the session's stream and the lines of the extension-UI
/// bridge, in arrival order, flushed whenever nothing else is waiting (a burst shares one
/// write, a lone response is never held back). One task between the session and the pipe
/// keeps a request's round trip to as few thread hand-offs as before the actor.
pub async fn serve<R, W, S>(
    mut session: AgentSession,
    events: knightcode_agent::EventReceiver,
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
    let (out, mut bridge_lines) = LineWriter::channel(DEFAULT_OUTPUT_CAPACITY);
    let bridge = UiBridge::new(out);
    // The session's own questions (`/undo`) go over the extension-UI subprotocol too.
    session.set_dialogs(Arc::new(bridge.clone()));
    // An extension's `ctx.shutdown()` ends the session as the end of input does, once the
    // next response is out (as the reference checks after each command it handled).
    let extension_shutdown = session.shutdown_requested();
    tokio::pin!(extension_shutdown);
    let mut shutdown_requested = false;
    let mut shutting_down = false;
    let mut responded = false;
    let mut output_lost = false;
    let (handle, mut stream) = session.spawn(events);
    let pending = Arc::new(Mutex::new(Pending::default()));
    let input_ended = Arc::new(AtomicBool::new(false));
    let reader = tokio::spawn(read_inputs(
        input,
        handle.clone(),
        Arc::clone(&pending),
        bridge.clone(),
        Arc::clone(&input_ended),
    ));
    tokio::pin!(shutdown);
    let mut stdout = Output {
        sink: RecordSink::new(output),
        failed: None,
    };
    let code = loop {
        let line = tokio::select! {
            biased;
            code = &mut shutdown => {
                // A dialog the session waits on would hold the stop up.
                bridge.close();
                // Killed processes and the aborted run are waited for, not written.
                shutdown::stop(handle.clone(), &mut stream, shutdown::EXIT_GRACE, drop).await;
                break code;
            }
            // Before the stream: the response of the command that asked is already there.
            () = &mut extension_shutdown, if !shutdown_requested => {
                shutdown_requested = true;
                None
            }
            item = stream.recv() => {
                // What the session had the bridge write before this (a notice before the
                // reply of the command that made it) goes out first.
                while let Ok(line) = bridge_lines.try_recv() {
                    if !stdout.write(line, true).await {
                        break;
                    }
                }
                let Some(item) = item else {
                    if input_ended.load(Ordering::SeqCst) {
                        break 0;
                    }
                    // The session's task is gone without being told to end: a bug. Say so
                    // instead of exiting as if the client had finished.
                    diagnostics("Error: the session stopped unexpectedly (this is a bug in knightcode). Everything up to the last response is saved; continue with knightcode --continue.");
                    break 1;
                };
                match item {
                    SessionEvent::Agent(event) => Some(serde_json::to_string(&event).map_err(|e| e.to_string())),
                    SessionEvent::Reply { tag, reply } => {
                        responded = true;
                        let response = lock(&pending).take(tag).map(|p| p.response(reply));
                        response.map(|r| serde_json::to_string(&r).map_err(|e| e.to_string()))
                    }
                    SessionEvent::Diagnostic(diagnostic) => {
                        diagnostics(&diagnostic.to_string());
                        None
                    }
                    SessionEvent::RunFailed(message) => {
                        diagnostics(&format!("Error: the run failed: {message}"));
                        None
                    }
                }
            }
            Some(line) = bridge_lines.recv() => Some(Ok(line)),
        };
        // Told before the response goes out, so that nothing the client sends after reading
        // it is taken up any more.
        if shutdown_requested && responded && !shutting_down {
            shutting_down = true;
            bridge.close();
            input_ended.store(true, Ordering::SeqCst);
            handle.send(Command::EndOfInput, Responder::Nobody);
        }
        responded = false;
        match line {
            Some(Ok(line)) => {
                let more = !stream.is_empty() || !bridge_lines.is_empty();
                if !stdout.write(line, more).await && !output_lost {
                    // Nobody reads the output any more: finish as on EOF, and say why on
                    // stderr (the exit code says it too).
                    output_lost = true;
                    diagnostics(&output_lost_message(stdout.failed.as_ref()));
                    input_ended.store(true, Ordering::SeqCst);
                    handle.send(Command::EndOfInput, Responder::Nobody);
                }
            }
            Some(Err(error)) => {
                diagnostics(&format!("Error: could not encode an RPC record: {error}"));
            }
            None => {}
        }
    };
    reader.abort();
    drop(handle);
    // What the bridge queued last still goes out.
    while let Ok(line) = bridge_lines.try_recv() {
        stdout.write(line, true).await;
    }
    // A client that stopped reading is a failed run for whoever started it.
    let code = if code == 0 && stdout.failed.is_some() {
        1
    } else {
        code
    };
    let closed = stdout.close();
    let flushed = if code == 0 {
        Ok(closed.await)
    } else {
        tokio::time::timeout(SIGNAL_FLUSH_LIMIT, closed).await
    };
    match flushed {
        Ok(Err(error)) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            diagnostics(&format!("Error: could not write the RPC output: {error}"));
        }
        _ => {}
    }
    code
}

/// What stderr says when stdout went away under a running session.
fn output_lost_message(error: Option<&std::io::Error>) -> String {
    let why = error.map_or_else(|| "closed".to_owned(), |e| format!("closed ({e})"));
    format!(
        "Error: the RPC output (stdout) was {why}: no client reads the session any more, so it stops as at the end of input. What was stored is in the session file; continue with knightcode --continue."
    )
}

/// stdout: records written in order; after a failed write nothing more is tried.
struct Output<W> {
    sink: RecordSink<W>,
    failed: Option<std::io::Error>,
}

impl<W: AsyncWrite + Unpin> Output<W> {
    /// Writes one record (compact JSON, without its LF); flushes unless `more` are
    /// waiting. False once the output is gone.
    async fn write(&mut self, mut line: String, more: bool) -> bool {
        if self.failed.is_some() {
            return false;
        }
        // Bridge lines come with their LF already (`LineWriter`), session records without.
        if !line.ends_with('\n') {
            line.push('\n');
        }
        if let Err(error) = self.sink.write(&line, more).await {
            self.failed = Some(error);
            return false;
        }
        true
    }

    /// Flushes and shuts the output down; the first write error, if any.
    async fn close(mut self) -> std::io::Result<()> {
        match self.failed.take() {
            Some(error) => Err(error),
            None => self.sink.close().await,
        }
    }
}

fn lock(pending: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    // Inserts and removals only: a panic cannot leave the map half-updated.
    pending.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads commands until EOF, hands them to the session with a tag for their reply, and
/// remembers how to write each reply.
async fn read_inputs<R: AsyncRead + Unpin>(
    input: R,
    handle: SessionHandle,
    pending: Arc<Mutex<Pending>>,
    bridge: UiBridge,
    input_ended: Arc<AtomicBool>,
) {
    let mut reader = CommandReader::new(input);
    loop {
        let (command, tag) = match reader.next_input().await {
            Ok(Some(RpcInput::Command(command))) => {
                let (runtime_command, tag) = lock(&pending).insert(command);
                (runtime_command, tag)
            }
            Ok(Some(RpcInput::UiResponse(response))) => {
                // Unknown ids are ignored, never answered.
                bridge.resolve(response);
                continue;
            }
            Ok(Some(other)) => match other.error_response() {
                Some(response) => (Command::Ping, lock(&pending).insert_answered(response)),
                None => continue,
            },
            // A read error ends the input like EOF: nothing more can arrive (no dialog
            // reply either).
            Ok(None) | Err(_) => {
                bridge.close();
                input_ended.store(true, Ordering::SeqCst);
                handle.send(Command::EndOfInput, Responder::Nobody);
                return;
            }
        };
        handle.send(command, Responder::Stream(tag));
    }
}
