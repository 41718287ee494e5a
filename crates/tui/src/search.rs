//! Finding text in content lines (the fullscreen transcript's search), as the reference's
//! alternate-screen search does: what the lines show, without styles, with every run of
//! white space (line ends too) counting as one space, so a phrase the screen wrapped is
//! still found; letters match whatever their case; each match knows the columns it covers
//! on each line.
//!
//! [`SearchIndex`] keeps the searchable text between calls and builds it again only from
//! the first line that changed, so typing a query costs one scan of that text, not a walk
//! over every styled line.

use crate::width::Segment as Piece;
use crate::width::grapheme_width;
use crate::width::segments;

/// The columns `from..to` a match covers on content line `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub line: usize,
    pub from: usize,
    pub to: usize,
}

/// Where a piece of the searchable text comes from.
#[derive(Debug, Clone, Copy)]
struct Span {
    text_start: usize,
    text_end: usize,
    line: usize,
    col: usize,
    /// Columns of the piece (for a lone grapheme; a linear run is one column a byte).
    width: usize,
    /// One byte of text a column (ASCII), so part of the run maps to part of its columns.
    linear: bool,
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
    /// The lines as last indexed, to tell what changed.
    source: Vec<String>,
    marks: Vec<LineMark>,
    /// Lower-cased, escape sequences left out, white space runs as one space.
    text: String,
    spans: Vec<Span>,
    pending: bool,
    query: String,
    /// Each match's range in `segments`, in reading order.
    matches: Vec<(usize, usize)>,
    segments: Vec<Segment>,
}

impl SearchIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Finds `query` in `lines`; true when the lines or the query differ from the last
    /// call (the matches may have moved).
    pub fn update(&mut self, lines: &[String], query: &str) -> bool {
        let lines_changed = self.reindex(lines);
        let query = normalize(query);
        let changed = lines_changed || query != self.query;
        if changed {
            self.query = query;
            self.find();
        }
        changed
    }

    pub fn len(&self) -> usize {
        self.matches.len()
    }

    pub fn is_empty(&self) -> bool {
        self.matches.is_empty()
    }

    /// The lines and columns match `index` covers, one segment a line.
    pub fn segments(&self, index: usize) -> &[Segment] {
        self.matches
            .get(index)
            .map_or(&[], |&(from, to)| &self.segments[from..to])
    }

    /// The content line match `index` starts on.
    pub fn first_line(&self, index: usize) -> usize {
        self.segments(index).first().map_or(0, |s| s.line)
    }

    /// The content line match `index` ends on.
    pub fn last_line(&self, index: usize) -> usize {
        self.segments(index).last().map_or(0, |s| s.line)
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

    /// The first match starting on `line` or below.
    pub fn first_at_or_after(&self, line: usize) -> Option<usize> {
        let index = self
            .matches
            .partition_point(|&(from, _)| self.segments[from].line < line);
        (index < self.len()).then_some(index)
    }

    /// The matches with a part on lines `first..=last`.
    pub fn in_lines(&self, first: usize, last: usize) -> std::ops::Range<usize> {
        let start = self
            .matches
            .partition_point(|&(_, to)| self.segments[to - 1].line < first);
        let end = self
            .matches
            .partition_point(|&(from, _)| self.segments[from].line <= last);
        start..end.max(start)
    }

    /// Brings the text up to date with `lines`, from the first line that changed; true
    /// when any did.
    fn reindex(&mut self, lines: &[String]) -> bool {
        let same = lines
            .iter()
            .zip(&self.source)
            .position(|(a, b)| a != b)
            .unwrap_or(lines.len().min(self.source.len()));
        if same == lines.len() && same == self.source.len() {
            return false;
        }
        if let Some(mark) = self.marks.get(same) {
            self.text.truncate(mark.text_len);
            self.spans.truncate(mark.spans_len);
            self.pending = mark.pending;
        }
        self.marks.truncate(same);
        self.source.truncate(same);
        for (offset, line) in lines[same..].iter().enumerate() {
            self.marks.push(LineMark {
                text_len: self.text.len(),
                spans_len: self.spans.len(),
                pending: self.pending,
            });
            self.index_line(same + offset, line);
            self.source.push(line.clone());
        }
        true
    }

    fn index_line(&mut self, line: usize, styled: &str) {
        let mut col = 0;
        for segment in segments(styled) {
            let Piece::Grapheme(g) = segment else {
                continue;
            };
            let width = grapheme_width(g);
            if g.chars().all(char::is_whitespace) {
                self.pending |= !self.text.is_empty();
                col += width;
                continue;
            }
            if std::mem::take(&mut self.pending) {
                self.text.push(' ');
            }
            let start = self.text.len();
            let linear = g.len() == 1 && width == 1;
            if linear {
                self.text.push(g.as_bytes()[0].to_ascii_lowercase() as char);
            } else {
                self.text.extend(g.chars().flat_map(char::to_lowercase));
            }
            let end = self.text.len();
            match self.spans.last_mut() {
                // A run of ASCII is one piece: most of a transcript is.
                Some(last)
                    if linear && last.linear && last.line == line && last.text_end == start =>
                {
                    last.text_end = end;
                    last.width += 1;
                }
                _ => self.spans.push(Span {
                    text_start: start,
                    text_end: end,
                    line,
                    col,
                    width,
                    linear,
                }),
            }
            col += width;
        }
        self.pending |= !self.text.is_empty();
    }

    fn find(&mut self) {
        self.matches.clear();
        self.segments.clear();
        if self.query.is_empty() {
            return;
        }
        let mut span = 0;
        for (start, found) in self.text.match_indices(self.query.as_str()) {
            let end = start + found.len();
            while span < self.spans.len() && self.spans[span].text_end <= start {
                span += 1;
            }
            let first = self.segments.len();
            for piece in self.spans[span..]
                .iter()
                .take_while(|piece| piece.text_start < end)
            {
                let (from, to) = if piece.linear {
                    let from = start.max(piece.text_start) - piece.text_start;
                    let to = end.min(piece.text_end) - piece.text_start;
                    (piece.col + from, piece.col + to)
                } else {
                    (piece.col, piece.col + piece.width)
                };
                match self.segments[first..].last_mut() {
                    // One segment a line, spaces between the words included.
                    Some(last) if last.line == piece.line => last.to = last.to.max(to),
                    _ => self.segments.push(Segment {
                        line: piece.line,
                        from,
                        to,
                    }),
                }
            }
            if self.segments.len() > first {
                self.matches.push((first, self.segments.len()));
            }
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

    #[test]
    fn matches_ignore_case_and_styles_and_know_their_columns() {
        let content = lines(&["  The \x1b[1mcat\x1b[0m sat", "on the CAT mat"]);
        let mut index = SearchIndex::new();
        assert!(index.update(&content, "Cat"));
        assert_eq!(all(&index), [vec![(0, 6, 9)], vec![(1, 7, 10)]]);
        assert!(!index.update(&content, "cat"), "nothing changed");
        index.update(&content, "the");
        assert_eq!(all(&index), [vec![(0, 2, 5)], vec![(1, 3, 6)]]);
    }

    #[test]
    fn a_phrase_the_screen_wrapped_is_found_across_lines() {
        let content = lines(&["one two", "   three four"]);
        let mut index = SearchIndex::new();
        index.update(&content, "two   three");
        assert_eq!(all(&index), [vec![(0, 4, 7), (1, 3, 8)]]);
        assert_eq!((index.first_line(0), index.last_line(0)), (0, 1));
        index.update(&content, "  ");
        assert!(index.is_empty(), "a blank query finds nothing");
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
        let content = lines(&["日本語 text", "Ünïcode"]);
        let mut index = SearchIndex::new();
        index.update(&content, "本語 t");
        assert_eq!(all(&index), [vec![(0, 2, 8)]]);
        index.update(&content, "ünï");
        assert_eq!(all(&index), [vec![(1, 0, 3)]]);
    }

    #[test]
    fn changed_lines_are_indexed_again_and_matches_found_by_key_and_line() {
        let mut content = lines(&["a x", "b", "c x", "d"]);
        let mut index = SearchIndex::new();
        index.update(&content, "x");
        assert_eq!(index.len(), 2);
        let key = index.key(1).unwrap();
        content[1] = "b x".to_owned();
        content.push("x again".to_owned());
        assert!(index.update(&content, "x"));
        assert_eq!(
            all(&index),
            [
                vec![(0, 2, 3)],
                vec![(1, 2, 3)],
                vec![(2, 2, 3)],
                vec![(4, 0, 1)]
            ]
        );
        assert_eq!(index.find_key(key), Some(2));
        assert_eq!(index.first_at_or_after(3), Some(3));
        assert_eq!(index.first_at_or_after(5), None);
        assert_eq!(index.in_lines(1, 2), 1..3);
        assert_eq!(index.in_lines(3, 3), 3..3);
        content.truncate(2);
        index.update(&content, "x");
        assert_eq!(all(&index), [vec![(0, 2, 3)], vec![(1, 2, 3)]]);
    }
}
