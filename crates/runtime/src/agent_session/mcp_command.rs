//! The built-in `/mcp` command: in the terminal `/mcp` is a menu (mcp_menu.rs); elsewhere
//! (print, JSON and RPC mode) it reports every server's state (those needing attention
//! first). `/mcp reconnect [server]` connects one again; `/mcp login|logout [server]` signs
//! in to an OAuth server or forgets its tokens (mcp_sign_in.rs). An
//! extension that registers `/mcp` replaces this, as its commands run first.

use super::AgentSession;
use crate::diagnostics::Diagnostic;
use crate::diagnostics::DiagnosticLevel;

const USAGE: &str =
    "Usage: /mcp, /mcp reconnect [server], /mcp login [server], /mcp logout [server]";

/// What `/mcp …` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpCommand {
    /// `/mcp`: every server's state.
    Status,
    /// `/mcp reconnect [server]`.
    Reconnect(Option<String>),
    /// `/mcp login [server]`.
    Login(Option<String>),
    /// `/mcp logout [server]`.
    Logout(Option<String>),
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
        ["login"] => McpCommand::Login(None),
        ["login", server] => McpCommand::Login(Some((*server).to_owned())),
        ["logout"] => McpCommand::Logout(None),
        ["logout", server] => McpCommand::Logout(Some((*server).to_owned())),
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
        self.connect_mcp();
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
            McpCommand::Login(named) => self.mcp_sign_command(&manager, named, true).await,
            McpCommand::Logout(named) => self.mcp_sign_command(&manager, named, false).await,
            McpCommand::Usage => info(USAGE.to_owned()),
        }
    }

    /// `/mcp login|logout [server]`: with no name, the one server it can be (one waiting for a
    /// sign-in first), else a choice (or, without a UI, the names to pick from).
    async fn mcp_sign_command(
        &mut self,
        manager: &knightcode_mcp::McpManager,
        named: Option<String>,
        login: bool,
    ) -> Diagnostic {
        let verb = if login { "login" } else { "logout" };
        let server = match named {
            Some(name) => name,
            None => match super::mcp_sign_in::sign_in_candidates(manager).as_slice() {
                [only] => only.clone(),
                [] => return info("No MCP server signs in with OAuth.".to_owned()),
                names => {
                    let cancel = tokio_util::sync::CancellationToken::new();
                    let title = format!("MCP {verb}: which server?");
                    match self.dialogs.select(&title, names.to_vec(), &cancel).await {
                        Some(name) => name,
                        None => {
                            return info(format!(
                                "Which server? /mcp {verb} <server>, one of: {}",
                                names.join(", ")
                            ));
                        }
                    }
                }
            },
        };
        if login {
            self.mcp_sign_in(manager, &server).await
        } else {
            self.mcp_sign_out(manager, &server).await
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
        assert_eq!(
            parse_mcp_command("/mcp login x"),
            Some(McpCommand::Login(Some("x".to_owned())))
        );
        assert_eq!(
            parse_mcp_command("/mcp logout"),
            Some(McpCommand::Logout(None))
        );
        assert_eq!(
            parse_mcp_command("/mcp frobnicate"),
            Some(McpCommand::Usage)
        );
        assert_eq!(parse_mcp_command("/mcpx"), None);
        assert_eq!(parse_mcp_command("tell me about /mcp"), None);
    }
}
