use super::support::*;
use crate::editor::EditorOutcome::Submit;

fn lines(n: usize) -> String {
    (1..=n)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn small_pastes_are_inserted_as_text() {
    let mut e = with_text("ab");
    press(&mut e, b"\x1b[D");
    e.handle_paste("one\r\ntwo\rthree\tend");
    assert_eq!(at_cursor(&e), "aone\ntwo\nthree    end|b");
    // Ten lines are still inline.
    let mut e = editor();
    e.handle_paste(&lines(10));
    assert_eq!(e.text(), lines(10));
}

#[test]
fn control_characters_are_dropped() {
    let mut e = editor();
    e.handle_paste("a\x1b[31mb\x07c\u{7f}\u{85}d");
    assert_eq!(e.text(), "a[31mbcd");
}

#[test]
fn control_keys_re_encoded_by_the_terminal_are_decoded() {
    // tmux with extended keys sends Ctrl+J inside a paste as CSI 106;5u.
    let mut e = editor();
    e.handle_paste("one\x1b[106;5utwo\x1b[77;5u\x1b[1;5u");
    // Ctrl+M is a carriage return, which becomes a newline; other sequences lose the ESC.
    assert_eq!(e.text(), "one\ntwo\n[1;5u");
}

#[test]
fn more_than_ten_lines_collapse_into_a_marker() {
    let mut e = with_text("see ");
    e.handle_paste(&lines(11));
    assert_eq!(e.text(), "see [paste #1 +11 lines]");
    type_text(&mut e, " and ");
    e.handle_paste(&lines(12));
    assert_eq!(
        e.text(),
        "see [paste #1 +11 lines] and [paste #2 +12 lines]"
    );
    assert_eq!(
        e.expanded_text(),
        format!("see {} and {}", lines(11), lines(12))
    );
    assert_eq!(
        press(&mut e, b"\r"),
        Submit(format!("see {} and {}", lines(11), lines(12)))
    );
    // Numbering starts again after a submit.
    e.handle_paste(&lines(11));
    assert_eq!(e.text(), "[paste #1 +11 lines]");
}

#[test]
fn more_than_a_thousand_characters_collapse_into_a_marker() {
    let mut e = editor();
    let long = "x".repeat(1001);
    e.handle_paste(&long);
    assert_eq!(e.text(), "[paste #1 1001 chars]");
    assert_eq!(e.text_for_submit(), long);
    // Characters, not bytes.
    let mut e = editor();
    e.handle_paste(&"é".repeat(1000));
    assert_eq!(e.text(), "é".repeat(1000));
}

#[test]
fn a_marker_is_edited_as_one_unit() {
    let mut e = with_text("a");
    e.handle_paste(&lines(11));
    type_text(&mut e, "b");
    assert_eq!(e.text(), "a[paste #1 +11 lines]b");
    press(&mut e, b"\x1b[D\x1b[D");
    assert_eq!(e.cursor(), (0, 1));
    press(&mut e, b"\x1b[C");
    assert_eq!(e.cursor(), (0, 21));
    press(&mut e, b"\x7f");
    assert_eq!(e.text(), "ab");
    // Undo brings it back, still collapsed and still expandable.
    press(&mut e, b"\x1f");
    assert_eq!(e.text(), "a[paste #1 +11 lines]b");
    assert_eq!(e.text_for_submit(), format!("a{}b", lines(11)));
    // A word motion skips the whole marker.
    press(&mut e, b"\x01\x1bf");
    assert_eq!(e.cursor(), (0, 1));
    press(&mut e, b"\x1bf");
    assert_eq!(e.cursor(), (0, 21));
    press(&mut e, b"\x1b[3~");
    assert_eq!(e.text(), "a[paste #1 +11 lines]");
    press(&mut e, b"\x01\x1b[C\x1b[3~");
    assert_eq!(e.text(), "a");
}

#[test]
fn typed_marker_text_is_not_expanded() {
    let mut e = editor();
    type_text(&mut e, "[paste #1 +11 lines]");
    assert_eq!(e.text_for_submit(), "[paste #1 +11 lines]");
    // Nor is a marker whose paste is unknown.
    e.clear();
    e.handle_paste(&lines(11));
    type_text(&mut e, " [paste #7]");
    assert_eq!(e.text_for_submit(), format!("{} [paste #7]", lines(11)));
}

#[test]
fn a_path_pasted_after_a_word_gets_a_space() {
    let mut e = with_text("look at");
    e.handle_paste("/tmp/image.png");
    assert_eq!(e.text(), "look at /tmp/image.png");
    let mut e = with_text("look at ");
    e.handle_paste("~/x");
    assert_eq!(e.text(), "look at ~/x");
}

#[test]
fn an_empty_paste_changes_nothing() {
    let mut e = with_text("x");
    e.handle_paste("");
    press(&mut e, b"\x1f");
    assert_eq!(e.text(), "");
}

#[test]
fn a_marker_wider_than_the_editor_wraps_and_the_cursor_never_lands_inside() {
    use crate::component::Component;
    let mut e = with_text("ab");
    e.handle_paste(&lines(11));
    type_text(&mut e, " cd");
    assert_eq!(e.text(), "ab[paste #1 +11 lines] cd");
    let rendered = e.render(10);
    assert!(rendered.len() > 4, "{rendered:?}");
    let marker = 2..22;
    for key in [
        b"\x1b[A", b"\x1b[A", b"\x1b[A", b"\x1b[A", b"\x1b[B", b"\x1b[B", b"\x1b[B", b"\x1b[B",
    ] {
        press(&mut e, key);
        let col = e.cursor().1;
        assert!(
            !(marker.start + 1..marker.end).contains(&col),
            "cursor at {col}"
        );
        e.render(10);
    }
}

#[test]
fn take_for_submit_empties_the_editor_and_the_paste_store() {
    let mut e = with_text("x ");
    e.handle_paste(&lines(11));
    assert_eq!(e.take_for_submit(), format!("x {}", lines(11)));
    assert!(e.is_empty());
    e.handle_paste(&lines(11));
    assert_eq!(e.text(), "[paste #1 +11 lines]");
}
