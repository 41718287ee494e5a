//! Executing the tool calls of one assistant message.
//!
//! As in the reference agent, a batch runs either in parallel or, when any of its calls names
//! an [`ExecutionMode::Sequential`] tool (or the response was cut off), one call at a time.
//! A parallel batch is prepared first, call by call in the model's order
//! (`tool_execution_start`, validation, `tool_call` hooks), and then started in that order:
//! each call runs up to its first suspension before the next one starts, so tools that share
//! state (an extension tool's body queued on the JS thread, a process spawned by bash) see
//! each other's changes in the order the model wrote them. `tool_execution_end` follows as
//! calls finish; results are returned in call order whatever the finishing order was.
//!
//! Partial results (`ToolContext::update`) are coalesced per call to the latest one: they are
//! cumulative snapshots, so a slow event consumer loses nothing by seeing fewer of them, and a
//! chatty tool cannot make the loop buffer without bound.

use std::collections::HashMap;
use std::future::Future;
use std::ops::Range;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::task::Poll;
use std::time::Duration;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::Blocks;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::ToolCall;
use knightcode_protocol::ToolResultMessage;
use knightcode_protocol::ToolResultPayload;
use serde_json::Value;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::events::EventSender;
use crate::hooks::AgentHooks;
use crate::hooks::FinishedResult;
use crate::hooks::PendingToolCall;
use crate::hooks::ToolCallVerdict;
use crate::hooks::ToolResultPatch;
use crate::tool::ExecutionMode;
use crate::tool::Tool;
use crate::tool::ToolContext;
use crate::tool::ToolError;
use crate::tool::ToolOutput;
use crate::tool::ToolRegistry;
use crate::tool::UpdateSink;
use crate::validate::SchemaCache;

/// The result text of calls that were cancelled before they ran.
pub const OPERATION_ABORTED: &str = "Operation aborted";

/// Everything the executor needs from the agent for one batch.
pub(crate) struct ToolBatch<'a> {
    pub registry: &'a ToolRegistry,
    /// Names the model may call; `None` means every registered tool.
    pub active: Option<&'a [String]>,
    pub cwd: &'a Path,
    pub events: &'a EventSender,
    pub clock: &'a Arc<dyn Clock>,
    pub hooks: &'a Arc<dyn AgentHooks>,
    pub cancel: &'a CancellationToken,
    pub schemas: &'a mut SchemaCache,
    /// The response hit the output token limit: its arguments may be cut off, so no call runs.
    pub truncated: bool,
    /// Whether every result so far asked to end the run (`None` before the first).
    pub terminate: Option<bool>,
    /// Tools the batch's calls asked to declare from the next request on.
    pub activated: Vec<String>,
}

/// One call's outcome before it becomes a message.
struct Finished {
    content: Vec<ContentBlock>,
    details: Option<Value>,
    is_error: bool,
    /// The tool asked to end the run after this batch (see [`ToolOutput::terminate`]).
    terminate: bool,
    /// How long `execute` took; `None` when the tool did not run.
    duration: Option<Duration>,
    usage: Option<knightcode_protocol::Usage>,
    /// What scripts would get; shown to `after_tool_result`, neither emitted nor stored.
    structured_content: Option<Value>,
}

impl Finished {
    fn error(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            // The TypeScript agent writes `{}` for loop-made error results; kept for
            // byte-compatible sessions.
            details: Some(Value::Object(serde_json::Map::new())),
            is_error: true,
            terminate: false,
            duration: None,
            usage: None,
            structured_content: None,
        }
    }

    fn from_result(result: Result<ToolOutput, ToolError>, duration: Duration) -> Self {
        let mut finished = match result {
            Ok(output) => Self {
                content: output.content,
                details: output.details,
                is_error: output.is_error,
                terminate: output.terminate,
                duration: None,
                usage: output.usage,
                structured_content: output.structured_content,
            },
            Err(ToolError::Failed(text) | ToolError::Aborted(text)) => Self::error(text),
        };
        finished.duration = Some(duration);
        finished
    }
}

impl Finished {
    fn apply(&mut self, patch: ToolResultPatch) {
        if let Some(structured) = patch.structured_content_change() {
            self.structured_content = structured;
        }
        if let Some(content) = patch.content {
            self.content = content;
        }
        if let Some(details) = patch.details {
            self.details = Some(details);
        }
        if let Some(is_error) = patch.is_error {
            self.is_error = is_error;
        }
    }

    /// The result message of `call`, stamped `now`.
    fn message(&self, call: &ToolCall, now: i64) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: Blocks(self.content.clone()),
            details: self.details.clone(),
            usage: self.usage.clone(),
            is_error: self.is_error,
            timestamp: Millis(now),
            extra: Default::default(),
        }
    }
}

/// One started call: its result and how long `execute` took.
type RunningCall =
    Pin<Box<dyn Future<Output = (Result<ToolOutput, ToolError>, Duration)> + Send + 'static>>;

/// The latest partial result of a running call.
#[derive(Default)]
struct Slot {
    latest: Option<ToolOutput>,
    /// Set once the call finished: later updates (from a tool that kept the sink) are dropped.
    closed: bool,
}

type SharedSlot = Arc<Mutex<Slot>>;

fn payload(content: Vec<ContentBlock>, details: Option<Value>) -> ToolResultPayload {
    ToolResultPayload {
        content,
        details: details.unwrap_or(Value::Null),
    }
}

impl ToolBatch<'_> {
    fn lookup(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        let active = self
            .active
            .is_none_or(|names| names.iter().any(|n| n == name));
        if active {
            self.registry.get(name)
        } else {
            None
        }
    }

    /// Splits `calls` into groups that run one after another (see the module docs): the
    /// whole batch, or one group per call when any call is sequential.
    pub(crate) fn groups(&self, calls: &[ToolCall]) -> Vec<Range<usize>> {
        let sequential = self.truncated
            || calls.iter().any(|call| {
                self.lookup(&call.name)
                    .is_some_and(|t| t.definition().execution == ExecutionMode::Sequential)
            });
        if sequential {
            (0..calls.len()).map(|index| index..index + 1).collect()
        } else if calls.is_empty() {
            Vec::new()
        } else {
            std::iter::once(0..calls.len()).collect()
        }
    }

    /// Looks up, repairs and validates one call; `Err` is the error result's text.
    fn prepare(&mut self, call: &ToolCall) -> Result<(Arc<dyn Tool>, Value), String> {
        if self.truncated {
            return Err(format!(
                "Tool call \"{}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.",
                call.name
            ));
        }
        if self.cancel.is_cancelled() {
            return Err(OPERATION_ABORTED.to_owned());
        }
        let tool = self
            .lookup(&call.name)
            .ok_or_else(|| format!("Tool {} not found", call.name))?
            .clone();
        let arguments = tool.prepare_arguments(call.arguments.clone());
        self.schemas.validate(tool.definition(), &arguments)?;
        Ok((tool, arguments))
    }

    /// Asks the hooks about a validated call: `Err` is a block's reason.
    async fn consult(
        &self,
        call: &ToolCall,
        tool: Arc<dyn Tool>,
        arguments: Value,
    ) -> Result<(Arc<dyn Tool>, Value), String> {
        let pending = PendingToolCall {
            tool_call_id: &call.id,
            tool_name: &call.name,
            arguments: &arguments,
            parent_tool_call_id: None,
        };
        match self.hooks.before_tool_call(pending, self.cancel).await {
            ToolCallVerdict::Proceed => Ok((tool, arguments)),
            ToolCallVerdict::Rewrite(rewritten) => Ok((tool, rewritten)),
            ToolCallVerdict::Block(reason) => Err(reason),
        }
    }

    /// Runs one group and returns its results in call order.
    pub(crate) async fn run_group(&mut self, calls: &[ToolCall]) -> Vec<ToolResultMessage> {
        let mut finished: Vec<Option<Finished>> = calls.iter().map(|_| None).collect();
        let mut slots: Vec<Option<SharedSlot>> = calls.iter().map(|_| None).collect();
        let updated = Arc::new(Notify::new());
        let mut running = JoinSet::new();
        let mut index_of_task = HashMap::new();
        // The arguments each call ran with, for the result hook.
        let mut arguments_of: Vec<Option<Value>> = calls.iter().map(|_| None).collect();
        // Calls the tools make (`ctx.executeTool`) run against the same tools and hooks.
        let nested = crate::nested::NestedRunner::new(
            self.registry.clone(),
            self.active.map(<[String]>::to_vec),
            self.cwd.to_path_buf(),
            self.events.clone(),
            Arc::clone(self.clock),
            Arc::clone(self.hooks),
        );

        // Every call is prepared before any runs, as in the reference agent: a `tool_call`
        // hook sees the batch as the model wrote it, not half executed.
        let mut ready = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            self.events
                .emit(AgentEvent::ToolExecutionStart {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: call.arguments.clone(),
                    parent_tool_call_id: None,
                })
                .await;
            let prepared = match self.prepare(call) {
                Ok((tool, arguments)) => self.consult(call, tool, arguments).await,
                Err(text) => Err(text),
            };
            match prepared {
                Err(text) => {
                    let outcome = Finished::error(text);
                    self.emit_end(call, &outcome).await;
                    finished[index] = Some(outcome);
                }
                Ok((tool, arguments)) => ready.push((index, tool, arguments)),
            }
        }

        for (index, tool, arguments) in ready {
            let call = &calls[index];
            arguments_of[index] = Some(arguments.clone());
            let slot = SharedSlot::default();
            let context = ToolContext::new(
                call.id.clone(),
                self.cwd.to_path_buf(),
                self.cancel.child_token(),
            )
            .with_updates(update_sink(slot.clone(), updated.clone()))
            .with_nested(nested.scope());
            let clock = self.clock.clone();
            let mut execution: RunningCall = Box::pin(async move {
                let started = clock.monotonic();
                let result = tool.execute(arguments, context).await;
                (result, clock.monotonic().saturating_sub(started))
            });
            // The first poll happens here, in the model's order, before the next call starts
            // (see the module docs); a spawned task's first poll could come in any order. A
            // panic there is handed to the task, so it ends the call as any tool panic does.
            let first = std::future::poll_fn(|cx| {
                Poll::Ready(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                    || execution.as_mut().poll(cx),
                )))
            })
            .await;
            let task = match first {
                Ok(Poll::Ready(done)) => running.spawn(async move { done }),
                Ok(Poll::Pending) => running.spawn(execution),
                Err(panic) => running.spawn(async move { std::panic::resume_unwind(panic) }),
            };
            index_of_task.insert(task.id(), index);
            slots[index] = Some(slot);
        }

        while !running.is_empty() {
            tokio::select! {
                biased;
                joined = running.join_next_with_id() => {
                    let (id, mut outcome) = match joined {
                        Some(Ok((id, (result, duration)))) => {
                            (id, Finished::from_result(result, duration))
                        }
                        Some(Err(error)) => {
                            let text = if error.is_panic() {
                                "The tool crashed (panicked) while running. This is a bug in the tool; the call did not complete."
                            } else {
                                OPERATION_ABORTED
                            };
                            (error.id(), Finished::error(text))
                        }
                        None => break,
                    };
                    let Some(&index) = index_of_task.get(&id) else { continue };
                    if let Some(slot) = &slots[index] {
                        self.flush(&calls[index], slot, true).await;
                    }
                    if let Some(arguments) = &arguments_of[index] {
                        let message = outcome.message(&calls[index], self.clock.now_ms());
                        let result = FinishedResult {
                            message: &message,
                            structured_content: outcome.structured_content.as_ref(),
                        };
                        let patch = self.hooks.after_tool_result(result, arguments, self.cancel).await;
                        outcome.apply(patch);
                    }
                    self.emit_end(&calls[index], &outcome).await;
                    finished[index] = Some(outcome);
                }
                () = updated.notified() => {
                    for (index, slot) in slots.iter().enumerate() {
                        if let Some(slot) = slot {
                            self.flush(&calls[index], slot, false).await;
                        }
                    }
                }
            }
        }

        self.activated.extend(nested.take_activations());
        calls
            .iter()
            .zip(finished)
            .map(|(call, outcome)| {
                let outcome = outcome.unwrap_or_else(|| Finished::error(OPERATION_ABORTED));
                self.terminate = Some(self.terminate.unwrap_or(true) && outcome.terminate);
                let mut message = outcome.message(call, self.clock.now_ms());
                // What the call's own nested calls leave on its result (never their results).
                if let Some((record, usage)) = nested.take_record(&call.id) {
                    if let Some(record) = record {
                        message.extra.insert("nestedCalls".to_owned(), record);
                    }
                    // Nested results are never stored: their usage counts here.
                    if let Some(usage) = usage {
                        match &mut message.usage {
                            Some(own) => own.accumulate(&usage),
                            None => message.usage = Some(usage),
                        }
                    }
                }
                message
            })
            .collect()
    }

    /// Emits the call's latest partial result, if any; `close` stops further updates.
    async fn flush(&self, call: &ToolCall, slot: &SharedSlot, close: bool) {
        let latest = {
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            slot.closed |= close;
            slot.latest.take()
        };
        if let Some(partial) = latest {
            self.events
                .emit(AgentEvent::ToolExecutionUpdate {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: call.arguments.clone(),
                    partial_result: payload(partial.content, partial.details),
                    parent_tool_call_id: None,
                })
                .await;
        }
    }

    async fn emit_end(&self, call: &ToolCall, outcome: &Finished) {
        self.events
            .emit(AgentEvent::ToolExecutionEnd {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                result: payload(outcome.content.clone(), outcome.details.clone()),
                is_error: outcome.is_error,
                duration_ms: outcome.duration.map(|d| d.as_millis() as u64),
                parent_tool_call_id: None,
            })
            .await;
    }
}

fn update_sink(slot: SharedSlot, updated: Arc<Notify>) -> UpdateSink {
    Arc::new(move |partial: ToolOutput| {
        {
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.closed {
                return;
            }
            slot.latest = Some(partial);
        }
        updated.notify_one();
    })
}
