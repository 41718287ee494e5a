//! ANSI-aware text measurement: visible width, truncation and word wrapping of styled
//! lines. Escape sequences take no columns; East Asian wide characters and emoji take two;
//! a grapheme cluster (emoji with ZWJ or variation selectors, combining marks) is measured
//! as one unit so it is never split.

use unicode_segmentation::UnicodeSegmentation as _;
use unicode_width::UnicodeWidthChar as _;

/// A piece of a styled string: an escape sequence or one grapheme cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    Escape(&'a str),
    Grapheme(&'a str),
}

/// Length in bytes of the escape sequence at the start of `s` (which starts with ESC).
/// CSI ends at a final byte, OSC/APC/DCS at BEL or ST; anything else is ESC + one char.
pub(crate) fn escape_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    match bytes.get(1) {
        Some(b'[') => {
            let mut i = 2;
            while let Some(&b) = bytes.get(i) {
                i += 1;
                if (0x40..=0x7e).contains(&b) {
                    return i;
                }
            }
            bytes.len()
        }
        Some(b']' | b'_' | b'P' | b'^') => {
            let mut i = 2;
            while let Some(&b) = bytes.get(i) {
                if b == 0x07 {
                    return i + 1;
                }
                if b == 0x1b && bytes.get(i + 1) == Some(&b'\\') {
                    return i + 2;
                }
                i += 1;
            }
            bytes.len()
        }
        Some(_) => 1 + s[1..].chars().next().map_or(0, char::len_utf8),
        None => 1,
    }
}

/// Splits a styled string into escape sequences and grapheme clusters.
pub fn segments(s: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        match rest.find('\x1b') {
            Some(0) => {
                let len = escape_len(rest);
                out.push(Segment::Escape(&rest[..len]));
                rest = &rest[len..];
            }
            Some(at) => {
                out.extend(rest[..at].graphemes(true).map(Segment::Grapheme));
                rest = &rest[at..];
            }
            None => {
                out.extend(rest.graphemes(true).map(Segment::Grapheme));
                rest = "";
            }
        }
    }
    out
}

/// Columns one grapheme cluster occupies.
pub fn grapheme_width(grapheme: &str) -> usize {
    let mut chars = grapheme.chars();
    let Some(first) = chars.next() else {
        return 0;
    };
    if first == '\t' {
        return TAB_WIDTH;
    }
    let base = first.width().unwrap_or(0);
    // An emoji presentation selector or a ZWJ sequence renders as one wide glyph.
    if grapheme.contains('\u{fe0f}') || (grapheme.contains('\u{200d}') && base > 0) {
        return 2;
    }
    // Regional indicator pairs (flags) are one wide glyph.
    if ('\u{1f1e6}'..='\u{1f1ff}').contains(&first) {
        return 2;
    }
    base
}

/// How many columns a tab counts for; renderers expand tabs to this many spaces.
pub const TAB_WIDTH: usize = 3;

/// Visible columns of a styled string.
pub fn visible_width(s: &str) -> usize {
    if s.is_ascii() && !s.contains(['\x1b', '\t']) {
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    segments(s)
        .into_iter()
        .map(|segment| match segment {
            Segment::Escape(_) => 0,
            Segment::Grapheme(g) => grapheme_width(g),
        })
        .sum()
}

/// Cuts `s` to at most `max` columns, ending with `ellipsis` when anything was cut. Escape
/// sequences are kept (so styles and links stay balanced) and a reset is added when the
/// string had any.
pub fn truncate_to_width(s: &str, max: usize, ellipsis: &str) -> String {
    if visible_width(s) <= max {
        return s.to_owned();
    }
    let ellipsis_width = visible_width(ellipsis);
    let (budget, ellipsis) = if ellipsis_width <= max {
        (max - ellipsis_width, ellipsis)
    } else {
        (max, "")
    };
    let mut out = String::with_capacity(s.len());
    let mut used = 0;
    let mut styled = false;
    let mut cut = false;
    for segment in segments(s) {
        match segment {
            Segment::Escape(e) => {
                styled = true;
                out.push_str(e);
            }
            Segment::Grapheme(g) => {
                let w = grapheme_width(g);
                if cut || used + w > budget {
                    cut = true;
                    continue;
                }
                used += w;
                out.push_str(g);
            }
        }
    }
    if styled {
        out.push_str(crate::style::RESET);
    }
    out.push_str(ellipsis);
    out
}

/// Pads `s` with spaces to exactly `width` columns (truncating first if it is wider).
pub fn pad_to_width(s: &str, width: usize) -> String {
    let s = truncate_to_width(s, width, "");
    let w = visible_width(&s);
    let mut out = s;
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    out
}

/// Tracks which SGR attributes are active so a wrapped continuation line can restart them.
#[derive(Default, Clone)]
struct SgrState {
    active: String,
}

impl SgrState {
    fn apply(&mut self, escape: &str) {
        if !(escape.starts_with("\x1b[") && escape.ends_with('m')) {
            return;
        }
        let params = &escape[2..escape.len() - 1];
        if params.is_empty() || params == "0" {
            self.active.clear();
        } else {
            self.active.push_str(escape);
        }
    }
}

/// Starts a row the wrap continued onto when the break dropped a space between words (a
/// zero-width APC sequence, like the renderer's cursor marker, and taken out by it too):
/// copying text joins the row to the one before with a space, as a terminal joins a line
/// it wrapped. Whatever a caller puts before it on the row (padding, a quote's border) is
/// layout, not text.
pub const SOFT_WRAP: &str = "\x1b_kc:w\x07";
/// The same where a word too long for the row was broken: joined without a space.
pub const SOFT_BREAK: &str = "\x1b_kc:b\x07";

/// `line` without the wrap's marks, for the terminal.
pub fn without_wrap_marks(line: &str) -> std::borrow::Cow<'_, str> {
    if line.contains(SOFT_WRAP) || line.contains(SOFT_BREAK) {
        std::borrow::Cow::Owned(line.replace(SOFT_WRAP, "").replace(SOFT_BREAK, ""))
    } else {
        std::borrow::Cow::Borrowed(line)
    }
}

/// Word-wraps a styled string (which may contain `\n`) to `width` columns. Words longer
/// than the width are broken; active styles are closed at each line end and restarted on
/// the next line, so every line stands alone.
pub fn wrap_text_with_ansi(s: &str, width: usize) -> Vec<String> {
    wrap(s, width, false)
}

/// [`wrap_text_with_ansi`], each row that continues a line starting with [`SOFT_WRAP`] or
/// [`SOFT_BREAK`], so that the text can be copied as it was before wrapping.
pub fn wrap_text_marking_wraps(s: &str, width: usize) -> Vec<String> {
    wrap(s, width, true)
}

fn wrap(s: &str, width: usize, marks: bool) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut state = SgrState::default();
    for paragraph in s.split('\n') {
        let first = lines.len();
        wrap_paragraph(paragraph, width, &mut state, &mut lines, marks);
        // A row the wrap began but put nothing on (a space dropped at the very end) is
        // the empty row it always was.
        if marks && lines.len() > first + 1 {
            let last = lines.len() - 1;
            if visible_width(&lines[last]) == 0 {
                lines[last] = lines[last].replace(SOFT_WRAP, "").replace(SOFT_BREAK, "");
            }
        }
    }
    lines
}

/// The start of a row the wrap continues onto: the active styles again, then the mark.
fn continued(state: &SgrState, marks: bool, mark: &str) -> String {
    let mut line = state.active.clone();
    if marks {
        line.push_str(mark);
    }
    line
}

fn wrap_paragraph(
    paragraph: &str,
    width: usize,
    state: &mut SgrState,
    lines: &mut Vec<String>,
    marks: bool,
) {
    if visible_width(paragraph) <= width && !paragraph.contains('\t') {
        let mut line = state.active.clone();
        line.push_str(paragraph);
        for segment in segments(paragraph) {
            if let Segment::Escape(e) = segment {
                state.apply(e);
            }
        }
        lines.push(close_line(line, state));
        return;
    }
    // Words are runs of non-space graphemes with the spaces after them.
    let mut line = state.active.clone();
    let mut line_width = 0;
    let mut word = String::new();
    let mut word_width = 0;
    let mut word_state = state.clone();
    let segs = segments(paragraph);
    let mut i = 0;
    while i <= segs.len() {
        let at_boundary = match segs.get(i) {
            None => true,
            Some(Segment::Grapheme(g)) => *g == " " || *g == "\t",
            Some(Segment::Escape(_)) => false,
        };
        if at_boundary {
            // Place the pending word.
            if word_width > 0 || !word.is_empty() {
                if line_width + word_width > width && line_width > 0 {
                    lines.push(close_line(trim_trailing_spaces(line), state));
                    line = continued(state, marks, SOFT_WRAP);
                    line_width = 0;
                }
                if word_width > width {
                    // Break the long word grapheme by grapheme.
                    let mut piece_state = state.clone();
                    for seg in segments(&word) {
                        match seg {
                            Segment::Escape(e) => {
                                piece_state.apply(e);
                                line.push_str(e);
                            }
                            Segment::Grapheme(g) => {
                                let w = grapheme_width(g);
                                if line_width + w > width && line_width > 0 {
                                    lines.push(close_line(line, &piece_state));
                                    line = continued(&piece_state, marks, SOFT_BREAK);
                                    line_width = 0;
                                }
                                line.push_str(g);
                                line_width += w;
                            }
                        }
                    }
                } else {
                    line.push_str(&word);
                    line_width += word_width;
                }
                word.clear();
                word_width = 0;
            }
            *state = word_state.clone();
            match segs.get(i) {
                None => break,
                Some(Segment::Grapheme(g)) => {
                    let spaces = if *g == "\t" { TAB_WIDTH } else { 1 };
                    if line_width + spaces <= width {
                        line.extend(std::iter::repeat_n(' ', spaces));
                        line_width += spaces;
                    } else {
                        // The space falls at the wrap point; it is dropped.
                        lines.push(close_line(trim_trailing_spaces(line), state));
                        line = continued(state, marks, SOFT_WRAP);
                        line_width = 0;
                    }
                }
                Some(Segment::Escape(_)) => {}
            }
        } else if let Some(seg) = segs.get(i) {
            match seg {
                Segment::Escape(e) => {
                    word_state.apply(e);
                    word.push_str(e);
                }
                Segment::Grapheme(g) => {
                    word.push_str(g);
                    word_width += grapheme_width(g);
                }
            }
        }
        i += 1;
    }
    lines.push(close_line(line, state));
}

fn trim_trailing_spaces(mut line: String) -> String {
    while line.ends_with(' ') {
        line.pop();
    }
    line
}

fn close_line(mut line: String, state: &SgrState) -> String {
    if !state.active.is_empty() {
        line.push_str(crate::style::RESET);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_ignore_escapes_and_count_wide_glyphs() {
        assert_eq!(visible_width("abc"), 3);
        assert_eq!(visible_width("\x1b[1;31mabc\x1b[0m"), 3);
        assert_eq!(visible_width("日本"), 4);
        assert_eq!(visible_width("👍"), 2);
        assert_eq!(visible_width("👨‍👩‍👧"), 2);
        assert_eq!(visible_width("❤️"), 2);
        assert_eq!(visible_width("🇩🇪"), 2);
        assert_eq!(visible_width("e\u{301}"), 1);
        assert_eq!(visible_width("\x1b]8;;http://x\x07link\x1b]8;;\x07"), 4);
        assert_eq!(visible_width("\x1b_kc:c\x07x"), 1);
    }

    #[test]
    fn truncation_keeps_styles_balanced() {
        assert_eq!(truncate_to_width("hello world", 8, "..."), "hello...");
        assert_eq!(truncate_to_width("hi", 8, "..."), "hi");
        assert_eq!(
            truncate_to_width("\x1b[31mhello world\x1b[0m", 6, "…"),
            "\x1b[31mhello\x1b[0m\x1b[0m…"
        );
        // A wide glyph that would straddle the limit is dropped whole.
        assert_eq!(truncate_to_width("ab日本", 5, ""), "ab日");
        assert_eq!(visible_width(&truncate_to_width("日本語です", 5, "…")), 5);
    }

    #[test]
    fn padding_fills_to_width() {
        assert_eq!(pad_to_width("ab", 4), "ab  ");
        assert_eq!(pad_to_width("日本語", 4), "日本");
        assert_eq!(pad_to_width("日本語", 5), "日本 ");
    }

    #[test]
    fn wrapping_breaks_on_words_and_long_words() {
        assert_eq!(
            wrap_text_with_ansi("the quick brown fox", 10),
            vec!["the quick", "brown fox"]
        );
        assert_eq!(
            wrap_text_with_ansi("abcdefghij", 4),
            vec!["abcd", "efgh", "ij"]
        );
        assert_eq!(wrap_text_with_ansi("a\n\nb", 4), vec!["a", "", "b"]);
        assert_eq!(wrap_text_with_ansi("", 4), vec![""]);
        for line in wrap_text_with_ansi("日本語のテキストです", 5) {
            assert!(visible_width(&line) <= 5, "{line}");
        }
    }

    #[test]
    fn marked_wrapping_starts_each_continued_row_with_how_it_broke() {
        assert_eq!(
            wrap_text_marking_wraps("the quick brown fox\nabcdefghij", 10),
            vec![
                "the quick".to_owned(),
                format!("{SOFT_WRAP}brown fox"),
                "abcdefghij".to_owned(),
            ]
        );
        assert_eq!(
            wrap_text_marking_wraps("abcdefghij xy", 4),
            vec![
                "abcd".to_owned(),
                format!("{SOFT_BREAK}efgh"),
                format!("{SOFT_BREAK}ij"),
                format!("{SOFT_WRAP}xy"),
            ]
        );
        // A space dropped at the very end leaves the empty row it always did.
        assert_eq!(wrap_text_marking_wraps("abcd ", 4), vec!["abcd", ""]);
        assert_eq!(visible_width(SOFT_WRAP), 0);
    }

    #[test]
    fn wrapping_restarts_styles_on_each_line() {
        let lines = wrap_text_with_ansi("\x1b[31mred words here\x1b[0m plain", 10);
        assert_eq!(lines[0], "\x1b[31mred words\x1b[0m");
        assert_eq!(lines[1], "\x1b[31mhere\x1b[0m plain");
    }
}
