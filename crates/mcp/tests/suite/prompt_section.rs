//! The `mcp_servers` system-prompt section: which servers it lists, and how it stays within
//! its size when there are many.

use std::path::PathBuf;
use std::time::Duration;

use knightcode_mcp::Exposure;
use knightcode_mcp::MAX_SECTION_CHARS;
use knightcode_mcp::Scope;
use knightcode_mcp::ServerConfig;
use knightcode_mcp::ServerState;
use knightcode_mcp::ServerStatus;
use knightcode_mcp::Transport;
use knightcode_mcp::servers_section;

fn status(name: &str, exposure: Exposure, description: Option<String>) -> ServerStatus {
    ServerStatus {
        config: ServerConfig {
            name: name.to_owned(),
            scope: Scope::User,
            source: PathBuf::from("mcp.json"),
            overridden: false,
            transport: Transport::Stdio {
                command: "server".to_owned(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: None,
            },
            exposure,
            tool_exposure: Vec::new(),
            description,
            enabled: true,
            timeout: Duration::from_secs(60),
        },
        state: ServerState::Connecting,
        tools: Vec::new(),
        resources: false,
        error: None,
        instructions: None,
    }
}

#[test]
fn only_undeclared_enabled_servers_are_listed_with_the_instructions_as_a_fallback() {
    let mut disabled = status("off", Exposure::Codemode, None);
    disabled.config.enabled = false;
    let mut instructed = status("docs", Exposure::Deferred, None);
    instructed.instructions = Some("Searches the manuals.\nMore detail.".to_owned());
    let mut mixed = status("mixed", Exposure::Direct, None);
    mixed.config.tool_exposure = vec![("big_*".to_owned(), Exposure::Deferred)];
    let statuses = [
        status("plain", Exposure::Direct, Some("Declared".to_owned())),
        status("hid", Exposure::Hidden, None),
        disabled,
        instructed,
        mixed,
    ];
    let section = servers_section(&statuses).unwrap();
    assert_eq!(
        section,
        "MCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.\n\
         - mcp__docs (tool_search): Searches the manuals.\n\
         - mcp__mixed (tool_search)"
    );
    assert_eq!(
        servers_section(&[status("plain", Exposure::Direct, None)]),
        None
    );
}

#[test]
fn many_servers_shrink_their_summaries_then_are_counted_in_a_closing_line() {
    let long = "x".repeat(400);
    let few: Vec<ServerStatus> = (0..5)
        .map(|i| status(&format!("s{i}"), Exposure::Codemode, Some(long.clone())))
        .collect();
    let section = servers_section(&few).unwrap();
    // 250 characters at most per summary, ending in an ellipsis.
    let first = section.lines().nth(1).unwrap();
    assert!(first.starts_with("- mcp__s0 (codemode): xxx"), "{first}");
    assert!(first.ends_with('…'), "{first}");
    assert_eq!(first.chars().count(), "- mcp__s0 (codemode): ".len() + 250);

    let many: Vec<ServerStatus> = (0..400)
        .map(|i| {
            status(
                &format!("server{i:03}"),
                Exposure::Codemode,
                Some(long.clone()),
            )
        })
        .collect();
    let section = servers_section(&many).unwrap();
    assert!(
        section.chars().count() <= MAX_SECTION_CHARS,
        "{} characters",
        section.chars().count()
    );
    let last = section.lines().last().unwrap();
    assert!(
        last.starts_with("- … ")
            && last.ends_with("more servers; find their tools with searchTools() in codemode"),
        "{last}"
    );
    // No room left for summaries once servers had to be left out.
    assert!(!section.contains(": xxx"), "{section}");
}
