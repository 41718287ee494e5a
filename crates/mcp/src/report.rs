//! The servers' state as text, for `knightcode mcp list` and `/mcp`: one line per server,
//! those that need attention first, with what went wrong and the tools whose exposure
//! differs from their server's.

use crate::ServerState;
use crate::ServerStatus;

/// Where a server sorts: what needs the user first (the spec's attention order).
fn attention(state: ServerState) -> u8 {
    match state {
        ServerState::NeedsAuth => 0,
        ServerState::Failed => 1,
        ServerState::Disconnected => 2,
        ServerState::Connecting => 3,
        ServerState::Connected => 4,
        ServerState::Disabled => 5,
    }
}

/// `name: connected, 3 tools (stdio, codemode, user)` and its detail lines, the servers that
/// need attention first (the config's order otherwise).
pub fn status_lines(statuses: &[ServerStatus]) -> Vec<String> {
    let mut sorted: Vec<&ServerStatus> = statuses.iter().collect();
    sorted.sort_by_key(|s| attention(s.state));
    status_lines_in_order(sorted)
}

/// The servers that need the user first (needs sign-in, failed, disconnected, connecting, connected,
/// disabled), in the config's order otherwise.
pub fn by_attention(statuses: &mut [ServerStatus]) {
    statuses.sort_by_key(|s| attention(s.state));
}

/// Where a server is defined: `global`, `project`, or `extension <file>`.
pub fn source_label(server: &crate::ServerConfig) -> String {
    match server.scope {
        crate::Scope::Extension => format!("extension {}", server.source.display()),
        scope => scope.as_str().to_owned(),
    }
}

fn status_lines_in_order(sorted: Vec<&ServerStatus>) -> Vec<String> {
    let mut lines = Vec::new();
    for status in sorted {
        let server = &status.config;
        let source = source_label(server);
        let detail = format!("{}, {}, {source}", server.transport.kind(), server.exposure,);
        lines.push(match status.state {
            ServerState::Connected => {
                let n = status.tools.len();
                let tools = if n == 1 { "tool" } else { "tools" };
                format!("{}: connected, {n} {tools} ({detail})", server.name)
            }
            state => format!("{}: {} ({detail})", server.name, state.as_str()),
        });
        if let Some(error) = &status.error {
            lines.extend(error.lines().map(|line| format!("  {line}")));
        }
        let differing: Vec<String> = status
            .tools
            .iter()
            .filter(|t| server.exposure_of(&t.name) != server.exposure)
            .map(|t| format!("{} ({})", t.name, server.exposure_of(&t.name)))
            .collect();
        if !differing.is_empty() {
            lines.push(format!("  other exposure: {}", differing.join(", ")));
        }
    }
    lines
}
