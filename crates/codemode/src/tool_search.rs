//! `tool_search`: finds tools that are registered but not declared to the model (`codemode`
//! and `deferred` exposure, such as most MCP tools) and declares the matches from the next
//! request on, recorded in the session so the choice follows the branch. The model then
//! calls them directly.

use knightcode_agent::ExecutionMode;
use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolDefinition;
use knightcode_agent::ToolError;
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolListing;
use knightcode_agent::ToolOutput;
use serde_json::Value;
use serde_json::json;

use crate::bm25;

pub const TOOL_SEARCH_NAME: &str = "tool_search";

/// The most matches one search may ask for.
const MAX_LIMIT: u64 = 50;
/// A match's description is cut to this many characters in the result.
const DESCRIPTION_CHARS: usize = 200;

/// The `tool_search` tool; registered inactive (`--tools`, `defaultTools` or an MCP server
/// with `deferred` exposure activate it).
pub struct ToolSearch {
    definition: ToolDefinition,
}

impl Default for ToolSearch {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolSearch {
    pub fn new() -> Self {
        Self {
            definition: ToolDefinition {
                name: TOOL_SEARCH_NAME.to_owned(),
                label: "Tool search".to_owned(),
                description: "Find tools that are available but not declared yet, such as the tools of MCP servers, and load them. Describe what you need in a few keywords; the matching tools are declared from your next step on, and you call them directly by name.".to_owned(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": "Keywords describing the tools you need (a task, a service, a tool name)"
                        },
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_LIMIT,
                            "description": "How many tools to load at most (default 8)"
                        }
                    },
                    "required": ["query"]
                }),
                prompt_snippet: Some(
                    "Find and load tools that are not declared yet (for example MCP tools)"
                        .to_owned(),
                ),
                prompt_guidelines: vec![
                    "When no declared tool fits a task, use tool_search to look for one before giving up."
                        .to_owned(),
                ],
                execution: ExecutionMode::Parallel,
            },
        }
    }
}

/// The tools a search may find: registered, reachable on demand, not declared yet.
pub fn undeclared(listing: Vec<ToolListing>) -> Vec<ToolListing> {
    listing
        .into_iter()
        .filter(|t| {
            !t.active && matches!(t.exposure, ToolExposure::Codemode | ToolExposure::Deferred)
        })
        .collect()
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut short: String = line.chars().take(DESCRIPTION_CHARS).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

impl Tool for ToolSearch {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let query = arguments["query"].as_str().unwrap_or("").trim().to_owned();
            if query.is_empty() {
                return Err(ToolError::failed(
                    "tool_search needs a query: a few keywords describing the tools you need.",
                ));
            }
            let limit = arguments["limit"]
                .as_u64()
                .unwrap_or(bm25::DEFAULT_LIMIT as u64)
                .clamp(1, MAX_LIMIT) as usize;
            let candidates = undeclared(context.tool_listing());
            let found: Vec<&ToolListing> = bm25::rank(&candidates, &query, limit)
                .into_iter()
                .map(|i| &candidates[i])
                .collect();
            let names: Vec<String> = found.iter().map(|t| t.definition.name.clone()).collect();
            let text = if found.is_empty() {
                format!(
                    "No tools found for \"{query}\" among {} tools that are not loaded yet. Try other keywords.",
                    candidates.len()
                )
            } else {
                let lines: Vec<String> = found
                    .iter()
                    .map(|t| {
                        format!(
                            "- {}: {}",
                            t.definition.name,
                            first_line(&t.definition.description)
                        )
                    })
                    .collect();
                let tools = if found.len() == 1 { "tool" } else { "tools" };
                format!(
                    "Loaded {} {tools}; call them directly from your next step:\n{}",
                    found.len(),
                    lines.join("\n")
                )
            };
            context.activate_tools(names.clone());
            Ok(ToolOutput::text(text).with_details(json!({ "query": query, "tools": names })))
        })
    }

    fn exposure(&self) -> ToolExposure {
        ToolExposure::ModelOnly
    }

    fn active_on_registration(&self) -> bool {
        false
    }
}
