//! What an Anthropic subscription login (a Claude Pro/Max OAuth access token) changes in a
//! request. The service accepts those tokens only from requests shaped like Claude Code's:
//! bearer auth, the `claude-code` and `oauth` betas, Claude Code's user agent, the identity
//! system block first, and Claude Code's spelling of the tool names it knows. The reference
//! agent decides by the token's prefix, so a token from `auth.json`, `ANTHROPIC_OAUTH_TOKEN`
//! or `--api-key` is treated alike.

use knightcode_protocol::ToolDeclaration;

/// The Claude Code release whose request shape the reference imitates.
const CLAUDE_CODE_VERSION: &str = "2.1.75";

/// Betas every subscription request carries, before the feature betas.
pub(super) const OAUTH_BETAS: [&str; 2] = ["claude-code-20250219", "oauth-2025-04-20"];

/// The system block the service requires first in a subscription request.
pub(super) const IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";

/// Claude Code's tool names, in its casing.
const TOOL_NAMES: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// Whether `key` is a subscription (OAuth) access token rather than an API key.
pub(crate) fn is_oauth_token(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

/// The `User-Agent` of a subscription request.
pub(super) fn user_agent() -> String {
    format!("claude-cli/{CLAUDE_CODE_VERSION}")
}

/// A tool name as Claude Code spells it, when it is one of Claude Code's (any case).
pub(super) fn to_claude_code_name(name: &str) -> &str {
    TOOL_NAMES
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name))
        .copied()
        .unwrap_or(name)
}

/// A tool name from the response back in the session's spelling: the declared tool whose
/// name matches without regard to case, else the name as it came.
pub(super) fn from_claude_code_name(name: &str, tools: &[String]) -> String {
    tools
        .iter()
        .find(|tool| tool.eq_ignore_ascii_case(name))
        .cloned()
        .unwrap_or_else(|| name.to_owned())
}

/// The names of the declared tools, for [`from_claude_code_name`].
pub(super) fn tool_names(tools: &[ToolDeclaration]) -> Vec<String> {
    tools.iter().map(|tool| tool.name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_claude_code_casing() {
        assert_eq!(to_claude_code_name("read"), "Read");
        assert_eq!(to_claude_code_name("todowrite"), "TodoWrite");
        assert_eq!(to_claude_code_name("find"), "find");
        let tools = vec!["read".to_owned(), "my_tool".to_owned()];
        assert_eq!(from_claude_code_name("Read", &tools), "read");
        assert_eq!(from_claude_code_name("Other", &tools), "Other");
        assert!(is_oauth_token("sk-ant-oat01-abc"));
        assert!(!is_oauth_token("sk-ant-api03-abc"));
    }
}
