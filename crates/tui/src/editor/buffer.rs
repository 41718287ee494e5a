//! The text and cursor of the editor, and the character classes word motions use.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation as _;

/// Lines of text (no `\n` inside) and the cursor as line index and byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct State {
    pub lines: Vec<String>,
    pub line: usize,
    pub col: usize,
}

impl Default for State {
    fn default() -> Self {
        Self {
            lines: vec![String::new()],
            line: 0,
            col: 0,
        }
    }
}

impl State {
    /// The text split into lines, cursor at the very end.
    pub fn from_text(text: &str) -> Self {
        let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let line = lines.len().saturating_sub(1);
        let col = lines.last().map_or(0, String::len);
        Self { lines, line, col }
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    pub fn current(&self) -> &str {
        self.lines.get(self.line).map_or("", String::as_str)
    }

    pub fn before_cursor(&self) -> &str {
        let line = self.current();
        &line[..self.col.min(line.len())]
    }

    /// Inserts `text` (which may contain `\n`) at the cursor and moves the cursor after it.
    pub fn insert(&mut self, text: &str) {
        let line = std::mem::take(&mut self.lines[self.line]);
        let (before, after) = line.split_at(self.col.min(line.len()));
        let mut pieces = text.split('\n');
        let first = pieces.next().unwrap_or("");
        let rest: Vec<&str> = pieces.collect();
        match rest.split_last() {
            None => {
                self.lines[self.line] = format!("{before}{first}{after}");
                self.col = before.len() + first.len();
            }
            Some((last, middle)) => {
                self.lines[self.line] = format!("{before}{first}");
                let mut tail: Vec<String> = middle.iter().map(|s| (*s).to_owned()).collect();
                tail.push(format!("{last}{after}"));
                let count = tail.len();
                let at = self.line + 1;
                self.lines.splice(at..at, tail);
                self.line += count;
                self.col = last.len();
            }
        }
    }

    /// Removes `range` (byte offsets) from the current line; the cursor goes to its start.
    pub fn remove_in_line(&mut self, range: Range<usize>) -> String {
        let line = &mut self.lines[self.line];
        let removed: String = line.drain(range.clone()).collect();
        self.col = range.start;
        removed
    }

    /// Joins the current line onto the previous one; the cursor goes to the seam.
    pub fn join_with_previous(&mut self) {
        if self.line == 0 {
            return;
        }
        let current = self.lines.remove(self.line);
        self.line -= 1;
        self.col = self.lines[self.line].len();
        self.lines[self.line].push_str(&current);
    }

    /// Joins the next line onto the current one; the cursor stays.
    pub fn join_with_next(&mut self) {
        if self.line + 1 >= self.lines.len() {
            return;
        }
        let next = self.lines.remove(self.line + 1);
        self.lines[self.line].push_str(&next);
    }
}

/// Grapheme clusters of `text` as byte ranges, with each of `atomic` (sorted,
/// non-overlapping ranges such as paste markers) merged into one segment.
pub(super) fn segments(text: &str, atomic: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut markers = atomic.iter().peekable();
    for (start, grapheme) in text.grapheme_indices(true) {
        while markers.next_if(|m| m.end <= start).is_some() {}
        match markers.peek() {
            Some(m) if start >= m.start && start < m.end => {
                if start == m.start {
                    out.push(m.start..m.end);
                }
            }
            _ => out.push(start..start + grapheme.len()),
        }
    }
    out
}

pub(super) fn is_whitespace(segment: &str) -> bool {
    segment.chars().next().is_some_and(char::is_whitespace)
}

/// Characters that end a word run for word motions (the reference's set).
pub(super) fn is_punctuation(segment: &str) -> bool {
    segment
        .chars()
        .next()
        .is_some_and(|c| "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`".contains(c))
}

/// What a word motion treats a segment as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Space,
    Punct,
    Word,
    /// An atomic segment (paste marker): one word on its own.
    Atom,
}

pub(super) fn classify(text: &str, segment: &Range<usize>) -> Class {
    let s = &text[segment.clone()];
    if s.graphemes(true).nth(1).is_some() {
        Class::Atom
    } else if is_whitespace(s) {
        Class::Space
    } else if is_punctuation(s) {
        Class::Punct
    } else {
        Class::Word
    }
}

/// Where a backward word motion from `col` lands: over spaces, then over one run of
/// punctuation, word characters, or one atomic segment.
pub(super) fn word_start_before(text: &str, segs: &[Range<usize>], col: usize) -> usize {
    let mut i = segs.partition_point(|s| s.end <= col);
    let mut pos = col;
    while i > 0 && classify(text, &segs[i - 1]) == Class::Space {
        i -= 1;
        pos = segs[i].start;
    }
    if i == 0 {
        return pos;
    }
    let class = classify(text, &segs[i - 1]);
    if class == Class::Atom {
        return segs[i - 1].start;
    }
    while i > 0 && classify(text, &segs[i - 1]) == class {
        i -= 1;
        pos = segs[i].start;
    }
    pos
}

/// Where a forward word motion from `col` lands (mirror of [`word_start_before`]).
pub(super) fn word_end_after(text: &str, segs: &[Range<usize>], col: usize) -> usize {
    let mut i = segs.partition_point(|s| s.start < col);
    let mut pos = col;
    while i < segs.len() && classify(text, &segs[i]) == Class::Space {
        pos = segs[i].end;
        i += 1;
    }
    if i >= segs.len() {
        return pos;
    }
    let class = classify(text, &segs[i]);
    if class == Class::Atom {
        return segs[i].end;
    }
    while i < segs.len() && classify(text, &segs[i]) == class {
        pos = segs[i].end;
        i += 1;
    }
    pos
}
