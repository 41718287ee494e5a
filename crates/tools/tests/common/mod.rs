//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use knightcode_agent::tool::{Tool, ToolContext, ToolError, ToolOutput};
use knightcode_protocol::ContentBlock;
use knightcode_tools::{ToolsConfig, builtin_tools};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The built-in tool called `name`, with default (local) configuration.
pub fn tool(name: &str) -> Arc<dyn Tool> {
    tool_with(name, ToolsConfig::default())
}

pub fn tool_with(name: &str, config: ToolsConfig) -> Arc<dyn Tool> {
    builtin_tools(config)
        .into_iter()
        .find(|tool| tool.definition().name == name)
        .expect("built-in tool exists")
}

pub fn context(cwd: &Path) -> ToolContext {
    ToolContext::new("call-1", cwd, CancellationToken::new())
}

/// Repairs and runs one call the way the agent loop does.
pub async fn call(tool: &dyn Tool, cwd: &Path, arguments: Value) -> Result<ToolOutput, ToolError> {
    let arguments = tool.prepare_arguments(arguments);
    tool.execute(arguments, context(cwd)).await
}

/// All text blocks of a result, joined.
pub fn text(output: &ToolOutput) -> String {
    output
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The message of a failed call: a tool's failure, or an error result it made itself (a
/// command's non-zero exit, which keeps its data for scripts).
pub fn failure(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Ok(output) if output.is_error => text(&output),
        Ok(output) => panic!("expected an error, got {:?}", text(&output)),
        Err(ToolError::Failed(message)) => message,
        Err(ToolError::Aborted(message)) => panic!("expected a failure, got abort: {message}"),
    }
}
