//! The session's MCP servers (docs/mcp.md): read from `mcp.json` once trust is known,
//! connected in the background, and their tools with `direct` exposure offered to the model
//! as `mcp__<server>__<tool>` through the agent's tool registry, so hooks and the normal
//! pipeline apply. Before a prompt's first request the session takes up what connected
//! (the first prompt waits up to [`FIRST_PROMPT_WAIT`] for servers still connecting).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolDefinition;
use knightcode_agent::ToolError;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolOutput;
use knightcode_agent::ToolRegistry;
use knightcode_mcp::Exposure;
use knightcode_mcp::McpError;
use knightcode_mcp::McpManager;
use knightcode_mcp::ServerState;
use knightcode_mcp::ServerStatus;
use knightcode_mcp::ToolInfo;

use crate::agent_session::SessionSetup;
use crate::agent_session::ToolSelection;

/// How long the first prompt waits for servers still connecting.
pub const FIRST_PROMPT_WAIT: Duration = Duration::from_secs(10);

/// How long the end of a session waits for its servers to exit.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// The session's side of MCP.
#[derive(Default)]
pub(crate) struct McpSession {
    manager: Option<McpManager>,
    /// The first prompt waited for connections.
    waited: bool,
    /// Servers whose problem or unavailable exposure was reported (once each).
    reported: HashSet<String>,
    exposure_warned: HashSet<String>,
    /// The `mcp__` tools offered at the last sync.
    offered: Vec<ToolDefinition>,
    /// `--tools`, `--exclude-tools`, `--no-tools`.
    selection: ToolSelection,
}

impl McpSession {
    /// Reads the config and starts connecting; returns at once. Config problems become
    /// notices.
    pub fn start(
        setup: &SessionSetup,
        trusted: bool,
        env: &Arc<dyn knightcode_ai::EnvSource>,
        notices: &mut Vec<String>,
    ) -> Self {
        if setup.no_mcp {
            return Self::default();
        }
        let config = knightcode_mcp::load_config(&setup.agent_dir, &setup.cwd, trusted);
        notices.extend(
            config
                .issues
                .iter()
                .map(|issue| format!("MCP config {issue}")),
        );
        if config.servers.iter().all(|s| !s.enabled) {
            return Self::default();
        }
        let lookup = Arc::clone(env);
        let options = knightcode_mcp::ConnectOptions {
            cwd: setup.cwd.clone(),
            home: setup.home.clone(),
            env: Arc::new(move |name| lookup.var(name)),
            http: knightcode_ai::http_client_builder()
                .ok()
                .and_then(|b| b.build().ok()),
        };
        let manager = McpManager::new(config.servers, options);
        manager.start();
        Self {
            manager: Some(manager),
            selection: setup.tools.clone(),
            ..Self::default()
        }
    }

    pub fn manager(&self) -> Option<&McpManager> {
        self.manager.as_ref()
    }

    /// Before a prompt: waits (the first time) for connections, then brings `registry` and
    /// `active` up to date with the servers' direct tools. Returns what to tell the user.
    pub async fn sync(
        &mut self,
        registry: &mut ToolRegistry,
        active: &mut Vec<String>,
    ) -> Vec<String> {
        let Some(manager) = self.manager.clone() else {
            return Vec::new();
        };
        let mut warnings = Vec::new();
        if !self.waited {
            self.waited = true;
            if !manager.wait_settled(FIRST_PROMPT_WAIT).await {
                warnings.push(
                    "MCP servers are still connecting; their tools become available once connected."
                        .to_owned(),
                );
            }
        }
        manager.refresh_changed_tools().await;
        let statuses = manager.statuses();
        warnings.extend(self.problems(&statuses));
        let mut wanted: Vec<ToolDefinition> = Vec::new();
        for status in statuses.iter().filter(|s| s.state != ServerState::Disabled) {
            let mut unavailable: Vec<(Exposure, usize)> = Vec::new();
            for tool in &status.tools {
                match status.config.exposure_of(&tool.name) {
                    Exposure::Direct => {
                        let definition = definition(&status.config.name, tool);
                        if !registry
                            .get(&definition.name)
                            .is_some_and(|t| t.definition() == &definition)
                        {
                            registry.register(Arc::new(McpTool {
                                definition: definition.clone(),
                                manager: manager.clone(),
                                server: status.config.name.clone(),
                                tool: tool.name.clone(),
                            }));
                        }
                        wanted.push(definition);
                    }
                    Exposure::Hidden => {}
                    other => match unavailable.iter_mut().find(|(e, _)| *e == other) {
                        Some((_, count)) => *count += 1,
                        None => unavailable.push((other, 1)),
                    },
                }
            }
            if !unavailable.is_empty() && self.exposure_warned.insert(status.config.name.clone()) {
                warnings.push(exposure_warning(&status.config.name, &unavailable));
            }
        }
        // A tool its server withdrew stays registered but leaves the model's list (other
        // tools, an extension's `mcp__` ones included, are not ours to touch). A disconnected
        // server keeps its tools: the next call reconnects.
        let wanted_names: HashSet<&str> = wanted.iter().map(|d| d.name.as_str()).collect();
        let withdrawn: HashSet<&str> = self
            .offered
            .iter()
            .map(|d| d.name.as_str())
            .filter(|name| !wanted_names.contains(name))
            .collect();
        active.retain(|name| !withdrawn.contains(name.as_str()));
        for definition in &wanted {
            let newly = !self.offered.iter().any(|d| d.name == definition.name);
            if newly
                && crate::tool_selection::mcp_tool_selected(&self.selection, &definition.name)
                && !active.contains(&definition.name)
            {
                active.push(definition.name.clone());
            }
        }
        self.offered = wanted;
        warnings
    }

    /// Servers that failed or dropped, each reported once until it connects again.
    fn problems(&mut self, statuses: &[ServerStatus]) -> Vec<String> {
        let mut lines = Vec::new();
        for status in statuses {
            let name = &status.config.name;
            match status.state {
                ServerState::Failed | ServerState::Disconnected => {
                    if self.reported.insert(name.clone()) {
                        let error = status.error.as_deref().unwrap_or("no details");
                        lines.push(format!("  {name}: {}: {error}", status.state.as_str()));
                    }
                }
                ServerState::Connected => {
                    self.reported.remove(name);
                }
                ServerState::Connecting | ServerState::Disabled => {}
            }
        }
        if lines.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "MCP servers need attention:\n{}\nRun knightcode mcp list to check them.",
            lines.join("\n")
        )]
    }

    /// Stops every server (at the end of the session), waiting at most [`STOP_GRACE`]; a
    /// server still running then is killed when its connection is dropped.
    pub async fn stop(&self) {
        if let Some(manager) = &self.manager {
            let _ = tokio::time::timeout(STOP_GRACE, manager.stop()).await;
        }
    }
}

fn exposure_warning(server: &str, unavailable: &[(Exposure, usize)]) -> String {
    let parts: Vec<String> = unavailable
        .iter()
        .map(|(exposure, count)| {
            let tools = if *count == 1 { "tool" } else { "tools" };
            format!("{count} {tools} with exposure \"{exposure}\"")
        })
        .collect();
    format!(
        "MCP server \"{server}\" has {}, which this build cannot offer yet (codemode and tool_search are not built); set \"exposure\": \"direct\" in its mcp.json entry to offer them to the model.",
        parts.join(" and ")
    )
}

fn definition(server: &str, tool: &ToolInfo) -> ToolDefinition {
    let description = tool
        .description
        .clone()
        .filter(|d| !d.trim().is_empty())
        .or_else(|| tool.title.clone())
        .unwrap_or_else(|| format!("MCP tool {} from server {server}", tool.name));
    ToolDefinition {
        name: knightcode_mcp::tool_name(server, &tool.name),
        label: format!("{server}/{}", tool.name),
        description,
        parameters: tool.input_schema.clone(),
        prompt_snippet: None,
        prompt_guidelines: Vec::new(),
        execution: knightcode_agent::ExecutionMode::Parallel,
    }
}

/// One MCP tool in the agent's registry.
struct McpTool {
    definition: ToolDefinition,
    manager: McpManager,
    server: String,
    tool: String,
}

impl Tool for McpTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: serde_json::Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let updates = context.clone();
            let progress: knightcode_mcp::ProgressSink =
                Arc::new(move |text| updates.update(ToolOutput::text(text)));
            let output = self
                .manager
                .call(
                    &self.server,
                    &self.tool,
                    arguments,
                    &context.cancel,
                    Some(progress),
                )
                .await;
            match output {
                Ok(output) if output.is_error => {
                    let text = knightcode_protocol::content::join_text(&output.content);
                    Err(ToolError::Failed(text))
                }
                Ok(output) => Ok(ToolOutput {
                    content: output.content,
                    details: Some(output.structured),
                    ..ToolOutput::default()
                }),
                Err(McpError::Aborted) => Err(ToolError::Aborted("Operation aborted".to_owned())),
                Err(error) => Err(ToolError::Failed(error.to_string())),
            }
        })
    }
}
