//! Print mode (`-p`) and JSON mode (`--mode json`): run the prompts to completion, then exit.
//! A thin adapter over the session actor, like RPC mode.
//!
//! stdout carries only the answer (print) or the JSONL stream (json); everything else goes
//! to stderr. SIGTERM and SIGHUP abort the run (killing running tools) and exit 143 / 129.

use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::Responder;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::SessionEvents;
use knightcode_runtime::SessionHandle;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::hooks::InputSource;
use knightcode_runtime::shutdown;
use tokio::io::AsyncWriteExt as _;

/// What stdout carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OneShotMode {
    /// The final answer's text.
    Print,
    /// The session header, then every event as a JSON line.
    Json,
}

/// The prompts to run, in order; the first carries any images.
#[derive(Debug, Clone, PartialEq)]
pub struct OneShotPrompts {
    pub first: (String, Vec<ContentBlock>),
    pub rest: Vec<String>,
    /// The prompts to run instead when an extension that replaces plan mode took the word
    /// after `--plan` as its string flag's value, which the command line read as a message
    /// (`AgentSession::plan_argument_taken`); `Some(None)` when no prompt is left then.
    pub without_plan_argument: Option<Option<Box<OneShotPrompts>>>,
}

/// What is left to say when no prompt is left.
pub const NO_PROMPT: &str =
    "no prompt: pass a message, pipe text on standard input, or attach files with @path";

/// Runs print or JSON mode and returns the process exit code: 0, 1 when the session could
/// not start or the answer is an error, 143 / 129 after a signal.
pub fn run(setup: SessionSetup, prompts: OneShotPrompts, mode: OneShotMode) -> u8 {
    let Some(runtime) = crate::start::runtime(&stderr_line) else {
        return 1;
    };
    let code = runtime.block_on(run_async(setup, prompts, mode));
    runtime.shutdown_background();
    code
}

async fn run_async(setup: SessionSetup, prompts: OneShotPrompts, mode: OneShotMode) -> u8 {
    let Some((mut signals, session, events)) = crate::start::session(setup, &stderr_line).await
    else {
        return 1;
    };
    let prompts = match prompts.without_plan_argument {
        Some(instead) if session.plan_argument_taken() => match instead {
            Some(instead) => *instead,
            None => {
                stderr_line(&format!("Error: {NO_PROMPT}"));
                return 1;
            }
        },
        _ => prompts,
    };
    let mut out = Output {
        stdout: tokio::io::stdout(),
        json: mode == OneShotMode::Json,
        lost: None,
    };
    if out.json {
        match session.header().to_json_line() {
            Ok(header) => out.line(&header).await,
            Err(error) => {
                stderr_line(&format!(
                    "Error: could not encode the session header: {error}"
                ));
                return 1;
            }
        }
    }
    let (handle, mut stream) = session.spawn(events);
    let finished = {
        let runs = run_prompts(&handle, &mut stream, &mut out, prompts);
        tokio::pin!(runs);
        tokio::select! {
            finished = &mut runs => finished,
            code = signals.recv() => {
                handle.abort_now();
                // The abort kills the process groups of running commands and reaps them;
                // letting the run finish (briefly) means no command outlives us, and its
                // last events are still written.
                let _ = tokio::time::timeout(shutdown::EXIT_GRACE, &mut runs).await;
                return code;
            }
        }
    };
    if let Err(Stopped::OutputLost) = finished {
        // Nobody reads the events any more: stop the run rather than spend a model's time
        // on output that goes nowhere (as a Unix filter does on a closed pipe).
        // The events of the aborted run go nowhere; the session still ends and gives its
        // file up within the grace.
        shutdown::stop(handle, &mut stream, shutdown::EXIT_GRACE, drop).await;
        let why = out.lost.as_deref().unwrap_or("closed");
        stderr_line(&format!(
            "Error: the JSON output (stdout) was {why}: nobody reads the events any more, so the run was stopped. What was stored is in the session file; continue with knightcode --continue."
        ));
        return 1;
    }
    // The session ends with the last handle; its remaining events still go out.
    drop(handle);
    while let Some(item) = stream.recv().await {
        out.event(item).await;
    }
    let (last, plan) = match finished {
        Ok(LastRun { last, plan }) => (last, plan),
        Err(Stopped::Failed(message)) => {
            stderr_line(&format!("Error: {message}"));
            return 1;
        }
        Err(Stopped::OutputLost) => return 1,
    };
    let Some(message) = last else {
        return 0;
    };
    match message.stop_reason.known() {
        // The answer is an error (retries ran out, the request was refused): exit 1 in both
        // modes; JSON mode has the whole story in its events, stderr gets the gist.
        Some(reason @ (StopReason::Error | StopReason::Aborted)) => {
            let text = message
                .error_message
                .clone()
                .unwrap_or_else(|| format!("Request {}", reason.as_str()));
            stderr_line(&text);
            1
        }
        _ if out.json => 0,
        // A planning run that submitted a plan prints exactly the plan.
        _ if plan.is_some() => {
            let mut text = plan.unwrap_or_default();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            out.raw(&text).await;
            0
        }
        _ => {
            let mut text = String::new();
            for block in message.content.iter() {
                if let Some(part) = block.as_text() {
                    text.push_str(part);
                    text.push('\n');
                }
            }
            out.raw(&text).await;
            0
        }
    }
}

/// Why the prompts stopped before their runs settled.
enum Stopped {
    /// A prompt was refused or a run failed: what to tell the user.
    Failed(String),
    /// JSON mode's stdout is gone.
    OutputLost,
}

/// What the last prompt's run left for print mode.
struct LastRun {
    /// Its last assistant message.
    last: Option<AssistantMessage>,
    /// The plan it submitted (plan mode's `submit_plan`), if it did.
    plan: Option<String>,
}

/// The Markdown of a successful `submit_plan` call of the model (not a nested one).
fn submitted_plan(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::ToolExecutionEnd {
            tool_name,
            result,
            is_error: false,
            parent_tool_call_id: None,
            ..
        } if tool_name == "submit_plan" => result
            .details
            .get("markdown")
            .and_then(|m| m.as_str())
            .map(str::to_owned),
        _ => None,
    }
}

/// Runs each prompt until its run has settled; returns the last assistant message of the
/// last run.
async fn run_prompts(
    handle: &SessionHandle,
    stream: &mut SessionEvents,
    out: &mut Output,
    prompts: OneShotPrompts,
) -> Result<LastRun, Stopped> {
    let OneShotPrompts { first, rest, .. } = prompts;
    let texts = std::iter::once(first).chain(rest.into_iter().map(|text| (text, Vec::new())));
    let mut last = None;
    let mut plan = None;
    for (tag, (text, images)) in (0u64..).zip(texts) {
        plan = None;
        handle.send(
            Command::Prompt {
                text,
                images,
                queueing: None,
                source: InputSource::Rpc,
            },
            Responder::Stream(tag),
        );
        let mut running = false;
        loop {
            let Some(item) = stream.recv().await else {
                return Err(Stopped::Failed("the session ended unexpectedly".to_owned()));
            };
            match &item {
                SessionEvent::Reply { reply, .. } => match reply {
                    Reply::Prompt(PromptDisposition::Started) => running = true,
                    Reply::Failed(error) => return Err(Stopped::Failed(error.to_string())),
                    // Handled by a hook: nothing runs, unless the handler started a turn of
                    // its own (an extension command's `sendUserMessage`), which was queued
                    // before this reply; then that run is this prompt's.
                    _ => {
                        let started = matches!(
                            handle.request(Command::GetState).await,
                            Reply::State(state) if state.is_streaming
                        );
                        if !started {
                            break;
                        }
                        running = true;
                    }
                },
                SessionEvent::Agent(AgentEvent::MessageEnd {
                    message: AgentMessage::Assistant(message),
                }) => last = Some((**message).clone()),
                SessionEvent::Agent(event) if submitted_plan(event).is_some() => {
                    plan = submitted_plan(event);
                }
                SessionEvent::RunFailed(message) => {
                    return Err(Stopped::Failed(format!("the run failed: {message}")));
                }
                _ => {}
            }
            let settled =
                running && matches!(item, SessionEvent::Agent(AgentEvent::AgentSettled { .. }));
            out.event(item).await;
            if out.json && out.lost.is_some() {
                return Err(Stopped::OutputLost);
            }
            if settled {
                break;
            }
        }
    }
    Ok(LastRun { last, plan })
}

/// stdout, which may go away: JSON mode then stops its run; print mode's answer is written
/// once at the end, so a reader that left early costs nothing.
struct Output {
    stdout: tokio::io::Stdout,
    json: bool,
    /// Why writing failed, once it has.
    lost: Option<String>,
}

impl Output {
    async fn event(&mut self, item: SessionEvent) {
        match item {
            SessionEvent::Agent(event) if self.json => match serde_json::to_string(&event) {
                Ok(line) => self.line(&line).await,
                Err(error) => stderr_line(&format!("Error: could not encode an event: {error}")),
            },
            SessionEvent::Diagnostic(diagnostic) => stderr_line(&diagnostic.to_string()),
            _ => {}
        }
    }

    async fn line(&mut self, line: &str) {
        let mut text = String::with_capacity(line.len() + 1);
        text.push_str(line);
        text.push('\n');
        self.raw(&text).await;
    }

    async fn raw(&mut self, text: &str) {
        if self.lost.is_some() {
            return;
        }
        let written = async {
            self.stdout.write_all(text.as_bytes()).await?;
            self.stdout.flush().await
        };
        if let Err(error) = written.await {
            self.lost = Some(format!("closed ({error})"));
        }
    }
}

/// Diagnostics go to stderr; if even that fails there is nowhere left to report it.
fn stderr_line(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
