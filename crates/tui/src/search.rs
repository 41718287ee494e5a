//! Finding text in content lines (the fullscreen transcript's search), as the reference's
//! alternate-screen search does: what the lines show, without styles, with every run of
//! white space (line ends too) counting as one space, so a phrase the screen wrapped is
//! still found; letters match whatever their case; each match knows the columns its
//! characters cover on each line (the spaces between its words are not highlighted, as
//! in the reference).
//!
//! [`SearchIndex`] keeps the searchable text between calls. Its caller says how many of
//! the lines are as they were at the last call ([`SearchIndex::sync`]), so only the lines
//! after those are read again: a transcript laid out incrementally is indexed
//! incrementally, and nothing compares or copies the lines that stood. Lines of ASCII
//! (most of a transcript) are read a run of bytes at a time, others grapheme by grapheme.
//! A query is one scan of that text keeping where each match starts and ends; the lines
//! and columns of a match are worked out only for the matches asked about (those in view,
//! the one picked), so the count of a query with tens of thousands of matches costs no
//! more than the scan.

use std::ops::Range;

use crate::width::Segment as Piece;
use crate::width::escape_len;
use crate::width::grapheme_width;
use crate::width::segments;

/// The columns `from..to` a match covers on content line `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub line: usize,
    pub from: usize,
    pub to: usize,
}

/// Where a piece of the searchable text comes from: a run on one line whose bytes map one
/// to one onto columns (ASCII words and the single spaces between them), or one other
/// grapheme. Offsets are `u32` to keep the index small (a transcript's text is far below
/// 4 GB).
#[derive(Debug, Clone, Copy)]
struct Span {
    text_start: u32,
    text_end: u32,
    line: u32,
    col: u32,
    /// Columns of a lone grapheme; a linear run covers one a byte.
    width: u32,
    linear: bool,
}

impl Span {
    fn start(&self) -> usize {
        self.text_start as usize
    }

    fn end(&self) -> usize {
        self.text_end as usize
    }
}

fn small(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Where line `i` starts in the searchable text.
#[derive(Debug, Clone, Copy)]
struct LineMark {
    text_len: usize,
    spans_len: usize,
    /// A space is owed before the next piece of text (the previous line ended).
    pending: bool,
}

/// The searchable text of some lines and the matches of one query in it.
#[derive(Debug, Default)]
pub struct SearchIndex {
    /// One a line indexed.
    marks: Vec<LineMark>,
    /// Lower-cased, escape sequences left out, white space runs as one space.
    text: String,
    spans: Vec<Span>,
    pending: bool,
    query: String,
    /// Lines changed since the matches were found.
    stale: bool,
    /// Each match's bytes in `text`, in reading order.
    matches: Vec<(usize, usize)>,
}

impl SearchIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the index up to date with `lines`, of which the first `unchanged` are as
    /// they were at the last call (the rest are read again); true when any line was.
    pub fn sync(&mut self, lines: &[String], unchanged: usize) -> bool {
        let same = unchanged.min(self.marks.len()).min(lines.len());
        if same == lines.len() && same == self.marks.len() {
            return false;
        }
        if let Some(mark) = self.marks.get(same) {
            self.text.truncate(mark.text_len);
            self.spans.truncate(mark.spans_len);
            self.pending = mark.pending;
        }
        self.marks.truncate(same);
        for (offset, line) in lines[same..].iter().enumerate() {
            self.marks.push(LineMark {
                text_len: self.text.len(),
                spans_len: self.spans.len(),
                pending: self.pending,
            });
            self.index_line(same + offset, line);
        }
        self.stale = true;
        true
    }

    /// Lines indexed.
    pub fn lines(&self) -> usize {
        self.marks.len()
    }

    /// Finds `query` in the lines; true when the lines or the query differ from the last
    /// call (the matches may have moved).
    pub fn find(&mut self, query: &str) -> bool {
        let query = normalize(query);
        if !self.stale && query == self.query {
            return false;
        }
        self.stale = false;
        self.query = query;
        self.matches.clear();
        let mut chars = self.query.chars();
        match (chars.next(), chars.next()) {
            (None, _) => {}
            // A query's first key: a character's search runs on `memchr`, several times
            // faster than a string's over a long transcript with matches everywhere.
            (Some(c), None) => {
                let found = self.text.match_indices(c);
                self.matches
                    .extend(found.map(|(at, found)| (at, at + found.len())));
            }
            _ => {
                let found = self.text.match_indices(self.query.as_str());
                self.matches
                    .extend(found.map(|(at, found)| (at, at + found.len())));
            }
        }
        true
    }

    pub fn len(&self) -> usize {
        self.matches.len()
    }

    pub fn is_empty(&self) -> bool {
        self.matches.is_empty()
    }

    /// The lines and columns match `index` covers: one segment for each run of its
    /// characters on a line (the spaces between its words left out).
    pub fn segments(&self, index: usize) -> Vec<Segment> {
        let mut out: Vec<Segment> = Vec::new();
        let Some(&(start, end)) = self.matches.get(index) else {
            return out;
        };
        let mut push = |line: u32, from: usize, to: usize| match out.last_mut() {
            Some(last) if last.line == line as usize && from <= last.to => {
                last.to = last.to.max(to);
            }
            _ => out.push(Segment {
                line: line as usize,
                from,
                to,
            }),
        };
        let first = self.span_at(start);
        for span in self.spans[first..]
            .iter()
            .take_while(|span| span.start() < end)
        {
            if !span.linear {
                push(
                    span.line,
                    span.col as usize,
                    (span.col + span.width) as usize,
                );
                continue;
            }
            let (from, to) = (start.max(span.start()), end.min(span.end()));
            let col = |at: usize| span.col as usize + at - span.start();
            let bytes = &self.text.as_bytes()[from..to];
            let mut run = from;
            for (offset, &byte) in bytes.iter().enumerate() {
                if byte == b' ' {
                    if from + offset > run {
                        push(span.line, col(run), col(from + offset));
                    }
                    run = from + offset + 1;
                }
            }
            if to > run {
                push(span.line, col(run), col(to));
            }
        }
        out
    }

    /// The span holding byte `at` of the text (or the first after it).
    fn span_at(&self, at: usize) -> usize {
        self.spans.partition_point(|span| span.end() <= at)
    }

    /// The content line holding byte `at` of the text.
    fn line_at(&self, at: usize) -> usize {
        self.spans
            .get(self.span_at(at))
            .map_or(0, |span| span.line as usize)
    }

    /// The content line match `index` starts on.
    pub fn first_line(&self, index: usize) -> usize {
        self.matches
            .get(index)
            .map_or(0, |&(start, _)| self.line_at(start))
    }

    /// The content line match `index` ends on.
    pub fn last_line(&self, index: usize) -> usize {
        self.matches
            .get(index)
            .map_or(0, |&(_, end)| self.line_at(end.saturating_sub(1)))
    }

    /// Where match `index` starts and ends, to find it again after the lines changed.
    pub fn key(&self, index: usize) -> Option<(Segment, Segment)> {
        let segments = self.segments(index);
        Some((*segments.first()?, *segments.last()?))
    }

    /// The match with `key`, if there still is one.
    pub fn find_key(&self, key: (Segment, Segment)) -> Option<usize> {
        let start = self.first_at_or_after(key.0.line)?;
        (start..self.len())
            .take_while(|&i| self.first_line(i) == key.0.line)
            .find(|&i| self.key(i) == Some(key))
    }

    /// Where line `line` starts in the text (its end for lines past the last).
    fn line_start(&self, line: usize) -> usize {
        self.marks
            .get(line)
            .map_or(self.text.len(), |mark| mark.text_len)
    }

    /// The first match starting on `line` or below. A match starts on a character, never
    /// on the space owed to a line end, so the line's start in the text divides them.
    pub fn first_at_or_after(&self, line: usize) -> Option<usize> {
        let at = self.line_start(line);
        let index = self.matches.partition_point(|&(start, _)| start < at);
        (index < self.len()).then_some(index)
    }

    /// The matches with a part on lines `first..=last`.
    pub fn in_lines(&self, first: usize, last: usize) -> Range<usize> {
        let (from, to) = (self.line_start(first), self.line_start(last + 1));
        let start = self.matches.partition_point(|&(_, end)| end <= from);
        let end = self.matches.partition_point(|&(start, _)| start < to);
        start..end.max(start)
    }

    fn index_line(&mut self, line: usize, styled: &str) {
        let (text_len, spans_len, pending) = (self.text.len(), self.spans.len(), self.pending);
        if !self.index_ascii(line, styled) {
            self.text.truncate(text_len);
            self.spans.truncate(spans_len);
            self.pending = pending;
            self.index_graphemes(line, styled);
        }
        self.pending |= !self.text.is_empty();
    }

    /// A line of printable ASCII between its escape sequences, a run of bytes at a time;
    /// false at the first other byte (the line is read grapheme by grapheme instead).
    fn index_ascii(&mut self, line: usize, styled: &str) -> bool {
        let bytes = styled.as_bytes();
        let printable = |byte: &u8| (0x21..=0x7e).contains(byte);
        let (mut at, mut col) = (0, 0);
        while let Some(&byte) = bytes.get(at) {
            match byte {
                0x1b => at += escape_len(&styled[at..]),
                b' ' => {
                    self.pending |= !self.text.is_empty();
                    col += 1;
                    at += 1;
                }
                0x21..=0x7e => {
                    let end = bytes[at..]
                        .iter()
                        .position(|byte| !printable(byte))
                        .map_or(bytes.len(), |length| at + length);
                    self.push_linear(line, col, &styled[at..end]);
                    col += end - at;
                    at = end;
                }
                _ => return false,
            }
        }
        true
    }

    fn index_graphemes(&mut self, line: usize, styled: &str) {
        let mut col = 0;
        for segment in segments(styled) {
            let Piece::Grapheme(g) = segment else {
                continue;
            };
            let width = grapheme_width(g);
            if g.chars().all(char::is_whitespace) {
                self.pending |= !self.text.is_empty();
            } else if g.len() == 1 && width == 1 {
                self.push_linear(line, col, g);
            } else {
                if std::mem::take(&mut self.pending) {
                    self.text.push(' ');
                }
                let start = self.text.len();
                self.text.extend(g.chars().flat_map(char::to_lowercase));
                self.spans.push(Span {
                    text_start: small(start),
                    text_end: small(self.text.len()),
                    line: small(line),
                    col: small(col),
                    width: small(width),
                    linear: false,
                });
            }
            col += width;
        }
    }

    /// A run of printable ASCII at column `col`: it extends the last run when the text
    /// and the columns both go on from it (one space between words), so a line of prose
    /// is one span or a few.
    fn push_linear(&mut self, line: usize, col: usize, run: &str) {
        let separated = std::mem::take(&mut self.pending);
        if separated {
            self.text.push(' ');
        }
        let start = self.text.len();
        self.text.push_str(run);
        self.text[start..].make_ascii_lowercase();
        let end = small(self.text.len());
        let (line, col) = (small(line), small(col));
        match self.spans.last_mut() {
            Some(last)
                if last.linear
                    && last.line == line
                    && last.col + (last.text_end - last.text_start) + u32::from(separated)
                        == col =>
            {
                last.text_end = end;
            }
            _ => self.spans.push(Span {
                text_start: small(start),
                text_end: end,
                line,
                col,
                width: 0,
                linear: true,
            }),
        }
    }
}

/// `line` with the text in columns `from..to` wrapped in `open` … `close`, the line's own
/// escape sequences kept where they are: each run of text between them is wrapped on its
/// own, so a reset inside the range does not end the emphasis early.
pub fn emphasize(line: &str, from: usize, to: usize, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(line.len() + 2 * (open.len() + close.len()));
    let mut col = 0;
    let mut inside = false;
    for segment in segments(line) {
        match segment {
            Piece::Escape(escape) => {
                if std::mem::take(&mut inside) {
                    out.push_str(close);
                }
                out.push_str(escape);
            }
            Piece::Grapheme(g) => {
                let within = col >= from && col < to;
                if within != inside {
                    out.push_str(if within { open } else { close });
                    inside = within;
                }
                out.push_str(g);
                col += grapheme_width(g);
            }
        }
    }
    if inside {
        out.push_str(close);
    }
    out
}

/// The query as it is searched for: white space runs as one space, trimmed, lower case.
fn normalize(query: &str) -> String {
    query
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| (*t).to_owned()).collect()
    }

    fn all(index: &SearchIndex) -> Vec<Vec<(usize, usize, usize)>> {
        (0..index.len())
            .map(|i| {
                index
                    .segments(i)
                    .iter()
                    .map(|s| (s.line, s.from, s.to))
                    .collect()
            })
            .collect()
    }

    /// Indexes `content` afresh and finds `query`.
    fn search(content: &[String], query: &str) -> SearchIndex {
        let mut index = SearchIndex::new();
        index.sync(content, 0);
        index.find(query);
        index
    }

    #[test]
    fn matches_ignore_case_and_styles_and_know_their_columns() {
        let content = lines(&["  The \x1b[1mcat\x1b[0m sat", "on the CAT mat"]);
        let mut index = SearchIndex::new();
        assert!(index.sync(&content, 0));
        assert!(index.find("Cat"));
        assert_eq!(all(&index), [vec![(0, 6, 9)], vec![(1, 7, 10)]]);
        assert!(!index.sync(&content, content.len()), "nothing changed");
        assert!(!index.find("cat"), "the same query");
        index.find("the");
        assert_eq!(all(&index), [vec![(0, 2, 5)], vec![(1, 3, 6)]]);
    }

    #[test]
    fn a_phrase_the_screen_wrapped_is_found_across_lines() {
        let content = lines(&["one two", "   three four"]);
        let mut index = search(&content, "two   three");
        assert_eq!(all(&index), [vec![(0, 4, 7), (1, 3, 8)]]);
        assert_eq!((index.first_line(0), index.last_line(0)), (0, 1));
        index.find("  ");
        assert!(index.is_empty(), "a blank query finds nothing");
    }

    #[test]
    fn the_spaces_between_a_matchs_words_are_not_part_of_its_highlight() {
        let content = lines(&["one two   three", "ab\x1b[1mcd\x1b[0m ef"]);
        let index = search(&content, "one two three");
        assert_eq!(all(&index), [vec![(0, 0, 3), (0, 4, 7), (0, 10, 15)]]);
        // Text either side of an escape sequence runs on; one space between words.
        let index = search(&content, "bcd e");
        assert_eq!(all(&index), [vec![(1, 1, 4), (1, 5, 6)]]);
    }

    #[test]
    fn emphasis_wraps_each_run_of_text_in_the_range() {
        let line = "ab \x1b[31mred\x1b[0m cd";
        assert_eq!(
            emphasize(line, 1, 5, "<", ">"),
            "a<b >\x1b[31m<re>d\x1b[0m cd"
        );
        assert_eq!(emphasize("abc", 5, 9, "<", ">"), "abc");
        assert_eq!(emphasize("abc", 0, 9, "<", ">"), "<abc>");
    }

    #[test]
    fn wide_characters_count_their_columns() {
        let content = lines(&["日本語 text", "Ünïcode", "abc déf\tg"]);
        let mut index = search(&content, "本語 t");
        assert_eq!(all(&index), [vec![(0, 2, 6), (0, 7, 8)]]);
        index.find("ünï");
        assert_eq!(all(&index), [vec![(1, 0, 3)]]);
        // A line begun as ASCII and read again grapheme by grapheme; a tab is three
        // columns.
        index.find("c déf g");
        assert_eq!(all(&index), [vec![(2, 2, 3), (2, 4, 7), (2, 10, 11)]]);
    }

    #[test]
    fn changed_lines_are_indexed_again_and_matches_found_by_key_and_line() {
        let mut content = lines(&["a x", "b", "c x", "", "d"]);
        let mut index = search(&content, "x");
        assert_eq!(index.len(), 2);
        let key = index.key(1).unwrap();
        content[1] = "b x".to_owned();
        content.push("x again".to_owned());
        assert!(index.sync(&content, 1));
        assert!(index.find("x"));
        assert_eq!(index.lines(), 6);
        assert_eq!(
            all(&index),
            [
                vec![(0, 2, 3)],
                vec![(1, 2, 3)],
                vec![(2, 2, 3)],
                vec![(5, 0, 1)]
            ]
        );
        assert_eq!(index.find_key(key), Some(2));
        assert_eq!(index.first_at_or_after(3), Some(3));
        assert_eq!(index.first_at_or_after(4), Some(3));
        assert_eq!(index.first_at_or_after(6), None);
        assert_eq!(index.in_lines(1, 2), 1..3);
        assert_eq!(index.in_lines(3, 4), 3..3);
        assert_eq!(index.in_lines(3, 5), 3..4);
        content.truncate(2);
        index.sync(&content, 2);
        index.find("x");
        assert_eq!(all(&index), [vec![(0, 2, 3)], vec![(1, 2, 3)]]);
        // What the index says matches a fresh one's.
        assert_eq!(all(&index), all(&search(&content, "x")));
    }

    #[test]
    fn reading_ascii_runs_finds_what_reading_graphemes_finds() {
        let content = lines(&[
            "  \x1b[38;2;1;2;3mfn\x1b[0m step_1(x: &str) -> usize { x.len() * 2 }",
            "\x1b]8;;https://example.com/é\x07link\x1b]8;;\x07 and   more",
        ]);
        let mut fast = SearchIndex::new();
        fast.sync(&content, 0);
        let mut slow = SearchIndex::new();
        for (line, text) in content.iter().enumerate() {
            slow.marks.push(LineMark {
                text_len: slow.text.len(),
                spans_len: slow.spans.len(),
                pending: slow.pending,
            });
            slow.index_graphemes(line, text);
            slow.pending |= !slow.text.is_empty();
        }
        assert_eq!(fast.text, slow.text);
        for query in ["step_1(x", "x", "2 } link", "and more", ")"] {
            fast.find(query);
            slow.find(query);
            assert_eq!(all(&fast), all(&slow), "{query}");
            assert!(!fast.is_empty(), "{query}");
        }
    }
}
