//! `/mcp` in the terminal: a menu of the servers (those needing attention first), each
//! server's tools and actions; a new exposure and disabling are written back to `mcp.json`
//! (the rest of the entry kept) and apply to the session at once.

use crate::tui_common;

use knightcode_testkit::ScriptedReply;
use serde_json::Value;
use serde_json::json;

use crate::suite::mcp::fixture_entry;
use crate::suite::mcp::write_config;

const DOWN: &str = "\x1b[B";

fn entry(sandbox: &tui_common::Sandbox, name: &str) -> Value {
    let path = sandbox.agent.join("mcp.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    file["mcpServers"][name].clone()
}

#[test]
fn the_mcp_menu_lists_servers_shows_tools_and_saves_exposure_and_disabling() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("servers are up")]);
    let mut fixture = fixture_entry(&sandbox);
    fixture["description"] = json!("The test fixture");
    write_config(
        &sandbox,
        json!({"fixture": fixture, "missing": {"command": "/nonexistent/mcp-server"}}),
    );
    let mut tui = sandbox.spawn(&[], 120, 40);
    // The first prompt waits for the servers, so the menu shows them settled.
    tui.submit("hello");
    tui.wait_for_text("servers are up");

    tui.submit("/mcp");
    let screen = tui.wait_for_text("fixture  connected");
    let missing = screen
        .find("missing  failed")
        .expect("the failed server is listed");
    let connected = screen
        .find("fixture  connected · 9 tools · direct · global")
        .expect("the connected server is listed");
    assert!(missing < connected, "attention first: {screen}");

    tui.send(DOWN);
    tui.send("\r");
    tui.wait_for_text("MCP server \"fixture\": connected");
    // Tools, with each one's exposure.
    tui.send("\r");
    tui.wait_for_text("echo [direct]");

    // Exposure → codemode: the default, so the key goes from the file.
    tui.wait_for_text("Exposure: direct (change)");
    tui.send(&DOWN.repeat(3));
    tui.send("\r");
    tui.wait_for_text("Exposure of \"fixture\" (now direct)");
    tui.send("\r");
    tui.wait_for_text("exposure is now codemode; saved to");
    let saved = entry(&sandbox, "fixture");
    assert!(saved.get("exposure").is_none(), "{saved}");
    assert_eq!(saved["description"], "The test fixture", "the rest is kept");

    // Disable: written as `enabled: false`, the server stops.
    tui.wait_for_text("Exposure: codemode (change)");
    tui.send(&DOWN.repeat(4));
    tui.send("\r");
    tui.wait_for_text("is disabled; saved to");
    assert_eq!(entry(&sandbox, "fixture")["enabled"], false);
    tui.wait_for_text("MCP server \"fixture\": disabled");
    tui.send("\x1b");
    tui.wait_for("the server list again, the fixture disabled", |s| {
        s.contains("fixture  disabled")
    });
    tui.send("\x1b");
    // Apart: an escape with a key right behind it reads as Alt and that key.
    tui.wait_for("the menu to close", |s| !s.contains("fixture  disabled"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
