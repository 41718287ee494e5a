//! The tool interface: what the agent loop calls, what built-in tools (`knightcode-tools`),
//! extensions and MCP servers implement.
//!
//! A tool is data (name, schema, prompt text, execution mode) plus one async `execute`. The
//! loop validates arguments against the schema before `execute` runs, turns an `Err` into an
//! error result for the model, and reports partial results sent through the context as
//! `tool_execution_update` events.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use knightcode_protocol::ContentBlock;
use knightcode_protocol::ToolDeclaration;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Whether calls of a tool may overlap with other calls of the same assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    /// Runs concurrently with the message's other calls (results still recorded in call order).
    #[default]
    Parallel,
    /// Waits for earlier calls of the message and blocks later ones.
    Sequential,
}

/// Everything about a tool except its behaviour.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The name the model calls (`read`, `bash`, …).
    pub name: String,
    /// Human-readable name for UIs.
    pub label: String,
    /// Sent to the model with the schema.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    /// One line for the system prompt's tool list.
    pub prompt_snippet: Option<String>,
    /// Bullets for the system prompt's rules.
    pub prompt_guidelines: Vec<String>,
    pub execution: ExecutionMode,
}

/// A tool's result, final or partial.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// Structured data for UIs, exports and extensions; never sent to the model.
    pub details: Option<Value>,
    /// A result the tool itself reports as failed, with content explaining why.
    pub is_error: bool,
    /// The run may end after this call: when every result of a batch says so, the loop
    /// skips its automatic follow-up request (an extension tool's `terminate: true`).
    pub terminate: bool,
}

impl ToolOutput {
    /// A successful plain-text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            ..Self::default()
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// Why a tool call produced no normal result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The message becomes the text of an error result for the model.
    #[error("{0}")]
    Failed(String),
    /// The call was cancelled; the message says how (`Operation aborted`, `Command aborted`).
    #[error("{0}")]
    Aborted(String),
}

impl ToolError {
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }
}

/// Receives partial results while a tool runs.
pub type UpdateSink = Arc<dyn Fn(ToolOutput) + Send + Sync>;

/// What a tool gets besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    /// The id of this call (from the model's tool call).
    pub tool_call_id: String,
    /// The session's working directory; relative paths resolve from here.
    pub cwd: PathBuf,
    /// Cancelled when the user aborts or the run shuts down.
    pub cancel: CancellationToken,
    updates: Option<UpdateSink>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool_call_id", &self.tool_call_id)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    pub fn new(
        tool_call_id: impl Into<String>,
        cwd: impl Into<PathBuf>,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            cwd: cwd.into(),
            cancel,
            updates: None,
        }
    }

    /// Sends partial results to `sink` (the loop turns them into `tool_execution_update`).
    pub fn with_updates(mut self, sink: UpdateSink) -> Self {
        self.updates = Some(sink);
        self
    }

    /// Reports a partial result; ignored when nobody listens.
    pub fn update(&self, partial: ToolOutput) {
        if let Some(sink) = &self.updates {
            sink(partial);
        }
    }
}

/// The future a tool call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// A callable tool.
pub trait Tool: Send + Sync {
    fn definition(&self) -> &ToolDefinition;

    /// Repairs raw model arguments before validation (e.g. a legacy argument shape).
    fn prepare_arguments(&self, raw: Value) -> Value {
        raw
    }

    /// Runs one call with validated arguments.
    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_>;
}

/// Tools by name, in registration order.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| &t.definition().name))
            .finish()
    }
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool, replacing an earlier one of the same name in place.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.definition().name.clone();
        match self.by_name.get(&name) {
            Some(&index) => self.tools[index] = tool,
            None => {
                self.by_name.insert(name, self.tools.len());
                self.tools.push(tool);
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name).map(|&index| &self.tools[index])
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    /// The declarations the model is offered: the tools named in `active` (all when
    /// `None`), in registration order. The one place a request's tool list is built.
    pub fn declarations(&self, active: Option<&[String]>) -> Vec<ToolDeclaration> {
        self.tools
            .iter()
            .map(|tool| tool.definition())
            .filter(|d| active.is_none_or(|names| names.contains(&d.name)))
            .map(|d| ToolDeclaration {
                name: d.name.clone(),
                description: d.description.clone(),
                parameters: d.parameters.clone(),
                extra: Default::default(),
            })
            .collect()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.definition().name.as_str())
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
