//! User shell commands (`!cmd` in the TUI, RPC `bash`): run in the session folder with the
//! user's shell, output cleaned and streamed chunk by chunk, the result kept as a
//! `bashExecution` message (`spec/rpc.md` §2 "Bash").
//!
//! Output is cleaned and collected by [`knightcode_tools::UserShellOutput`] (the `bash`
//! tool's collector lives beside it and shares its UTF-8 decoding and temp file).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_protocol::BashExecutionMessage;
use knightcode_protocol::rpc::BashResult;
use knightcode_tools::ExecOps as _;
use knightcode_tools::ExecRequest;
use knightcode_tools::LocalExecOps;
use tokio_util::sync::CancellationToken;

use crate::agent_session::now_millis;
use crate::error::Result;
use crate::error::RuntimeError;

/// The user shell collector, under the name this module has always exported.
pub use knightcode_tools::UserShellOutput as BashOutput;

/// A user shell command ready to run ([`crate::AgentSession::user_bash`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserBash {
    pub command: String,
    /// `!!`: shown to the user, never sent to the model.
    pub exclude_from_context: bool,
    pub cwd: PathBuf,
    pub shell_path: Option<PathBuf>,
    /// The sandbox when `sandbox.userCommands` puts the user's commands under it.
    pub sandbox: Option<knightcode_sandbox::SandboxLauncher>,
    /// `shellCommandPrefix`, run before the command.
    pub prefix: Option<String>,
}

/// A finished user shell command: the RPC result and the message to store.
#[derive(Debug, Clone, PartialEq)]
pub struct BashOutcome {
    pub result: BashResult,
    pub message: BashExecutionMessage,
}

impl UserBash {
    /// Runs the command until it exits or `cancel` fires (which kills its process group).
    /// `on_chunk` receives each piece of cleaned output as it arrives. Fails only when the
    /// command could not be started (missing shell or folder).
    pub async fn run(
        self,
        hooks: &dyn crate::hooks::SessionHooks,
        cancel: CancellationToken,
        on_chunk: impl FnMut(&str) + Send + 'static,
    ) -> Result<BashOutcome> {
        // An extension may run it itself (an interactive program, another machine).
        let decision = hooks
            .user_bash(&self.command, self.exclude_from_context, &self.cwd, &cancel)
            .await;
        if let crate::hooks::UserBashDecision::Blocked(reason) = decision {
            return Err(RuntimeError::Rejected(reason));
        }
        if let crate::hooks::UserBashDecision::Replace(result) = decision {
            let message = BashExecutionMessage {
                command: self.command,
                output: result.output.clone(),
                exit_code: result.exit_code,
                cancelled: result.cancelled,
                truncated: result.truncated,
                full_output_path: result.full_output_path.clone(),
                exclude_from_context: self.exclude_from_context.then_some(true),
                timestamp: now_millis(),
                ..BashExecutionMessage::default()
            };
            return Ok(BashOutcome { result, message });
        }
        let output = Arc::new(Mutex::new(BashOutput::new(std::env::temp_dir())));
        let sink = Arc::clone(&output);
        let mut on_chunk = on_chunk;
        let command = match &self.prefix {
            Some(prefix) => format!("{prefix}\n{}", self.command),
            None => self.command.clone(),
        };
        let request = ExecRequest {
            command,
            cwd: self.cwd.clone(),
            env: std::env::vars_os().collect(),
            timeout: None,
            cancel: cancel.clone(),
            on_data: Box::new(move |data: &[u8]| {
                let text = lock(&sink).push(data);
                if !text.is_empty() {
                    on_chunk(&text);
                }
            }),
        };
        let exec = LocalExecOps::new(self.shell_path.clone()).with_sandbox(self.sandbox.clone());
        let status = exec.exec(request).await;
        let mut output = lock(&output);
        let (exit_code, cancelled) = match status {
            Ok(status) if !cancel.is_cancelled() => (status.exit_code.map(i64::from), false),
            Ok(_) | Err(knightcode_tools::ToolsError::Aborted) => (None, true),
            Err(error) => return Err(RuntimeError::Rejected(error.to_string())),
        };
        let result = output.finish(exit_code, cancelled);
        let message = BashExecutionMessage {
            command: self.command,
            output: result.output.clone(),
            exit_code: result.exit_code,
            cancelled: result.cancelled,
            truncated: result.truncated,
            full_output_path: result.full_output_path.clone(),
            exclude_from_context: self.exclude_from_context.then_some(true),
            timestamp: now_millis(),
            ..BashExecutionMessage::default()
        };
        Ok(BashOutcome { result, message })
    }
}

fn lock(output: &Mutex<BashOutput>) -> std::sync::MutexGuard<'_, BashOutput> {
    // Every update is a push onto buffers; a panic cannot leave them half-changed.
    output.lock().unwrap_or_else(PoisonError::into_inner)
}
