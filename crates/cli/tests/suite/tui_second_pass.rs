//! The interactive mode's second pass of rough edges (issue 32), each as the screen must
//! show it beside pi: one Escape closes any picker, a truncated read says so collapsed,
//! diffs keep four lines of context, the Ctrl+C hint goes with its window, a write counts
//! its lines, a tool card's time is the tool's own, Ctrl+T says what it did, `@` ranks the
//! obvious file first.
//! (The idle theme watch is in `tui_themes`.)

use crate::tui_common;

use knightcode_testkit::ScriptedReply;

/// Types `filter` into the picker `command` opens (its title is `title`), then checks that
/// a single Escape closes it.
fn one_escape_closes(tui: &mut tui_common::Tui, command: &str, title: &str, typed: &str) {
    tui.submit(command);
    tui.wait_for_text(title);
    tui.send("zzz");
    tui.wait_for_text(typed);
    tui.send("\x1b");
    let screen = tui.wait_for(&format!("{command} to close on one escape"), |s| {
        !s.contains(title)
    });
    assert!(!screen.contains(typed), "{command}: {screen}");
}

#[test]
fn every_picker_closes_on_one_escape_with_a_filter_typed() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("An answer.")]);
    let mut tui = sandbox.spawn(&[], 110, 40);
    tui.wait_for_text("mock-model");
    // A session to list in /resume and a tree to search.
    tui.submit("hello");
    tui.wait_for_answer("An answer.");
    one_escape_closes(&mut tui, "/model", "Select Model", "No matching models");
    one_escape_closes(
        &mut tui,
        "/scoped-models",
        "Scoped Models",
        "No matching models",
    );
    one_escape_closes(&mut tui, "/resume", "Resume Session", "No sessions match");
    one_escape_closes(&mut tui, "/tree", "Session Tree", "Type to search: zzz");
    one_escape_closes(
        &mut tui,
        "/settings",
        "Esc to cancel",
        "No matching settings",
    );
    // The editor has the keys again.
    tui.send("typed after");
    tui.wait_for_text("typed after");
    tui.send("\x03");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_truncated_read_shows_its_limit_in_the_collapsed_card() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call("call_1", "read", r#"{"path":"big.txt"}"#),
        ScriptedReply::text("Read it."),
    ]);
    // 1,000 lines of 100 bytes: 512 fit in the 50 KB limit.
    let line = "x".repeat(99);
    let text: String = (0..1000).map(|_| format!("{line}\n")).collect();
    std::fs::write(sandbox.project.join("big.txt"), text).unwrap();
    let mut tui = sandbox.spawn(&[], 120, 40);
    tui.wait_for_text("mock-model");
    tui.submit("read big.txt");
    let screen = tui.wait_for_answer("Read it.");
    assert!(
        screen.contains("[Truncated: 512 lines shown (50.0KB limit)]"),
        "collapsed, the limit shows: {screen}"
    );
    assert!(screen.contains("more lines (ctrl+o to expand)"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn an_edit_diff_keeps_four_lines_of_context_and_elides_no_single_line() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call(
            "call_1",
            "edit",
            r#"{"path":"main.py","edits":[{"oldText":"print('one')","newText":"print('ONE')"}]}"#,
        ),
        ScriptedReply::text("Edited."),
    ]);
    std::fs::write(
        sandbox.project.join("main.py"),
        "def main():\n    print('one')\n    print('two')\n    print('three')\n\nmain()\n",
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 120, 40);
    tui.wait_for_text("mock-model");
    tui.submit("edit main.py");
    let screen = tui.wait_for_answer("Edited.");
    assert!(screen.contains("+2     print('ONE')"), "{screen}");
    // The file's last line is four lines after the change: it shows, not `...`.
    assert!(screen.contains(" 6 main()"), "{screen}");
    assert!(!screen.contains(" ..."), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn the_ctrl_c_hint_goes_when_its_window_has_passed() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("\x03");
    tui.wait_for_text("Press ctrl+c again to exit");
    // Nothing is typed: the hint leaves on its own once a second press would no longer
    // exit (1.2 s).
    tui.wait_for("the hint to go", |s| !s.contains("again to exit"));
    // So the next press is a first press again: it shows the hint, the one after exits.
    tui.send("\x03");
    tui.wait_for_text("Press ctrl+c again to exit");
    tui.send("\x03");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_thirty_line_write_counts_what_it_hides_and_the_total() {
    let content: String = (1..=30).map(|n| format!("line {n}\\n")).collect();
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call(
            "call_1",
            "write",
            format!(r#"{{"path":"notes.txt","content":"{content}"}}"#),
        ),
        ScriptedReply::text("Wrote it."),
    ]);
    let mut tui = sandbox.spawn(&[], 120, 40);
    tui.wait_for_text("mock-model");
    tui.submit("write notes");
    let screen = tui.wait_for_answer("Wrote it.");
    assert!(
        screen.contains("… 20 more lines, 30 total (ctrl+o to expand)"),
        "{screen}"
    );
    assert!(screen.contains("line 10"), "{screen}");
    assert!(!screen.contains("line 11"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// The seconds a duration on screen stands for: `40ms`, `1.2s`.
fn seconds(shown: &str) -> Option<f64> {
    if let Some(ms) = shown.strip_suffix("ms") {
        return ms.parse::<f64>().ok().map(|ms| ms / 1000.0);
    }
    shown.strip_suffix('s')?.parse().ok()
}

#[test]
fn a_tool_card_shows_the_time_the_tool_ran() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call("call_1", "bash", r#"{"command":"sleep 0.13; echo slept"}"#),
        ScriptedReply::text("Done sleeping."),
    ]);
    let mut tui = sandbox.spawn(&[], 120, 40);
    tui.wait_for_text("mock-model");
    tui.submit("sleep a little");
    let screen = tui.wait_for_answer("Done sleeping.");
    let time = screen
        .lines()
        .find_map(|line| {
            let (_, after) = line.split_once("sleep 0.13; echo slept · ")?;
            seconds(after.split_whitespace().next()?)
        })
        .unwrap_or_else(|| panic!("no time on the card: {screen}"));
    // The tool's own measure: at least the sleep, never `0ms`.
    assert!(time >= 0.13, "{time} s: {screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn ctrl_t_says_whether_thinking_blocks_show() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("\x14");
    tui.wait_for_text("Thinking blocks: hidden");
    tui.send("\x14");
    let screen = tui.wait_for_text("Thinking blocks: visible");
    // One status line, replaced, as pi does.
    assert!(!screen.contains("Thinking blocks: hidden"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn at_completion_ranks_the_obvious_file_first_and_skips_exports() {
    let sandbox = tui_common::sandbox(vec![]);
    for name in [
        "the_other.rs",
        "hide.txt",
        "hello.md",
        "knightcode-session-2026-12-04_abc.html",
    ] {
        std::fs::write(sandbox.project.join(name), "").unwrap();
    }
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("@he");
    let screen = tui.wait_for_text("hello.md");
    let rows: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("hello.md") || l.contains("the_other.rs") || l.contains("hide.txt"))
        .collect();
    assert!(rows.len() >= 3, "{screen}");
    assert!(rows[0].contains("hello.md"), "{screen}");
    assert!(rows[1].contains("the_other.rs"), "{screen}");
    assert!(rows[2].contains("hide.txt"), "{screen}");
    assert!(!screen.contains("knightcode-session-"), "{screen}");
    tui.send("\x1b");
    tui.wait_for("the list to close", |s| !s.contains("hello.md"));
    tui.send("\x03");
    tui.wait_for("the editor to empty", |s| !s.contains("@he"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

fn settings(sandbox: &tui_common::Sandbox) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(sandbox.agent.join("settings.json")).unwrap())
        .unwrap()
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn changelog_shows_the_shipped_changelog() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 110, 40);
    let screen = tui.wait_for_text("mock-model");
    // A first run shows no news, as pi; it records the version (below).
    assert!(!screen.contains("What's New"), "{screen}");
    tui.submit("/changelog");
    // The changelog can be taller than the screen: its start is read from the scrollback.
    tui.wait_for_output("What's New");
    tui.wait_for_output(&format!("[{VERSION}]"));
    let history = tui.history().join("\n");
    let news = history.rfind("What's New").expect(&history);
    assert!(
        history[news..].contains(&format!("[{VERSION}]")),
        "{history}"
    );
    assert!(!history.contains("not built yet"), "{history}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    // The session saves what it was given before it ends.
    assert_eq!(settings(&sandbox)["lastChangelogVersion"], VERSION);
}

#[test]
fn a_newer_version_shows_what_changed_since_the_one_last_run_once() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"lastChangelogVersion": "0.0.1"}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 110, 60);
    // The section may be longer than the screen: its heading is read from the scrollback.
    tui.wait_for_output("What's New");
    tui.wait_for_text("mock-model");
    let history = tui.history().join("\n");
    assert!(history.contains("What's New"), "{history}");
    assert!(history.contains(&format!("[{VERSION}]")), "{history}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    assert_eq!(settings(&sandbox)["lastChangelogVersion"], VERSION);

    // Seen: the next start is quiet.
    let mut tui = sandbox.spawn(&[], 110, 60);
    let screen = tui.wait_for_text("mock-model");
    assert!(!screen.contains("What's New"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    // `collapseChangelog`: one line instead.
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"lastChangelogVersion": "0.0.1", "collapseChangelog": true}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 110, 60);
    let screen = tui.wait_for_text(&format!(
        "Updated to v{VERSION}. Use /changelog to view full changelog."
    ));
    assert!(!screen.contains("What's New"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
