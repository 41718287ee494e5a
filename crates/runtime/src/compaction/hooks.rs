//! The hooks the agent loop runs with: the session's own ([`Services::hooks`], the extension
//! host later) for every point, plus the runtime's overflow recovery by compaction.
//!
//! [`Services::hooks`]: crate::Services::hooks

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_agent::AgentHooks;
use knightcode_agent::BoundaryAction;
use knightcode_agent::EventSender;
use knightcode_agent::HookFuture;
use knightcode_agent::OverflowRecovery;
use knightcode_agent::PendingToolCall;
use knightcode_agent::ToolCallVerdict;
use knightcode_agent::ToolResultPatch;
use knightcode_agent::TurnSummary;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::ToolResultMessage;
use knightcode_session::SessionManager;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::CompactionError;
use super::CompactionJob;
use super::CompactionSettings;
use super::OVERFLOW_RECOVERY_EXHAUSTED;
use super::SummaryModel;
use super::compact;
use super::context_messages;
use crate::agent_session::lock;
use crate::hooks::SessionHooks;

/// What a compaction during a run works with; the session brings it up to date before each
/// run (model switches and session replacement change it).
#[derive(Clone, Debug)]
pub struct CompactionTarget {
    pub session: Arc<Mutex<SessionManager>>,
    pub model: SummaryModel,
    pub settings: CompactionSettings,
}

/// Shared between the session and its [`RuntimeHooks`].
pub type SharedTarget = Arc<Mutex<Option<CompactionTarget>>>;

/// The loop's hooks: `inner` everywhere, and compaction when the context overflowed.
pub struct RuntimeHooks {
    inner: Arc<dyn SessionHooks>,
    target: SharedTarget,
    events: EventSender,
}

impl RuntimeHooks {
    pub fn new(inner: Arc<dyn SessionHooks>, target: SharedTarget, events: EventSender) -> Self {
        Self {
            inner,
            target,
            events,
        }
    }

    fn target(&self) -> Option<CompactionTarget> {
        self.target
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Leaves the failed response out of future context, compacts, and hands back the
    /// compacted context to retry with.
    async fn recover(
        &self,
        failed: &AssistantMessage,
        cancel: &CancellationToken,
    ) -> Option<OverflowRecovery> {
        let target = self.target()?;
        omit_failed(&target.session, failed);
        let reason = CompactionReason::Overflow;
        self.events
            .emit(AgentEvent::CompactionStart { reason })
            .await;
        let job = CompactionJob {
            session: &target.session,
            model: &target.model,
            settings: target.settings,
            custom_instructions: None,
        };
        let outcome = compact(job, cancel).await;
        let recovered = outcome.is_ok();
        self.events.emit(end_event(reason, outcome, true)).await;
        recovered.then(|| OverflowRecovery {
            context: context_messages(&lock(&target.session)),
        })
    }
}

/// `compaction_end` for a finished compaction; `will_retry` only counts when it worked.
pub fn end_event(
    reason: CompactionReason,
    outcome: Result<knightcode_protocol::rpc::CompactionResult, CompactionError>,
    will_retry: bool,
) -> AgentEvent {
    match outcome {
        Ok(result) => AgentEvent::CompactionEnd {
            reason,
            result: serde_json::to_value(result).ok(),
            aborted: false,
            will_retry,
            error_message: None,
        },
        Err(error) => AgentEvent::CompactionEnd {
            reason,
            result: None,
            aborted: matches!(error, CompactionError::Cancelled),
            will_retry: false,
            error_message: error.message_for(reason),
        },
    }
}

/// The failed attempt stays in the file but leaves the model's context (`context_edit`).
fn omit_failed(session: &Mutex<SessionManager>, failed: &AssistantMessage) {
    let mut session = lock(session);
    let target = session.branch(None).ok().and_then(|branch| {
        branch
            .iter()
            .rev()
            .find(|e| matches!(e.message(), Some(AgentMessage::Assistant(a)) if **a == *failed))
            .map(|e| e.id().to_owned())
    });
    if let Some(id) = target {
        // Not fatal: the compaction then summarises the failure too.
        let _ = session.append_context_edit(&id, None);
    }
}

impl AgentHooks for RuntimeHooks {
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
        self.inner.before_tool_call(call, cancel)
    }

    fn after_tool_result<'a>(
        &'a self,
        result: &'a ToolResultMessage,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolResultPatch> {
        self.inner.after_tool_result(result, arguments, cancel)
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

    /// The given hooks may recover first (they may hold their own strategy); otherwise the
    /// runtime compacts.
    fn context_overflow<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<OverflowRecovery>> {
        Box::pin(async move {
            if let Some(recovery) = self.inner.context_overflow(failed, cancel).await {
                return Some(recovery);
            }
            self.recover(failed, cancel).await
        })
    }

    fn overflow_unrecovered<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ()> {
        Box::pin(async move {
            self.inner.overflow_unrecovered(failed, cancel).await;
            self.events
                .emit(AgentEvent::CompactionEnd {
                    reason: CompactionReason::Overflow,
                    result: None,
                    aborted: false,
                    will_retry: false,
                    error_message: Some(OVERFLOW_RECOVERY_EXHAUSTED.to_owned()),
                })
                .await;
        })
    }
}
