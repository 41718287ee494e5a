//! The fullscreen transcript's scrollbar (`fullscreenScrollbar`) in a real
//! pseudo-terminal: the thumb's grey cells in the last column, when they show, the column
//! the transcript gives up for them, and clicks and drags on it.

use crate::tui_common;

use super::tui_fullscreen::numbered_rows;
use super::tui_fullscreen::shows;
use super::tui_fullscreen_select::drag;
use super::tui_fullscreen_select::press;
use super::tui_fullscreen_select::release;

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

/// Whether any cell but the editor's cursor (a reversed space) is in reverse video: a
/// selection's highlight.
fn selection_shown(screen: &vt100::Screen) -> bool {
    tui_common::reversed(screen)
        .iter()
        .any(|row| !row.trim().is_empty())
}

#[test]
fn clicking_the_track_jumps_and_dragging_the_thumb_scrolls_without_selecting() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(numbered_rows(60))]);
    let mut tui = spawn(&sandbox, None);
    let col = usize::from(COLS) - 1;
    // The `auto` bar is not showing, but its column answers: a click at the top of the
    // track brings the thumb there, and the view to the top.
    tui.send(&format!("{}{}", press(col, 0), release(col, 0)));
    let screen = tui.wait_for("the top of the transcript", |s| {
        s.contains("qqq") && s.contains("more lines below")
    });
    assert!(!shows(&screen, 60), "{screen}");
    tui.wait_for_cells("the thumb at the top", |s| {
        thumb_rows(s).first() == Some(&0)
    });
    // Dragging the thumb by its top row: it follows the mouse, past the track's end to
    // the bottom, where the view follows the output again.
    tui.send(&format!("{}{}", press(col, 0), drag(col, 4)));
    let screen = tui.wait_for("scrolled by the drag", |s| !s.contains("qqq"));
    assert!(screen.contains("more lines below"), "{screen}");
    tui.send(&drag(col, 30));
    tui.wait_for("the bottom", |s| {
        shows(s, 60) && !s.contains("more lines below")
    });
    tui.send(&release(col, 30));
    // A click on the track's middle, away from the thumb: the view goes to the middle.
    tui.send(&format!("{}{}", press(col, 8), release(col, 8)));
    let screen = tui.wait_for("the middle", |s| s.contains("more lines below"));
    assert!(!screen.contains("qqq") && !shows(&screen, 60), "{screen}");
    // None of it selected text or copied anything.
    tui.wait_for_cells("no selection", |s| !selection_shown(s));
    assert!(!tui.output().contains("\x1b]52;"), "nothing copied");
    // Elsewhere a press still selects.
    let (row, start) = tui
        .rows()
        .iter()
        .enumerate()
        .find_map(|(row, line)| line.find("row ").map(|col| (row, col)))
        .expect("a numbered row in view");
    tui.send(&format!(
        "{}{}{}",
        press(start, row),
        drag(start + 5, row),
        release(start + 5, row)
    ));
    tui.wait_for_output("\x1b]52;c;");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
