use super::support::*;
use crate::component::Component;
use crate::editor::EditorOutcome::{Handled, Ignored, Submit};
use crate::keybindings::{KeyBinding, Keybindings};
use crate::keys::{InputEvent, Key, KeyCode, KeyKind, Modifiers};

const LEFT: &[u8] = b"\x1b[D";
const RIGHT: &[u8] = b"\x1b[C";
const UP: &[u8] = b"\x1b[A";
const DOWN: &[u8] = b"\x1b[B";
const UNDO: &[u8] = b"\x1f";

#[test]
fn typing_inserts_at_the_cursor() {
    let mut e = editor();
    type_text(&mut e, "helo");
    press(&mut e, LEFT);
    type_text(&mut e, "l");
    assert_eq!(at_cursor(&e), "hell|o");
    assert_eq!(e.text(), "hello");
    assert!(!e.is_empty());
}

#[test]
fn shifted_and_unicode_characters_are_typed() {
    let mut e = editor();
    press(&mut e, b"H\x1b[105:73;2u\x1b[97;2u");
    type_text(&mut e, " 漢字 🙂 é");
    assert_eq!(e.text(), "HIA 漢字 🙂 é");
}

#[test]
fn keys_with_ctrl_or_alt_that_do_nothing_are_ignored() {
    let mut e = with_text("x");
    assert_eq!(press(&mut e, b"\x1bz"), Ignored);
    assert_eq!(press(&mut e, b"\x1b[107;9u"), Ignored);
    assert_eq!(press(&mut e, b"\x1bOP"), Ignored);
    // Ctrl+C and Escape belong to the app.
    assert_eq!(press(&mut e, b"\x03"), Ignored);
    assert_eq!(press(&mut e, b"\x1b"), Ignored);
    assert_eq!(e.text(), "x");
}

#[test]
fn key_releases_are_ignored() {
    let mut e = editor();
    let mut key = Key::plain(KeyCode::Char('a'));
    key.kind = KeyKind::Release;
    assert_eq!(e.handle_key(&key, &Keybindings::defaults()), Ignored);
    assert!(e.is_empty());
    assert_eq!(press(&mut e, b"\x1b[97;1:2u"), Handled);
    assert_eq!(e.text(), "a");
}

#[test]
fn left_and_right_move_by_grapheme_and_across_lines() {
    let mut e = with_text("ab\ne\u{301}🙂漢👨‍👩‍👧");
    assert_eq!(at_cursor(&e), "ab\ne\u{301}🙂漢👨‍👩‍👧|");
    press(&mut e, LEFT);
    assert_eq!(at_cursor(&e), "ab\ne\u{301}🙂漢|👨‍👩‍👧");
    press(&mut e, LEFT);
    press(&mut e, LEFT);
    assert_eq!(at_cursor(&e), "ab\ne\u{301}|🙂漢👨‍👩‍👧");
    press(&mut e, LEFT);
    press(&mut e, LEFT);
    assert_eq!(at_cursor(&e), "ab|\ne\u{301}🙂漢👨‍👩‍👧");
    press(&mut e, RIGHT);
    press(&mut e, RIGHT);
    assert_eq!(at_cursor(&e), "ab\ne\u{301}|🙂漢👨‍👩‍👧");
    // Emacs keys too.
    press(&mut e, b"\x02\x02\x06");
    assert_eq!(at_cursor(&e), "ab\n|e\u{301}🙂漢👨‍👩‍👧");
}

#[test]
fn line_start_and_end() {
    let mut e = with_text("one\ntwo three");
    press(&mut e, b"\x01");
    assert_eq!(at_cursor(&e), "one\n|two three");
    press(&mut e, b"\x05");
    assert_eq!(at_cursor(&e), "one\ntwo three|");
    press(&mut e, b"\x1b[H");
    assert_eq!(at_cursor(&e), "one\n|two three");
    press(&mut e, b"\x1b[F");
    assert_eq!(at_cursor(&e), "one\ntwo three|");
}

#[test]
fn word_motions_stop_at_punctuation_runs() {
    let mut e = with_text("foo.bar  baz(qux)");
    let mut stops = Vec::new();
    for _ in 0..7 {
        press(&mut e, b"\x1bb");
        stops.push(e.cursor().1);
    }
    assert_eq!(stops, vec![16, 13, 12, 9, 4, 3, 0]);
    let mut stops = Vec::new();
    for _ in 0..7 {
        press(&mut e, b"\x1bf");
        stops.push(e.cursor().1);
    }
    assert_eq!(stops, vec![3, 4, 7, 12, 13, 16, 17]);
    // Ctrl+arrows do the same; at a line edge they cross to the neighbour line.
    let mut e = with_text("a\nb");
    press(&mut e, b"\x1b[1;5D\x1b[1;5D");
    assert_eq!(at_cursor(&e), "a|\nb");
    press(&mut e, b"\x1b[1;5C");
    assert_eq!(at_cursor(&e), "a\n|b");
}

#[test]
fn backspace_and_delete() {
    let mut e = with_text("a🙂b\nc");
    press(&mut e, b"\x7f\x7f");
    assert_eq!(at_cursor(&e), "a🙂b|");
    press(&mut e, LEFT);
    press(&mut e, b"\x7f");
    assert_eq!(at_cursor(&e), "a|b");
    press(&mut e, b"\x1b[3~");
    assert_eq!(at_cursor(&e), "a|");
    e.set_text("x\ny");
    press(&mut e, UP);
    press(&mut e, b"\x05\x04");
    assert_eq!(at_cursor(&e), "x|y");
    // Shift+Backspace / Shift+Delete act like the plain keys.
    press(&mut e, b"\x1b[127;2u");
    assert_eq!(at_cursor(&e), "|y");
    press(&mut e, b"\x1b[3;2~");
    assert_eq!(e.text(), "");
    // At the edges they do nothing but are still the editor's keys.
    assert_eq!(press(&mut e, b"\x7f"), Handled);
    assert_eq!(press(&mut e, b"\x1b[3~"), Handled);
}

#[test]
fn newline_keys() {
    let mut e = with_text("ab");
    press(&mut e, LEFT);
    // Shift+Enter (kitty), Ctrl+J, modifyOtherKeys Shift+Enter.
    press(&mut e, b"\x1b[13;2u");
    press(&mut e, b"\n");
    press(&mut e, b"\x1b[27;2;13~");
    assert_eq!(at_cursor(&e), "a\n\n\n|b");
}

#[test]
fn alt_enter_inserts_a_newline_when_the_app_leaves_it() {
    let mut e = with_text("a");
    assert_eq!(press(&mut e, b"\x1b\r"), Handled);
    assert_eq!(e.text(), "a\n");
}

#[test]
fn enter_submits_trimmed_text_and_clears() {
    let mut e = with_text("  hello\nworld  ");
    assert_eq!(press(&mut e, b"\r"), Submit("hello\nworld".into()));
    assert!(e.is_empty());
    assert_eq!(e.cursor(), (0, 0));
    // Undo history does not survive a submit.
    press(&mut e, UNDO);
    assert!(e.is_empty());
    assert_eq!(press(&mut e, b"\r"), Submit(String::new()));
}

#[test]
fn trailing_backslash_enter_is_a_newline() {
    let mut e = with_text("first\\");
    assert_eq!(press(&mut e, b"\r"), Handled);
    assert_eq!(at_cursor(&e), "first\n|");
    // Only directly before the cursor.
    let mut e = with_text("a\\b");
    assert_eq!(press(&mut e, b"\r"), Submit("a\\b".into()));
}

#[test]
fn submit_disabled() {
    let mut e = with_text("x");
    e.set_submit_enabled(false);
    assert_eq!(press(&mut e, b"\r"), Handled);
    assert_eq!(e.text(), "x");
    e.set_submit_enabled(true);
    assert_eq!(press(&mut e, b"\r"), Submit("x".into()));
}

#[test]
fn user_bindings_decide_what_keys_do() {
    let mut bindings = Keybindings::defaults();
    bindings.set(
        "tui.input.submit",
        vec![KeyBinding::parse("shift+enter").unwrap()],
    );
    bindings.set(
        "tui.input.newLine",
        vec![KeyBinding::parse("enter").unwrap()],
    );
    bindings.set(
        "tui.editor.cursorLeft",
        vec![KeyBinding::parse("ctrl+h").unwrap()],
    );
    let mut e = with_text("ab");
    assert_eq!(press_with(&mut e, b"\r", &bindings), Handled);
    assert_eq!(e.text(), "ab\n");
    // Ctrl+H as the kitty protocol sends it (a raw BS would also be Backspace).
    press_with(&mut e, b"\x1b[104;5u", &bindings);
    assert_eq!(at_cursor(&e), "ab|\n");
    // With submit on Shift+Enter, a trailing backslash before Enter submits.
    press_with(&mut e, b"\\", &bindings);
    assert_eq!(press_with(&mut e, b"\r", &bindings), Submit("ab".into()));
    let mut e = with_text("x");
    assert_eq!(
        press_with(&mut e, b"\x1b[13;2u", &bindings),
        Submit("x".into())
    );
    // Unbound keys are not the editor's any more.
    let mut bindings = Keybindings::defaults();
    bindings.set("tui.editor.deleteCharBackward", Vec::new());
    let mut e = with_text("x");
    assert_eq!(press_with(&mut e, b"\x7f", &bindings), Ignored);
    assert_eq!(e.text(), "x");
}

#[test]
fn kill_and_yank() {
    let mut e = with_text("one two three");
    press(&mut e, b"\x17");
    assert_eq!(at_cursor(&e), "one two |");
    press(&mut e, b"\x01\x1bd");
    assert_eq!(at_cursor(&e), "| two ");
    press(&mut e, b"\x05\x19");
    assert_eq!(at_cursor(&e), " two one|");
    // Yank-pop replaces what was just yanked with the kill before it.
    press(&mut e, b"\x1by");
    assert_eq!(at_cursor(&e), " two three|");
    press(&mut e, b"\x1by");
    assert_eq!(at_cursor(&e), " two one|");
    // Yank-pop only works right after a yank.
    press(&mut e, LEFT);
    press(&mut e, b"\x1by");
    assert_eq!(at_cursor(&e), " two on|e");
}

#[test]
fn consecutive_kills_accumulate() {
    let mut e = with_text("alpha beta gamma");
    press(&mut e, b"\x17\x1b\x7f");
    assert_eq!(e.text(), "alpha ");
    press(&mut e, b"\x19");
    assert_eq!(e.text(), "alpha beta gamma");
    // Forward kills append.
    let mut e = with_text("a b c");
    press(&mut e, b"\x01\x1bd\x1bd");
    assert_eq!(e.text(), " c");
    press(&mut e, b"\x05\x19");
    assert_eq!(e.text(), " ca b");
}

#[test]
fn kill_to_line_edges_and_across_lines() {
    let mut e = with_text("first\nsecond line");
    press(&mut e, b"\x1b[D\x1b[D\x1b[D\x1b[D");
    press(&mut e, b"\x0b");
    assert_eq!(at_cursor(&e), "first\nsecond |");
    press(&mut e, b"\x15");
    assert_eq!(at_cursor(&e), "first\n|");
    // At a line start Ctrl+U joins with the line above; the newline is killed too.
    press(&mut e, b"\x15");
    assert_eq!(at_cursor(&e), "first|");
    press(&mut e, b"\x19");
    assert_eq!(e.text(), "first\nsecond line");
    // At a line end Ctrl+K joins the next line.
    let mut e = with_text("a\nb");
    press(&mut e, UP);
    press(&mut e, b"\x05\x0b");
    assert_eq!(at_cursor(&e), "a|b");
}

#[test]
fn delete_word_at_line_edges_joins_lines() {
    let mut e = with_text("a\nb");
    press(&mut e, b"\x01\x17");
    assert_eq!(at_cursor(&e), "a|b");
    let mut e = with_text("a\nb");
    press(&mut e, UP);
    press(&mut e, b"\x05\x1bd");
    assert_eq!(at_cursor(&e), "a|b");
}

#[test]
fn undo_coalesces_typed_words() {
    let mut e = editor();
    type_text(&mut e, "hello world");
    press(&mut e, UNDO);
    assert_eq!(e.text(), "hello");
    press(&mut e, UNDO);
    assert_eq!(e.text(), "");
    press(&mut e, UNDO);
    assert_eq!(e.text(), "");
}

#[test]
fn undo_restores_deletions_pastes_and_set_text() {
    let mut e = editor();
    type_text(&mut e, "abc");
    press(&mut e, b"\x7f");
    e.handle_paste("XYZ\nmore");
    e.set_text("replaced");
    press(&mut e, UNDO);
    assert_eq!(e.text(), "abXYZ\nmore");
    press(&mut e, UNDO);
    assert_eq!(e.text(), "ab");
    press(&mut e, UNDO);
    assert_eq!(at_cursor(&e), "abc|");
    // Moving the cursor ends a typed run.
    let mut e = editor();
    type_text(&mut e, "ab");
    press(&mut e, LEFT);
    type_text(&mut e, "x");
    press(&mut e, UNDO);
    assert_eq!(e.text(), "ab");
}

#[test]
fn history_browsing_keeps_the_draft() {
    let mut e = editor();
    e.add_to_history("first");
    e.add_to_history("second\nprompt");
    e.add_to_history("second\nprompt");
    e.add_to_history("   ");
    type_text(&mut e, "draft");
    // Up on the first row goes to the line start first, then into history.
    press(&mut e, UP);
    assert_eq!(at_cursor(&e), "|draft");
    press(&mut e, UP);
    assert_eq!(at_cursor(&e), "second\nprompt|");
    // Inside a multi-line entry Up moves up a row first.
    press(&mut e, UP);
    assert_eq!(e.cursor().0, 0);
    press(&mut e, UP);
    assert_eq!(e.text(), "first");
    // There is nothing older.
    press(&mut e, UP);
    assert_eq!(e.text(), "first");
    press(&mut e, DOWN);
    assert_eq!(e.text(), "second\nprompt");
    press(&mut e, DOWN);
    assert_eq!(at_cursor(&e), "|draft");
    // Down on the last row without browsing goes to the line end.
    press(&mut e, DOWN);
    assert_eq!(at_cursor(&e), "draft|");
}

#[test]
fn up_in_an_empty_editor_recalls_the_newest_prompt() {
    let mut e = editor();
    e.add_to_history("one");
    e.add_to_history("two");
    press(&mut e, UP);
    assert_eq!(e.text(), "two");
    // Editing the recalled prompt ends browsing.
    type_text(&mut e, "!");
    press(&mut e, DOWN);
    assert_eq!(e.text(), "two!");
    // Undo goes back to before browsing started.
    press(&mut e, UNDO);
    press(&mut e, UNDO);
    assert!(e.is_empty());
}

#[test]
fn history_keeps_the_last_hundred() {
    let mut e = editor();
    for i in 0..150 {
        e.add_to_history(&format!("p{i}"));
    }
    for _ in 0..200 {
        press(&mut e, UP);
    }
    assert_eq!(e.text(), "p50");
}

#[test]
fn history_actions_when_bound() {
    let mut bindings = Keybindings::defaults();
    bindings.set(
        "tui.editor.historyPrevious",
        vec![KeyBinding::parse("ctrl+p").unwrap()],
    );
    bindings.set(
        "tui.editor.historyNext",
        vec![KeyBinding::parse("ctrl+n").unwrap()],
    );
    let mut e = with_text("draft\ntwo lines");
    e.add_to_history("old");
    press_with(&mut e, b"\x10", &bindings);
    assert_eq!(e.text(), "old");
    press_with(&mut e, b"\x0e", &bindings);
    assert_eq!(e.text(), "draft\ntwo lines");
}

#[test]
fn vertical_motion_keeps_the_column() {
    let mut e = with_text("long line here\nab\nanother long one");
    press(&mut e, b"\x01");
    press(&mut e, b"\x1b[C".repeat(10).as_slice());
    assert_eq!(e.cursor(), (2, 10));
    press(&mut e, UP);
    assert_eq!(e.cursor(), (1, 2));
    press(&mut e, UP);
    assert_eq!(e.cursor(), (0, 10));
    press(&mut e, DOWN);
    press(&mut e, DOWN);
    assert_eq!(e.cursor(), (2, 10));
}

#[test]
fn vertical_motion_uses_screen_columns_for_wide_characters() {
    let mut e = with_text("漢字漢字\nabcdefgh");
    press(&mut e, b"\x01\x1b[C\x1b[C\x1b[C");
    assert_eq!(at_cursor(&e), "漢字漢字\nabc|defgh");
    press(&mut e, UP);
    // Column 3 is inside the second wide character; the cursor goes to its start.
    assert_eq!(at_cursor(&e), "漢|字漢字\nabcdefgh");
    press(&mut e, b"\x1b[C");
    press(&mut e, DOWN);
    assert_eq!(at_cursor(&e), "漢字漢字\nabcd|efgh");
}

#[test]
fn vertical_motion_follows_wrapped_rows() {
    let mut e = with_text("aaaa bbbb cccc dddd");
    e.render(12);
    // Rows at width 11: "aaaa bbbb " / "cccc dddd".
    assert_eq!(e.cursor(), (0, 19));
    press(&mut e, UP);
    assert_eq!(e.cursor(), (0, 9));
    press(&mut e, DOWN);
    assert_eq!(e.cursor(), (0, 19));
    press(&mut e, b"\x01");
    press(&mut e, DOWN);
    assert_eq!(e.cursor(), (0, 10));
}

#[test]
fn page_up_and_down() {
    let text: Vec<String> = (0..20).map(|i| format!("line {i}")).collect();
    let mut e = with_text(&text.join("\n"));
    e.set_terminal_rows(20);
    press(&mut e, b"\x1b[5~");
    assert_eq!(e.cursor().0, 13);
    press(&mut e, b"\x1b[5~\x1b[5~\x1b[5~");
    assert_eq!(e.cursor().0, 0);
    press(&mut e, b"\x1b[6~");
    assert_eq!(e.cursor().0, 6);
}

#[test]
fn jump_to_character() {
    let mut e = with_text("find x here\nand x there");
    press(&mut e, b"\x1b[A\x01");
    press(&mut e, b"\x1dx");
    assert_eq!(e.cursor(), (0, 5));
    press(&mut e, b"\x1dx");
    assert_eq!(e.cursor(), (1, 4));
    press(&mut e, b"\x1b\x1df");
    assert_eq!(e.cursor(), (0, 0));
    // No match: the cursor stays.
    press(&mut e, b"\x1dQ");
    assert_eq!(e.cursor(), (0, 0));
    // Pressing the jump key again cancels; another key cancels and acts.
    press(&mut e, b"\x1d\x1dx");
    assert_eq!(e.text(), "xfind x here\nand x there");
    press(&mut e, b"\x1d\x05");
    assert_eq!(e.cursor(), (0, 12));
}

#[test]
fn set_text_insert_text_and_clear() {
    let mut e = editor();
    e.set_text("a\r\nb\tc");
    assert_eq!(at_cursor(&e), "a\nb    c|");
    press(&mut e, b"\x01");
    e.insert_text("x\ny");
    assert_eq!(at_cursor(&e), "a\nx\ny|b    c");
    press(&mut e, UNDO);
    assert_eq!(at_cursor(&e), "a\n|b    c");
    e.clear();
    assert!(e.is_empty());
    press(&mut e, UNDO);
    assert_eq!(e.text(), "a\nb    c");
}

#[test]
fn handle_input_submits_through_the_component_interface() {
    let mut e = with_text("hi");
    assert!(e.handle_input(&InputEvent::Key(Key::plain(KeyCode::Enter))));
    assert_eq!(e.take_submitted(), Some("hi".into()));
    assert_eq!(e.take_submitted(), None);
    assert!(e.handle_input(&InputEvent::Paste("pasted".into())));
    assert_eq!(e.text(), "pasted");
    assert!(!e.handle_input(&InputEvent::Other("\x1b[?1u".into())));
    assert!(!e.handle_input(&InputEvent::Key(Key::new(KeyCode::F(5), Modifiers::NONE))));
}
