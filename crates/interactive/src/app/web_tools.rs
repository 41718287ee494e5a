//! What `/tools` says: each web tool's state and websearch's provider.

use knightcode_runtime::web_tools::WebToolsStatus;

/// The state as a few lines: every tool (on by default, on for this session, or off), the
/// search provider and where its key comes from, and how to change them.
pub(super) fn describe(status: &WebToolsStatus) -> String {
    let mut lines = vec!["Web tools:".to_owned()];
    for tool in &status.tools {
        let state = match (tool.active, tool.always) {
            (_, true) => "always on",
            (true, false) => "on for this session",
            (false, false) => "off",
        };
        lines.push(format!("  {:<10} {state}", tool.name));
    }
    let provider = status.provider.as_str();
    let key = match (status.provider, status.brave_key_source) {
        (knightcode_runtime::web_tools::SearchProvider::Brave, Some(source)) => {
            format!(" (key from {source})")
        }
        (knightcode_runtime::web_tools::SearchProvider::Brave, None) => {
            " (no key: set BRAVE_API_KEY or /tools websearch brave <key>)".to_owned()
        }
        _ => String::new(),
    };
    lines.push(format!("  search     {provider}{key}"));
    lines.push(
        "Change with /tools <webfetch|websearch> <on|always|off>, /tools websearch <duckduckgo|brave [key]>."
            .to_owned(),
    );
    lines.join("\n")
}
