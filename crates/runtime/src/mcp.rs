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
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolNamespace;
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
    /// Built once a server is there to connect (a file's, or an extension's).
    manager: Option<McpManager>,
    /// What a manager made later needs (`None` with `--no-mcp`).
    options: Option<knightcode_mcp::ConnectOptions>,
    /// The names the `mcp.json` files define: they win over an extension's server.
    file_servers: Vec<String>,
    /// The extensions' servers given to the manager (not those the files shadow).
    extension_servers: Vec<knightcode_mcp::ServerConfig>,
    /// Registrations already reported (shadowed by a file, or refused), so each is said once.
    extension_reported: HashSet<String>,
    /// With `--no-mcp`, that the extensions' servers are not connected was said.
    off_reported: bool,
    /// The first prompt waited for connections.
    waited: bool,
    /// Servers whose problem was reported (once each until they connect again).
    reported: HashSet<String>,
    /// `tool_search` and `codemode` were activated for the tools they reach (once each: the
    /// user may turn them off).
    auto_activated: HashSet<&'static str>,
    /// Tools only `codemode` or `tool_search` reach, with neither active, were reported.
    unreachable_warned: bool,
    /// The `mcp__` tools registered at the last sync, with their server's exposure.
    offered: Vec<(ToolDefinition, Exposure)>,
    /// `autoEnableCodemode` of `mcp.json` (default on).
    auto_enable_codemode: bool,
    /// The resource tools' exposure at the last sync (`None`: not registered by us).
    resources_exposure: Option<ToolExposure>,
    /// `--tools`, `--exclude-tools`, `--no-tools`.
    selection: ToolSelection,
    /// Which on-demand tools (`tool_search` activations, MCP's and extensions' alike) the
    /// branch declared; kept here, beside the tools it is mostly about.
    pub(crate) branch_activations: crate::tool_activation::BranchActivations,
    /// [`Self::connect`] was called: servers that come later connect at once.
    connect_asked: bool,
}

impl McpSession {
    /// Reads the config; [`Self::connect`] starts the connections once the session is
    /// built. Config problems become notices.
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
        let lookup = Arc::clone(env);
        let options = knightcode_mcp::ConnectOptions {
            cwd: setup.cwd.clone(),
            home: setup.home.clone(),
            env: Arc::new(move |name| lookup.var(name)),
            // Built with the manager: a session without servers never loads root certificates.
            http: None,
            log: Some(Arc::new(knightcode_mcp::ServerLog::new(
                setup.agent_dir.join("mcp.log"),
            ))),
            auth: Some(Arc::new(knightcode_mcp::AuthStore::new(&setup.agent_dir))),
            provider_token: Some(provider_token(&setup.agent_dir, Arc::clone(env))),
        };
        let file_servers = config.servers.iter().map(|s| s.name.clone()).collect();
        // Without an enabled server nothing starts yet: an extension may register one.
        let manager = config
            .servers
            .iter()
            .any(|s| s.enabled)
            .then(|| McpManager::new(config.servers, with_http(options.clone())));
        Self {
            manager,
            options: Some(options),
            file_servers,
            selection: setup.tools.clone(),
            auto_enable_codemode: config.auto_enable_codemode,
            ..Self::default()
        }
    }

    /// Starts connecting the configured servers in the background, unless they already
    /// are; returns at once. Not part of [`Self::start`]: the session task calls it once the
    /// front end has shown itself (see `AgentSession::connect_mcp`), so that the servers'
    /// own start-up (a `node` or `npx` process each) does not share the CPUs with the
    /// session's start and the first frame or answer.
    pub fn connect(&mut self) {
        self.connect_asked = true;
        if let Some(manager) = &self.manager {
            manager.start();
        }
    }

    /// `--no-mcp` turned MCP off (nothing to connect with).
    pub fn is_off(&self) -> bool {
        self.options.is_none()
    }

    pub fn manager(&self) -> Option<&McpManager> {
        self.manager.as_ref()
    }

    /// The `mcp_servers` system-prompt section (see `knightcode_mcp::servers_section`).
    pub fn servers_section(&self) -> Option<String> {
        knightcode_mcp::servers_section(&self.manager.as_ref()?.statuses())
    }

    /// Before a prompt: waits (the first time) for connections, then brings `registry` and
    /// `active` up to date with the servers' tools: `direct` ones registered and active,
    /// `codemode` and `deferred` ones registered for the tools that reach them (and the
    /// tool that reaches them activated), withdrawn ones hidden. Returns what to tell the
    /// user.
    pub async fn sync(
        &mut self,
        registry: &mut ToolRegistry,
        active: &mut Vec<String>,
    ) -> Vec<String> {
        let Some(manager) = self.manager.clone() else {
            return Vec::new();
        };
        let mut warnings = Vec::new();
        // A session used without its task (the library API) connects here.
        manager.start();
        if !self.waited {
            self.waited = true;
            if !manager.wait_settled(FIRST_PROMPT_WAIT).await {
                warnings.push(
                    "MCP servers are still connecting; their tools become available once connected."
                        .to_owned(),
                );
            }
        }
        // `knightcode mcp login` run elsewhere (a shell, the agent's bash) stored tokens.
        manager.pick_up_sign_ins().await;
        manager.refresh_changed_tools().await;
        let statuses = manager.statuses();
        warnings.extend(self.problems(&statuses));
        let mut wanted: Vec<(ToolDefinition, Exposure)> = Vec::new();
        for status in statuses.iter().filter(|s| s.state != ServerState::Disabled) {
            let namespace = namespace(&status.config);
            for tool in &status.tools {
                // A server's `codemode` tools are `deferred` to the agent: codemode scripts
                // find them (`searchTools`) rather than its description listing them, so the
                // description stays the same while servers connect.
                let server_exposure = status.config.exposure_of(&tool.name);
                let exposure = match server_exposure {
                    Exposure::Direct => ToolExposure::Direct,
                    Exposure::Codemode | Exposure::Deferred => ToolExposure::Deferred,
                    Exposure::Hidden => continue,
                };
                let definition = definition(&status.config.name, tool);
                let current = registry.get(&definition.name);
                if !current
                    .is_some_and(|t| t.definition() == &definition && t.exposure() == exposure)
                {
                    registry.register(Arc::new(McpTool {
                        definition: definition.clone(),
                        exposure,
                        namespace: namespace.clone(),
                        manager: manager.clone(),
                        server: status.config.name.clone(),
                        tool: tool.name.clone(),
                    }));
                }
                wanted.push((definition, server_exposure));
            }
        }
        self.withdraw(registry, active, &wanted);
        self.sync_resource_tools(registry, active, &manager, &statuses);
        for (definition, exposure) in &wanted {
            let was_direct = self
                .offered
                .iter()
                .any(|(d, e)| d.name == definition.name && *e == Exposure::Direct);
            // Newly direct (a server that connected, an exposure changed in `/mcp`): offered.
            if *exposure == Exposure::Direct
                && !was_direct
                && crate::tool_selection::mcp_tool_selected(&self.selection, &definition.name)
                && !active.contains(&definition.name)
            {
                active.push(definition.name.clone());
            }
            // No longer direct: reached through codemode or tool_search instead.
            if *exposure != Exposure::Direct && was_direct {
                active.retain(|name| *name != definition.name);
            }
        }
        self.offered = wanted;
        warnings.extend(self.activate_reaching_tools(registry, active));
        warnings
    }

    /// The resource tools follow the servers that offer resources: registered with the
    /// widest exposure among them, active while that is `direct` (unless `--exclude-tools`
    /// or `--no-tools` say otherwise).
    fn sync_resource_tools(
        &mut self,
        registry: &mut ToolRegistry,
        active: &mut Vec<String>,
        manager: &McpManager,
        statuses: &[ServerStatus],
    ) {
        let exposure = crate::mcp_resources::exposure(statuses);
        if exposure == self.resources_exposure {
            return;
        }
        if let Some(exposure) = exposure {
            crate::mcp_resources::register(registry, manager, exposure);
        }
        for name in crate::mcp_resources::NAMES {
            let direct = exposure == Some(ToolExposure::Direct)
                && crate::tool_selection::builtin_tool_selected(&self.selection, name);
            let is_active = active.iter().any(|n| n == name);
            if direct && !is_active {
                active.push(name.to_owned());
            } else if !direct && is_active && self.resources_exposure.is_some() {
                active.retain(|n| n != name);
            }
        }
        self.resources_exposure = exposure;
    }

    /// A tool its server withdrew (or made hidden) becomes hidden: it leaves the model's list
    /// and no script or search reaches it. Other tools, an extension's `mcp__` ones included,
    /// are not ours to touch. A disconnected server keeps its tools: the next call reconnects.
    fn withdraw(
        &self,
        registry: &mut ToolRegistry,
        active: &mut Vec<String>,
        wanted: &[(ToolDefinition, Exposure)],
    ) {
        let wanted_names: HashSet<&str> = wanted.iter().map(|(d, _)| d.name.as_str()).collect();
        for (definition, _) in &self.offered {
            if wanted_names.contains(definition.name.as_str()) {
                continue;
            }
            active.retain(|name| *name != definition.name);
            let ours = registry.get(&definition.name).and_then(|t| {
                t.namespace()
                    .filter(|n| n.name.starts_with("mcp__"))
                    .map(|_| ())
            });
            if ours.is_some() {
                registry.register(Arc::new(HiddenTool(definition.clone())));
            }
        }
    }

    /// Activates `codemode` once when a server has `codemode` tools (unless
    /// `autoEnableCodemode` is false) and `tool_search` once when one has `deferred` tools,
    /// unless `--exclude-tools` or `--no-tools` say otherwise; says once when tools are only
    /// reachable through a tool that is not active.
    fn activate_reaching_tools(
        &mut self,
        registry: &ToolRegistry,
        active: &mut Vec<String>,
    ) -> Vec<String> {
        let has = |exposure: Exposure| self.offered.iter().any(|(_, e)| *e == exposure);
        let wanted = [
            (
                knightcode_codemode::CODEMODE_NAME,
                has(Exposure::Codemode) && self.auto_enable_codemode,
            ),
            (
                knightcode_codemode::TOOL_SEARCH_NAME,
                has(Exposure::Deferred),
            ),
        ];
        for (name, wanted) in wanted {
            if !wanted || !self.auto_activated.insert(name) {
                continue;
            }
            if registry.get(name).is_some()
                && crate::tool_selection::builtin_tool_selected(&self.selection, name)
                && !active.iter().any(|n| n == name)
            {
                active.push(name.to_owned());
            }
        }
        let reachable = [
            knightcode_codemode::TOOL_SEARCH_NAME,
            knightcode_codemode::CODEMODE_NAME,
        ]
        .iter()
        .any(|name| active.iter().any(|n| n == name));
        let unreachable = has(Exposure::Deferred) || has(Exposure::Codemode);
        if unreachable && !reachable && !self.unreachable_warned {
            self.unreachable_warned = true;
            let why = if self.auto_enable_codemode {
                ""
            } else {
                " (autoEnableCodemode is false)"
            };
            return vec![format!(
                "MCP tools are only reachable from the codemode or tool_search tool, but neither is active{why}; they cannot be called."
            )];
        }
        Vec::new()
    }

    /// The extensions' servers are now `registered` (at start-up, after a reload, or after
    /// an extension registered or unregistered one): new and changed ones start
    /// connecting, gone ones stop. A name the `mcp.json` files define stays theirs. Returns
    /// what to tell the user (each problem once).
    pub fn set_extension_servers(
        &mut self,
        registered: &[knightcode_ext::McpServerSpec],
    ) -> Vec<String> {
        let mut notices = Vec::new();
        let Some(options) = self.options.clone() else {
            if !registered.is_empty() && !std::mem::replace(&mut self.off_reported, true) {
                notices.push(
                    "MCP is off in this session (--no-mcp): the servers extensions registered are not connected."
                        .to_owned(),
                );
            }
            return notices;
        };
        let mut wanted = Vec::new();
        for spec in registered {
            let path = std::path::Path::new(&spec.extension_path);
            let config = match knightcode_mcp::extension_server(&spec.name, &spec.config, path) {
                Ok(config) => config,
                Err(problem) => {
                    if self.extension_reported.insert(spec.name.clone()) {
                        notices.push(format!(
                            "Extension error ({}, register_mcp_server): {problem}",
                            spec.extension_path
                        ));
                    }
                    continue;
                }
            };
            let shadowing = self
                .file_servers
                .iter()
                .find(|file| knightcode_mcp::names_clash(file, &spec.name));
            if let Some(file) = shadowing {
                if self.extension_reported.insert(spec.name.clone()) {
                    notices.push(format!(
                        "MCP server \"{file}\" of mcp.json takes precedence over \"{}\", which {} registered.",
                        spec.name, spec.extension_path
                    ));
                }
                continue;
            }
            wanted.push(config);
        }
        let manager = self
            .manager
            .get_or_insert_with(|| McpManager::new(Vec::new(), with_http(options)));
        for gone in self
            .extension_servers
            .iter()
            .filter(|old| !wanted.iter().any(|new| new.name == old.name))
        {
            manager.remove(&gone.name);
        }
        for config in &wanted {
            if !self.extension_servers.contains(config) {
                manager.add(config.clone());
            }
        }
        // The first servers, registered after the session started connecting.
        if self.connect_asked {
            manager.start();
        }
        self.extension_servers = wanted;
        notices
    }

    /// Servers that failed or dropped, each reported once until it connects again.
    fn problems(&mut self, statuses: &[ServerStatus]) -> Vec<String> {
        let mut lines = Vec::new();
        for status in statuses {
            let name = &status.config.name;
            match status.state {
                ServerState::Failed | ServerState::Disconnected | ServerState::NeedsAuth => {
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
            "MCP servers need attention:\n{}\nRun /mcp (or knightcode mcp list) to check them, /mcp reconnect <server> once fixed.",
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

/// The token of a KnightCode provider for servers with `auth.provider`: what a model request
/// to that provider would send (`auth.json`, refreshed when it is a subscription login, or
/// its environment variable), read afresh for every connection.
pub fn provider_token(
    agent_dir: &std::path::Path,
    env: Arc<dyn knightcode_ai::EnvSource>,
) -> knightcode_mcp::ProviderToken {
    let agent_dir = agent_dir.to_path_buf();
    Arc::new(move |provider: String| {
        let agent_dir = agent_dir.clone();
        let env = Arc::clone(&env);
        Box::pin(async move {
            let storage = knightcode_ai::AuthStorage::load(&agent_dir).ok()?;
            let runtime_keys = std::collections::HashMap::new();
            let context = knightcode_ai::AuthContext {
                storage: &storage,
                env: env.as_ref(),
                runtime_keys: &runtime_keys,
            };
            let resolved = context.resolve_key(&provider, None).await.ok()??;
            Some(resolved.0)
        })
    })
}

/// The options with the client streamable HTTP servers are reached through (the
/// workspace's TLS setup).
fn with_http(options: knightcode_mcp::ConnectOptions) -> knightcode_mcp::ConnectOptions {
    knightcode_mcp::ConnectOptions {
        http: knightcode_ai::http_client_builder()
            .ok()
            .and_then(|b| b.build().ok()),
        ..options
    }
}

/// The namespace of a server's tools: `mcp__<server>`, found by the server's name too.
fn namespace(config: &knightcode_mcp::ServerConfig) -> ToolNamespace {
    ToolNamespace {
        name: knightcode_mcp::namespace_name(&config.name),
        aliases: vec![config.name.clone()],
        description: config.description.clone(),
        instructions: None,
    }
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

/// A withdrawn MCP tool: registered (tools cannot be unregistered) but unreachable.
struct HiddenTool(ToolDefinition);

impl Tool for HiddenTool {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn execute(&self, _arguments: serde_json::Value, _context: ToolContext) -> ToolFuture<'_> {
        let name = self.0.name.clone();
        Box::pin(async move {
            Err(ToolError::Failed(format!(
                "Tool {name} is no longer offered by its MCP server"
            )))
        })
    }

    fn exposure(&self) -> ToolExposure {
        ToolExposure::Hidden
    }
}

/// One MCP tool in the agent's registry.
struct McpTool {
    definition: ToolDefinition,
    exposure: ToolExposure,
    namespace: ToolNamespace,
    manager: McpManager,
    server: String,
    tool: String,
}

impl Tool for McpTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn exposure(&self) -> ToolExposure {
        self.exposure
    }

    fn namespace(&self) -> Option<ToolNamespace> {
        Some(self.namespace.clone())
    }

    fn output_schema(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "type": "object",
            "properties": {
                "content": {"type": "array"},
                "structuredContent": {"type": "object"},
                "isError": {"type": "boolean"}
            },
            "required": ["content"]
        }))
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
                // An error result keeps its `CallToolResult`: scripts get it, the model sees
                // an error.
                Ok(output) => Ok(ToolOutput {
                    content: output.content,
                    structured_content: Some(output.structured.clone()),
                    details: Some(output.structured),
                    is_error: output.is_error,
                    ..ToolOutput::default()
                }),
                Err(McpError::Aborted) => Err(ToolError::Aborted("Operation aborted".to_owned())),
                Err(error) => Err(ToolError::Failed(error.to_string())),
            }
        })
    }
}
