//! `/settings` in a real pseudo-terminal: a change shows at once and lands in the global
//! `settings.json` beside the keys that were there; and the display settings the menu
//! writes are taken up at start.

use crate::tui_common;

use tui_common::Sandbox;

const DOWN: &str = "\x1b[B";

fn read_settings(sandbox: &Sandbox) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(sandbox.agent.join("settings.json")).unwrap())
        .unwrap()
}

#[test]
fn the_settings_menu_switches_the_theme_and_saves_it_to_the_global_file() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"steeringMode": "all", "somethingElse": {"kept": [1, 2]}}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/settings");
    let screen = tui.wait_for_text("Type to search · Enter/Space to change · Esc to cancel");
    assert!(screen.contains("Steering mode"), "{screen}");
    // The steering mode comes from the file.
    assert!(
        screen
            .lines()
            .any(|l| l.contains("Steering mode") && l.contains("all")),
        "{screen}"
    );
    tui.send("theme");
    tui.wait_for("the theme row selected", |s| {
        s.lines()
            .any(|l| l.contains("→ Theme") && l.contains("dark"))
    });
    tui.send("\r");
    tui.wait_for_text("Select color theme");
    tui.send(DOWN);
    tui.wait_for("light under the cursor", |s| s.contains("→ light"));
    tui.send("\r");
    tui.wait_for("the theme row says light", |s| {
        s.lines()
            .any(|l| l.contains("→ Theme") && l.contains("light"))
    });
    tui.send("\x1b");
    tui.wait_for("the menu closed", |s| !s.contains("Type to search"));
    // The light theme's editor border (`thinkingOff` = lightGray).
    assert_eq!(
        tui.color_of(&"─".repeat(100)),
        Some(vt100::Color::Rgb(0xb0, 0xb0, 0xb0)),
        "{}",
        tui.screen()
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let saved = read_settings(&sandbox);
    assert_eq!(saved["theme"], "light", "{saved}");
    assert_eq!(saved["steeringMode"], "all", "{saved}");
    assert_eq!(saved["somethingElse"]["kept"], serde_json::json!([1, 2]));
}

#[test]
fn a_cycled_value_is_saved_and_the_display_settings_apply_at_the_next_start() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    assert!(tui.screen().contains("ctrl+l model"), "{}", tui.screen());
    tui.submit("/settings");
    tui.wait_for_text("Type to search");
    tui.send("quiet");
    tui.wait_for("quiet startup selected", |s| {
        s.lines()
            .any(|l| l.contains("→ Quiet startup") && l.contains("false"))
    });
    tui.send(" ");
    tui.wait_for("quiet startup on", |s| {
        s.lines()
            .any(|l| l.contains("→ Quiet startup") && l.contains("true"))
    });
    // Backspace the search, then pick the double-escape action.
    tui.send("\x7f\x7f\x7f\x7f\x7fdouble");
    tui.wait_for("double escape selected", |s| {
        s.lines()
            .any(|l| l.contains("→ Double-escape action") && l.contains("tree"))
    });
    tui.send("\r");
    tui.wait_for("double escape fork", |s| {
        s.lines()
            .any(|l| l.contains("→ Double-escape action") && l.contains("fork"))
    });
    tui.send("\x1b");
    tui.wait_for("the menu closed", |s| !s.contains("Type to search"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let saved = read_settings(&sandbox);
    assert_eq!(saved["quietStartup"], true, "{saved}");
    assert_eq!(saved["doubleEscapeAction"], "fork", "{saved}");

    // The next start is quiet, and a double escape offers the fork picker.
    let mut tui = sandbox.spawn(&[], 100, 30);
    let screen = tui.wait_for_text("mock-model");
    assert!(!screen.contains("ctrl+l model"), "{screen}");
    tui.send("\x1b");
    tui.wait_for_text("Press escape again to fork from an earlier message");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_change_the_project_file_overrides_says_so() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.project.join(".knightcode")).unwrap();
    std::fs::write(
        sandbox.project.join(".knightcode/settings.json"),
        r#"{"doubleEscapeAction": "none"}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&["--approve"], 120, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/settings");
    tui.wait_for_text("Type to search");
    tui.send("double");
    tui.wait_for("the project's value shown", |s| {
        s.lines()
            .any(|l| l.contains("→ Double-escape action") && l.contains("none"))
    });
    tui.send("\r");
    tui.wait_for_text("wins when knightcode starts here");
    tui.send("\x1b");
    tui.wait_for("the menu closed", |s| !s.contains("Type to search"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let saved = read_settings(&sandbox);
    assert_eq!(saved["doubleEscapeAction"], "tree", "{saved}");
}

#[test]
fn terminal_progress_marks_the_tab_busy_while_the_agent_works() {
    let sandbox = tui_common::sandbox(vec![knightcode_testkit::ScriptedReply::text("all done")]);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"terminal": {"showTerminalProgress": true}}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("hello");
    tui.wait_for_output("\x1b]9;4;3\x07");
    tui.wait_for_text("all done");
    tui.wait_for_output("\x1b]9;4;0;\x07");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// Searches the open menu for `search`, waits for `label` selected showing `before`, and
/// presses space until it shows `after`.
fn change(tui: &mut tui_common::Tui, search: &str, label: &str, before: &str, after: &str) {
    tui.send(search);
    let selected = format!("→ {label}");
    tui.wait_for(&format!("{label} selected at {before}"), |s| {
        s.lines()
            .any(|l| l.contains(&selected) && l.ends_with_value(before))
    });
    tui.send(" ");
    tui.wait_for(&format!("{label} at {after}"), |s| {
        s.lines()
            .any(|l| l.contains(&selected) && l.ends_with_value(after))
    });
    // Clear the search for the next one.
    tui.send(&"\x7f".repeat(search.len()));
}

trait EndsWithValue {
    fn ends_with_value(&self, value: &str) -> bool;
}

impl EndsWithValue for &str {
    fn ends_with_value(&self, value: &str) -> bool {
        self.trim_end().ends_with(&format!("  {value}"))
    }
}

#[test]
fn transport_collapse_changelog_and_clear_on_shrink_are_written_and_read_back() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/settings");
    tui.wait_for_text("Type to search");
    change(&mut tui, "transport", "Transport", "auto", "sse");
    change(&mut tui, "collapse", "Collapse changelog", "false", "true");
    change(&mut tui, "shrink", "Clear on shrink", "false", "true");
    tui.send("\x1b");
    tui.wait_for("the menu closed", |s| !s.contains("Type to search"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let saved = read_settings(&sandbox);
    assert_eq!(saved["transport"], "sse", "{saved}");
    assert_eq!(saved["collapseChangelog"], true, "{saved}");
    assert_eq!(saved["terminal"]["clearOnShrink"], true, "{saved}");

    // Read back at the next start.
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/settings");
    tui.wait_for_text("Type to search");
    change(&mut tui, "transport", "Transport", "sse", "websocket");
    change(&mut tui, "collapse", "Collapse changelog", "true", "false");
    change(&mut tui, "shrink", "Clear on shrink", "true", "false");
    tui.send("\x1b");
    tui.wait_for("the menu closed", |s| !s.contains("Type to search"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let saved = read_settings(&sandbox);
    assert_eq!(saved["transport"], "websocket", "{saved}");
    assert_eq!(saved["collapseChangelog"], false, "{saved}");
    assert_eq!(saved["terminal"]["clearOnShrink"], false, "{saved}");
}
