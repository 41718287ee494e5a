//! Word wrapping of the editor's lines into visual lines, and the mapping between the
//! cursor's byte offset and on-screen columns.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation as _;

use super::buffer::is_whitespace;
use crate::width::visible_width;

/// One row on screen: a byte range of one logical line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct VisualLine {
    pub line: usize,
    pub start: usize,
    pub end: usize,
    /// The last row of its logical line (the cursor may sit at `end` only there).
    pub last: bool,
}

/// Splits `line` into rows at most `width` columns wide, breaking after whitespace where
/// possible and inside words that do not fit a row. `segs` are the line's segments
/// (graphemes, with atomic paste markers merged). Byte ranges are returned; they cover
/// the line without gaps.
pub(super) fn wrap_line(line: &str, width: usize, segs: &[Range<usize>]) -> Vec<Range<usize>> {
    let width = width.max(1);
    if line.is_empty() || visible_width(line) <= width {
        return std::iter::once(0..line.len()).collect();
    }
    let is_atom = |seg: &Range<usize>| line[seg.clone()].graphemes(true).nth(1).is_some();
    let mut chunks = Vec::new();
    let mut current = 0;
    let mut chunk_start = 0;
    // The position after the last whitespace that precedes a word, where a break may go.
    let mut wrap_at: Option<(usize, usize)> = None;
    for (i, seg) in segs.iter().enumerate() {
        let text = &line[seg.clone()];
        let w = visible_width(text);
        if current + w > width {
            match wrap_at {
                Some((at, at_width)) if current - at_width + w <= width => {
                    chunks.push(chunk_start..at);
                    chunk_start = at;
                    current -= at_width;
                }
                _ if chunk_start < seg.start => {
                    chunks.push(chunk_start..seg.start);
                    chunk_start = seg.start;
                    current = 0;
                }
                _ => {}
            }
            wrap_at = None;
        }
        if w > width && is_atom(seg) {
            // A marker wider than a row is cut into rows by graphemes (it stays one unit
            // for editing).
            let inner: Vec<Range<usize>> = text
                .grapheme_indices(true)
                .map(|(at, g)| at..at + g.len())
                .collect();
            let rows = wrap_line(text, width, &inner);
            if let Some((last, full)) = rows.split_last() {
                for row in full {
                    chunks.push(seg.start + row.start..seg.start + row.end);
                }
                chunk_start = seg.start + last.start;
                current = visible_width(&text[last.clone()]);
            }
            wrap_at = None;
            continue;
        }
        current += w;
        let space = !is_atom(seg) && is_whitespace(text);
        if let Some(next) = segs.get(i + 1)
            && space
            && (is_atom(next) || !is_whitespace(&line[next.clone()]))
        {
            wrap_at = Some((next.start, current));
        }
    }
    chunks.push(chunk_start..line.len());
    chunks
}

/// Every row of the text at `width`.
pub(super) fn visual_lines(
    lines: &[String],
    width: usize,
    segments: impl Fn(&str) -> Vec<Range<usize>>,
) -> Vec<VisualLine> {
    let mut rows = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let chunks = wrap_line(line, width, &segments(line));
        let count = chunks.len();
        for (i, chunk) in chunks.into_iter().enumerate() {
            rows.push(VisualLine {
                line: index,
                start: chunk.start,
                end: chunk.end,
                last: i + 1 == count,
            });
        }
    }
    rows
}

/// The row holding byte offset `col` of logical line `line`.
pub(super) fn find_row(rows: &[VisualLine], line: usize, col: usize) -> usize {
    rows.iter()
        .position(|r| r.line == line && r.start <= col && (col < r.end || (r.last && col == r.end)))
        .unwrap_or(rows.len().saturating_sub(1))
}

/// The columns from the row's start to byte offset `col`.
pub(super) fn column_of(text: &str, row: &VisualLine, col: usize) -> usize {
    let col = col.clamp(row.start, row.end);
    visible_width(&text[row.start..col])
}

/// The furthest column the cursor can reach on `row`: its end on a line's last row, the
/// start of its last segment otherwise (the end belongs to the next row).
pub(super) fn max_column(text: &str, row: &VisualLine, segs: &[Range<usize>]) -> usize {
    let width = visible_width(&text[row.start..row.end]);
    if row.last {
        return width;
    }
    let last = segs
        .iter()
        .rev()
        .find(|s| s.start < row.end && s.end > row.start)
        .map_or(0, |s| {
            visible_width(&text[s.start.max(row.start)..s.end.min(row.end)])
        });
    width.saturating_sub(last)
}

/// The byte offset on `row` closest to `column` without passing it. Segments that start
/// before the row (a marker continued from the row above) are reported as their start.
pub(super) fn offset_at_column(
    text: &str,
    row: &VisualLine,
    segs: &[Range<usize>],
    column: usize,
) -> usize {
    let mut used = 0;
    for seg in segs
        .iter()
        .filter(|s| s.end > row.start && s.start < row.end)
    {
        if seg.start < row.start {
            let w = visible_width(&text[row.start..seg.end.min(row.end)]);
            if used + w > column || seg.end >= row.end {
                return seg.start;
            }
            used += w;
            continue;
        }
        let w = visible_width(&text[seg.clone()]);
        if used + w > column || (seg.end >= row.end && !row.last) {
            return seg.start;
        }
        used += w;
    }
    row.end
}
