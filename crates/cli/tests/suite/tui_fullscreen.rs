//! The fullscreen mode (`--tui-mode fullscreen`, setting `tuiMode`) in a real
//! pseudo-terminal: the alternate screen with mouse reporting, the transcript scrolling in
//! its own viewport (page keys, the wheel), following the bottom while a reply streams,
//! suspending, resizing, and the main screen back on exit with the transcript printed.

use std::time::Duration;

use crate::tui_common;

use knightcode_testkit::Chunking;
use knightcode_testkit::ScriptedReply;
use vt100::MouseProtocolEncoding;
use vt100::MouseProtocolMode;

const PAGE_UP: &str = "\x1b[5~";
const PAGE_DOWN: &str = "\x1b[6~";
const WHEEL_UP: &str = "\x1b[<64;10;5M";
const WHEEL_DOWN: &str = "\x1b[<65;10;5M";

/// A reply of `n` numbered rows (`row 001` …) in a code block, one screen line each.
pub(crate) fn numbered_rows(n: usize) -> String {
    numbered("row", n)
}

pub(crate) fn numbered(word: &str, n: usize) -> String {
    let rows: Vec<String> = (1..=n).map(|i| format!("{word} {i:03}")).collect();
    format!("```\n{}\n```", rows.join("\n"))
}

/// Whether `row` is on screen as a line of its own (not inside another number).
pub(crate) fn shows(screen: &str, row: usize) -> bool {
    shows_numbered(screen, "row", row)
}

pub(crate) fn shows_numbered(screen: &str, word: &str, row: usize) -> bool {
    let needle = format!("{word} {row:03}");
    screen.lines().any(|line| line.trim() == needle)
}

fn assert_fullscreen_layout(tui: &tui_common::Tui, rows: usize) {
    let screen = tui.rows();
    assert_eq!(screen.len(), rows);
    // The footer sits on the last row, the editor above it, whatever the transcript holds.
    assert!(
        screen[rows - 1].contains("mock-model"),
        "footer on the last row:\n{}",
        screen.join("\n")
    );
}

#[test]
fn the_flag_takes_the_alternate_screen_and_quitting_gives_the_main_screen_back() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Hello from the fullscreen mode.")]);
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 100, 24);
    tui.wait_for_text("mock-model");
    assert!(tui.alternate_screen());
    assert_ne!(tui.mouse_reporting().0, MouseProtocolMode::None);
    assert_eq!(tui.mouse_reporting().1, MouseProtocolEncoding::Sgr);
    assert!(
        !tui.screen().contains("not available yet"),
        "{}",
        tui.screen()
    );
    assert_fullscreen_layout(&tui, 24);
    tui.submit("say hello");
    tui.wait_for_text("Hello from the fullscreen mode.");
    assert_fullscreen_layout(&tui, 24);
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    assert!(!tui.alternate_screen(), "the main screen is back");
    assert_eq!(tui.mouse_reporting().0, MouseProtocolMode::None);
    // `fullscreenExitOutput` is `transcript` by default: the conversation is printed on
    // the main screen, then how to come back to it.
    let history = tui.history().join("\n");
    assert!(history.contains("say hello"), "{history}");
    assert!(
        history.contains("Hello from the fullscreen mode."),
        "{history}"
    );
    assert!(
        history.contains("Resume this session with: knightcode --session"),
        "{history}"
    );
}

#[test]
fn the_setting_chooses_fullscreen_and_the_flag_overrides_it() {
    let sandbox = tui_common::sandbox(Vec::new());
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"tuiMode": "fullscreen", "fullscreenExitOutput": "resume-hint"}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 100, 24);
    tui.wait_for_text("mock-model");
    assert!(tui.alternate_screen());
    assert!(
        !tui.screen().contains("not available yet"),
        "{}",
        tui.screen()
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    assert!(!tui.alternate_screen());
    // `resume-hint`: nothing of the session is printed on the main screen.
    let history = tui.history().join("\n");
    assert!(!history.contains("mock-model"), "{history}");

    let mut tui = sandbox.spawn(&["--tui-mode", "regular"], 100, 24);
    tui.wait_for_text("mock-model");
    assert!(!tui.alternate_screen());
    assert_eq!(tui.mouse_reporting().0, MouseProtocolMode::None);
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn page_keys_scroll_a_long_transcript_and_a_resize_reflows_it() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(numbered_rows(100))]);
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 80, 24);
    tui.wait_for_text("mock-model");
    tui.submit("count to a hundred");
    let screen = tui.wait_for("the last row", |s| shows(s, 100));
    assert!(!shows(&screen, 1), "{screen}");
    for _ in 0..10 {
        tui.send(PAGE_UP);
    }
    let screen = tui.wait_for("the first row", |s| shows(s, 1));
    assert!(!shows(&screen, 100), "{screen}");
    assert!(screen.contains("more lines below"), "{screen}");
    assert_fullscreen_layout(&tui, 24);
    // One page down moves by a page less one line: the row at the bottom is now on top.
    tui.send(PAGE_DOWN);
    tui.wait_for("a page further", |s| !shows(s, 1) && shows(s, 20));
    for _ in 0..10 {
        tui.send(PAGE_DOWN);
    }
    let screen = tui.wait_for("the bottom again", |s| shows(s, 100));
    assert!(!screen.contains("more lines below"), "{screen}");

    // A narrower, shorter terminal: laid out again, the editor and footer still at the
    // bottom and the newest lines above them.
    tui.resize(60, 16);
    tui.wait_for("the resized frame", |s| shows(s, 100) && !shows(s, 90));
    assert_fullscreen_layout(&tui, 16);
    // `/hotkeys` lists the scrolling keys in this mode.
    tui.submit("/hotkeys");
    // (The group's heading is above the rows in view: it has the search and prompt keys.)
    let screen = tui.wait_for_text("Scroll viewport to bottom");
    assert!(screen.contains("Scroll viewport to top"), "{screen}");
    assert!(screen.contains("Search the transcript"), "{screen}");
    assert!(screen.contains("Jump to previous prompt"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn the_mouse_wheel_scrolls_the_transcript() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(numbered_rows(60))]);
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 80, 24);
    tui.wait_for_text("mock-model");
    tui.submit("count to sixty");
    tui.wait_for("the last row", |s| shows(s, 60));
    // Three lines a notch (`fullscreenWheelScrollLines: auto`).
    tui.send(WHEEL_UP);
    tui.send(WHEEL_UP);
    let screen = tui.wait_for("scrolled up", |s| s.contains("6 more lines below"));
    assert!(!shows(&screen, 60), "{screen}");
    for _ in 0..30 {
        tui.send(WHEEL_UP);
    }
    tui.wait_for("the first row", |s| shows(s, 1));
    for _ in 0..40 {
        tui.send(WHEEL_DOWN);
    }
    let screen = tui.wait_for("the bottom again", |s| shows(s, 60));
    assert!(!screen.contains("below"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn streaming_follows_the_bottom_unless_scrolled_up_then_says_new_output_is_below() {
    let slow = |text: String| {
        ScriptedReply::text(text)
            .with_chunking(Chunking::chars(8).with_interval(Duration::from_millis(25)))
    };
    let sandbox = tui_common::sandbox(vec![slow(numbered_rows(50)), slow(numbered("line", 100))]);
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 80, 24);
    tui.wait_for_text("mock-model");
    tui.submit("count slowly");
    // While it streams, the newest row is always in view.
    for row in [20, 30, 40] {
        let screen = tui.wait_for("a streamed row", |s| shows(s, row));
        assert!(!shows(&screen, 1), "the top scrolled away: {screen}");
    }
    tui.wait_for("the end of the first reply", |s| {
        shows(s, 50) && !s.contains("esc to interrupt")
    });

    tui.submit("count again");
    tui.wait_for("the second reply under way", |s| {
        shows_numbered(s, "line", 30)
    });
    tui.send(PAGE_UP);
    let screen = tui.wait_for("new output below", |s| s.contains("new output below"));
    assert!(!shows_numbered(&screen, "line", 100), "{screen}");
    let screen = tui.wait_for("the reply done", |s| !s.contains("esc to interrupt"));
    assert!(
        !shows_numbered(&screen, "line", 100),
        "held still while scrolled up: {screen}"
    );
    // `end` on an empty editor follows the bottom again.
    tui.send("\x1b[F");
    let screen = tui.wait_for("the bottom", |s| shows_numbered(s, "line", 100));
    assert!(!screen.contains("below"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn suspending_gives_the_main_screen_back_and_resuming_takes_the_alternate_one_again() {
    let sandbox = tui_common::sandbox(Vec::new());
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 100, 24);
    tui.wait_for_text("mock-model");
    let before = tui.output().matches("\x1b[?1049l").count();
    // Ctrl+Z: the terminal is restored before the stop (the test's terminal has no job
    // control, so the process goes on at once) and taken again after it.
    tui.send("\x1a");
    let deadline = std::time::Instant::now() + tui_common::WATCHDOG;
    loop {
        let output = tui.output();
        let left = output.rfind("\x1b[?1049l");
        let back = output.rfind("\x1b[?1049h");
        if output.matches("\x1b[?1049l").count() > before && back > left {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no suspend and resume"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    tui.wait_for_text("mock-model");
    assert!(tui.alternate_screen());
    assert_fullscreen_layout(&tui, 24);
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
