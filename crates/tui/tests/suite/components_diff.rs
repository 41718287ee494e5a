//! The edit tool's display diff, coloured: a single changed line shows its changed words
//! inverted; blocks of several lines are shown as they are.

use knightcode_tui::Theme;
use knightcode_tui::diff::render_diff;

fn visible_escapes(lines: &[String]) -> String {
    lines.join("\n").replace('\x1b', "␛")
}

/// As `display_diff` in the tools crate writes it (numbers right-aligned to the widest).
const ONE_LINE_CHANGED: &str = "    ...
  8 fn total(items: &[Item]) -> u32 {
- 9     items.iter().map(|i| i.price).sum()
+ 9     items.iter().map(|i| i.price * i.count).sum()
 10 }
    ...";

const BLOCK_CHANGED: &str = " 1 use std::io;
-2 fn a() {}
-3 fn b() {}
+2 fn c() {}
 4 // end";

#[test]
fn single_line_change_highlights_the_changed_words() {
    let lines = render_diff(ONE_LINE_CHANGED, &Theme::dark());
    insta::assert_snapshot!(visible_escapes(&lines));
}

#[test]
fn plain_theme_keeps_the_text_exactly() {
    for diff in [ONE_LINE_CHANGED, BLOCK_CHANGED] {
        assert_eq!(render_diff(diff, &Theme::plain()).join("\n"), diff);
    }
}

#[test]
fn blocks_of_several_lines_are_not_paired() {
    let lines = render_diff(BLOCK_CHANGED, &Theme::dark());
    insta::assert_snapshot!(visible_escapes(&lines));
    assert!(!lines.iter().any(|line| line.contains("\x1b[7")));
}

#[test]
fn reindented_line_does_not_highlight_its_indent() {
    let lines = render_diff("-1 a\n+1     a", &Theme::dark());
    // The added indentation is not inverted: nothing else changed, so nothing is.
    assert!(
        !lines[1].contains(";7") && !lines[1].contains("[7"),
        "{:?}",
        lines[1]
    );
    let lines = render_diff("-1   let x = 1;\n+1   let y = 1;", &Theme::dark());
    insta::assert_snapshot!(visible_escapes(&lines));
}

#[test]
fn tabs_become_spaces_and_odd_lines_pass_through() {
    let lines = render_diff("+1 \tindented\n@@ not a diff line @@\n", &Theme::plain());
    assert_eq!(lines, vec!["+1    indented", "@@ not a diff line @@", ""]);
}
