//! The fullscreen transcript's search and prompt jumps in a real pseudo-terminal: keys in
//! (as a terminal with the kitty keyboard protocol or xterm's modifier encoding sends
//! them), the box, the matches' attributes and the rows in view out.

use crate::tui_common;

use super::tui_fullscreen::numbered;
use super::tui_fullscreen::shows;
use super::tui_fullscreen::shows_numbered;

use knightcode_testkit::ScriptedReply;

/// ctrl+shift+up and down, xterm's encoding (the prompt jumps on Linux and macOS).
const PREVIOUS_PROMPT: &str = "\x1b[1;6A";
const NEXT_PROMPT: &str = "\x1b[1;6B";
/// ctrl+shift+f, shift+enter and backspace as the kitty keyboard protocol sends them.
const SEARCH: &str = "\x1b[102;6u";
const SHIFT_ENTER: &str = "\x1b[13;2u";
const BACKSPACE: &str = "\x7f";
const PAGE_UP: &str = "\x1b[5~";

/// The screen's second row: where a prompt's text is once its card is at the top.
fn second_row(screen: &str) -> &str {
    screen.lines().nth(1).unwrap_or("")
}

/// The attributes of `word`'s first cell on the row that shows `row`: (bold and
/// reversed, underlined); `None` when no row shows both.
fn marks(screen: &vt100::Screen, row: &str, word: &str) -> Option<(bool, bool)> {
    let (rows, cols) = screen.size();
    (0..rows).find_map(|r| {
        let line: String = (0..cols)
            .map(|c| match screen.cell(r, c).map(vt100::Cell::contents) {
                Some(text) if !text.is_empty() => text.to_owned(),
                _ => " ".to_owned(),
            })
            .collect();
        if !line.contains(row) {
            return None;
        }
        let col = u16::try_from(line.find(word)?).ok()?;
        let cell = screen.cell(r, col)?;
        Some((cell.bold() && cell.inverse(), cell.underline()))
    })
}

const CURRENT: Option<(bool, bool)> = Some((true, false));
const OTHER: Option<(bool, bool)> = Some((false, true));
const PLAIN: Option<(bool, bool)> = Some((false, false));

#[test]
fn prompt_jumps_bring_the_previous_and_next_prompt_to_the_top() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text(numbered("alpha", 30)),
        ScriptedReply::text(numbered("beta", 30)),
        ScriptedReply::text(numbered("gamma", 30)),
    ]);
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 80, 24);
    tui.wait_for_text("mock-model");
    for (prompt, word) in [
        ("first question", "alpha"),
        ("second question", "beta"),
        ("third question", "gamma"),
    ] {
        tui.submit(prompt);
        tui.wait_for("the reply's last row, the run over", |s| {
            shows_numbered(s, word, 30) && !s.contains("esc to interrupt")
        });
    }
    tui.send(PREVIOUS_PROMPT);
    let screen = tui.wait_for("the third prompt on top", |s| {
        second_row(s).contains("third question")
    });
    assert!(screen.contains("more lines below"), "{screen}");
    tui.send(PREVIOUS_PROMPT);
    tui.wait_for("the second prompt on top", |s| {
        second_row(s).contains("second question")
    });
    tui.send(PREVIOUS_PROMPT);
    tui.wait_for("the first prompt on top", |s| {
        second_row(s).contains("first question")
    });
    tui.send(NEXT_PROMPT);
    tui.wait_for("the second prompt on top again", |s| {
        second_row(s).contains("second question")
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn search_highlights_matches_moves_between_them_and_escape_leaves_the_view() {
    let rows: Vec<String> = (1..=60)
        .map(|i| {
            if i % 20 == 10 {
                format!("row {i:03} Needle")
            } else {
                format!("row {i:03}")
            }
        })
        .collect();
    let reply = format!("```\n{}\n```", rows.join("\n"));
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(reply)]);
    let mut tui = sandbox.spawn(&["--tui-mode", "fullscreen"], 80, 40);
    tui.wait_for_text("mock-model");
    tui.submit("count to sixty");
    let screen = tui.wait_for("the last row", |s| shows(s, 60));
    assert!(!screen.contains("row 010"), "{screen}");

    tui.send(SEARCH);
    tui.wait_for_text("Find in transcript");
    // Letters match whatever their case. The first match at or below the view's top is
    // picked (in bold reverse video), the others in view are underlined.
    tui.send("needle");
    tui.wait_for_text("2/3");
    tui.wait_for_cells("row 030 current, row 050 underlined", |s| {
        marks(s, "row 030", "Needle") == CURRENT && marks(s, "row 050", "Needle") == OTHER
    });
    tui.send("\r");
    tui.wait_for_text("3/3");
    // Past the last match the next is the first, brought into view a third of the way
    // down.
    tui.send("\r");
    // The whole view moved (a frame can arrive in more than one read).
    tui.wait_for("the first match in view", |s| {
        s.contains("1/3") && s.contains("row 010 Needle") && !shows(s, 60)
    });
    tui.wait_for_cells("row 010 current, row 030 underlined", |s| {
        marks(s, "row 010", "Needle") == CURRENT && marks(s, "row 030", "Needle") == OTHER
    });
    tui.send(SHIFT_ENTER);
    tui.wait_for("the last match again", |s| {
        s.contains("3/3") && s.contains("row 050 Needle")
    });
    tui.send("x");
    tui.wait_for_text("No matches");
    tui.wait_for_cells("nothing marked", |s| marks(s, "row 050", "Needle") == PLAIN);
    // With nothing picked, the query starts again from the view's top.
    tui.send(BACKSPACE);
    tui.wait_for_text("2/3");
    // The scrolling keys still scroll while the search is open.
    tui.send(PAGE_UP);
    tui.wait_for("a page up, the box still open", |s| {
        !s.contains("row 050 Needle") && s.contains("2/3")
    });
    // Escape closes the search and leaves the view where it is.
    tui.send("\x1b");
    let screen = tui.wait_for("the box gone", |s| !s.contains("2/3"));
    assert!(!screen.contains("Find in transcript"), "{screen}");
    assert!(
        screen.contains("more lines below"),
        "the view stayed: {screen}"
    );
    tui.wait_for_cells("no match marked", |s| {
        marks(s, "row 010", "Needle") == PLAIN
    });
    // The keys are the editor's again.
    tui.send("typed after");
    tui.wait_for_text("typed after");
    tui.send("\x15");
    tui.wait_for("the editor empty", |s| !s.contains("typed after"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
