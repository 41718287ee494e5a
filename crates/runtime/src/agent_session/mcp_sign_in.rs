//! `/mcp login|logout [server]` and the menu's "Sign in" / "Sign out": the OAuth sign-in of
//! an HTTP MCP server from a session. The browser opens on the authorize address; an input
//! dialog shows it and takes the address the browser ended on (a browser on another
//! machine), while the loopback callback may complete it first. Without a UI nobody can
//! sign in: the session says to use `knightcode mcp login` instead.

use std::sync::Arc;

use knightcode_mcp::McpError;
use knightcode_mcp::McpManager;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use crate::diagnostics::Diagnostic;
use crate::diagnostics::DiagnosticLevel;

fn said(level: DiagnosticLevel, message: String) -> Diagnostic {
    Diagnostic {
        level,
        source: "mcp".to_owned(),
        message,
    }
}

/// The servers `/mcp login|logout` can act on without a name: those that sign in with
/// OAuth, the ones waiting for a sign-in first when there are any.
pub(super) fn sign_in_candidates(manager: &McpManager) -> Vec<String> {
    let statuses = manager.statuses();
    let oauth: Vec<&knightcode_mcp::ServerStatus> = statuses
        .iter()
        .filter(|s| manager.uses_oauth(&s.config.name))
        .collect();
    let waiting: Vec<String> = oauth
        .iter()
        .filter(|s| s.state == knightcode_mcp::ServerState::NeedsAuth)
        .map(|s| s.config.name.clone())
        .collect();
    if waiting.len() == 1 {
        return waiting;
    }
    oauth.iter().map(|s| s.config.name.clone()).collect()
}

impl AgentSession {
    /// Signs in to `server` and connects it again with the new tokens.
    pub(super) async fn mcp_sign_in(&mut self, manager: &McpManager, server: &str) -> Diagnostic {
        if !self.dialogs.has_ui() {
            return said(
                DiagnosticLevel::Info,
                format!("Signing in to MCP server \"{server}\" requires interactive mode."),
            );
        }
        if !manager.uses_oauth(server) {
            return said(
                DiagnosticLevel::Info,
                McpError::NotOAuth(server.to_owned()).to_string(),
            );
        }
        let cancel = CancellationToken::new();
        let (paste_tx, pasted) = tokio::sync::mpsc::channel(1);
        let (show_tx, mut shown) = tokio::sync::mpsc::unbounded_channel::<String>();
        let person = knightcode_mcp::SignIn {
            open_browser: Arc::new(knightcode_ai::login::open_browser),
            show: Arc::new(move |text: &str| {
                let _ = show_tx.send(text.to_owned());
            }),
            pasted: Some(pasted),
            timeout: knightcode_mcp::DEFAULT_SIGN_IN_TIMEOUT,
        };
        let sign_in = manager.sign_in(server, person);
        tokio::pin!(sign_in);
        let (reply_tx, mut replies) = tokio::sync::mpsc::unbounded_channel::<Option<UiReply>>();
        let signed_in = loop {
            tokio::select! {
                done = &mut sign_in => break done,
                Some(text) = shown.recv() => {
                    // The dialog waits on a task of its own, so the callback can win.
                    let dialog = self.dialogs.extension_ui(
                        UiRequestKind::Input {
                            title: text,
                            placeholder: Some("http://127.0.0.1:…/callback?code=…".to_owned()),
                            timeout: None,
                        },
                        None,
                        cancel.clone(),
                    );
                    let reply_tx = reply_tx.clone();
                    tokio::spawn(async move {
                        let _ = reply_tx.send(dialog.await);
                    });
                }
                Some(reply) = replies.recv() => match reply {
                    Some(UiReply::Value(address)) => {
                        let _ = paste_tx.send(address).await;
                    }
                    // Dismissed: the sign-in stops here.
                    _ => break Err(McpError::SignIn {
                        server: server.to_owned(),
                        reason: "cancelled".to_owned(),
                    }),
                },
            }
        };
        // Closes the dialog when the browser answered first.
        cancel.cancel();
        if let Err(error) = signed_in {
            return said(DiagnosticLevel::Error, error.to_string());
        }
        match manager.reconnect(server).await {
            Ok(tools) => said(
                DiagnosticLevel::Info,
                format!(
                    "Signed in to MCP server \"{server}\": {tools} tool{}; they are offered from the next prompt.",
                    if tools == 1 { "" } else { "s" }
                ),
            ),
            Err(error) => said(
                DiagnosticLevel::Error,
                format!("Signed in to MCP server \"{server}\", but it could not connect: {error}"),
            ),
        }
    }

    /// Forgets `server`'s tokens; its connection is made again without them (so it shows
    /// that it needs a sign-in).
    pub(super) async fn mcp_sign_out(&mut self, manager: &McpManager, server: &str) -> Diagnostic {
        match manager.sign_out(server) {
            Ok(removed) => {
                let _ = manager.reconnect(server).await;
                let message = if removed {
                    format!("Signed out of MCP server \"{server}\"; its tokens were removed.")
                } else {
                    format!("MCP server \"{server}\" has no stored sign-in.")
                };
                said(DiagnosticLevel::Info, message)
            }
            Err(error) => said(DiagnosticLevel::Info, error.to_string()),
        }
    }
}
