//! Hook points: where the runtime (compaction, and later extensions) acts on a run in flight.
//!
//! The loop calls an [`AgentHooks`] at each point below; every method has a no-op default,
//! so an implementation overrides only what it needs. The points follow the event contracts
//! of the extension API (`spec/extensions-api.md` §6):
//!
//! | hook | when | may |
//! |---|---|---|
//! | [`transform_context`](AgentHooks::transform_context) | before each model request | replace the messages sent (not the stored conversation) |
//! | [`provider_payload`](AgentHooks::provider_payload) | the request body is built | replace the JSON sent to the provider |
//! | [`before_tool_call`](AgentHooks::before_tool_call) | after argument validation | block the call with a reason, or rewrite its arguments |
//! | [`after_tool_result`](AgentHooks::after_tool_result) | a call finished | rewrite content, details, `isError` |
//! | [`message_end`](AgentHooks::message_end) | a message is finished, before `message_end` goes out and it is stored | replace it (same role) |
//! | [`turn_end`](AgentHooks::turn_end) | after a turn's tool results | add messages, ask for one more request, end the run |
//! | [`before_settle`](AgentHooks::before_settle) | the run would stop | the same |
//! | [`context_overflow`](AgentHooks::context_overflow) | a response failed for a full context | compact and hand back a smaller context to retry with |
//! | [`overflow_unrecovered`](AgentHooks::overflow_unrecovered) | it failed so again after one recovery | report it (the run ends) |
//!
//! Every hook is async and gets the run's cancellation token: an abort must end a hook that
//! waits (a dialog, a summary request) as it ends the model stream.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::ToolResultMessage;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The future a hook returns.
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

fn ready<'a, T: Send + 'a>(value: T) -> HookFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

/// A tool call about to run, as the model issued it (arguments repaired and validated).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingToolCall<'a> {
    pub tool_call_id: &'a str,
    pub tool_name: &'a str,
    pub arguments: &'a Value,
    /// The call that made this one through `ctx.executeTool`, if another tool made it.
    pub parent_tool_call_id: Option<&'a str>,
}

/// What [`AgentHooks::before_tool_call`] decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ToolCallVerdict {
    /// Run the call as it is.
    #[default]
    Proceed,
    /// Run the call with these arguments instead (they are not validated again, as in the
    /// reference, where handlers mutate the input in place).
    Rewrite(Value),
    /// Do not run it: the model gets an error result with this text.
    Block(String),
}

/// A finished call's result as [`AgentHooks::after_tool_result`] sees it: the message that
/// is emitted and stored (its fields read through `Deref`), and the structured content
/// programmatic callers get, which is neither.
#[derive(Debug, Clone, Copy)]
pub struct FinishedResult<'a> {
    pub message: &'a ToolResultMessage,
    pub structured_content: Option<&'a Value>,
}

impl std::ops::Deref for FinishedResult<'_> {
    type Target = ToolResultMessage;

    fn deref(&self) -> &ToolResultMessage {
        self.message
    }
}

/// Changes to a finished call's result; `None` fields stay as they are.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResultPatch {
    pub content: Option<Vec<ContentBlock>>,
    pub details: Option<Value>,
    pub is_error: Option<bool>,
    /// A new `structuredContent` (`Null`: none). A patch that replaces `content` without
    /// it drops the result's structured content, so that redacting the text also redacts
    /// what scripts would get.
    pub structured_content: Option<Value>,
}

impl ToolResultPatch {
    /// What the result's structured content becomes under this patch: `None` to keep it.
    pub fn structured_content_change(&self) -> Option<Option<Value>> {
        match (&self.structured_content, &self.content) {
            (Some(Value::Null), _) => Some(None),
            (Some(value), _) => Some(Some(value.clone())),
            (None, Some(_)) => Some(None),
            (None, None) => None,
        }
    }
}

/// A finished turn: the assistant's response and the results of its tool calls.
#[derive(Debug, Clone, Copy)]
pub struct TurnSummary<'a> {
    /// 0 for the first turn of a low-level run.
    pub turn_index: usize,
    pub message: &'a AssistantMessage,
    /// The `toolResult` messages, in call order.
    pub tool_results: &'a [AgentMessage],
}

/// What a boundary hook ([`AgentHooks::turn_end`], [`AgentHooks::before_settle`]) asks for.
#[derive(Debug, Clone, Default)]
pub struct BoundaryAction {
    /// Messages to add to the conversation now (recorded and shown like any other).
    pub messages: Vec<AgentMessage>,
    /// The conversation as the next request should see it, when the hook changed it in the
    /// session (a context edit, a compaction).
    pub context: Option<Vec<Arc<AgentMessage>>>,
    /// Make exactly one more model request, even if the run would stop.
    pub continue_run: bool,
    /// End the run after this boundary; wins over `continue_run` and does not deliver
    /// queued messages.
    pub end: bool,
}

/// How [`AgentHooks::context_overflow`] recovered.
#[derive(Debug, Clone)]
pub struct OverflowRecovery {
    /// The compacted conversation to retry the request with.
    pub context: Vec<Arc<AgentMessage>>,
}

/// The hook points of the loop (see the module docs). The default of every method does
/// nothing, so `impl AgentHooks for MyHooks {}` is a valid, inert implementation.
pub trait AgentHooks: Send + Sync {
    /// The messages of the next request; the returned list is what the model sees. The
    /// stored conversation is unchanged.
    fn transform_context<'a>(
        &'a self,
        messages: Vec<Arc<AgentMessage>>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        let _ = cancel;
        ready(messages)
    }

    /// Whether [`AgentHooks::provider_payload`] wants to see request bodies; the body is only
    /// decoded for it when this says so.
    fn inspects_provider_payload(&self) -> bool {
        false
    }

    /// The provider request body (wire-format JSON); `Some` replaces it.
    fn provider_payload<'a>(
        &'a self,
        payload: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<Value>> {
        let _ = (payload, cancel);
        ready(None)
    }

    /// A call about to run.
    fn before_tool_call<'a>(
        &'a self,
        call: PendingToolCall<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolCallVerdict> {
        let _ = (call, cancel);
        ready(ToolCallVerdict::Proceed)
    }

    /// A call finished (also a failed or blocked one); the patch is applied before the
    /// result is emitted and stored.
    fn after_tool_result<'a>(
        &'a self,
        result: FinishedResult<'a>,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolResultPatch> {
        let _ = (result, arguments, cancel);
        ready(ToolResultPatch::default())
    }

    /// Whether [`AgentHooks::message_end`] wants to see finished messages; they are only
    /// handed over when this says so.
    fn replaces_messages(&self) -> bool {
        false
    }

    /// A message is finished (assistant response, prompt, tool result): `Some` replaces it
    /// in the conversation, the `message_end` event and the session file. A replacement
    /// with another role is ignored.
    fn message_end<'a>(
        &'a self,
        message: &'a AgentMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<AgentMessage>> {
        let _ = (message, cancel);
        ready(None)
    }

    /// After a turn's tool results were stored.
    fn turn_end<'a>(
        &'a self,
        turn: TurnSummary<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        let _ = (turn, cancel);
        ready(BoundaryAction::default())
    }

    /// The run has nothing left to do (no tool calls, no queued messages) and would stop.
    fn before_settle<'a>(
        &'a self,
        last: Option<&'a AssistantMessage>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        let _ = (last, cancel);
        ready(BoundaryAction::default())
    }

    /// The response `failed` says the context did not fit. `Some` retries the request with
    /// the returned conversation; the loop asks at most once per prompt.
    fn context_overflow<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<OverflowRecovery>> {
        let _ = (failed, cancel);
        ready(None)
    }

    /// The context did not fit again after [`AgentHooks::context_overflow`] recovered once
    /// this prompt: the run ends with `failed`.
    fn overflow_unrecovered<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ()> {
        let _ = (failed, cancel);
        ready(())
    }
}

/// `message` as the [`AgentHooks::message_end`] hook leaves it.
pub(crate) async fn finish_message(
    hooks: &dyn AgentHooks,
    message: AgentMessage,
    cancel: &CancellationToken,
) -> AgentMessage {
    if !hooks.replaces_messages() {
        return message;
    }
    match hooks.message_end(&message, cancel).await {
        Some(replacement) if replacement.role() == message.role() => replacement,
        _ => message,
    }
}

/// Hooks that do nothing (the default of a new agent).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl AgentHooks for NoHooks {}
