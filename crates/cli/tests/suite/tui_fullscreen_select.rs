//! The fullscreen mode's own selection, prompt jumps, scrollbar and search, in a real
//! pseudo-terminal: SGR mouse reports (press, drag, release) and keys in, the screen's
//! highlight, the OSC 52 sequence written and the notices out.

use base64::Engine as _;

use crate::tui_common;
use crate::tui_common::reversed;

use super::tui_fullscreen::numbered_rows;
use super::tui_fullscreen::shows;

use knightcode_testkit::ScriptedReply;

/// SGR mouse reports of the left button at a 0-based screen cell.
pub(crate) fn press(col: usize, row: usize) -> String {
    format!("\x1b[<0;{};{}M", col + 1, row + 1)
}

pub(crate) fn drag(col: usize, row: usize) -> String {
    format!("\x1b[<32;{};{}M", col + 1, row + 1)
}

pub(crate) fn release(col: usize, row: usize) -> String {
    format!("\x1b[<0;{};{}m", col + 1, row + 1)
}

fn click(col: usize, row: usize) -> String {
    format!("{}{}", press(col, row), release(col, row))
}

/// Where `text` is on the screen: row and column (the rows are ASCII here).
fn at(tui: &tui_common::Tui, text: &str) -> (usize, usize) {
    let rows = tui.rows();
    rows.iter()
        .enumerate()
        .find_map(|(row, line)| line.find(text).map(|col| (row, col)))
        .unwrap_or_else(|| panic!("{text:?} is not on screen:\n{}", rows.join("\n")))
}

/// The highlighted text, each row trimmed (the editor's cursor, a reversed space, is
/// left out).
fn highlighted(screen: &vt100::Screen) -> Vec<String> {
    reversed(screen)
        .iter()
        .map(|row| row.trim().to_owned())
        .filter(|row| !row.is_empty())
        .collect()
}

fn osc52(text: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    format!("\x1b]52;c;{encoded}\x07")
}

fn spawn_with_rows(sandbox: &tui_common::Sandbox, rows: usize, last: usize) -> tui_common::Tui {
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 80, 24);
    tui.wait_for_text("mock-model");
    tui.submit(&format!("count to {rows}"));
    tui.wait_for("the last row", |s| shows(s, last));
    tui
}

#[test]
fn dragging_selects_highlights_and_copies_the_text_with_osc52() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(numbered_rows(60))]);
    let mut tui = spawn_with_rows(&sandbox, 60, 60);
    let (first_row, first_col) = at(&tui, "row 050");
    let (last_row, last_col) = at(&tui, "row 052");
    let end = last_col + "row 052".len() - 1;
    tui.send(&format!(
        "{}{}{}",
        press(first_col, first_row),
        drag(first_col + 3, first_row + 1),
        drag(end, last_row)
    ));
    tui.wait_for_cells("the selection highlighted", |s| {
        highlighted(s) == ["row 050", "row 051", "row 052"]
    });
    // Nothing is copied before the button comes up.
    assert!(!tui.output().contains("\x1b]52;"));
    let rows = tui.rows();
    let expected = format!(
        "row 050\n{}\n{}",
        rows[first_row + 1].trim_end(),
        rows[last_row][..=end].trim_end()
    );
    tui.send(&release(end, last_row));
    tui.wait_for_output(&osc52(&expected));
    let count = expected.chars().count();
    tui.wait_for_text(&format!("Copied {count} characters to the clipboard."));
    // The highlight stays until escape (or a click) clears it.
    tui.wait_for_cells("the selection kept", |s| {
        highlighted(s) == ["row 050", "row 051", "row 052"]
    });
    tui.send("\x1b");
    tui.wait_for_cells("the highlight cleared", |s| highlighted(s).is_empty());

    // A drag onto the top row scrolls up a line a report, the selection growing with it.
    let (row, col) = at(&tui, "row 051");
    let mut gesture = press(col, row);
    for _ in 0..row + 4 {
        gesture.push_str(&drag(col, 0));
    }
    tui.send(&gesture);
    let screen = tui.wait_for("scrolled up by the drag", |s| {
        s.contains("more lines below")
    });
    assert!(!shows(&screen, 60), "{screen}");
    tui.wait_for_cells("the selection grown upwards", |s| highlighted(s).len() > 3);
    tui.send(&release(col, 0));
    tui.wait_for_output("\x1b]52;c;");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn without_copy_on_select_ctrl_x_copies_and_clicks_pick_a_word_or_a_line() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(numbered_rows(30))]);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"fullscreenCopyOnSelect": false}"#,
    )
    .unwrap();
    let mut tui = spawn_with_rows(&sandbox, 30, 30);
    // A double click selects the word under it.
    let (row, col) = at(&tui, "row 020");
    tui.send(&format!("{}{}", click(col + 5, row), click(col + 5, row)));
    tui.wait_for_cells("the word highlighted", |s| highlighted(s) == ["020"]);
    tui.send("\x18");
    tui.wait_for_output(&osc52("020"));
    tui.wait_for_text("Copied 3 characters to the clipboard.");
    assert_eq!(tui.output().matches("\x1b]52;").count(), 1, "copied once");

    // A triple click selects the line; a click elsewhere clears it.
    let (row, col) = at(&tui, "row 025");
    let line = tui.rows()[row].trim().to_owned();
    tui.send(&click(col, row).repeat(3));
    tui.wait_for_cells("the line highlighted", |s| highlighted(s) == [line.clone()]);
    tui.send(&click(col, row.saturating_sub(2)));
    tui.wait_for_cells("the highlight cleared", |s| highlighted(s).is_empty());
    assert_eq!(
        tui.output().matches("\x1b]52;").count(),
        1,
        "no copy on release"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_line_the_screen_wrapped_is_copied_as_one_line() {
    let paragraph = "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo \
                     lima mike november oscar papa quebec";
    let reply = format!("{paragraph}\n\nsecond paragraph");
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(reply)]);
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 80, 24);
    tui.wait_for_text("mock-model");
    tui.submit("wrap it");
    tui.wait_for("the reply, the run over", |s| {
        s.contains("second paragraph") && !s.contains("esc to interrupt")
    });
    let (first_row, first_col) = at(&tui, "alpha");
    let (last_row, last_col) = at(&tui, "quebec");
    assert_eq!(last_row, first_row + 1, "wrapped onto a second row");
    let (second_row, second_col) = at(&tui, "second paragraph");
    let end = second_col + "second paragraph".len() - 1;
    tui.send(&format!(
        "{}{}{}{}",
        press(first_col, first_row),
        drag(last_col, last_row),
        drag(end, second_row),
        release(end, second_row)
    ));
    // One line for the wrapped paragraph; the rows after it as they are.
    let rows = tui.rows();
    let mut expected = paragraph.to_owned();
    for row in &rows[last_row + 1..second_row] {
        expected.push('\n');
        expected.push_str(row.trim_end());
    }
    expected.push('\n');
    expected.push_str(rows[second_row][..=end].trim_end());
    assert!(
        expected.starts_with(&format!("{paragraph}\n\n")) && expected.ends_with("paragraph"),
        "{expected:?}"
    );
    tui.wait_for_output(&osc52(&expected));
    assert!(
        tui.screen().contains("quebec"),
        "the rows on screen carry no mark"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
