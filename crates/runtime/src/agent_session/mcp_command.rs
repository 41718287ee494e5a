//! The built-in `/mcp` command: in the terminal `/mcp` is a menu (mcp_menu.rs); elsewhere
//! (print, JSON and RPC mode) it reports every server's state (those needing attention
//! first). `/mcp reconnect [server]` connects one again. An
//! extension that registers `/mcp` replaces this, as its commands run first.

use super::AgentSession;
use crate::diagnostics::Diagnostic;
use crate::diagnostics::DiagnosticLevel;

const USAGE: &str = "Usage: /mcp, /mcp reconnect [server]";

/// What `/mcp …` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpCommand {
    /// `/mcp`: every server's state.
    Status,
    /// `/mcp reconnect [server]`.
    Reconnect(Option<String>),
    /// `/mcp login|logout [server]`: OAuth for MCP servers is not built.
    SignIn,
    /// Anything else after `/mcp`.
    Usage,
}

/// `Some` when `text` is the `/mcp` command.
pub fn parse_mcp_command(text: &str) -> Option<McpCommand> {
    let text = text.trim();
    let rest = text.strip_prefix("/mcp")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    Some(match words.as_slice() {
        [] => McpCommand::Status,
        ["reconnect"] => McpCommand::Reconnect(None),
        ["reconnect", server] => McpCommand::Reconnect(Some((*server).to_owned())),
        ["login" | "logout", ..] => McpCommand::SignIn,
        _ => McpCommand::Usage,
    })
}

fn info(message: String) -> Diagnostic {
    Diagnostic {
        level: DiagnosticLevel::Info,
        source: "mcp".to_owned(),
        message,
    }
}

impl AgentSession {
    /// Runs `/mcp …`. What it says goes to the front end's notices when it has a UI (the
    /// terminal, an RPC client's `notify`); `Some` is for the others (stderr of print and
    /// JSON mode).
    pub async fn run_mcp_command(&mut self, command: McpCommand) -> Option<Diagnostic> {
        // In the terminal `/mcp` is a menu (see mcp_menu.rs).
        if command == McpCommand::Status
            && self.dialogs.has_menus()
            && let Some(manager) = self.mcp.manager().cloned()
        {
            self.mcp_menu(&manager).await;
            return None;
        }
        let said = self.mcp_command_text(command).await;
        if !self.dialogs.has_ui() {
            return Some(said);
        }
        let kind = match said.level {
            DiagnosticLevel::Info => crate::dialogs::NoticeKind::Info,
            DiagnosticLevel::Warning => crate::dialogs::NoticeKind::Warning,
            DiagnosticLevel::Error => crate::dialogs::NoticeKind::Error,
        };
        self.dialogs.notify(&said.message, kind).await;
        None
    }

    async fn mcp_command_text(&mut self, command: McpCommand) -> Diagnostic {
        let Some(manager) = self.mcp.manager().cloned() else {
            let why = if self.mcp.is_off() {
                "MCP is off in this session (--no-mcp)."
            } else {
                "No MCP servers configured. Add one with: knightcode mcp add <name> -- <command> [args...] (docs/mcp.md)."
            };
            return info(why.to_owned());
        };
        match command {
            McpCommand::Status => {
                // Without a UI (`knightcode -p /mcp`) the report is all there is: wait for
                // servers still connecting, as the first prompt would. A UI shows them as
                // connecting; the user can ask again.
                if !self.dialogs.has_ui() {
                    manager.wait_settled(crate::mcp::FIRST_PROMPT_WAIT).await;
                }
                let lines = knightcode_mcp::status_lines(&manager.statuses());
                info(format!("MCP servers:\n{}", lines.join("\n")))
            }
            McpCommand::Reconnect(named) => {
                let statuses = manager.statuses();
                let enabled: Vec<&str> = statuses
                    .iter()
                    .filter(|s| s.config.enabled)
                    .map(|s| s.config.name.as_str())
                    .collect();
                let server = match (named, enabled.as_slice()) {
                    (Some(name), _) => name,
                    (None, [only]) => (*only).to_owned(),
                    (None, names) => {
                        return info(format!(
                            "Which server? /mcp reconnect <server>, one of: {}",
                            names.join(", ")
                        ));
                    }
                };
                match manager.reconnect(&server).await {
                    Ok(tools) => {
                        let noun = if tools == 1 { "tool" } else { "tools" };
                        info(format!(
                            "MCP server \"{server}\" reconnected: {tools} {noun}; they are offered from the next prompt."
                        ))
                    }
                    Err(error) => Diagnostic::error(
                        "mcp",
                        format!("MCP server \"{server}\" could not reconnect: {error}"),
                    ),
                }
            }
            McpCommand::SignIn => info(
                "Signing in to MCP servers is not built yet; give the server a token in its \"headers\" in mcp.json instead (\"Authorization\": \"Bearer ${TOKEN}\")."
                    .to_owned(),
            ),
            McpCommand::Usage => info(USAGE.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::McpCommand;
    use super::parse_mcp_command;

    #[test]
    fn only_the_mcp_command_is_taken() {
        assert_eq!(parse_mcp_command("/mcp"), Some(McpCommand::Status));
        assert_eq!(parse_mcp_command(" /mcp  "), Some(McpCommand::Status));
        assert_eq!(
            parse_mcp_command("/mcp reconnect fs"),
            Some(McpCommand::Reconnect(Some("fs".to_owned())))
        );
        assert_eq!(
            parse_mcp_command("/mcp reconnect"),
            Some(McpCommand::Reconnect(None))
        );
        assert_eq!(parse_mcp_command("/mcp login x"), Some(McpCommand::SignIn));
        assert_eq!(
            parse_mcp_command("/mcp frobnicate"),
            Some(McpCommand::Usage)
        );
        assert_eq!(parse_mcp_command("/mcpx"), None);
        assert_eq!(parse_mcp_command("tell me about /mcp"), None);
    }
}
