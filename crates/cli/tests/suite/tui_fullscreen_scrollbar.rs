//! The fullscreen transcript's scrollbar (`fullscreenScrollbar`) in a real
//! pseudo-terminal: the thumb's grey cells in the last column, when they show, and the
//! column the transcript gives up for them.

use crate::tui_common;

use super::tui_fullscreen::numbered_rows;
use super::tui_fullscreen::shows;

use knightcode_testkit::ScriptedReply;

const PAGE_UP: &str = "\x1b[5~";
const HOME: &str = "\x1b[H";
const COLS: u16 = 80;

/// The rows whose last cell is the thumb's grey.
fn thumb_rows(screen: &vt100::Screen) -> Vec<u16> {
    let (rows, cols) = screen.size();
    (0..rows)
        .filter(|&row| {
            screen
                .cell(row, cols - 1)
                .is_some_and(|cell| cell.bgcolor() == vt100::Color::Idx(8))
        })
        .collect()
}

/// How many `q`s the first row of the long prompt's card holds: the transcript's width
/// less its padding.
fn prompt_row_width(screen: &str) -> Option<usize> {
    screen
        .lines()
        .find(|line| line.contains("qqq"))
        .map(|line| line.trim().len())
}

fn spawn(sandbox: &tui_common::Sandbox, setting: Option<&str>) -> tui_common::Tui {
    if let Some(value) = setting {
        std::fs::write(
            sandbox.agent.join("settings.json"),
            format!(r#"{{"fullscreenScrollbar": "{value}"}}"#),
        )
        .unwrap();
    }
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], COLS, 24);
    tui.wait_for_text("mock-model");
    tui.submit(&"q".repeat(100));
    tui.wait_for("the last row, the run over", |s| {
        shows(s, 60) && !s.contains("esc to interrupt")
    });
    tui
}

#[test]
fn auto_shows_the_thumb_for_a_moment_after_each_scroll() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(numbered_rows(60))]);
    let mut tui = spawn(&sandbox, None);
    // Following the output is no scroll: no bar.
    tui.wait_for_cells("no thumb while following", |s| thumb_rows(s).is_empty());
    tui.send(PAGE_UP);
    tui.wait_for_cells("the thumb after a page up", |s| {
        let rows = thumb_rows(s);
        rows.len() >= 2 && rows[0] > 0
    });
    // It goes a second later; the view stays scrolled.
    tui.wait_for_cells("the thumb gone", |s| thumb_rows(s).is_empty());
    assert!(tui.screen().contains("more lines below"));
    tui.send(HOME);
    tui.wait_for_cells("the thumb at the top", |s| {
        thumb_rows(s).first() == Some(&0)
    });
    // Over the transcript's last column: the prompt is laid out full width.
    let screen = tui.wait_for("the prompt at the top", |s| s.contains("qqq"));
    assert_eq!(
        prompt_row_width(&screen),
        Some(usize::from(COLS) - 2),
        "{screen}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn always_keeps_a_column_of_its_own_and_hidden_never_shows() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(numbered_rows(60))]);
    let mut tui = spawn(&sandbox, Some("always"));
    // At the bottom without a scroll, the thumb is at the bottom of the track.
    tui.wait_for_cells("the thumb at the bottom", |s| {
        let rows = thumb_rows(s);
        rows.len() >= 2 && rows[0] > 0
    });
    let screen = tui.screen();
    assert!(
        !screen.contains("fullscreenScrollbar"),
        "no notice: {screen}"
    );
    tui.send(HOME);
    tui.wait_for_cells("the thumb at the top", |s| {
        thumb_rows(s).first() == Some(&0)
    });
    // The transcript is laid out a column narrower.
    let screen = tui.wait_for("the prompt at the top", |s| s.contains("qqq"));
    assert_eq!(
        prompt_row_width(&screen),
        Some(usize::from(COLS) - 3),
        "{screen}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(numbered_rows(60))]);
    let mut tui = spawn(&sandbox, Some("hidden"));
    tui.send(PAGE_UP);
    tui.wait_for("scrolled up", |s| s.contains("more lines below"));
    tui.wait_for_cells("the scrolled frame", |s| {
        s.contents().contains("more lines below")
    });
    tui.wait_for_cells("no thumb", |s| thumb_rows(s).is_empty());
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
