//! Print mode (`-p`) and JSON mode (`--mode json`): run the prompts to completion, then exit.
//!
//! stdout carries only the answer (print) or the JSONL stream (json); everything else goes
//! to stderr. SIGTERM and SIGHUP abort the run (killing running tools) and exit 143 / 129.

use std::io::IsTerminal as _;
use std::io::Read as _;
use std::process::ExitCode;

use anyhow::Context as _;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::StopReason;
use knightcode_runtime::AgentSession;
use tokio::io::AsyncWriteExt as _;

use crate::args::Args;
use crate::initial::initial_prompts;
use crate::setup::session_setup;

/// Output of a one-shot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OneShot {
    Print,
    Json,
}

/// Reads piped stdin (not a terminal) as the start of the prompt; blank input counts as none.
fn piped_stdin() -> anyhow::Result<Option<String>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut bytes)
        .context("could not read standard input")?;
    let text = String::from_utf8_lossy(&bytes).trim().to_owned();
    Ok((!text.is_empty()).then_some(text))
}

/// Runs print or JSON mode and returns the process exit code.
pub fn run(args: &Args, mode: OneShot) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("could not start the async runtime")?;
    runtime.block_on(run_async(args, mode))
}

async fn run_async(args: &Args, mode: OneShot) -> anyhow::Result<ExitCode> {
    let setup = session_setup(args)?;
    let stdin = piped_stdin()?;
    let prompts = initial_prompts(stdin, &args.file_args, &args.messages, &setup.cwd)?;
    let Some(first) = prompts.first else {
        anyhow::bail!(
            "no prompt: pass a message, pipe text on standard input, or attach files with @path"
        );
    };
    let (mut session, mut events) = AgentSession::start(setup).await?;
    for notice in session.notices() {
        stderr_line(&format!("Warning: {notice}"));
    }
    let mut stdout = tokio::io::stdout();
    if mode == OneShot::Json {
        let header = session.header().to_json_line()?;
        write_line(&mut stdout, &header).await?;
    }
    // Events must be read even in print mode: the agent waits when nobody drains them.
    let pump = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(event) = events.recv().await {
            if mode == OneShot::Json {
                let line = serde_json::to_string(&event)?;
                // A reader that went away is not our failure; stop writing, keep running.
                if write_line(&mut stdout, &line).await.is_err() {
                    while events.recv().await.is_some() {}
                    break;
                }
            }
        }
        anyhow::Ok(())
    });

    let handle = session.handle();
    let mut last = None;
    let code = {
        let runs = async {
            let mut outcome = session.prompt(&first.0, first.1).await?;
            for text in &prompts.rest {
                outcome = session.prompt(text, Vec::new()).await?;
            }
            anyhow::Ok(outcome)
        };
        tokio::pin!(runs);
        let code = tokio::select! {
            outcome = &mut runs => {
                let outcome = outcome?;
                last = outcome.messages.iter().rev().find_map(|m| match m {
                    AgentMessage::Assistant(a) => Some((**a).clone()),
                    _ => None,
                });
                None
            }
            code = termination_signal() => {
                handle.abort();
                Some(code)
            }
        };
        if code.is_some() {
            // The abort kills the process groups of running commands and reaps them;
            // letting it finish (briefly) means no command outlives us.
            let _ = tokio::time::timeout(ABORT_GRACE, &mut runs).await;
        }
        code
    };
    // The event stream ends when the last sender is gone: the session's and the handle's.
    drop(handle);
    drop(session);
    let _ = pump.await;
    if let Some(code) = code {
        return Ok(ExitCode::from(code));
    }
    if mode == OneShot::Json {
        return Ok(ExitCode::SUCCESS);
    }
    let Some(message) = last else {
        return Ok(ExitCode::SUCCESS);
    };
    match message.stop_reason.known() {
        Some(reason @ (StopReason::Error | StopReason::Aborted)) => {
            let text = message
                .error_message
                .clone()
                .unwrap_or_else(|| format!("Request {}", reason.as_str()));
            stderr_line(&text);
            Ok(ExitCode::FAILURE)
        }
        _ => {
            let mut out = String::new();
            for block in message.content.iter() {
                if let Some(text) = block.as_text() {
                    out.push_str(text);
                    out.push('\n');
                }
            }
            let _ = stdout.write_all(out.as_bytes()).await;
            let _ = stdout.flush().await;
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn write_line(stdout: &mut tokio::io::Stdout, line: &str) -> std::io::Result<()> {
    stdout.write_all(line.as_bytes()).await?;
    stdout.write_all(b"\n").await?;
    stdout.flush().await
}

/// How long a SIGTERM / SIGHUP waits for the aborted run to kill and reap its commands.
const ABORT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Resolves with the exit code for SIGTERM (143) or SIGHUP (129).
async fn termination_signal() -> u8 {
    use tokio::signal::unix::SignalKind;
    use tokio::signal::unix::signal;
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => 143,
        _ = hup.recv() => 129,
    }
}

/// Diagnostics go to stderr; if even that fails there is nowhere left to report it.
fn stderr_line(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
