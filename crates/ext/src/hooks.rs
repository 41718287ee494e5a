//! The host as the agent loop's hooks (`tool_call`, `tool_result`, `context`, `turn_end`)
//! and extension tools as [`Tool`]s the loop calls.

use std::sync::Arc;

use knightcode_agent::AgentHooks;
use knightcode_agent::BoundaryAction;
use knightcode_agent::ExecutionMode;
use knightcode_agent::HookFuture;
use knightcode_agent::PendingToolCall;
use knightcode_agent::Tool;
use knightcode_agent::ToolCallVerdict;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolDefinition;
use knightcode_agent::ToolError;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolOutput;
use knightcode_agent::ToolResultPatch;
use knightcode_agent::TurnSummary;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::host::ExtensionHost;
use crate::host::ToolSpec;
use crate::ops::Ops;

/// A result or partial result as JS returned it (`{content, details, isError}`).
pub(crate) fn tool_output(value: &Value) -> ToolOutput {
    let content: Vec<ContentBlock> = value
        .get("content")
        .cloned()
        .and_then(|c| serde_json::from_value(c).ok())
        .unwrap_or_default();
    ToolOutput {
        content,
        details: value.get("details").cloned().filter(|d| !d.is_null()),
        structured_content: value
            .get("structuredContent")
            .cloned()
            .filter(|s| !s.is_null()),
        is_error: value.get("isError").and_then(Value::as_bool) == Some(true),
        terminate: value.get("terminate").and_then(Value::as_bool) == Some(true),
        usage: value
            .get("usage")
            .cloned()
            .and_then(|u| serde_json::from_value(u).ok()),
    }
}

/// A tool an extension registered; `execute` runs on the JS thread.
pub struct JsTool {
    definition: ToolDefinition,
    exposure: knightcode_agent::ToolExposure,
    default_active: bool,
    constrained_sampling: Option<knightcode_protocol::ConstrainedSampling>,
    output_schema: Option<Value>,
    engine: Engine,
    ops: Arc<Ops>,
}

impl JsTool {
    fn new(spec: &ToolSpec, host: &ExtensionHost) -> Self {
        Self {
            definition: ToolDefinition {
                name: spec.name.clone(),
                label: spec.label.clone(),
                description: spec.description.clone(),
                parameters: spec.parameters.clone(),
                prompt_snippet: spec.prompt_snippet.clone(),
                prompt_guidelines: spec.prompt_guidelines.clone(),
                execution: if spec.execution_mode == "sequential" {
                    ExecutionMode::Sequential
                } else {
                    ExecutionMode::Parallel
                },
            },
            exposure: spec
                .exposure
                .as_deref()
                .and_then(knightcode_agent::ToolExposure::parse)
                .unwrap_or_default(),
            default_active: spec.default_active != Some(false),
            constrained_sampling: spec
                .constrained_sampling
                .clone()
                .and_then(|value| serde_json::from_value(value).ok()),
            output_schema: spec.output_schema.clone(),
            engine: host.engine.clone(),
            ops: Arc::clone(&host.ops),
        }
    }
}

impl Tool for JsTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn exposure(&self) -> knightcode_agent::ToolExposure {
        self.exposure
    }

    fn active_on_registration(&self) -> bool {
        self.exposure.declarable() && self.default_active
    }

    fn constrained_sampling(&self) -> Option<knightcode_protocol::ConstrainedSampling> {
        self.constrained_sampling.clone()
    }

    fn output_schema(&self) -> Option<Value> {
        self.output_schema.clone()
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let id = context.tool_call_id.clone();
            let updates = context.clone();
            self.ops.watch_updates(
                &id,
                Arc::new(move |partial: ToolOutput| updates.update(partial)),
            );
            // `ctx.executeTool` of this call finds its context here.
            self.ops.nested.watch(&context);
            let payload = json!({
                "name": self.definition.name,
                "toolCallId": id,
                "params": arguments,
            });
            let call = self.engine.call("executeTool", &payload);
            // Biased towards the abort: a body that returns because the run was aborted
            // (its nested calls ended with the abort) is still an aborted call.
            let result = tokio::select! {
                biased;
                () = context.cancel.cancelled() => {
                    // A body stuck in a synchronous loop holds the JS thread: interrupt it
                    // first, then let an asynchronous one see its signal abort.
                    self.engine.interrupt();
                    self.engine.post("abort", &json!({ "toolCallId": id }));
                    self.ops.unwatch_updates(&id);
                    self.ops.nested.unwatch(&id);
                    return Err(ToolError::Aborted("Operation aborted".to_owned()));
                }
                result = call => result,
            };
            self.ops.unwatch_updates(&id);
            self.ops.nested.unwatch(&id);
            match result {
                Ok(value) => Ok(tool_output(&value)),
                Err(failure) => Err(ToolError::failed(failure.to_string())),
            }
        })
    }
}

impl ExtensionHost {
    /// The registered tools, for the session's registry (after built-ins: a tool with a
    /// built-in's name replaces it).
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.registry()
            .tools
            .iter()
            .map(|spec| Arc::new(JsTool::new(spec, self)) as Arc<dyn Tool>)
            .collect()
    }
}

fn message_json(message: &AgentMessage) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

impl ExtensionHost {
    /// `after_provider_response` for the session's requests; `None` when no handler listens.
    pub fn response_hook(self: &Arc<Self>) -> Option<knightcode_ai::ResponseHook> {
        if !self.handles("after_provider_response") {
            return None;
        }
        let host = Arc::clone(self);
        Some(knightcode_ai::ResponseHook(Arc::new(
            move |status, headers| {
                let host = Arc::clone(&host);
                Box::pin(async move {
                    host.dispatch(
                        "after_provider_response",
                        json!({ "status": status, "headers": headers }),
                    )
                    .await;
                })
            },
        )))
    }
}

impl ExtensionHost {
    /// `before_provider_headers`: handlers edit `event.headers` in place (a `null` value
    /// drops a header); `None` when no handler listens.
    pub fn headers_hook(self: &Arc<Self>) -> Option<knightcode_ai::HeadersHook> {
        if !self.handles("before_provider_headers") {
            return None;
        }
        let host = Arc::clone(self);
        Some(knightcode_ai::HeadersHook(Arc::new(move |headers| {
            let host = Arc::clone(&host);
            Box::pin(async move {
                let result = host
                    .dispatch(
                        "before_provider_headers",
                        json!({ "headers": headers.clone() }),
                    )
                    .await;
                match result.and_then(|r| r.get("headers").and_then(Value::as_object).cloned()) {
                    Some(edited) => edited,
                    None => headers,
                }
            })
        })))
    }

    /// `provider_stream_event`: each parsed stream event, awaited in stream order;
    /// `None` when no handler listens.
    pub fn stream_event_hook(self: &Arc<Self>) -> Option<knightcode_ai::StreamEventHook> {
        if !self.handles("provider_stream_event") {
            return None;
        }
        let host = Arc::clone(self);
        Some(knightcode_ai::StreamEventHook(Arc::new(move |event| {
            let host = Arc::clone(&host);
            Box::pin(async move {
                host.dispatch("provider_stream_event", event).await;
            })
        })))
    }
}

impl AgentHooks for ExtensionHost {
    fn inspects_provider_payload(&self) -> bool {
        self.handles("before_provider_request")
    }

    fn provider_payload<'a>(
        &'a self,
        payload: &'a Value,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<Value>> {
        Box::pin(async move {
            let result = self
                .dispatch("before_provider_request", json!({ "payload": payload }))
                .await?;
            result.get("payload").cloned()
        })
    }

    fn transform_context<'a>(
        &'a self,
        messages: Vec<Arc<AgentMessage>>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        Box::pin(async move {
            if !self.handles("context") {
                return messages;
            }
            // Handlers see the conversation without system messages; those are kept.
            let (system, rest): (Vec<_>, Vec<_>) = messages
                .iter()
                .cloned()
                .partition(|m| matches!(**m, AgentMessage::System(_)));
            let payload =
                json!({ "messages": rest.iter().map(|m| message_json(m)).collect::<Vec<_>>() });
            let Some(result) = self.dispatch_until("context", payload, cancel).await else {
                return messages;
            };
            let Some(list) = result.get("messages").and_then(Value::as_array) else {
                return messages;
            };
            let mut replaced = Vec::with_capacity(list.len());
            for item in list {
                match serde_json::from_value::<AgentMessage>(item.clone()) {
                    Ok(message) => replaced.push(Arc::new(message)),
                    Err(_) => return messages,
                }
            }
            system.into_iter().chain(replaced).collect()
        })
    }

    fn before_tool_call<'a>(
        &'a self,
        call: PendingToolCall<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolCallVerdict> {
        Box::pin(async move {
            let mut payload = json!({
                "toolCallId": call.tool_call_id,
                "toolName": call.tool_name,
                "input": call.arguments,
            });
            if let Some(parent) = call.parent_tool_call_id {
                payload["parentToolCallId"] = json!(parent);
            }
            self.ops
                .nested
                .note_parent(call.tool_call_id, call.parent_tool_call_id);
            let Some(result) = self.dispatch_until("tool_call", payload, cancel).await else {
                return ToolCallVerdict::Proceed;
            };
            if result.get("block").and_then(Value::as_bool) == Some(true) {
                self.ops.nested.take_parent(call.tool_call_id);
                let reason = result
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("Blocked by extension");
                return ToolCallVerdict::Block(reason.to_owned());
            }
            match result.get("input") {
                Some(input) => ToolCallVerdict::Rewrite(input.clone()),
                None => ToolCallVerdict::Proceed,
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
            let mut payload = json!({
                "toolCallId": result.tool_call_id,
                "toolName": result.tool_name,
                "input": arguments,
                "content": serde_json::to_value(&result.content).unwrap_or(Value::Null),
                "details": result.details,
                "isError": result.is_error,
            });
            if let Some(structured) = result.structured_content {
                payload["structuredContent"] = structured.clone();
            }
            if let Some(parent) = self.ops.nested.take_parent(&result.tool_call_id) {
                payload["parentToolCallId"] = json!(parent);
            }
            let Some(patch) = self.dispatch_until("tool_result", payload, cancel).await else {
                return ToolResultPatch::default();
            };
            ToolResultPatch {
                content: patch
                    .get("content")
                    .cloned()
                    .and_then(|c| serde_json::from_value(c).ok()),
                details: patch.get("details").cloned(),
                is_error: patch.get("isError").and_then(Value::as_bool),
                structured_content: patch.get("structuredContent").cloned(),
            }
        })
    }

    fn replaces_messages(&self) -> bool {
        self.handles("message_end")
    }

    /// `message_end`: a handler's `{message}` with the same role replaces it (chained; a
    /// message of another role is reported and ignored).
    fn message_end<'a>(
        &'a self,
        message: &'a AgentMessage,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<AgentMessage>> {
        Box::pin(async move {
            let payload = json!({ "message": message_json(message) });
            let result = self.dispatch_until("message_end", payload, cancel).await?;
            let mut replacement = result.get("message").cloned()?;
            // Untyped handlers may drop `content`; it never enters the conversation so.
            if let Some(object) = replacement.as_object_mut()
                && matches!(
                    object.get("role").and_then(Value::as_str),
                    Some("user" | "assistant" | "toolResult" | "custom")
                )
                && object.get("content").is_none_or(Value::is_null)
            {
                object.insert("content".to_owned(), json!([]));
            }
            match serde_json::from_value::<AgentMessage>(replacement) {
                Ok(replacement) => Some(replacement),
                Err(error) => {
                    self.report(vec![crate::host::HandlerError {
                        extension_path: "<host>".to_owned(),
                        event: "message_end".to_owned(),
                        error: format!("message_end: the returned message is not valid ({error})"),
                        stack: None,
                    }])
                    .await;
                    None
                }
            }
        })
    }

    fn turn_end<'a>(
        &'a self,
        turn: TurnSummary<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        Box::pin(async move {
            if self.handles("turn_end") {
                let payload = json!({
                    "turnIndex": turn.turn_index,
                    "message": serde_json::to_value(turn.message).unwrap_or(Value::Null),
                    "toolResults": turn.tool_results.iter().map(message_json).collect::<Vec<_>>(),
                });
                self.dispatch_until("turn_end", payload, cancel).await;
            }
            BoundaryAction::default()
        })
    }
}
