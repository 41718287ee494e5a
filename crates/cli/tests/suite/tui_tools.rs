//! `/tools` in a real pseudo-terminal: the web tools' state, switching one on for every
//! session (saved owner-only in tools.json) and on the next request, and usage errors.

use std::os::unix::fs::PermissionsExt as _;

use crate::tui_common;

use knightcode_testkit::ScriptedReply;

#[test]
fn tools_shows_and_switches_the_web_tools() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("answer")]);
    let mut tui = sandbox.spawn(&[], 110, 30);
    tui.wait_for_text("mock-model");

    // Without arguments: the state and a list of changes.
    tui.submit("/tools");
    let screen = tui.wait_for_text("webfetch: turn on for every session");
    assert!(screen.contains("webfetch   off"), "{screen}");
    assert!(screen.contains("search     duckduckgo"), "{screen}");
    assert!(
        screen.contains("websearch: search with Brave (needs a key)"),
        "{screen}"
    );
    tui.send("\x1b[B");
    tui.send("\r");
    tui.wait_for_text("webfetch   always on");
    let saved = std::fs::read_to_string(sandbox.agent.join("tools.json")).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&saved).unwrap(),
        serde_json::json!({"webfetch": true})
    );
    let mode = std::fs::metadata(sandbox.agent.join("tools.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    tui.submit("/tools websearch sometimes");
    tui.wait_for_text("Usage: /tools [webfetch|websearch] [on|always|off]");
    tui.submit("/tools websearch brave");
    tui.wait_for_text("search     brave (no key: set BRAVE_API_KEY");

    // The next request offers the tool.
    tui.submit("hello");
    tui.wait_for_text("answer");
    let requests = sandbox.server().requests();
    let body = requests.last().unwrap().body.to_string();
    assert!(body.contains("\"webfetch\""), "{body}");
}
