//! The adapter: the extension host as the session's hooks. `knightcode-ext` implements the
//! agent loop's points; this adds the session's (`input` and commands, `before_agent_start`,
//! compaction and tree navigation).

use crate::agent_session::lock;
use crate::hooks::AgentStart;
use crate::hooks::AgentStartChanges;
use crate::hooks::InputAction;
use crate::hooks::PromptInput;
use crate::hooks::SessionHooks;
use knightcode_agent::AgentHooks;
use knightcode_agent::HookFuture;
use knightcode_ext::ExtensionHost;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_session::SessionManager;
use serde_json::Value;
use serde_json::json;
use std::sync::Arc;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// A session's hooks when extensions are loaded.
pub struct ExtensionHooks {
    pub host: Arc<ExtensionHost>,
    /// The session file, for the entries `session_compact` hands over.
    pub entries: Option<Arc<Mutex<SessionManager>>>,
}

impl AgentHooks for ExtensionHooks {
    fn inspects_provider_payload(&self) -> bool {
        self.host.inspects_provider_payload()
    }

    fn provider_payload<'a>(
        &'a self,
        payload: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<Value>> {
        self.host.provider_payload(payload, cancel)
    }

    fn transform_context<'a>(
        &'a self,
        messages: Vec<Arc<AgentMessage>>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        self.host.transform_context(messages, cancel)
    }

    fn before_tool_call<'a>(
        &'a self,
        call: knightcode_agent::PendingToolCall<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, knightcode_agent::ToolCallVerdict> {
        self.host.before_tool_call(call, cancel)
    }

    fn after_tool_result<'a>(
        &'a self,
        result: knightcode_agent::FinishedResult<'a>,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, knightcode_agent::ToolResultPatch> {
        self.host.after_tool_result(result, arguments, cancel)
    }

    fn turn_end<'a>(
        &'a self,
        turn: knightcode_agent::TurnSummary<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, knightcode_agent::BoundaryAction> {
        self.host.turn_end(turn, cancel)
    }

    fn replaces_messages(&self) -> bool {
        self.host.replaces_messages()
    }

    fn message_end<'a>(
        &'a self,
        message: &'a AgentMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<AgentMessage>> {
        self.host.message_end(message, cancel)
    }
}

/// `/name args` → (`name`, `args`).
pub(crate) fn command_of(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    (!name.is_empty()).then_some((name, args.trim_start()))
}

impl SessionHooks for ExtensionHooks {
    fn inspects_compaction_messages(&self) -> bool {
        self.inspects()
    }

    fn before_compact<'a>(
        &'a self,
        starting: crate::hooks::CompactionStarting<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, crate::hooks::CompactionDecision> {
        Box::pin(async move { before_compact(&self.host, &starting).await })
    }

    fn compacted<'a>(&'a self, ended: crate::hooks::CompactionEnded<'a>) -> HookFuture<'a, ()> {
        Box::pin(async move {
            if self.host.handles("session_compact") {
                let payload = json!({
                    "compactionEntry": self.entry(ended.entry_id),
                    "fromExtension": ended.from_hook,
                    "reason": compaction_reason(ended.reason),
                    "willRetry": ended.will_retry,
                });
                self.host.dispatch("session_compact", payload).await;
            }
        })
    }

    fn compaction_failed<'a>(
        &'a self,
        ended: crate::hooks::CompactionEnded<'a>,
    ) -> HookFuture<'a, ()> {
        Box::pin(async move {
            if self.host.handles("session_compact_failed") {
                let payload = json!({
                    "reason": compaction_reason(ended.reason),
                    "errorMessage": ended.error_message,
                    "aborted": ended.aborted,
                    "willRetry": ended.will_retry,
                    "fromExtension": ended.from_hook,
                });
                self.host.dispatch("session_compact_failed", payload).await;
            }
        })
    }

    fn before_tree<'a>(
        &'a self,
        navigation: crate::hooks::TreeNavigation<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, crate::hooks::TreeDecision> {
        use crate::hooks::TreeDecision;
        Box::pin(async move {
            let payload = json!({ "preparation": {
                "targetId": navigation.target_id,
                "oldLeafId": navigation.old_leaf_id,
                "commonAncestorId": navigation.common_ancestor_id,
                "entriesToSummarize": navigation.entries_to_summarize.iter().map(message_json).collect::<Vec<_>>(),
                "userWantsSummary": navigation.user_wants_summary,
                "customInstructions": navigation.custom_instructions,
                "replaceInstructions": navigation.replace_instructions,
                "label": navigation.label,
            }});
            let Some(result) = self.host.dispatch("session_before_tree", payload).await else {
                return TreeDecision::Proceed;
            };
            if result.get("cancel").and_then(Value::as_bool) == Some(true) {
                return TreeDecision::Cancel;
            }
            if let Some(summary) = result.pointer("/summary/summary").and_then(Value::as_str) {
                return TreeDecision::Supply {
                    summary: summary.to_owned(),
                    details: result
                        .pointer("/summary/details")
                        .cloned()
                        .filter(|d| !d.is_null()),
                };
            }
            let text = |key: &str| result.get(key).and_then(Value::as_str).map(str::to_owned);
            if ["customInstructions", "replaceInstructions", "label"]
                .iter()
                .any(|key| result.get(*key).is_some())
            {
                return TreeDecision::Override {
                    custom_instructions: text("customInstructions"),
                    replace_instructions: result
                        .get("replaceInstructions")
                        .and_then(Value::as_bool),
                    label: text("label"),
                };
            }
            TreeDecision::Proceed
        })
    }

    fn tree_changed<'a>(&'a self, changed: crate::hooks::TreeChanged<'a>) -> HookFuture<'a, ()> {
        Box::pin(async move {
            if self.host.handles("session_tree") {
                let mut payload = json!({
                    "newLeafId": changed.new_leaf_id,
                    "oldLeafId": changed.old_leaf_id,
                });
                if let Some(id) = changed.summary_entry_id {
                    payload["summaryEntry"] = self.entry(Some(id));
                    payload["fromExtension"] = Value::Bool(changed.from_hook);
                }
                self.host.dispatch("session_tree", payload).await;
            }
        })
    }

    fn user_bash<'a>(
        &'a self,
        command: &'a str,
        exclude_from_context: bool,
        cwd: &'a std::path::Path,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, crate::hooks::UserBashDecision> {
        Box::pin(async move {
            use crate::hooks::UserBashDecision;
            let payload = json!({
                "command": command,
                "excludeFromContext": exclude_from_context,
                "cwd": cwd.to_string_lossy(),
            });
            let Some(result) = self.host.dispatch_until("user_bash", payload, cancel).await else {
                return UserBashDecision::Run;
            };
            if let Some(reason) = result.get("blocked").and_then(Value::as_str) {
                return UserBashDecision::Blocked(format!(
                    "an extension's user_bash handler failed, so the command was not run: {reason}"
                ));
            }
            // `{result}` replaces the run; `{operations}` (running it elsewhere) is not
            // supported yet, so the command runs here.
            match result
                .get("result")
                .cloned()
                .map(serde_json::from_value::<knightcode_protocol::rpc::BashResult>)
            {
                Some(Ok(replaced)) => UserBashDecision::Replace(replaced),
                _ => UserBashDecision::Run,
            }
        })
    }

    fn transform_input<'a>(
        &'a self,
        input: &'a PromptInput,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, InputAction> {
        Box::pin(async move {
            // An extension's own `sendUserMessage` never runs commands (no loops).
            if input.source != crate::hooks::InputSource::Extension
                && let Some((name, args)) = command_of(&input.text)
                && self.host.has_command(name)
            {
                self.host.run_command(name, args).await;
                return InputAction::Handled;
            }
            let payload = json!({
                "text": input.text,
                "images": input.images,
                "source": input.source.as_str(),
            });
            let Some(result) = self.host.dispatch_until("input", payload, cancel).await else {
                return InputAction::Continue;
            };
            match result.get("action").and_then(Value::as_str) {
                Some("handled") => InputAction::Handled,
                Some("transform") => InputAction::Transform {
                    text: result
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or(&input.text)
                        .to_owned(),
                    images: result
                        .get("images")
                        .cloned()
                        .and_then(|v| serde_json::from_value::<Vec<ContentBlock>>(v).ok())
                        .unwrap_or_else(|| input.images.clone()),
                },
                _ => InputAction::Continue,
            }
        })
    }

    fn before_agent_start<'a>(
        &'a self,
        start: AgentStart<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, AgentStartChanges> {
        Box::pin(async move {
            let payload = match start.custom {
                Some(message) => json!({
                    "message": message,
                    "systemPrompt": start.system_prompt,
                    "systemPromptOptions": start.system_prompt_options,
                    "messageType": "custom",
                }),
                None => json!({
                    "prompt": start.prompt,
                    "images": start.images,
                    "systemPrompt": start.system_prompt,
                    "systemPromptOptions": start.system_prompt_options,
                    "messageType": "user",
                }),
            };
            let Some(result) = self
                .host
                .dispatch_until("before_agent_start", payload, cancel)
                .await
            else {
                return AgentStartChanges::default();
            };
            let messages = result
                .get("messages")
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(custom_message).collect())
                .unwrap_or_default();
            AgentStartChanges {
                messages,
                system_prompt: result
                    .get("systemPrompt")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }
        })
    }
}

impl ExtensionHooks {
    fn inspects(&self) -> bool {
        self.host.handles("session_before_compact")
    }
}

fn compaction_reason(reason: knightcode_protocol::CompactionReason) -> Value {
    serde_json::to_value(reason).unwrap_or(Value::Null)
}

/// `session_before_compact`: `{cancel}` or `{compaction: {summary, firstKeptEntryId,
/// tokensBefore, details?}}` from the handlers.
async fn before_compact(
    host: &ExtensionHost,
    starting: &crate::hooks::CompactionStarting<'_>,
) -> crate::hooks::CompactionDecision {
    use crate::hooks::CompactionDecision;
    let preparation = starting.preparation;
    let messages = |list: &[AgentMessage]| {
        list.iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect::<Vec<_>>()
    };
    let payload = json!({
        "preparation": {
            "firstKeptEntryId": preparation.first_kept_entry_id,
            "messagesToSummarize": messages(&preparation.messages_to_summarize),
            "turnPrefixMessages": messages(&preparation.turn_prefix),
            "isSplitTurn": preparation.is_split_turn,
            "tokensBefore": preparation.tokens_before,
            "previousSummary": preparation.previous_summary,
            "fileOps": {
                "read": preparation.files.read,
                "written": preparation.files.written,
                "edited": preparation.files.edited,
            },
        },
        "customInstructions": starting.custom_instructions,
        "reason": compaction_reason(starting.reason),
        "willRetry": starting.will_retry,
    });
    let Some(result) = host.dispatch("session_before_compact", payload).await else {
        return CompactionDecision::Proceed;
    };
    if result.get("cancel").and_then(Value::as_bool) == Some(true) {
        return CompactionDecision::Cancel;
    }
    let Some(compaction) = result.get("compaction") else {
        return CompactionDecision::Proceed;
    };
    let Some(summary) = compaction.get("summary").and_then(Value::as_str) else {
        return CompactionDecision::Proceed;
    };
    CompactionDecision::Supply(crate::hooks::SuppliedCompaction {
        summary: summary.to_owned(),
        first_kept_entry_id: compaction
            .get("firstKeptEntryId")
            .and_then(Value::as_str)
            .unwrap_or(&preparation.first_kept_entry_id)
            .to_owned(),
        tokens_before: compaction
            .get("tokensBefore")
            .and_then(Value::as_u64)
            .unwrap_or(preparation.tokens_before),
        usage: None,
        details: compaction.get("details").cloned().filter(|d| !d.is_null()),
    })
}

impl ExtensionHooks {
    /// The compaction entry a compaction wrote, as `session_compact` carries it.
    fn entry(&self, id: Option<&str>) -> Value {
        let Some(id) = id else {
            return Value::Null;
        };
        self.entries
            .as_ref()
            .and_then(|session| {
                lock(session)
                    .entry(id)
                    .and_then(|e| serde_json::to_value(e).ok())
            })
            .unwrap_or(Value::Null)
    }
}

fn message_json(message: &AgentMessage) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

/// `{customType, content, display, details}` as a `custom` message.
pub(crate) fn custom_message(value: &Value) -> Option<AgentMessage> {
    let mut message = value.clone();
    let object = message.as_object_mut()?;
    object.insert("role".to_owned(), json!("custom"));
    if object.get("content").is_some_and(Value::is_string) {
        let text = object.get("content").cloned().unwrap_or(Value::Null);
        object.insert("content".to_owned(), text);
    }
    object.entry("display").or_insert(Value::Bool(true));
    object
        .entry("timestamp")
        .or_insert(json!(chrono::Utc::now().timestamp_millis()));
    serde_json::from_value(message).ok()
}
