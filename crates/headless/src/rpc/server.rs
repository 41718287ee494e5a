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
use std::time::Duration;

use knightcode_protocol::rpc::RpcInput;
use knightcode_runtime::AgentSession;
use knightcode_runtime::Command;
use knightcode_runtime::Responder;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::SessionHandle;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::shutdown;
use knightcode_runtime::shutdown::TerminationSignals;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;

use self::responses::Pending;
use super::framing::CommandReader;
use super::framing::DEFAULT_OUTPUT_CAPACITY;
use super::framing::spawn_writer;
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
        let shutdown = match TerminationSignals::install() {
            Ok(mut signals) => async move { signals.recv().await },
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

/// Serves one session over `input` / `output` until EOF (exit code 0) or until `shutdown`
/// resolves with an exit code. Must run inside a tokio runtime.
pub async fn serve<R, W, S>(
    session: AgentSession,
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
    let (out, writer) = spawn_writer(output, DEFAULT_OUTPUT_CAPACITY);
    let (handle, mut stream) = session.spawn(events);
    let pending = Arc::new(Mutex::new(Pending::default()));
    let reader = tokio::spawn(read_inputs(
        input,
        handle.clone(),
        Arc::clone(&pending),
        UiBridge::new(out.clone()),
    ));
    tokio::pin!(shutdown);
    let mut closed = false;
    let code = loop {
        tokio::select! {
            biased;
            code = &mut shutdown => {
                // Killed processes and the aborted run are waited for, not written.
                shutdown::stop(handle.clone(), &mut stream, shutdown::EXIT_GRACE, drop).await;
                break code;
            }
            item = stream.recv() => {
                let Some(item) = item else { break 0 };
                let record = match item {
                    SessionEvent::Agent(event) => Some(serde_json::to_string(&event).map_err(|e| e.to_string())),
                    SessionEvent::Reply { tag, reply } => {
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
                };
                if let Some(Err(error)) = &record {
                    diagnostics(&format!("Error: could not encode an RPC record: {error}"));
                }
                if let Some(Ok(line)) = record
                    && !closed
                    && out.send_json(line).await.is_err()
                {
                    // Nobody reads the output any more: finish as on EOF.
                    closed = true;
                    handle.send(Command::EndOfInput, Responder::Nobody);
                }
            }
        }
    };
    reader.abort();
    drop(handle);
    drop(out);
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

fn lock(pending: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    // Inserts and removals only: a panic cannot leave the map half-updated.
    pending.lock().unwrap_or_else(PoisonError::into_inner)
}

fn is_broken_pipe(error: &crate::HeadlessError) -> bool {
    matches!(error, crate::HeadlessError::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Reads commands until EOF, hands them to the session with a tag for their reply, and
/// remembers how to write each reply.
async fn read_inputs<R: AsyncRead + Unpin>(
    input: R,
    handle: SessionHandle,
    pending: Arc<Mutex<Pending>>,
    bridge: UiBridge,
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
            // A read error ends the input like EOF: nothing more can arrive.
            Ok(None) | Err(_) => {
                handle.send(Command::EndOfInput, Responder::Nobody);
                return;
            }
        };
        handle.send(command, Responder::Stream(tag));
    }
}
