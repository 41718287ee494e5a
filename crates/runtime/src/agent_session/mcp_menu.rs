//! `/mcp` in the terminal: the servers, those
//! needing attention first, each with its state, tools, exposure and source; per server its
//! tools with their exposure, the connection's details (the whole error, a stdio server's
//! stderr), reconnect, a new exposure and enable or disable. A change to a server of
//! `mcp.json` is written back to the file that defines it (the rest of the file kept) and
//! applies at once; one to an extension's server lasts the session.

use knightcode_mcp::Exposure;
use knightcode_mcp::McpManager;
use knightcode_mcp::Scope;
use knightcode_mcp::ServerConfig;
use knightcode_mcp::ServerPatch;
use knightcode_mcp::ServerState;
use knightcode_mcp::ServerStatus;
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use crate::dialogs::NoticeKind;

const BACK: &str = "Back";

/// The exposures offered, with what each means to the model.
const EXPOSURES: [(Exposure, &str); 4] = [
    (
        Exposure::Codemode,
        "called from codemode scripts, which find them with searchTools()",
    ),
    (
        Exposure::Deferred,
        "not declared until tool_search loads them, then called directly",
    ),
    (
        Exposure::Direct,
        "declared to the model like built-in tools",
    ),
    (Exposure::Hidden, "unreachable"),
];

/// The menu entries of a server that signs in with OAuth.
const SIGN_IN: &str = "Sign in";
const SIGN_OUT: &str = "Sign out";

/// A server's line in the list.
fn server_label(status: &ServerStatus) -> String {
    let state = match status.state {
        ServerState::Connected => {
            let n = status.tools.len();
            format!("connected · {n} tool{}", if n == 1 { "" } else { "s" })
        }
        ServerState::Connecting => "connecting…".to_owned(),
        ServerState::NeedsAuth => "needs sign-in".to_owned(),
        other => other.as_str().to_owned(),
    };
    format!(
        "{}  {state} · {} · {}",
        status.config.name,
        status.config.exposure,
        knightcode_mcp::source_label(&status.config)
    )
}

/// The connection's details: how it is reached, where it is defined, and what went wrong.
fn details(status: &ServerStatus) -> String {
    let config = &status.config;
    let kind = match &config.transport {
        knightcode_mcp::Transport::Stdio { .. } => "stdio",
        knightcode_mcp::Transport::Http { .. } => "streamable HTTP",
    };
    let transport = format!("{kind}: {}", config.transport.target());
    let defined = match config.scope {
        Scope::Extension => format!("registered by {}", config.source.display()),
        _ => format!("defined in {}", config.source.display()),
    };
    let mut lines = vec![
        format!("MCP server \"{}\": {}", config.name, status.state.as_str()),
        format!("  {transport}"),
        format!("  {defined}"),
        format!("  timeout {} s", config.timeout.as_secs_f64()),
    ];
    if let Some(description) = &config.description {
        lines.push(format!("  {description}"));
    }
    if let Some(error) = &status.error {
        lines.extend(error.lines().map(|line| format!("  {line}")));
    }
    lines.join("\n")
}

fn tools_text(status: &ServerStatus) -> String {
    if status.tools.is_empty() {
        return format!(
            "MCP server \"{}\" lists no tools ({}).",
            status.config.name,
            status.state.as_str()
        );
    }
    let lines: Vec<String> = status
        .tools
        .iter()
        .map(|tool| {
            format!(
                "  {} [{}]",
                tool.name,
                status.config.exposure_of(&tool.name)
            )
        })
        .collect();
    format!(
        "Tools of MCP server \"{}\":\n{}",
        status.config.name,
        lines.join("\n")
    )
}

impl AgentSession {
    /// The menu, until the user closes it.
    pub(super) async fn mcp_menu(&mut self, manager: &McpManager) {
        let cancel = CancellationToken::new();
        loop {
            let mut statuses = manager.statuses();
            knightcode_mcp::by_attention(&mut statuses);
            let labels: Vec<String> = statuses.iter().map(server_label).collect();
            let Some(choice) = self
                .dialogs
                .select("MCP servers", labels.clone(), &cancel)
                .await
            else {
                return;
            };
            let Some(index) = labels.iter().position(|l| *l == choice) else {
                return;
            };
            let name = statuses[index].config.name.clone();
            self.mcp_server_menu(manager, &name, &cancel).await;
        }
    }

    /// One server's actions, until the user goes back.
    async fn mcp_server_menu(
        &mut self,
        manager: &McpManager,
        name: &str,
        cancel: &CancellationToken,
    ) {
        loop {
            let Some(status) = manager
                .statuses()
                .into_iter()
                .find(|s| s.config.name == name)
            else {
                return;
            };
            let enabled = status.config.enabled;
            let tools = format!("Tools ({})", status.tools.len());
            let exposure = format!("Exposure: {} (change)", status.config.exposure);
            let toggle = if enabled { "Disable" } else { "Enable" };
            let oauth = manager.uses_oauth(name);
            let mut options = Vec::new();
            if oauth {
                options.push(SIGN_IN.to_owned());
            }
            options.extend([tools.clone(), "Details".to_owned()]);
            if enabled {
                options.push("Reconnect".to_owned());
            }
            if oauth {
                options.push(SIGN_OUT.to_owned());
            }
            options.extend([exposure.clone(), toggle.to_owned(), BACK.to_owned()]);
            let title = format!("MCP server \"{name}\": {}", status.state.as_str());
            let Some(choice) = self.dialogs.select(&title, options, cancel).await else {
                return;
            };
            match choice.as_str() {
                BACK => return,
                "Details" => {
                    self.dialogs
                        .notify(&details(&status), NoticeKind::Info)
                        .await
                }
                "Reconnect" => {
                    let (text, kind) = match manager.reconnect(name).await {
                        Ok(n) => (
                            format!(
                                "MCP server \"{name}\" reconnected: {n} tool{}.",
                                if n == 1 { "" } else { "s" }
                            ),
                            NoticeKind::Info,
                        ),
                        Err(error) => (
                            format!("MCP server \"{name}\" could not reconnect: {error}"),
                            NoticeKind::Error,
                        ),
                    };
                    self.dialogs.notify(&text, kind).await;
                }
                SIGN_IN | SIGN_OUT => {
                    let said = if choice == SIGN_IN {
                        self.mcp_sign_in(manager, name).await
                    } else {
                        self.mcp_sign_out(manager, name).await
                    };
                    let kind = match said.level {
                        crate::diagnostics::DiagnosticLevel::Error => NoticeKind::Error,
                        crate::diagnostics::DiagnosticLevel::Warning => NoticeKind::Warning,
                        crate::diagnostics::DiagnosticLevel::Info => NoticeKind::Info,
                    };
                    self.dialogs.notify(&said.message, kind).await;
                }
                "Disable" | "Enable" => {
                    self.change_mcp_server(manager, &status.config, ServerPatch::Enabled(!enabled))
                        .await;
                }
                other if other == tools => {
                    self.dialogs
                        .notify(&tools_text(&status), NoticeKind::Info)
                        .await;
                }
                other if other == exposure => {
                    let labels: Vec<String> = EXPOSURES
                        .iter()
                        .map(|(e, what)| format!("{e}: {what}"))
                        .collect();
                    let title = format!("Exposure of \"{name}\" (now {})", status.config.exposure);
                    let Some(picked) = self.dialogs.select(&title, labels.clone(), cancel).await
                    else {
                        continue;
                    };
                    let Some(index) = labels.iter().position(|l| *l == picked) else {
                        continue;
                    };
                    let (exposure, _) = EXPOSURES[index];
                    if exposure != status.config.exposure {
                        self.change_mcp_server(
                            manager,
                            &status.config,
                            ServerPatch::Exposure(exposure),
                        )
                        .await;
                    }
                }
                _ => return,
            }
        }
    }

    /// Saves `patch` where the server is defined (an extension's server: nowhere, it lasts
    /// the session) and applies it: the server is replaced by its changed self, connected
    /// again when enabled; its tools follow from the next prompt.
    async fn change_mcp_server(
        &mut self,
        manager: &McpManager,
        config: &ServerConfig,
        patch: ServerPatch,
    ) {
        let mut changed = config.clone();
        match patch {
            ServerPatch::Exposure(exposure) => changed.exposure = exposure,
            ServerPatch::Enabled(enabled) => changed.enabled = enabled,
        }
        let what = match patch {
            ServerPatch::Exposure(exposure) => format!("exposure is now {exposure}"),
            ServerPatch::Enabled(true) => "is enabled".to_owned(),
            ServerPatch::Enabled(false) => "is disabled".to_owned(),
        };
        let name = &config.name;
        let said = if config.scope == Scope::Extension {
            format!("MCP server \"{name}\" {what} for this session (an extension registered it).")
        } else {
            match knightcode_mcp::update_server(&config.source, name, patch, config.overridden) {
                Ok(()) => format!(
                    "MCP server \"{name}\" {what}; saved to {}.",
                    config.source.display()
                ),
                Err(error) => {
                    let text = format!("MCP server \"{name}\" was not changed: {error}");
                    self.dialogs.notify(&text, NoticeKind::Error).await;
                    return;
                }
            }
        };
        manager.add(changed);
        self.dialogs.notify(&said, NoticeKind::Info).await;
    }
}
