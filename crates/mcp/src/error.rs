//! The crate's one error type.

use std::path::PathBuf;

/// What went wrong with a server, a call or a config file; the text is what users read.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The server could not be started or did not complete `initialize`.
    #[error("MCP server \"{server}\" failed to connect: {reason}{}", tail(stderr))]
    Connect {
        server: String,
        reason: String,
        stderr: String,
    },
    /// The connection ended (the process exited, the HTTP session went away).
    #[error("MCP server \"{server}\": Connection closed{}", tail(stderr))]
    Closed { server: String, stderr: String },
    /// The server answered a request with an error, or the request could not be sent.
    #[error("MCP server \"{server}\": {reason}{}", tail(stderr))]
    Request {
        server: String,
        reason: String,
        stderr: String,
    },
    /// No answer within the server's timeout (progress renews it).
    #[error(
        "MCP server \"{server}\" did not answer {tool} within {seconds} s; raise \"timeout\" in its mcp.json entry if it needs longer"
    )]
    Timeout {
        server: String,
        tool: String,
        seconds: f64,
    },
    /// The server answered 401: a sign-in is needed (`/mcp`, `knightcode mcp login`), or for
    /// `auth.provider` a login to that provider; or 403 `insufficient_scope`: the token lacks
    /// a scope, and only a new sign-in can widen it (a refresh keeps the granted scope).
    #[error("{}", needs_auth(server, provider.as_deref(), step_up.as_deref()))]
    NeedsAuth {
        server: String,
        /// `auth.provider`, when the token is a KnightCode provider's.
        provider: Option<String>,
        /// The scope a 403 `insufficient_scope` challenge asked for (possibly empty).
        step_up: Option<String>,
    },
    /// `knightcode mcp login|logout` of a server that signs in some other way (stdio, a
    /// header, `auth.provider`) or advertises no OAuth at all.
    #[error("MCP server \"{0}\" does not use OAuth.")]
    NotOAuth(String),
    /// A sign-in that did not complete.
    #[error("Signing in to MCP server \"{server}\" failed: {reason}")]
    SignIn { server: String, reason: String },
    /// The call was aborted by the user.
    #[error("Operation aborted")]
    Aborted,
    /// No server of that name is configured (or it is disabled).
    #[error("MCP server \"{0}\" is not configured or is disabled; run knightcode mcp list")]
    UnknownServer(String),
    /// A `${NAME}` or `!command` value could not be resolved.
    #[error("server \"{server}\": {reason}")]
    Value { server: String, reason: String },
    /// An entry that does not follow the file format.
    #[error("{0}")]
    Invalid(String),
    /// A config file could not be read or written.
    #[error("{}: {reason}", path.display())]
    File { path: PathBuf, reason: String },
}

fn needs_auth(server: &str, provider: Option<&str>, step_up: Option<&str>) -> String {
    match (provider, step_up) {
        (Some(provider), _) => {
            format!("MCP server \"{server}\" requires sign-in. Run /login {provider}.")
        }
        (None, Some(scope)) if !scope.trim().is_empty() => format!(
            "MCP server \"{server}\" needs more access (scope \"{}\"). Run /mcp login {server} to sign in again.",
            scope.trim()
        ),
        (None, Some(_)) => format!(
            "MCP server \"{server}\" needs more access. Run /mcp login {server} to sign in again."
        ),
        (None, None) => format!("MCP server \"{server}\" requires sign-in. Run /mcp to sign in."),
    }
}

fn tail(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("\n{}", stderr.trim_end())
    }
}
