//! The hooks the agent loop runs with: the session's own ([`Services::hooks`], the extension
//! host later) for every point, plus the runtime's overflow recovery by compaction.
//!
//! [`Services::hooks`]: crate::Services::hooks

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use knightcode_agent::AgentHooks;
use knightcode_agent::BoundaryAction;
use knightcode_agent::EventSender;
use knightcode_agent::HookFuture;
use knightcode_agent::OverflowRecovery;
use knightcode_agent::PendingToolCall;
use knightcode_agent::ToolCallVerdict;
use knightcode_agent::ToolResultPatch;
use knightcode_agent::TurnSummary;
use knightcode_ai::estimate_message_tokens;
use knightcode_ai::usage_tokens;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::rpc::CompactionResult;
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
use crate::hooks::CompactionEnded;
use crate::hooks::SessionHooks;

/// What a compaction during a run works with; the session brings it up to date before each
/// run (model switches and session replacement change it).
#[derive(Clone, Debug)]
pub struct CompactionTarget {
    pub session: Arc<Mutex<SessionManager>>,
    pub model: SummaryModel,
    /// Resolved for the model (overrides applied); an invalid setting refuses to compact.
    pub settings: Result<CompactionSettings, CompactionError>,
}

impl CompactionTarget {
    /// The threshold rule for the target's model, `false` when automatic compaction is off
    /// or a setting is invalid.
    pub fn over_threshold(&self, context_tokens: u64) -> bool {
        self.settings
            .as_ref()
            .is_ok_and(|s| s.should_compact(context_tokens, self.model.model.context_window))
    }

    /// Compacts for `reason` between `compaction_start` and `compaction_end` events (and the
    /// retry events of its summary requests), telling `hooks` how it went. `will_retry`
    /// marks an overflow recovery.
    pub async fn compact_announced(
        &self,
        announce: Announce<'_>,
        custom_instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CompactionResult, CompactionError> {
        let Announce {
            reason,
            will_retry,
            events,
            hooks,
        } = announce;
        events.emit(AgentEvent::CompactionStart { reason }).await;
        let outcome = match &self.settings {
            Ok(settings) => {
                let job = CompactionJob {
                    session: &self.session,
                    model: &self.model,
                    settings: *settings,
                    custom_instructions,
                    reason,
                    events,
                    will_retry,
                    hooks,
                };
                compact(job, cancel).await
            }
            Err(error) => Err(error.clone()),
        };
        let result = outcome
            .as_ref()
            .map(|c| c.result.clone())
            .map_err(Clone::clone);
        events
            .emit(end_event(reason, result.clone(), will_retry))
            .await;
        match &outcome {
            Ok(compacted) => {
                hooks
                    .compacted(CompactionEnded {
                        reason,
                        will_retry,
                        from_hook: compacted.from_hook,
                        entry_id: Some(&compacted.entry_id),
                        error_message: None,
                        aborted: false,
                    })
                    .await;
            }
            Err(error) => {
                let message = error.message_for(reason);
                hooks
                    .compaction_failed(CompactionEnded {
                        reason,
                        will_retry: false,
                        from_hook: false,
                        entry_id: None,
                        error_message: message.as_deref(),
                        aborted: matches!(error, CompactionError::Cancelled),
                    })
                    .await;
            }
        }
        result
    }
}

/// Why a compaction runs and who hears of it.
pub struct Announce<'a> {
    pub reason: CompactionReason,
    pub will_retry: bool,
    pub events: &'a EventSender,
    pub hooks: &'a dyn SessionHooks,
}

/// Shared between the session and its [`RuntimeHooks`].
pub type SharedTarget = Arc<Mutex<Option<CompactionTarget>>>;

/// Set while a compaction runs (`isCompacting` of `get_state`).
#[derive(Clone, Debug, Default)]
pub struct CompactingFlag(Arc<AtomicBool>);

impl CompactingFlag {
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Raised until the returned guard drops (also when the compaction future is dropped).
    pub fn raise(&self) -> CompactingGuard {
        self.0.store(true, Ordering::Relaxed);
        CompactingGuard(Arc::clone(&self.0))
    }
}

pub struct CompactingGuard(Arc<AtomicBool>);

impl Drop for CompactingGuard {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// The loop's hooks: `inner` everywhere, compaction when the context overflowed, and
/// automatic compaction at the threshold between turns and when a run settles.
pub struct RuntimeHooks {
    inner: Arc<dyn SessionHooks>,
    target: SharedTarget,
    events: EventSender,
    compacting: CompactingFlag,
    /// A compaction ran while a request was being routed (a virtual model's routed model
    /// was too small, [`CompactAhead`]): the loop takes up the compacted conversation at the
    /// next boundary.
    compacted_ahead: AtomicBool,
}

impl RuntimeHooks {
    pub fn new(
        inner: Arc<dyn SessionHooks>,
        target: SharedTarget,
        events: EventSender,
        compacting: CompactingFlag,
    ) -> Self {
        Self {
            inner,
            target,
            events,
            compacting,
            compacted_ahead: AtomicBool::new(false),
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
        let _compacting = self.compacting.raise();
        let announce = Announce {
            reason: CompactionReason::Overflow,
            will_retry: true,
            events: &self.events,
            hooks: self.inner.as_ref(),
        };
        let outcome = target.compact_announced(announce, None, cancel).await;
        outcome.ok().map(|_| OverflowRecovery {
            context: context_messages(&lock(&target.session)),
        })
    }

    /// The context the next request would carry is `context_tokens`: when that crosses the
    /// threshold, compact and return the compacted conversation. A failed compaction is
    /// reported in its `compaction_end` and the run goes on uncompacted (the overflow
    /// recovery still stands behind it).
    async fn at_threshold(
        &self,
        context_tokens: u64,
        cancel: &CancellationToken,
    ) -> Option<Vec<Arc<AgentMessage>>> {
        // Checked at every turn's end: the target (model, options) is copied only when a
        // compaction is due.
        let due = self
            .target
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|target| target.over_threshold(context_tokens));
        if !due || cancel.is_cancelled() {
            return None;
        }
        self.compact_now(cancel).await
    }

    /// Compacts for the threshold now and returns the compacted conversation.
    async fn compact_now(&self, cancel: &CancellationToken) -> Option<Vec<Arc<AgentMessage>>> {
        let target = self.target()?;
        let _compacting = self.compacting.raise();
        let announce = Announce {
            reason: CompactionReason::Threshold,
            will_retry: false,
            events: &self.events,
            hooks: self.inner.as_ref(),
        };
        let outcome = target.compact_announced(announce, None, cancel).await;
        outcome
            .ok()
            .map(|_| context_messages(&lock(&target.session)))
    }

    /// The compacted conversation for the loop when a compaction ran during the last
    /// request (the loop still holds the conversation from before it).
    fn take_compacted_ahead(&self) -> Option<Vec<Arc<AgentMessage>>> {
        if !self.compacted_ahead.swap(false, Ordering::Relaxed) {
            return None;
        }
        let target = self.target()?;
        Some(context_messages(&lock(&target.session)))
    }
}

impl crate::extensions::virtual_models::CompactAhead for RuntimeHooks {
    fn compact_ahead<'a>(
        &'a self,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<Vec<Arc<AgentMessage>>>> {
        Box::pin(async move {
            let compacted = self.compact_now(cancel).await?;
            self.compacted_ahead.store(true, Ordering::Relaxed);
            // What the loop would send: the context hooks see it as they see every request.
            Some(self.inner.transform_context(compacted, cancel).await)
        })
    }
}

/// Tokens of a context whose last response is `message` followed by `after`; `None` when
/// the response reports no usable usage (then the next response will).
fn tokens_after<'a>(
    message: &AssistantMessage,
    after: impl Iterator<Item = &'a AgentMessage>,
) -> Option<u64> {
    let usage = usage_tokens(message)?;
    Some(usage + after.map(estimate_message_tokens).sum::<u64>())
}

/// `compaction_end` for a finished compaction; `will_retry` only counts when it worked.
pub fn end_event(
    reason: CompactionReason,
    outcome: Result<CompactionResult, CompactionError>,
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
        self.inner.before_tool_call(call, cancel)
    }

    fn after_tool_result<'a>(
        &'a self,
        result: knightcode_agent::FinishedResult<'a>,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolResultPatch> {
        self.inner.after_tool_result(result, arguments, cancel)
    }

    /// Between turns: when the next request (this turn's results included) would not leave
    /// `reserveTokens` free, compact before it is sent.
    fn turn_end<'a>(
        &'a self,
        turn: TurnSummary<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        Box::pin(async move {
            let message = turn.message;
            let results = turn.tool_results;
            let mut action = self.inner.turn_end(turn, cancel).await;
            if action.context.is_none() {
                action.context = self.take_compacted_ahead();
            }
            let another_request = !results.is_empty() || action.continue_run;
            if action.end || !another_request || action.context.is_some() {
                return action;
            }
            let after = results.iter().chain(action.messages.iter());
            if let Some(tokens) = tokens_after(message, after) {
                action.context = self.at_threshold(tokens, cancel).await;
            }
            action
        })
    }

    /// After the run's last response: compact when it left too little room, so the next
    /// prompt starts from a context that fits.
    fn before_settle<'a>(
        &'a self,
        last: Option<&'a AssistantMessage>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        Box::pin(async move {
            let mut action = self.inner.before_settle(last, cancel).await;
            if action.context.is_none() {
                action.context = self.take_compacted_ahead();
            }
            if action.end || action.context.is_some() {
                return action;
            }
            if let Some(tokens) = last.and_then(|m| tokens_after(m, action.messages.iter())) {
                action.context = self.at_threshold(tokens, cancel).await;
            }
            action
        })
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
