//! Two sets of hooks as one: the session's extensions first, then the hooks the embedding
//! program passed in [`crate::Services`], so loading an extension never silences them.
//!
//! Each point composes the way the extension API composes handlers: transforms pipe (the
//! second sees what the first made), the first block or cancel wins, notifications reach
//! both, and results merge (messages collected, the later system prompt or context wins).

use std::sync::Arc;

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
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::hooks::AgentStart;
use crate::hooks::AgentStartChanges;
use crate::hooks::CompactionDecision;
use crate::hooks::CompactionEnded;
use crate::hooks::CompactionStarting;
use crate::hooks::InputAction;
use crate::hooks::PromptInput;
use crate::hooks::SessionHooks;
use crate::hooks::TreeChanged;
use crate::hooks::TreeDecision;
use crate::hooks::TreeNavigation;

/// `first`, then `second`.
pub struct ChainedHooks {
    pub first: Arc<dyn SessionHooks>,
    pub second: Arc<dyn SessionHooks>,
}

fn merge_boundary(a: BoundaryAction, b: BoundaryAction) -> BoundaryAction {
    let mut messages = a.messages;
    messages.extend(b.messages);
    BoundaryAction {
        messages,
        context: b.context.or(a.context),
        continue_run: a.continue_run || b.continue_run,
        end: a.end || b.end,
    }
}

impl AgentHooks for ChainedHooks {
    fn transform_context<'a>(
        &'a self,
        messages: Vec<Arc<AgentMessage>>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        Box::pin(async move {
            let messages = self.first.transform_context(messages, cancel).await;
            self.second.transform_context(messages, cancel).await
        })
    }

    fn inspects_provider_payload(&self) -> bool {
        self.first.inspects_provider_payload() || self.second.inspects_provider_payload()
    }

    fn provider_payload<'a>(
        &'a self,
        payload: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<Value>> {
        Box::pin(async move {
            let first = if self.first.inspects_provider_payload() {
                self.first.provider_payload(payload, cancel).await
            } else {
                None
            };
            if !self.second.inspects_provider_payload() {
                return first;
            }
            let seen = first.as_ref().unwrap_or(payload);
            self.second.provider_payload(seen, cancel).await.or(first)
        })
    }

    fn before_tool_call<'a>(
        &'a self,
        call: PendingToolCall<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolCallVerdict> {
        Box::pin(async move {
            match self.first.before_tool_call(call.clone(), cancel).await {
                ToolCallVerdict::Block(reason) => ToolCallVerdict::Block(reason),
                ToolCallVerdict::Proceed => self.second.before_tool_call(call, cancel).await,
                ToolCallVerdict::Rewrite(arguments) => {
                    let rewritten = PendingToolCall {
                        arguments: &arguments,
                        ..call
                    };
                    match self.second.before_tool_call(rewritten, cancel).await {
                        ToolCallVerdict::Proceed => ToolCallVerdict::Rewrite(arguments),
                        other => other,
                    }
                }
            }
        })
    }

    fn after_tool_result<'a>(
        &'a self,
        result: knightcode_agent::FinishedResult<'a>,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolResultPatch> {
        Box::pin(async move {
            let first = self
                .first
                .after_tool_result(result, arguments, cancel)
                .await;
            // The second sees the result as the first left it.
            let mut patched = result.message.clone();
            if let Some(content) = &first.content {
                patched.content = knightcode_protocol::Blocks(content.clone());
            }
            if let Some(details) = &first.details {
                patched.details = Some(details.clone());
            }
            if let Some(is_error) = first.is_error {
                patched.is_error = is_error;
            }
            let structured = match first.structured_content_change() {
                Some(change) => change,
                None => result.structured_content.cloned(),
            };
            let view = knightcode_agent::FinishedResult {
                message: &patched,
                structured_content: structured.as_ref(),
            };
            let second = self.second.after_tool_result(view, arguments, cancel).await;
            // Structured content as the second left it (its new content drops the first's).
            let structured_content = second
                .structured_content_change()
                .or_else(|| first.structured_content_change())
                .map(|change| change.unwrap_or(serde_json::Value::Null));
            ToolResultPatch {
                content: second.content.or(first.content),
                details: second.details.or(first.details),
                is_error: second.is_error.or(first.is_error),
                structured_content,
            }
        })
    }

    fn replaces_messages(&self) -> bool {
        self.first.replaces_messages() || self.second.replaces_messages()
    }

    /// The second hooks see what the first made of the message.
    fn message_end<'a>(
        &'a self,
        message: &'a knightcode_protocol::AgentMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<knightcode_protocol::AgentMessage>> {
        Box::pin(async move {
            let first = if self.first.replaces_messages() {
                self.first.message_end(message, cancel).await
            } else {
                None
            };
            if !self.second.replaces_messages() {
                return first;
            }
            let current = first.as_ref().unwrap_or(message);
            match self.second.message_end(current, cancel).await {
                Some(second) => Some(second),
                None => first,
            }
        })
    }

    fn turn_end<'a>(
        &'a self,
        turn: TurnSummary<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        Box::pin(async move {
            let first = self.first.turn_end(turn, cancel).await;
            let second = self.second.turn_end(turn, cancel).await;
            merge_boundary(first, second)
        })
    }

    fn before_settle<'a>(
        &'a self,
        last: Option<&'a AssistantMessage>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        Box::pin(async move {
            let first = self.first.before_settle(last, cancel).await;
            let second = self.second.before_settle(last, cancel).await;
            merge_boundary(first, second)
        })
    }

    fn context_overflow<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<OverflowRecovery>> {
        Box::pin(async move {
            match self.first.context_overflow(failed, cancel).await {
                Some(recovery) => Some(recovery),
                None => self.second.context_overflow(failed, cancel).await,
            }
        })
    }

    fn overflow_unrecovered<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ()> {
        Box::pin(async move {
            self.first.overflow_unrecovered(failed, cancel).await;
            self.second.overflow_unrecovered(failed, cancel).await;
        })
    }
}

impl SessionHooks for ChainedHooks {
    fn user_bash<'a>(
        &'a self,
        command: &'a str,
        exclude_from_context: bool,
        cwd: &'a std::path::Path,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, crate::hooks::UserBashDecision> {
        Box::pin(async move {
            match self
                .first
                .user_bash(command, exclude_from_context, cwd, cancel)
                .await
            {
                crate::hooks::UserBashDecision::Run => {
                    self.second
                        .user_bash(command, exclude_from_context, cwd, cancel)
                        .await
                }
                replaced => replaced,
            }
        })
    }

    fn transform_input<'a>(
        &'a self,
        input: &'a PromptInput,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, InputAction> {
        Box::pin(async move {
            match self.first.transform_input(input, cancel).await {
                InputAction::Handled => InputAction::Handled,
                InputAction::Continue => self.second.transform_input(input, cancel).await,
                InputAction::Transform { text, images } => {
                    let changed = PromptInput {
                        text,
                        images,
                        source: input.source,
                    };
                    match self.second.transform_input(&changed, cancel).await {
                        InputAction::Continue => InputAction::Transform {
                            text: changed.text,
                            images: changed.images,
                        },
                        other => other,
                    }
                }
            }
        })
    }

    fn before_agent_start<'a>(
        &'a self,
        start: AgentStart<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, AgentStartChanges> {
        Box::pin(async move {
            let first = self.first.before_agent_start(start, cancel).await;
            let system_prompt = first.system_prompt.clone();
            let seen = AgentStart {
                system_prompt: system_prompt.as_deref().unwrap_or(start.system_prompt),
                ..start
            };
            let second = self.second.before_agent_start(seen, cancel).await;
            let mut messages = first.messages;
            messages.extend(second.messages);
            AgentStartChanges {
                messages,
                system_prompt: second.system_prompt.or(first.system_prompt),
            }
        })
    }

    fn inspects_compaction_messages(&self) -> bool {
        self.first.inspects_compaction_messages() || self.second.inspects_compaction_messages()
    }

    fn before_compact<'a>(
        &'a self,
        starting: CompactionStarting<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, CompactionDecision> {
        Box::pin(async move {
            match self.first.before_compact(starting, cancel).await {
                CompactionDecision::Proceed => self.second.before_compact(starting, cancel).await,
                decided => decided,
            }
        })
    }

    fn compacted<'a>(&'a self, ended: CompactionEnded<'a>) -> HookFuture<'a, ()> {
        Box::pin(async move {
            self.first.compacted(ended).await;
            self.second.compacted(ended).await;
        })
    }

    fn compaction_failed<'a>(&'a self, ended: CompactionEnded<'a>) -> HookFuture<'a, ()> {
        Box::pin(async move {
            self.first.compaction_failed(ended).await;
            self.second.compaction_failed(ended).await;
        })
    }

    fn before_tree<'a>(
        &'a self,
        navigation: TreeNavigation<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, TreeDecision> {
        Box::pin(async move {
            match self.first.before_tree(navigation.clone(), cancel).await {
                TreeDecision::Proceed => self.second.before_tree(navigation, cancel).await,
                decided => decided,
            }
        })
    }

    fn tree_changed<'a>(&'a self, changed: TreeChanged<'a>) -> HookFuture<'a, ()> {
        Box::pin(async move {
            self.first.tree_changed(changed).await;
            self.second.tree_changed(changed).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::InputSource;
    use serde_json::json;

    /// Rewrites `bash` calls to `echo safe`, and upper-cases prompts.
    struct Rewriter;
    impl AgentHooks for Rewriter {
        fn before_tool_call<'a>(
            &'a self,
            call: PendingToolCall<'a>,
            _cancel: &'a CancellationToken,
        ) -> HookFuture<'a, ToolCallVerdict> {
            let verdict = if call.tool_name == "bash" {
                ToolCallVerdict::Rewrite(json!({"command": "echo safe"}))
            } else {
                ToolCallVerdict::Proceed
            };
            Box::pin(std::future::ready(verdict))
        }
    }
    impl SessionHooks for Rewriter {
        fn transform_input<'a>(
            &'a self,
            input: &'a PromptInput,
            _cancel: &'a CancellationToken,
        ) -> HookFuture<'a, InputAction> {
            Box::pin(std::future::ready(InputAction::Transform {
                text: input.text.to_uppercase(),
                images: Vec::new(),
            }))
        }
    }

    /// Blocks any call whose arguments mention "rm", and records what it saw.
    #[derive(Default)]
    struct Gate {
        seen: std::sync::Mutex<Vec<String>>,
    }
    impl AgentHooks for Gate {
        fn before_tool_call<'a>(
            &'a self,
            call: PendingToolCall<'a>,
            _cancel: &'a CancellationToken,
        ) -> HookFuture<'a, ToolCallVerdict> {
            let text = call.arguments.to_string();
            self.seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(text.clone());
            let verdict = if text.contains("rm") {
                ToolCallVerdict::Block("no rm".into())
            } else {
                ToolCallVerdict::Proceed
            };
            Box::pin(std::future::ready(verdict))
        }
    }
    impl SessionHooks for Gate {
        fn transform_input<'a>(
            &'a self,
            input: &'a PromptInput,
            _cancel: &'a CancellationToken,
        ) -> HookFuture<'a, InputAction> {
            let action = if input.text == "STOP" {
                InputAction::Handled
            } else {
                InputAction::Continue
            };
            Box::pin(std::future::ready(action))
        }
    }

    fn call<'a>(name: &'a str, arguments: &'a Value) -> PendingToolCall<'a> {
        PendingToolCall {
            tool_call_id: "c1",
            tool_name: name,
            arguments,
            parent_tool_call_id: None,
        }
    }

    #[tokio::test]
    async fn the_second_hooks_see_what_the_first_made_and_can_still_block() {
        let gate = Arc::new(Gate::default());
        let chain = ChainedHooks {
            first: Arc::new(Rewriter),
            second: gate.clone(),
        };
        let cancel = CancellationToken::new();
        let rm = json!({"command": "rm -rf /"});
        // The rewrite reached the gate, which let it through: the rewrite stands.
        assert_eq!(
            chain.before_tool_call(call("bash", &rm), &cancel).await,
            ToolCallVerdict::Rewrite(json!({"command": "echo safe"}))
        );
        // Untouched by the first, blocked by the second.
        assert_eq!(
            chain.before_tool_call(call("read", &rm), &cancel).await,
            ToolCallVerdict::Block("no rm".into())
        );
        let seen = gate
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        assert_eq!(
            seen,
            [r#"{"command":"echo safe"}"#, r#"{"command":"rm -rf /"}"#]
        );
    }

    #[tokio::test]
    async fn inputs_pipe_through_both_and_either_may_handle() {
        let chain = ChainedHooks {
            first: Arc::new(Rewriter),
            second: Arc::new(Gate::default()),
        };
        let cancel = CancellationToken::new();
        let input = |text: &str| PromptInput {
            text: text.to_owned(),
            images: Vec::new(),
            source: InputSource::Rpc,
        };
        assert_eq!(
            chain.transform_input(&input("hello"), &cancel).await,
            InputAction::Transform {
                text: "HELLO".into(),
                images: Vec::new()
            }
        );
        assert_eq!(
            chain.transform_input(&input("stop"), &cancel).await,
            InputAction::Handled
        );
    }
}
