//! MCP resources as tools: when a connected server offers resources, the session registers
//! `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource`, with the
//! widest exposure among those servers (`direct` when one is, otherwise `deferred`, so
//! scripts and `tool_search` reach them). They are read-only and reach every such server.

use std::sync::Arc;

use knightcode_agent::ExecutionMode;
use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolDefinition;
use knightcode_agent::ToolError;
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolOutput;
use knightcode_agent::ToolRegistry;
use knightcode_mcp::Exposure;
use knightcode_mcp::McpError;
use knightcode_mcp::McpManager;
use knightcode_mcp::ServerState;
use knightcode_mcp::ServerStatus;
use serde_json::Value;
use serde_json::json;

pub(crate) const LIST: &str = "list_mcp_resources";
pub(crate) const TEMPLATES: &str = "list_mcp_resource_templates";
pub(crate) const READ: &str = "read_mcp_resource";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Templates,
    Read,
}

struct ResourceTool {
    definition: ToolDefinition,
    kind: Kind,
    exposure: ToolExposure,
    manager: McpManager,
}

/// The exposure the resource tools get from the servers offering resources; `None` when no
/// connected server offers any (or all are hidden).
pub(crate) fn exposure(statuses: &[ServerStatus]) -> Option<ToolExposure> {
    let offering = statuses
        .iter()
        .filter(|s| s.state == ServerState::Connected && s.resources);
    let mut widest = None;
    for status in offering {
        match status.config.exposure {
            Exposure::Direct => return Some(ToolExposure::Direct),
            Exposure::Codemode | Exposure::Deferred => widest = Some(ToolExposure::Deferred),
            Exposure::Hidden => {}
        }
    }
    widest
}

/// Registers the three tools with `exposure` (replacing earlier ones whose exposure differs).
pub(crate) fn register(registry: &mut ToolRegistry, manager: &McpManager, exposure: ToolExposure) {
    for kind in [Kind::List, Kind::Templates, Kind::Read] {
        let definition = definition(kind);
        if registry
            .get(&definition.name)
            .is_some_and(|t| t.exposure() == exposure && t.definition() == &definition)
        {
            continue;
        }
        registry.register(Arc::new(ResourceTool {
            definition,
            kind,
            exposure,
            manager: manager.clone(),
        }));
    }
}

pub(crate) const NAMES: [&str; 3] = [LIST, TEMPLATES, READ];

fn definition(kind: Kind) -> ToolDefinition {
    let server = json!({"type": "string", "description": "The MCP server's name (all servers when left out)"});
    let (name, description, parameters) = match kind {
        Kind::List => (
            LIST,
            "List the resources MCP servers offer (files, documents, records), with their URIs. Read one with read_mcp_resource.",
            json!({"type": "object", "properties": {"server": server, "cursor": {"type": "string", "description": "Not used: every page is listed"}}}),
        ),
        Kind::Templates => (
            TEMPLATES,
            "List the resource templates MCP servers offer: URI patterns to fill in and read with read_mcp_resource.",
            json!({"type": "object", "properties": {"server": server}}),
        ),
        Kind::Read => (
            READ,
            "Read one resource of an MCP server by its URI.",
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The MCP server's name"},
                    "uri": {"type": "string", "description": "The resource's URI"}
                },
                "required": ["server", "uri"]
            }),
        ),
    };
    ToolDefinition {
        name: name.to_owned(),
        label: name.to_owned(),
        description: description.to_owned(),
        parameters,
        prompt_snippet: None,
        prompt_guidelines: Vec::new(),
        execution: ExecutionMode::Parallel,
    }
}

fn failed(error: McpError) -> ToolError {
    match error {
        McpError::Aborted => ToolError::Aborted("Operation aborted".to_owned()),
        other => ToolError::Failed(other.to_string()),
    }
}

impl ResourceTool {
    /// The servers a listing covers: the one named, or every connected one with resources.
    fn servers(&self, arguments: &Value) -> Result<Vec<String>, ToolError> {
        if let Some(name) = arguments["server"].as_str() {
            return Ok(vec![name.to_owned()]);
        }
        let servers: Vec<String> = self
            .manager
            .statuses()
            .into_iter()
            .filter(|s| s.state == ServerState::Connected && s.resources)
            .map(|s| s.config.name)
            .collect();
        Ok(servers)
    }

    async fn list(&self, arguments: Value, context: ToolContext) -> Result<ToolOutput, ToolError> {
        let key = if self.kind == Kind::List {
            "resources"
        } else {
            "resourceTemplates"
        };
        let named = arguments["server"].as_str().map(str::to_owned);
        let mut items: Vec<Value> = Vec::new();
        let mut errors: Vec<Value> = Vec::new();
        for server in self.servers(&arguments)? {
            let listed = if self.kind == Kind::List {
                self.manager.list_resources(&server, &context.cancel).await
            } else {
                self.manager
                    .list_resource_templates(&server, &context.cancel)
                    .await
            };
            match listed {
                Ok(found) => items.extend(found.into_iter().map(|mut item| {
                    if let Some(map) = item.as_object_mut() {
                        map.insert("server".to_owned(), json!(server));
                    }
                    item
                })),
                Err(McpError::Aborted) => return Err(failed(McpError::Aborted)),
                Err(error) if named.is_some() => return Err(failed(error)),
                Err(error) => errors.push(json!({"server": server, "error": error.to_string()})),
            }
        }
        let mut result = json!({ key: items });
        if let Some(server) = named {
            result["server"] = json!(server);
        }
        if !errors.is_empty() {
            result["errors"] = Value::Array(errors);
        }
        let text = serde_json::to_string_pretty(&result).unwrap_or_default();
        Ok(ToolOutput {
            structured_content: Some(result.clone()),
            ..ToolOutput::text(text).with_details(result)
        })
    }

    async fn read(&self, arguments: Value, context: ToolContext) -> Result<ToolOutput, ToolError> {
        let server = arguments["server"].as_str().unwrap_or_default().to_owned();
        let uri = arguments["uri"].as_str().unwrap_or_default().to_owned();
        let contents = self
            .manager
            .read_resource(&server, &uri, &context.cancel)
            .await
            .map_err(failed)?;
        let data = json!({"server": server, "uri": uri, "contents": contents});
        Ok(ToolOutput {
            content: knightcode_mcp::resource_output(&contents),
            structured_content: Some(data.clone()),
            details: Some(data),
            ..ToolOutput::default()
        })
    }
}

impl Tool for ResourceTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            match self.kind {
                Kind::List | Kind::Templates => self.list(arguments, context).await,
                Kind::Read => self.read(arguments, context).await,
            }
        })
    }

    fn exposure(&self) -> ToolExposure {
        self.exposure
    }

    /// Scripts get `{server, uri, contents}` from a read and the listing object otherwise.
    fn output_schema(&self) -> Option<Value> {
        Some(json!({"type": "object"}))
    }
}
