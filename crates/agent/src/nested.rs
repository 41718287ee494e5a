//! Tool calls a tool makes while it runs (`ctx.executeTool` of the extension API).
//!
//! The loop gives every call it runs a [`NestedScope`] in its [`ToolContext`]. A nested call
//! goes through the pipeline of a model-issued one (lookup among the callable tools,
//! argument repair and validation, `before_tool_call`, execution, `after_tool_result`), emits
//! `tool_execution_*` events with `parent_tool_call_id`, and never reaches the conversation:
//! its result goes back to the calling tool only. What the session keeps of it is a bounded
//! record (name, arguments, status, duration, error; never results), which the loop puts on
//! the model-issued call's result message as `nestedCalls`:
//!
//! ```json
//! {"calls": [{"id": "call_1/1", "name": "read", "status": "ok", "arguments": {…}, "durationMs": 3}],
//!  "complete": true}
//! ```
//!
//! Calls made by nested tools share the record of the model-issued call above them.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::Blocks;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::ToolResultMessage;
use knightcode_protocol::ToolResultPayload;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::events::EventSender;
use crate::hooks::AgentHooks;
use crate::hooks::FinishedResult;
use crate::hooks::PendingToolCall;
use crate::hooks::ToolCallVerdict;
use crate::tool::ExecutionMode;
use crate::tool::Tool;
use crate::tool::ToolContext;
use crate::tool::ToolDefinition;
use crate::tool::ToolError;
use crate::tool::ToolExposure;
use crate::tool::ToolOutput;
use crate::tool::ToolRegistry;
use crate::tool::UpdateSink;
use crate::tool_batch::OPERATION_ABORTED;
use crate::validate::SchemaCache;

/// Limits of the record on a result message: arguments over the per-call or total size are
/// left out (their size is kept), calls past the count are dropped, and `complete: false`
/// says something was.
const MAX_CALLS: usize = 256;
const MAX_ARGUMENT_BYTES_PER_CALL: usize = 8 * 1024;
const MAX_ARGUMENT_BYTES_TOTAL: usize = 32 * 1024;
const MAX_ERROR_CHARS: usize = 500;

/// What the caller of [`ToolContext::execute_tool`] may add.
#[derive(Default, Clone)]
pub struct NestedCallOptions {
    /// Aborts this call (the calling tool's abort always does).
    pub cancel: Option<CancellationToken>,
    /// Receives the nested tool's partial results, besides `tool_execution_update`.
    pub on_update: Option<UpdateSink>,
}

/// The outcome of a nested call (`AgentToolCallOutcome`).
#[derive(Debug, Clone, PartialEq)]
pub struct NestedOutcome {
    /// `<caller id>/<n>`.
    pub tool_call_id: String,
    pub tool_name: String,
    pub arguments: Value,
    pub output: ToolOutput,
    /// How long the tool ran; `None` when it did not run.
    pub duration: Option<Duration>,
}

impl NestedOutcome {
    fn failed(id: String, name: String, arguments: Value, text: impl Into<String>) -> Self {
        Self {
            tool_call_id: id,
            tool_name: name,
            arguments,
            output: ToolOutput {
                content: vec![ContentBlock::text(text)],
                details: Some(Value::Object(serde_json::Map::new())),
                is_error: true,
                terminate: false,
                usage: None,
                structured_content: None,
            },
            duration: None,
        }
    }

    /// The outcome for a tool run outside the loop, which has nothing to call.
    pub(crate) fn unavailable(caller: &str, name: &str, arguments: Value) -> Self {
        Self::failed(
            format!("{caller}/0"),
            name.to_owned(),
            arguments,
            "Tools can only be called from a tool the agent is running",
        )
    }

    /// `{toolCall, result, isError, durationMs?}` as the extension API returns it.
    pub fn to_json(&self) -> Value {
        let mut result = json!({
            "content": self.output.content,
            "details": self.output.details,
        });
        if self.output.is_error {
            result["isError"] = Value::Bool(true);
        }
        if let Some(usage) = &self.output.usage {
            result["usage"] = serde_json::to_value(usage).unwrap_or(Value::Null);
        }
        if let Some(structured) = &self.output.structured_content {
            result["structuredContent"] = structured.clone();
        }
        let mut outcome = json!({
            "toolCall": {
                "type": "toolCall",
                "id": self.tool_call_id,
                "name": self.tool_name,
                "arguments": self.arguments,
            },
            "result": result,
            "isError": self.output.is_error,
        });
        if let Some(duration) = self.duration {
            outcome["durationMs"] = json!(duration.as_millis() as u64);
        }
        outcome
    }
}

/// The record of one model-issued call's nested calls.
#[derive(Default)]
struct Recorder {
    calls: Vec<serde_json::Map<String, Value>>,
    complete: bool,
    argument_bytes: usize,
    /// Summed usage of every nested result, calls dropped from the record included.
    usage: Option<knightcode_protocol::Usage>,
}

impl Recorder {
    fn new() -> Self {
        Self {
            complete: true,
            ..Self::default()
        }
    }

    /// Records a call as it starts; `None` when it is dropped (too many).
    fn start(&mut self, id: &str, name: &str, arguments: &Value) -> Option<usize> {
        if self.calls.len() >= MAX_CALLS {
            self.complete = false;
            return None;
        }
        let mut record = serde_json::Map::new();
        record.insert("id".to_owned(), json!(id));
        record.insert("name".to_owned(), json!(name));
        record.insert("status".to_owned(), json!("unfinished"));
        let arguments = if arguments.is_null() {
            json!({})
        } else {
            arguments.clone()
        };
        let bytes = arguments.to_string().len();
        if bytes > MAX_ARGUMENT_BYTES_PER_CALL
            || self.argument_bytes + bytes > MAX_ARGUMENT_BYTES_TOTAL
        {
            record.insert("argumentsBytes".to_owned(), json!(bytes));
            self.complete = false;
        } else {
            record.insert("arguments".to_owned(), arguments);
            self.argument_bytes += bytes;
        }
        self.calls.push(record);
        Some(self.calls.len() - 1)
    }

    fn finish(&mut self, index: Option<usize>, outcome: &NestedOutcome, took: Duration) {
        let Some(record) = index.and_then(|i| self.calls.get_mut(i)) else {
            return;
        };
        let is_error = outcome.output.is_error;
        record.insert(
            "status".to_owned(),
            json!(if is_error { "error" } else { "ok" }),
        );
        record.insert("durationMs".to_owned(), json!(took.as_millis() as u64));
        let text = outcome
            .output
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n");
        if is_error && !text.is_empty() {
            record.insert(
                "error".to_owned(),
                json!(text.chars().take(MAX_ERROR_CHARS).collect::<String>()),
            );
        }
    }

    fn add_usage(&mut self, usage: &knightcode_protocol::Usage) {
        match &mut self.usage {
            Some(total) => total.accumulate(usage),
            None => self.usage = Some(usage.clone()),
        }
    }

    fn snapshot(&self) -> Option<Value> {
        if self.calls.is_empty() && self.complete {
            return None;
        }
        let complete = self.complete
            && self
                .calls
                .iter()
                .all(|c| c.get("status").and_then(Value::as_str) != Some("unfinished"));
        Some(json!({ "calls": self.calls, "complete": complete }))
    }
}

/// The calls below one model-issued call.
#[derive(Clone)]
struct Scope {
    recorder: Arc<Mutex<Recorder>>,
    next_id: u64,
    /// Set inside a call that holds the exclusive queue, so its own nested calls do not
    /// wait for it.
    holds_queue: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What nested calls of one tool batch run against: the agent's tools, hooks and events.
pub(crate) struct NestedRunner {
    registry: ToolRegistry,
    active: Option<Vec<String>>,
    cwd: PathBuf,
    events: EventSender,
    clock: Arc<dyn Clock>,
    hooks: Arc<dyn AgentHooks>,
    schemas: Mutex<SchemaCache>,
    /// Scopes by the id of the calling tool call.
    scopes: Mutex<HashMap<String, Scope>>,
    /// Serializes nested calls of sequential tools.
    queue: Arc<tokio::sync::Mutex<()>>,
    /// Tools the batch's calls asked to declare from the next request on.
    activations: Mutex<Vec<String>>,
}

impl NestedRunner {
    pub(crate) fn new(
        registry: ToolRegistry,
        active: Option<Vec<String>>,
        cwd: PathBuf,
        events: EventSender,
        clock: Arc<dyn Clock>,
        hooks: Arc<dyn AgentHooks>,
    ) -> Arc<Self> {
        Arc::new(Self {
            registry,
            active,
            cwd,
            events,
            clock,
            hooks,
            schemas: Mutex::new(SchemaCache::default()),
            scopes: Mutex::new(HashMap::new()),
            queue: Arc::new(tokio::sync::Mutex::new(())),
            activations: Mutex::new(Vec::new()),
        })
    }

    /// The scope handed to the context of the call `id`.
    pub(crate) fn scope(self: &Arc<Self>) -> NestedScope {
        NestedScope(Arc::clone(self))
    }

    /// Tools callable through `ctx.executeTool()`: the active `direct` ones and every
    /// `codemode` or `deferred` one.
    fn callable(&self, tool: &Arc<dyn Tool>) -> bool {
        match tool.exposure() {
            ToolExposure::Codemode | ToolExposure::Deferred => true,
            ToolExposure::Direct => {
                let name = &tool.definition().name;
                self.active
                    .as_ref()
                    .is_none_or(|names| names.iter().any(|n| n == name))
            }
            ToolExposure::ModelOnly | ToolExposure::Hidden => false,
        }
    }

    /// What the batch's calls asked to activate ([`ToolContext::activate_tools`]), in order.
    pub(crate) fn take_activations(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.activations))
    }

    /// Removes and returns the record of the calls the model-issued call `id` made, and
    /// their summed usage.
    pub(crate) fn take_record(
        &self,
        id: &str,
    ) -> Option<(Option<Value>, Option<knightcode_protocol::Usage>)> {
        let scope = lock(&self.scopes).remove(id)?;
        let recorder = lock(&scope.recorder);
        Some((recorder.snapshot(), recorder.usage.clone()))
    }

    async fn emit(&self, event: AgentEvent) {
        self.events.emit(event).await;
    }

    /// Numbers a call when it is made, not when its future first runs, so calls a tool
    /// starts together (a script's `Promise.all`) get ids in the order it made them.
    fn number(&self, caller: &str) -> (String, Arc<Mutex<Recorder>>, bool) {
        let mut scopes = lock(&self.scopes);
        let scope = scopes.entry(caller.to_owned()).or_insert_with(|| Scope {
            recorder: Arc::new(Mutex::new(Recorder::new())),
            next_id: 1,
            holds_queue: false,
        });
        let id = format!("{caller}/{}", scope.next_id);
        scope.next_id += 1;
        (id, Arc::clone(&scope.recorder), scope.holds_queue)
    }

    #[allow(clippy::too_many_arguments)]
    async fn run(
        self: Arc<Self>,
        caller: String,
        caller_cancel: CancellationToken,
        name: String,
        arguments: Value,
        options: NestedCallOptions,
        (id, recorder, holds_queue): (String, Arc<Mutex<Recorder>>, bool),
    ) -> NestedOutcome {
        let arguments = if arguments.is_null() {
            json!({})
        } else {
            arguments
        };
        let record = lock(&recorder).start(&id, &name, &arguments);
        self.emit(AgentEvent::ToolExecutionStart {
            tool_call_id: id.clone(),
            tool_name: name.clone(),
            args: arguments.clone(),
            parent_tool_call_id: Some(caller.clone()),
        })
        .await;

        let tool = self
            .registry
            .get(&name)
            .filter(|tool| self.callable(tool))
            .cloned();
        let exclusive = !holds_queue
            && tool
                .as_ref()
                .is_some_and(|t| t.definition().execution == ExecutionMode::Sequential);
        let guard = if exclusive {
            Some(Arc::clone(&self.queue).lock_owned().await)
        } else {
            None
        };
        lock(&self.scopes).insert(
            id.clone(),
            Scope {
                recorder: Arc::clone(&recorder),
                next_id: 1,
                holds_queue: holds_queue || exclusive,
            },
        );
        // The calling tool's abort ends the call, and so does the caller's own signal.
        let cancel = caller_cancel.child_token();
        let watcher = options.cancel.clone().map(|own| {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = own.cancelled() => cancel.cancel(),
                    () = cancel.cancelled() => {}
                }
            })
        });
        let started = self.clock.monotonic();
        let outcome = self
            .pipeline(tool, &id, &caller, &name, arguments, &cancel, &options)
            .await;
        let took = self.clock.monotonic().saturating_sub(started);
        if let Some(watcher) = watcher {
            watcher.abort();
        }
        lock(&self.scopes).remove(&id);
        drop(guard);
        {
            let mut recorder = lock(&recorder);
            recorder.finish(record, &outcome, took);
            if let Some(usage) = &outcome.output.usage {
                recorder.add_usage(usage);
            }
        }
        self.emit(AgentEvent::ToolExecutionEnd {
            tool_call_id: id.clone(),
            tool_name: name.clone(),
            result: ToolResultPayload {
                content: outcome.output.content.clone(),
                details: outcome.output.details.clone().unwrap_or(Value::Null),
            },
            is_error: outcome.output.is_error,
            duration_ms: outcome.duration.map(|d| d.as_millis() as u64),
            parent_tool_call_id: Some(caller),
        })
        .await;
        outcome
    }

    /// Lookup, validation, hooks and execution of one nested call.
    #[allow(clippy::too_many_arguments)]
    async fn pipeline(
        self: &Arc<Self>,
        tool: Option<Arc<dyn Tool>>,
        id: &str,
        caller: &str,
        name: &str,
        arguments: Value,
        cancel: &CancellationToken,
        options: &NestedCallOptions,
    ) -> NestedOutcome {
        let fail = |arguments: Value, text: String| {
            NestedOutcome::failed(id.to_owned(), name.to_owned(), arguments, text)
        };
        let Some(tool) = tool else {
            return fail(arguments, format!("Tool {name} not found"));
        };
        if cancel.is_cancelled() {
            return fail(arguments, OPERATION_ABORTED.to_owned());
        }
        let prepared = tool.prepare_arguments(arguments.clone());
        let valid = lock(&self.schemas).validate(tool.definition(), &prepared);
        if let Err(text) = valid {
            return fail(arguments, text);
        }
        let verdict = self
            .hooks
            .before_tool_call(
                PendingToolCall {
                    tool_call_id: id,
                    tool_name: name,
                    arguments: &prepared,
                    parent_tool_call_id: Some(caller),
                },
                cancel,
            )
            .await;
        let arguments = match verdict {
            ToolCallVerdict::Proceed => prepared,
            ToolCallVerdict::Rewrite(rewritten) => rewritten,
            ToolCallVerdict::Block(reason) => return fail(arguments, reason),
        };

        // Partial results go to the caller's `onUpdate` and out as events, in order.
        let (sink, mut partials) = tokio::sync::mpsc::unbounded_channel::<ToolOutput>();
        let updates: UpdateSink = Arc::new(move |partial| {
            let _ = sink.send(partial);
        });
        let context = ToolContext::new(id.to_owned(), self.cwd.clone(), cancel.clone())
            .with_updates(updates)
            .with_nested(self.scope());
        let started = self.clock.monotonic();
        let running = {
            let tool = Arc::clone(&tool);
            let arguments = arguments.clone();
            async move { tool.execute(arguments, context).await }
        };
        tokio::pin!(running);
        let result = loop {
            tokio::select! {
                biased;
                Some(partial) = partials.recv() => self.partial(id, caller, name, &arguments, partial, options).await,
                result = &mut running => break result,
                () = cancel.cancelled() => break Err(ToolError::Aborted(OPERATION_ABORTED.to_owned())),
            }
        };
        while let Ok(partial) = partials.try_recv() {
            self.partial(id, caller, name, &arguments, partial, options)
                .await;
        }
        let took = self.clock.monotonic().saturating_sub(started);
        let mut output = match result {
            Ok(output) => output,
            Err(ToolError::Failed(text) | ToolError::Aborted(text)) => {
                fail(arguments.clone(), text).output
            }
        };
        let message = ToolResultMessage {
            tool_call_id: id.to_owned(),
            tool_name: name.to_owned(),
            content: Blocks(output.content.clone()),
            details: output.details.clone(),
            usage: None,
            is_error: output.is_error,
            timestamp: Millis(self.clock.now_ms()),
            extra: Default::default(),
        };
        let patch = self
            .hooks
            .after_tool_result(
                FinishedResult {
                    message: &message,
                    structured_content: output.structured_content.as_ref(),
                },
                &arguments,
                cancel,
            )
            .await;
        if let Some(structured) = patch.structured_content_change() {
            output.structured_content = structured;
        }
        if let Some(content) = patch.content {
            output.content = content;
        }
        if let Some(details) = patch.details {
            output.details = Some(details);
        }
        if let Some(is_error) = patch.is_error {
            output.is_error = is_error;
        }
        NestedOutcome {
            tool_call_id: id.to_owned(),
            tool_name: name.to_owned(),
            arguments,
            output,
            duration: Some(took),
        }
    }

    async fn partial(
        &self,
        id: &str,
        caller: &str,
        name: &str,
        arguments: &Value,
        partial: ToolOutput,
        options: &NestedCallOptions,
    ) {
        if let Some(on_update) = &options.on_update {
            on_update(partial.clone());
        }
        self.emit(AgentEvent::ToolExecutionUpdate {
            tool_call_id: id.to_owned(),
            tool_name: name.to_owned(),
            args: arguments.clone(),
            partial_result: ToolResultPayload {
                content: partial.content,
                details: partial.details.unwrap_or(Value::Null),
            },
            parent_tool_call_id: Some(caller.to_owned()),
        })
        .await;
    }
}

/// A call's way to run other tools (in its [`ToolContext`]).
#[derive(Clone)]
pub(crate) struct NestedScope(Arc<NestedRunner>);

impl NestedScope {
    pub(crate) fn execute(
        &self,
        caller: String,
        caller_cancel: CancellationToken,
        name: String,
        arguments: Value,
        options: NestedCallOptions,
    ) -> Pin<Box<dyn Future<Output = NestedOutcome> + Send + 'static>> {
        let numbered = self.0.number(&caller);
        Box::pin(Arc::clone(&self.0).run(caller, caller_cancel, name, arguments, options, numbered))
    }

    pub(crate) fn listing(&self) -> Vec<crate::tool::ToolListing> {
        let runner = &self.0;
        runner
            .registry
            .iter()
            .map(|tool| {
                let definition = tool.definition().clone();
                let active = runner
                    .active
                    .as_ref()
                    .is_none_or(|names| names.contains(&definition.name));
                crate::tool::ToolListing {
                    exposure: tool.exposure(),
                    namespace: tool.namespace(),
                    active,
                    callable: runner.callable(tool),
                    output_schema: tool.output_schema(),
                    definition,
                }
            })
            .collect()
    }

    pub(crate) fn activate(&self, names: Vec<String>) {
        lock(&self.0.activations).extend(names);
    }

    pub(crate) fn callable(&self) -> Vec<ToolDefinition> {
        self.0
            .registry
            .iter()
            .filter(|tool| self.0.callable(tool))
            .map(|tool| tool.definition().clone())
            .collect()
    }
}
