//! Recording from the loop's tool hooks: the loop's other hooks decide first (a blocked call
//! changes nothing), then `edit`/`write` back their file up and shell tools mark the turn.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::AgentHooks;
use knightcode_agent::BoundaryAction;
use knightcode_agent::HookFuture;
use knightcode_agent::OverflowRecovery;
use knightcode_agent::PendingToolCall;
use knightcode_agent::ToolCallVerdict;
use knightcode_agent::ToolResultPatch;
use knightcode_agent::TurnSummary;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_session::SessionManager;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::FileHistory;
use super::current_checkpoint;
use crate::agent_session::lock;

/// Tools whose changes are backed up, and tools that only mark their turn.
const TRACKED_TOOLS: [&str; 2] = ["edit", "write"];
const SHELL_TOOLS: [&str; 2] = ["bash", "powershell"];

/// The loop's hooks plus file history. Every [`AgentHooks`] method is forwarded to `inner`:
/// a method added to the trait must be forwarded here too, or its default would silently
/// replace the inner hooks' answer.
pub struct FileHistoryHooks {
    pub inner: Arc<dyn AgentHooks>,
    pub history: Arc<FileHistory>,
    pub session: Arc<Mutex<SessionManager>>,
    pub cwd: PathBuf,
}

impl FileHistoryHooks {
    fn observe(&self, call: &PendingToolCall<'_>, arguments: &Value) {
        let tracked = TRACKED_TOOLS.contains(&call.tool_name);
        if !tracked && !SHELL_TOOLS.contains(&call.tool_name) {
            return;
        }
        let Some(checkpoint) = current_checkpoint(&lock(&self.session)) else {
            return;
        };
        if !tracked {
            self.history.mark_shell(&checkpoint);
        } else if let Some(path) = arguments.get("path").and_then(Value::as_str) {
            // Resolved as the tools resolve it (`~`, `@`, `.` and `..`).
            let path = knightcode_tools::path::resolve_to_cwd(path, &self.cwd);
            self.history.record(&checkpoint, &path, call.tool_call_id);
        }
    }
}

impl AgentHooks for FileHistoryHooks {
    fn transform_context<'a>(
        &'a self,
        messages: Vec<Arc<AgentMessage>>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        self.inner.transform_context(messages, cancel)
    }

    fn inspects_provider_payload(&self) -> bool {
        self.inner.inspects_provider_payload()
    }

    fn replaces_messages(&self) -> bool {
        self.inner.replaces_messages()
    }

    fn message_end<'a>(
        &'a self,
        message: &'a knightcode_protocol::AgentMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<knightcode_protocol::AgentMessage>> {
        self.inner.message_end(message, cancel)
    }

    fn provider_payload<'a>(
        &'a self,
        payload: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<Value>> {
        self.inner.provider_payload(payload, cancel)
    }

    fn before_tool_call<'a>(
        &'a self,
        call: PendingToolCall<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolCallVerdict> {
        Box::pin(async move {
            let verdict = self.inner.before_tool_call(call.clone(), cancel).await;
            if self.history.enabled() {
                match &verdict {
                    ToolCallVerdict::Proceed => self.observe(&call, call.arguments),
                    ToolCallVerdict::Rewrite(arguments) => self.observe(&call, arguments),
                    ToolCallVerdict::Block(_) => {}
                }
            }
            verdict
        })
    }

    fn after_tool_result<'a>(
        &'a self,
        result: knightcode_agent::FinishedResult<'a>,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolResultPatch> {
        Box::pin(async move {
            let patch = self
                .inner
                .after_tool_result(result, arguments, cancel)
                .await;
            if self.history.enabled() {
                let failed = patch.is_error.unwrap_or(result.is_error);
                self.history.call_finished(&result.tool_call_id, failed);
            }
            patch
        })
    }

    fn turn_end<'a>(
        &'a self,
        turn: TurnSummary<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        self.inner.turn_end(turn, cancel)
    }

    fn before_settle<'a>(
        &'a self,
        last: Option<&'a AssistantMessage>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        self.inner.before_settle(last, cancel)
    }

    fn context_overflow<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<OverflowRecovery>> {
        self.inner.context_overflow(failed, cancel)
    }

    fn overflow_unrecovered<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ()> {
        self.inner.overflow_unrecovered(failed, cancel)
    }
}
