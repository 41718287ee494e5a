//! Plan mode's hooks: the `tool_call` gate (model calls and nested calls alike), `/plan`
//! where a prompt arrives, the per-run reminder, the run's end after a submission, and the
//! recovery message after a compaction.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use knightcode_agent::AgentHooks;
use knightcode_agent::BoundaryAction;
use knightcode_agent::HookFuture;
use knightcode_agent::PendingToolCall;
use knightcode_agent::ToolCallVerdict;
use knightcode_agent::TurnSummary;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::Content;
use knightcode_protocol::plan;
use knightcode_protocol::plan::PLAN_MODE;
use knightcode_protocol::plan::PlanMessageKind;
use knightcode_protocol::plan::RecoveryStatus;
use tokio_util::sync::CancellationToken;

use super::ALLOWED_WHILE_PLANNING;
use super::PlanMode;
use super::text;
use crate::hooks::AgentStart;
use crate::hooks::AgentStartChanges;
use crate::hooks::CompactionEnded;
use crate::hooks::InputAction;
use crate::hooks::InputSource;
use crate::hooks::PromptInput;
use crate::hooks::SessionHooks;

/// The built-in plan mode as hooks of the session.
#[derive(Debug, Clone)]
pub(crate) struct PlanGate {
    pub(crate) plan: Arc<PlanMode>,
}

impl PlanGate {
    fn verdict(&self, call: &PendingToolCall<'_>) -> ToolCallVerdict {
        let tool_name = call.tool_name;
        if !self.plan.enabled() {
            return ToolCallVerdict::Proceed;
        }
        let state = match self.plan.state() {
            Ok(Some(state)) => state,
            Ok(None) => return ToolCallVerdict::Proceed,
            Err(error) => {
                return ToolCallVerdict::Block(format!(
                    "Blocked: this branch's plan-mode state cannot be restored ({error})."
                ));
            }
        };
        if !state.planning() {
            return ToolCallVerdict::Proceed;
        }
        if call.parent_tool_call_id.is_none()
            && super::lock(&self.plan.siblings)
                .iter()
                .any(|id| id == call.tool_call_id)
        {
            return ToolCallVerdict::Block(
                "Blocked: this response also submits the plan, which ends the run; this call was not run."
                    .to_owned(),
            );
        }
        if self.plan.submitted.load(Ordering::Relaxed) {
            return ToolCallVerdict::Block(
                "Blocked: the plan was submitted, which ends this run; this call was not run."
                    .to_owned(),
            );
        }
        if ALLOWED_WHILE_PLANNING.contains(&tool_name) {
            return ToolCallVerdict::Proceed;
        }
        ToolCallVerdict::Block(format!(
            "Blocked by plan mode: {tool_name} is not available while planning. Use only {} to investigate, and submit the plan with submit_plan.",
            ALLOWED_WHILE_PLANNING.join(", ")
        ))
    }
}

/// The compaction a plan-mode recovery message belongs to (`details.id`).
fn recovery_id(message: &AgentMessage) -> Option<&str> {
    match message {
        AgentMessage::Custom(custom) if custom.custom_type == PLAN_MODE => custom
            .details
            .as_ref()
            .and_then(|d| d.get("id"))
            .and_then(serde_json::Value::as_str),
        _ => None,
    }
}

impl AgentHooks for PlanGate {
    fn transform_context<'a>(
        &'a self,
        mut messages: Vec<Arc<AgentMessage>>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        let _ = cancel;
        let mut pending = super::lock(&self.plan.recovery);
        if let Some(frozen) = pending.as_ref() {
            let id = recovery_id(frozen);
            if messages.iter().any(|m| recovery_id(m) == id) {
                *pending = None;
            } else {
                messages.push(Arc::clone(frozen));
            }
        }
        drop(pending);
        Box::pin(std::future::ready(messages))
    }

    fn before_tool_call<'a>(
        &'a self,
        call: PendingToolCall<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolCallVerdict> {
        let _ = cancel;
        // Nested calls (`parent_tool_call_id`) pass through the same gate.
        Box::pin(std::future::ready(self.verdict(&call)))
    }

    fn replaces_messages(&self) -> bool {
        // Only to see which calls a response makes; nothing is replaced.
        self.plan.enabled()
    }

    fn message_end<'a>(
        &'a self,
        message: &'a AgentMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<AgentMessage>> {
        let _ = cancel;
        if let AgentMessage::Assistant(response) = message {
            let calls: Vec<&str> = response.tool_calls().map(|c| c.name.as_str()).collect();
            let submits = calls.contains(&super::SUBMIT_PLAN);
            let siblings: Vec<String> = if submits
                && calls.len() > 1
                && matches!(self.plan.state(), Ok(Some(state)) if state.planning())
            {
                response
                    .tool_calls()
                    .filter(|c| c.name != super::SUBMIT_PLAN)
                    .map(|c| c.id.clone())
                    .collect()
            } else {
                Vec::new()
            };
            *super::lock(&self.plan.siblings) = siblings;
        }
        Box::pin(std::future::ready(None))
    }

    fn turn_end<'a>(
        &'a self,
        turn: TurnSummary<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        let _ = (turn, cancel);
        let submitted = self.plan.take_submitted();
        Box::pin(std::future::ready(BoundaryAction {
            // A successful submission ends the run; queued input waits for the user.
            end: submitted,
            ..BoundaryAction::default()
        }))
    }
}

impl SessionHooks for PlanGate {
    fn transform_input<'a>(
        &'a self,
        input: &'a PromptInput,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, InputAction> {
        let _ = cancel;
        Box::pin(async move {
            // An extension's `sendUserMessage` is sent as written (no commands).
            if !self.plan.enabled() || input.source == InputSource::Extension {
                return InputAction::Continue;
            }
            match super::parse_command(&input.text) {
                Some(command) => self.plan.run_command(command).await,
                None => InputAction::Continue,
            }
        })
    }

    fn before_agent_start<'a>(
        &'a self,
        start: AgentStart<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, AgentStartChanges> {
        let _ = (start, cancel);
        let just_entered = self.plan.just_entered.swap(false, Ordering::Relaxed);
        self.plan.submitted.store(false, Ordering::Relaxed);
        let state = match self.plan.state() {
            Ok(Some(state)) if self.plan.enabled() && state.planning() && !just_entered => state,
            _ => return Box::pin(std::future::ready(AgentStartChanges::default())),
        };
        let reminder = AgentMessage::Custom(Box::new(knightcode_protocol::CustomMessage {
            custom_type: PLAN_MODE.to_owned(),
            content: Content::Text(text::reminder(state.revision())),
            display: false,
            details: Some(plan::message_details(PlanMessageKind::Reminder, None)),
            timestamp: knightcode_protocol::Millis(chrono::Utc::now().timestamp_millis()),
            extra: Default::default(),
        }));
        Box::pin(std::future::ready(AgentStartChanges {
            messages: vec![reminder],
            system_prompt: None,
        }))
    }

    fn tree_changed<'a>(&'a self, changed: crate::hooks::TreeChanged<'a>) -> HookFuture<'a, ()> {
        let _ = changed;
        // Another branch: its own compactions (if any) carry their own recovery.
        *super::lock(&self.plan.recovery) = None;
        Box::pin(std::future::ready(()))
    }

    fn compacted<'a>(&'a self, ended: CompactionEnded<'a>) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let Some(compaction_id) = ended.entry_id else {
                return;
            };
            if !self.plan.enabled() {
                return;
            }
            let Ok(Some(state)) = self.plan.state() else {
                return;
            };
            // Frozen now: later revisions never change what earlier requests carried.
            let (content, revision, status) = if state.planning() {
                let draft = state
                    .draft
                    .as_ref()
                    .map(|d| (d.revision, d.markdown.as_str()));
                (
                    text::recovery_planning(&self.plan.tool_names(), draft),
                    state.revision(),
                    RecoveryStatus::Planning,
                )
            } else if let (Some(approved), Some(draft)) = (state.approved, &state.draft) {
                (
                    text::recovery_approved(approved, &draft.markdown),
                    Some(approved),
                    RecoveryStatus::Approved,
                )
            } else {
                return;
            };
            let details = plan::message_details(
                PlanMessageKind::Recovery,
                Some((compaction_id, revision, status)),
            );
            // Held before it is saved: the retry that follows an overflow compaction must
            // carry it whether or not the save succeeds.
            *super::lock(&self.plan.recovery) = Some(Arc::new(AgentMessage::Custom(Box::new(
                knightcode_protocol::CustomMessage {
                    custom_type: PLAN_MODE.to_owned(),
                    content: Content::Text(content.clone()),
                    display: false,
                    details: Some(details.clone()),
                    timestamp: knightcode_protocol::Millis(chrono::Utc::now().timestamp_millis()),
                    extra: Default::default(),
                },
            ))));
            let appended = crate::agent_session::lock(&self.plan.session).append_custom_message(
                PLAN_MODE,
                Content::Text(content),
                false,
                Some(details),
            );
            if let Err(error) = appended {
                self.plan
                    .notify(
                        format!(
                            "Plan mode could not save its recovery message after the compaction: {error}."
                        ),
                        crate::dialogs::NoticeKind::Error,
                    )
                    .await;
            }
        })
    }
}
