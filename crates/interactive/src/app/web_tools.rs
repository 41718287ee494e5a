//! What `/tools` says: each web tool's state and websearch's provider.

use knightcode_runtime::web_tools::{SearchProvider, ToolMode, WebToolsChange, WebToolsStatus};

/// The state as a few lines: every tool (on by default, on for this session, or off), the
/// search provider and where its key comes from, and how to change them.
pub(super) fn describe(status: &WebToolsStatus) -> String {
    format!(
        "Web tools:\n{}\nChange with /tools <webfetch|websearch> <on|always|off>, /tools websearch <duckduckgo|brave [key]>.",
        summary(status)
    )
}

/// The answers of the `/tools` picker and the change each makes: every other mode of each
/// tool, then the other search provider.
pub(super) fn choices(status: &WebToolsStatus) -> (Vec<String>, Vec<WebToolsChange>) {
    let mut answers = Vec::new();
    let mut changes = Vec::new();
    for tool in &status.tools {
        let current = match (tool.active, tool.always) {
            (_, true) => ToolMode::Always,
            (true, false) => ToolMode::On,
            (false, false) => ToolMode::Off,
        };
        for (mode, label) in [
            (ToolMode::On, "turn on for this session"),
            (ToolMode::Always, "turn on for every session"),
            (ToolMode::Off, "turn off"),
        ] {
            if mode != current {
                answers.push(format!("{}: {label}", tool.name));
                changes.push(WebToolsChange {
                    tool: Some((tool.name.clone(), mode)),
                    ..WebToolsChange::default()
                });
            }
        }
    }
    let (other, label) = match status.provider {
        SearchProvider::DuckDuckGo => (SearchProvider::Brave, "search with Brave (needs a key)"),
        SearchProvider::Brave => (SearchProvider::DuckDuckGo, "search with DuckDuckGo"),
    };
    answers.push(format!("websearch: {label}"));
    changes.push(WebToolsChange {
        provider: Some(other),
        ..WebToolsChange::default()
    });
    (answers, changes)
}

/// One line per tool and one for the search provider.
pub(super) fn summary(status: &WebToolsStatus) -> String {
    let mut lines = Vec::new();
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
        (SearchProvider::Brave, Some(source)) => {
            format!(" (key from {source})")
        }
        (SearchProvider::Brave, None) => {
            " (no key: set BRAVE_API_KEY or /tools websearch brave <key>)".to_owned()
        }
        _ => String::new(),
    };
    lines.push(format!("  search     {provider}{key}"));
    lines.join("\n")
}
