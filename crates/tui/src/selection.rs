//! A text selection over content lines (the fullscreen transcript): where it runs, how it
//! is drawn (reverse video over the selected columns) and the plain text it copies.
//!
//! Points are content coordinates, a line index and a display column, so a selection
//! stays on its text while the viewport scrolls. Both ends are inclusive, as a terminal's
//! own selection is: pressing on a cell and dragging to another selects both.

use crate::composite::splice;
use crate::width::SOFT_BREAK;
use crate::width::SOFT_WRAP;
use crate::width::Segment;
use crate::width::grapheme_width;
use crate::width::segments;
use crate::width::visible_width;

/// A cell of the content: line index and display column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Point {
    pub line: usize,
    pub col: usize,
}

impl Point {
    pub fn new(line: usize, col: usize) -> Self {
        Self { line, col }
    }
}

/// From where the mouse went down (`anchor`) to where it is (`focus`), either way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    pub anchor: Point,
    pub focus: Point,
}

impl Selection {
    pub fn new(anchor: Point, focus: Point) -> Self {
        Self { anchor, focus }
    }

    /// The first and last selected cells, in reading order.
    pub fn ordered(&self) -> (Point, Point) {
        if self.anchor <= self.focus {
            (self.anchor, self.focus)
        } else {
            (self.focus, self.anchor)
        }
    }

    /// The columns `from..to` selected on `line`, whose text is `width` columns wide;
    /// `None` when nothing of it is (another line, or only columns past its text).
    pub fn span_on(&self, line: usize, width: usize) -> Option<(usize, usize)> {
        let (start, end) = self.ordered();
        if line < start.line || line > end.line {
            return None;
        }
        let from = if line == start.line { start.col } else { 0 };
        let to = if line == end.line {
            end.col.saturating_add(1)
        } else {
            usize::MAX
        };
        let to = to.min(width);
        (from < to).then_some((from, to))
    }

    /// The selected text of `lines` as shown: without styles, each line's trailing spaces
    /// trimmed, lines joined with `\n`, except that a row the wrap continued (one marked
    /// with [`SOFT_WRAP`] or [`SOFT_BREAK`]) joins the row before it, as a terminal joins
    /// a line it wrapped: with the space the wrap dropped, and without what lies before
    /// its mark (padding, indentation, a quote's border).
    pub fn text(&self, lines: &[String]) -> String {
        let (start, end) = self.ordered();
        let mut out = String::new();
        for (index, line) in lines
            .iter()
            .enumerate()
            .take(end.line.saturating_add(1))
            .skip(start.line)
        {
            let plain = plain_text(line);
            let span = self.span_on(index, visible_width(&plain));
            let joined = if index > start.line {
                continuation(line)
            } else {
                None
            };
            let piece = match (span, joined) {
                (Some((from, to)), Some((mark, _))) => cut_columns(&plain, from.max(mark), to),
                (Some((from, to)), None) => cut_columns(&plain, from, to),
                (None, _) => String::new(),
            };
            match joined {
                Some((_, space)) => {
                    let kept = out.trim_end().len();
                    out.truncate(kept);
                    if space && !out.is_empty() && !piece.is_empty() {
                        out.push(' ');
                    }
                }
                None if index > start.line => out.push('\n'),
                None => {}
            }
            out.push_str(piece.trim_end());
        }
        out
    }
}

/// Where a row the wrap continued starts its text (the column of its mark), and whether
/// the break dropped a space; `None` for a row that starts a line.
fn continuation(line: &str) -> Option<(usize, bool)> {
    let (at, space) = match (line.find(SOFT_WRAP), line.find(SOFT_BREAK)) {
        (Some(at), _) => (at, true),
        (None, Some(at)) => (at, false),
        (None, None) => return None,
    };
    Some((visible_width(&line[..at]), space))
}

/// `line` without its escape sequences.
pub fn plain_text(line: &str) -> String {
    if !line.contains('\x1b') {
        return line.to_owned();
    }
    segments(line)
        .into_iter()
        .filter_map(|segment| match segment {
            Segment::Grapheme(g) => Some(g),
            Segment::Escape(_) => None,
        })
        .collect()
}

/// The graphemes of an unstyled line that start in columns `from..to`.
fn cut_columns(plain: &str, from: usize, to: usize) -> String {
    let mut out = String::new();
    let mut at = 0;
    for segment in segments(plain) {
        if let Segment::Grapheme(g) = segment {
            if at >= to {
                break;
            }
            if at >= from {
                out.push_str(g);
            }
            at += grapheme_width(g);
        }
    }
    out
}

/// `line` with columns `from..to` drawn in reverse video (as plain text: the line's own
/// styles there would fight the highlight).
pub fn highlight(line: &str, from: usize, to: usize) -> String {
    if from >= to {
        return line.to_owned();
    }
    let piece = cut_columns(&plain_text(line), from, to);
    let total = visible_width(line).max(to);
    splice(line, &format!("\x1b[7m{piece}"), from, to - from, total)
}

/// The columns `from..to` of the word under `col` on `line`: a run of characters other
/// than spaces and brackets, quotes and separators (so a path or a URL is one word).
/// `None` on a space or past the text.
pub fn word_at(line: &str, col: usize) -> Option<(usize, usize)> {
    let plain = plain_text(line);
    let mut cells: Vec<(usize, usize, bool)> = Vec::new();
    let mut at = 0;
    for segment in segments(&plain) {
        if let Segment::Grapheme(g) = segment {
            let width = grapheme_width(g);
            cells.push((at, width, is_word(g)));
            at += width;
        }
    }
    let index = cells
        .iter()
        .position(|&(start, width, _)| col >= start && col < start + width.max(1))?;
    if !cells[index].2 {
        return None;
    }
    let first = cells[..index]
        .iter()
        .rposition(|cell| !cell.2)
        .map_or(0, |i| i + 1);
    let last = cells[index..]
        .iter()
        .position(|cell| !cell.2)
        .map_or(cells.len(), |i| index + i);
    let (end_start, end_width, _) = cells[last - 1];
    Some((cells[first].0, end_start + end_width))
}

fn is_word(grapheme: &str) -> bool {
    !grapheme.chars().all(|c| {
        c.is_whitespace()
            || matches!(
                c,
                '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | '"' | '\'' | '`' | ',' | ';' | '|'
            )
            || ('\u{2500}'..='\u{259f}').contains(&c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn a_selection_runs_in_reading_order_whichever_way_it_was_dragged() {
        let down = Selection::new(Point::new(1, 4), Point::new(3, 2));
        let up = Selection::new(Point::new(3, 2), Point::new(1, 4));
        assert_eq!(down.ordered(), up.ordered());
        assert_eq!(up.span_on(0, 10), None);
        assert_eq!(up.span_on(1, 10), Some((4, 10)));
        assert_eq!(up.span_on(2, 10), Some((0, 10)));
        assert_eq!(up.span_on(3, 10), Some((0, 3)));
        assert_eq!(up.span_on(4, 10), None);
        // Past the end of a short line nothing is highlighted.
        assert_eq!(up.span_on(1, 3), None);
        let one = Selection::new(Point::new(2, 5), Point::new(2, 1));
        assert_eq!(one.span_on(2, 10), Some((1, 6)));
    }

    #[test]
    fn the_text_is_plain_trimmed_and_keeps_empty_lines() {
        let content = lines(&[
            "  \x1b[1mHello\x1b[0m world   ",
            "",
            "second \x1b[36mline\x1b[0m here",
            "untouched",
        ]);
        let selection = Selection::new(Point::new(0, 2), Point::new(2, 10));
        assert_eq!(selection.text(&content), "Hello world\n\nsecond line");
        let within = Selection::new(Point::new(0, 8), Point::new(0, 2));
        assert_eq!(within.text(&content), "Hello w");
        // Lines beyond the content are simply not there.
        let past = Selection::new(Point::new(3, 0), Point::new(9, 0));
        assert_eq!(past.text(&content), "untouched");
    }

    #[test]
    fn rows_the_wrap_continued_join_the_row_before_as_one_line() {
        use crate::width::wrap_text_marking_wraps;
        let mut content: Vec<String> = wrap_text_marking_wraps("one two three four", 8)
            .into_iter()
            .map(|row| format!(" {row}  "))
            .collect();
        assert_eq!(content.len(), 3, "{content:?}");
        content.push(" next line".to_owned());
        content.extend(
            wrap_text_marking_wraps("abcdefghij", 4)
                .into_iter()
                .map(|row| format!("\x1b[2m│ {row}\x1b[0m")),
        );
        let all = Selection::new(Point::new(0, 1), Point::new(6, 9));
        assert_eq!(
            all.text(&content),
            "one two three four\n next line\n│ abcdefghij"
        );
        // From the middle of one row to the middle of the next: still one line.
        let part = Selection::new(Point::new(0, 5), Point::new(1, 3));
        assert_eq!(part.text(&content), "two thr");
        // Starting on a continued row, nothing before it is joined.
        let later = Selection::new(Point::new(1, 0), Point::new(2, 9));
        assert_eq!(later.text(&content), " three four");
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let content = lines(&["日本語 text"]);
        let selection = Selection::new(Point::new(0, 2), Point::new(0, 5));
        assert_eq!(selection.text(&content), "本語");
    }

    #[test]
    fn the_highlight_reverses_the_selected_columns_only() {
        let line = "ab \x1b[31mred\x1b[0m cd";
        let drawn = highlight(line, 3, 6);
        assert_eq!(plain_text(&drawn), "ab red cd");
        assert!(drawn.contains("\x1b[7mred"), "{drawn:?}");
        assert_eq!(visible_width(&drawn), visible_width(line));
        assert_eq!(highlight(line, 4, 4), line);
    }

    #[test]
    fn a_word_is_a_run_without_spaces_or_brackets() {
        let line = "open (src/main.rs) now";
        assert_eq!(word_at(line, 0), Some((0, 4)));
        assert_eq!(word_at(line, 3), Some((0, 4)));
        assert_eq!(word_at(line, 9), Some((6, 17)));
        assert_eq!(word_at(line, 4), None);
        assert_eq!(word_at(line, 5), None);
        assert_eq!(word_at(line, 40), None);
        assert_eq!(word_at("\x1b[1mbold\x1b[0m x", 2), Some((0, 4)));
    }
}
