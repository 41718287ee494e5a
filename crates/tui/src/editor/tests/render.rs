use super::support::*;
use crate::component::Component;
use crate::editor::CURSOR_MARKER;
use crate::style::{Color, Style};
use crate::width::visible_width;

const LEFT: &[u8] = b"\x1b[D";

/// Every rendered line is exactly `width` columns.
fn assert_width(lines: &[String], width: usize) {
    for line in lines {
        assert_eq!(visible_width(line), width, "{line:?}");
        assert!(!line.contains('\n'));
    }
}

#[test]
fn empty_editor() {
    let mut e = editor();
    let lines = e.render(20);
    assert_width(&lines, 20);
    insta::assert_snapshot!("empty", show(&lines));
}

#[test]
fn cursor_on_a_character_and_at_the_end() {
    let mut e = with_text("hello");
    insta::assert_snapshot!("cursor_at_end", show(&e.render(20)));
    press(&mut e, LEFT);
    press(&mut e, LEFT);
    insta::assert_snapshot!("cursor_inside", show(&e.render(20)));
}

#[test]
fn cursor_marker_precedes_the_cursor_cell_when_focused() {
    let mut e = with_text("ab");
    press(&mut e, LEFT);
    let lines = e.render(10);
    assert_eq!(lines[1], format!("a{CURSOR_MARKER}\x1b[7mb\x1b[0m        "));
    e.set_focused(false);
    assert!(!e.render(10).concat().contains(CURSOR_MARKER));
}

#[test]
fn long_lines_wrap_at_words() {
    let mut e = with_text("The quick brown fox jumps over the lazy dog\nsecond");
    let lines = e.render(16);
    assert_width(&lines, 16);
    insta::assert_snapshot!("word_wrap", show(&lines));
}

#[test]
fn long_words_are_broken() {
    let mut e = with_text("abcdefghijklmnopqrstuvwxyz end");
    let lines = e.render(10);
    assert_width(&lines, 10);
    insta::assert_snapshot!("long_word", show(&lines));
}

#[test]
fn wide_characters_wrap_by_columns() {
    let mut e = with_text("漢字かなカナ漢字かなカナ🙂ok");
    press(&mut e, b"\x01");
    press(&mut e, b"\x1b[C\x1b[C\x1b[C\x1b[C\x1b[C");
    let lines = e.render(12);
    assert_width(&lines, 12);
    insta::assert_snapshot!("wide_chars", show(&lines));
}

#[test]
fn row_that_fills_the_width_keeps_a_column_for_the_cursor() {
    let mut e = with_text("123456789");
    let lines = e.render(10);
    assert_width(&lines, 10);
    insta::assert_snapshot!("full_row", show(&lines));
    e.set_text("1234567890");
    let lines = e.render(10);
    assert_width(&lines, 10);
    insta::assert_snapshot!("full_row_wraps", show(&lines));
}

#[test]
fn padding() {
    let mut e = with_text("some text that wraps");
    e.set_padding_x(2);
    let lines = e.render(14);
    assert_width(&lines, 14);
    insta::assert_snapshot!("padding", show(&lines));
    // With padding the cursor may use the right padding at a full row.
    e.set_text("1234567890");
    let lines = e.render(14);
    assert_width(&lines, 14);
    insta::assert_snapshot!("padding_cursor_in_padding", show(&lines));
}

#[test]
fn tall_text_scrolls_with_indicators() {
    let text: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
    let mut e = with_text(&text.join("\n"));
    e.set_terminal_rows(10);
    let lines = e.render(20);
    assert_width(&lines, 20);
    insta::assert_snapshot!("scrolled_to_end", show(&lines));
    for _ in 0..8 {
        press(&mut e, b"\x1b[A");
    }
    let lines = e.render(20);
    assert_width(&lines, 20);
    insta::assert_snapshot!("scrolled_middle", show(&lines));
}

#[test]
fn placeholder_when_empty() {
    let mut e = editor();
    e.set_placeholder(Some("Ask anything".into()));
    let lines = e.render(20);
    assert_width(&lines, 20);
    insta::assert_snapshot!("placeholder", show(&lines));
    type_text(&mut e, "x");
    assert!(!show(&e.render(20)).contains("Ask"));
}

#[test]
fn border_style_colours_the_rules() {
    let mut e = editor();
    let style = Style::new().fg(Color::Ansi(5));
    e.set_border_style(style);
    let lines = e.render(5);
    assert_eq!(lines[0], style.paint("─────"));
    assert_eq!(lines[2], style.paint("─────"));
}

#[test]
fn paste_marker_is_one_unit_under_the_cursor() {
    let mut e = editor();
    let big: Vec<String> = (0..12).map(|i| format!("l{i}")).collect();
    e.handle_paste(&big.join("\n"));
    assert_eq!(e.text(), "[paste #1 +12 lines]");
    press(&mut e, LEFT);
    assert_eq!(e.cursor(), (0, 0));
    let lines = e.render(30);
    assert_width(&lines, 30);
    insta::assert_snapshot!("paste_marker_cursor", show(&lines));
}

#[test]
fn tiny_widths_do_not_panic() {
    let mut e = with_text("漢字 and text\nmore");
    e.set_padding_x(3);
    for width in 0..6 {
        let lines = e.render(width);
        if width == 0 {
            assert!(lines.is_empty());
        }
    }
}

#[test]
fn every_line_has_the_full_width_while_editing() {
    let mut e = editor();
    e.set_completion_provider(FakeProvider::boxed());
    let script: &[&[u8]] = &[
        b"/m",
        b"\x1b",
        b"\x01",
        b"x\xe6\xbc\xa2 ",
        b"\n",
        b"@s",
        b"\t",
        b"word ",
        b"\x1b[A",
        b"\x17",
        b"\x19",
    ];
    for step in script {
        press(&mut e, step);
        for width in [8_u16, 13, 40] {
            let lines = e.render(width);
            assert_width(&lines, usize::from(width));
        }
    }
}
