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

/// How the model reaches a tool (`exposure` of the extension API). "Callable" means callable
/// from other tools through [`ToolContext::execute_tool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolExposure {
    /// Declared to the model while active, and callable while active.
    #[default]
    Direct,
    /// Declared to the model while active, never callable.
    ModelOnly,
    /// Callable whenever registered; declared only when activated explicitly.
    Codemode,
    /// Like `Codemode`, for tools a search finds.
    Deferred,
    /// Registered but unreachable.
    Hidden,
}

impl ToolExposure {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "direct" => Self::Direct,
            "model-only" => Self::ModelOnly,
            "codemode" => Self::Codemode,
            "deferred" => Self::Deferred,
            "hidden" => Self::Hidden,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::ModelOnly => "model-only",
            Self::Codemode => "codemode",
            Self::Deferred => "deferred",
            Self::Hidden => "hidden",
        }
    }

    /// Whether activating the tool declares it to the model.
    pub fn declarable(self) -> bool {
        matches!(self, Self::Direct | Self::ModelOnly)
    }
}

/// A group of related tools (an MCP server's): scripts and searches see its name, aliases
/// and description; `instructions` are read on demand (`describeNamespace`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolNamespace {
    /// `mcp__<server>` for an MCP server.
    pub name: String,
    /// Other names it is looked up by (the server's own name).
    pub aliases: Vec<String>,
    pub description: Option<String>,
    pub instructions: Option<String>,
}

/// One registered tool as a tool that lists, finds or activates others sees it
/// ([`ToolContext::tool_listing`]).
#[derive(Debug, Clone)]
pub struct ToolListing {
    pub definition: ToolDefinition,
    pub exposure: ToolExposure,
    pub namespace: Option<ToolNamespace>,
    /// Declared to the model (in the active set).
    pub active: bool,
    /// Callable through [`ToolContext::execute_tool`].
    pub callable: bool,
    /// [`Tool::output_schema`].
    pub output_schema: Option<Value>,
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
    /// The result as data, matching the tool's [`Tool::output_schema`]: what programmatic
    /// callers (codemode scripts) get instead of the text. Never sent to the model, never
    /// stored in the session.
    pub structured_content: Option<Value>,
    /// A result the tool itself reports as failed, with content explaining why.
    pub is_error: bool,
    /// The run may end after this call: when every result of a batch says so, the loop
    /// skips its automatic follow-up request (an extension tool's `terminate: true`).
    pub terminate: bool,
    /// What the tool's own model calls used (an extension tool's `usage`); it lands on the
    /// result message, with that of the tool's nested calls added.
    pub usage: Option<knightcode_protocol::Usage>,
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
    /// Runs other tools for this call (`ctx.executeTool`); set by the loop.
    nested: Option<crate::nested::NestedScope>,
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
            nested: None,
        }
    }

    pub(crate) fn with_nested(mut self, nested: crate::nested::NestedScope) -> Self {
        self.nested = Some(nested);
        self
    }

    /// Whether this call can run other tools ([`ToolContext::execute_tool`]): calls the loop
    /// runs can, a tool called directly cannot.
    pub fn can_execute_tools(&self) -> bool {
        self.nested.is_some()
    }

    /// Runs another tool on behalf of this call, through the same validation and hooks as a
    /// call of the model: it gets the id `<this id>/<n>`, its `tool_execution_*` events carry
    /// this call's id as `parent_tool_call_id`, and it is recorded on this call's result
    /// message (`nestedCalls`). Never fails: an unknown tool, invalid arguments, a block or a
    /// failure come back as an error outcome.
    pub fn execute_tool(
        &self,
        name: &str,
        arguments: Value,
        options: crate::nested::NestedCallOptions,
    ) -> Pin<Box<dyn Future<Output = crate::nested::NestedOutcome> + Send + 'static>> {
        match &self.nested {
            Some(scope) => scope.execute(
                self.tool_call_id.clone(),
                self.cancel.clone(),
                name.to_owned(),
                arguments,
                options,
            ),
            None => {
                let outcome =
                    crate::nested::NestedOutcome::unavailable(&self.tool_call_id, name, arguments);
                Box::pin(std::future::ready(outcome))
            }
        }
    }

    /// The tools [`ToolContext::execute_tool`] can call (`ctx.tools`).
    pub fn callable_tools(&self) -> Vec<ToolDefinition> {
        self.nested
            .as_ref()
            .map(crate::nested::NestedScope::callable)
            .unwrap_or_default()
    }

    /// Every registered tool with its exposure and whether it is active and callable, in
    /// registration order; empty for a tool run outside the loop.
    pub fn tool_listing(&self) -> Vec<ToolListing> {
        self.nested
            .as_ref()
            .map(crate::nested::NestedScope::listing)
            .unwrap_or_default()
    }

    /// Declares these registered tools to the model from the next request on (`tool_search`):
    /// the loop adds them to the active set after this call's batch and records the change in
    /// the session as a system message with `toolsAdded`. Hidden and unknown names are
    /// ignored.
    pub fn activate_tools(&self, names: Vec<String>) {
        if let Some(scope) = &self.nested {
            scope.activate(names);
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

    /// How the model reaches the tool; built-in tools are `Direct`.
    fn exposure(&self) -> ToolExposure {
        ToolExposure::Direct
    }

    /// The group the tool belongs to (an MCP server's tools share one).
    fn namespace(&self) -> Option<ToolNamespace> {
        None
    }

    /// The JSON Schema of the result's [`ToolOutput::structured_content`] (an MCP tool's
    /// `CallToolResult`, an extension tool's `outputSchema`, `bash`'s output and exit code):
    /// callers such as codemode scripts then get that value instead of the text, error
    /// results included.
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// How a provider that can constrain sampling should constrain this tool's input (the
    /// codemode tool's grammar); sent with the declaration, which providers without such
    /// support send as a plain JSON-schema tool.
    fn constrained_sampling(&self) -> Option<knightcode_protocol::ConstrainedSampling> {
        None
    }

    /// Whether registering the tool makes it active: `direct` and `model-only` tools are,
    /// unless they ask not to be (an extension tool's `defaultActive: false`).
    fn active_on_registration(&self) -> bool {
        self.exposure().declarable()
    }
}

/// What tools that orchestrate others change in the declarations the model gets while they
/// are active (`prepareLoadout` of the extension API).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loadout {
    /// Replacement descriptions of active tools, by name.
    pub descriptions: HashMap<String, String>,
    /// Active tools whose declarations requests leave out: they stay active and callable.
    pub hidden: Vec<String>,
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
            .filter(|tool| active.is_none_or(|names| names.contains(&tool.definition().name)))
            .map(|tool| {
                let d = tool.definition();
                ToolDeclaration {
                    name: d.name.clone(),
                    description: d.description.clone(),
                    parameters: d.parameters.clone(),
                    constrained_sampling: tool.constrained_sampling(),
                    extra: Default::default(),
                }
            })
            .collect()
    }

    /// [`ToolRegistry::declarations`] with a [`Loadout`]'s descriptions; `hidden` ones are
    /// left out unless `keep_hidden` (the transcript still declares them, so the active set
    /// survives a resume).
    pub fn declarations_with(
        &self,
        active: Option<&[String]>,
        loadout: &Loadout,
        keep_hidden: bool,
    ) -> Vec<ToolDeclaration> {
        self.declarations(active)
            .into_iter()
            .filter(|d| keep_hidden || !loadout.hidden.contains(&d.name))
            .map(|mut d| {
                if let Some(description) = loadout.descriptions.get(&d.name) {
                    description.clone_into(&mut d.description);
                }
                d
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
