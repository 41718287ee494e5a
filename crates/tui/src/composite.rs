//! Overlays drawn over a frame: a floating component's lines spliced into the frame's
//! visible rows at a column, with the base line's text and styles kept on both sides (the
//! reference's `compositeOverlays`). Where the overlay goes is decided by its owner; this
//! module only splices.

use crate::width::Segment;
use crate::width::grapheme_width;
use crate::width::segments;
use crate::width::truncate_to_width;
use crate::width::visible_width;

/// Ends every style and hyperlink: the overlay starts and ends on a clean state.
const RESET: &str = "\x1b[0m\x1b]8;;\x07";

/// One overlay on the screen: its lines, the terminal row of its top (0 is the first
/// visible row) and its left column and width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Floating<'a> {
    pub lines: &'a [String],
    pub row: usize,
    pub col: usize,
    pub width: usize,
}

/// `frame` with `overlays` drawn over its last `height` rows (the visible screen); a
/// frame shorter than the screen is padded with empty rows first, so overlays keep their
/// screen positions.
pub fn composite(
    frame: &[String],
    overlays: &[Floating<'_>],
    width: usize,
    height: usize,
) -> Vec<String> {
    let needed = overlays
        .iter()
        .map(|o| o.row + o.lines.len())
        .max()
        .unwrap_or(0);
    let rows = frame.len().max(height).max(needed);
    let mut out: Vec<String> = Vec::with_capacity(rows);
    out.extend(frame.iter().cloned());
    out.resize(rows, String::new());
    let top = rows.saturating_sub(height);
    for overlay in overlays {
        for (i, line) in overlay.lines.iter().enumerate() {
            if let Some(base) = out.get_mut(top + overlay.row + i) {
                *base = splice(base, line, overlay.col, overlay.width, width);
            }
        }
    }
    out
}

/// `base` with columns `col..col + span` replaced by `overlay` (cut or padded to `span`),
/// the whole no wider than `total`.
pub fn splice(base: &str, overlay: &str, col: usize, span: usize, total: usize) -> String {
    let (before, before_width) = columns(base, 0, col);
    let (after, after_width) = columns(base, col + span, total);
    let overlay = truncate_to_width(overlay, span, "");
    let overlay_width = visible_width(&overlay);
    let mut out = String::with_capacity(base.len() + overlay.len() + 32);
    out.push_str(&before);
    out.push_str(&" ".repeat(col.saturating_sub(before_width)));
    out.push_str(RESET);
    out.push_str(&overlay);
    out.push_str(&" ".repeat(span.saturating_sub(overlay_width)));
    out.push_str(RESET);
    out.push_str(&after);
    let right = total.saturating_sub(col + span);
    out.push_str(&" ".repeat(right.saturating_sub(after_width)));
    truncate_to_width(&out, total, "")
}

/// `line` with the cell at `col` drawn in `style`, its character kept (a space past the
/// text, the line padded to reach it): a scrollbar's thumb over content.
pub fn restyle_cell(line: &str, col: usize, style: &crate::Style) -> String {
    let (cell, _) = columns(line, col, col + 1);
    let plain: String = segments(&cell)
        .into_iter()
        .filter_map(|segment| match segment {
            Segment::Grapheme(g) => Some(g),
            Segment::Escape(_) => None,
        })
        .collect();
    let text = if plain.is_empty() { " " } else { &plain };
    let total = visible_width(line).max(col + 1);
    splice(line, &style.paint(text), col, 1, total)
}

/// The columns `from..to` of a styled line with the styles in force at `from` (the escape
/// sequences before it, replayed), and their width. A wide character that straddles
/// either edge is left out, so the piece never spills over.
fn columns(line: &str, from: usize, to: usize) -> (String, usize) {
    let mut out = String::new();
    let mut replay = String::new();
    let mut at = 0;
    let mut width = 0;
    let mut started = false;
    for segment in segments(line) {
        match segment {
            Segment::Escape(escape) => {
                if started {
                    out.push_str(escape);
                } else if is_reset(escape) {
                    replay.clear();
                } else {
                    replay.push_str(escape);
                }
            }
            Segment::Grapheme(g) => {
                let w = grapheme_width(g);
                if at >= to {
                    break;
                }
                if at >= from && at + w <= to {
                    if !started {
                        out.push_str(&replay);
                        started = true;
                    }
                    out.push_str(g);
                    width += w;
                }
                at += w;
            }
        }
    }
    if !started && from == 0 {
        out.push_str(&replay);
    }
    (out, width)
}

fn is_reset(escape: &str) -> bool {
    escape == "\x1b[0m" || escape == "\x1b[m"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlay_replaces_its_columns_and_keeps_both_sides() {
        let out = splice("abcdefghij", "XY", 3, 4, 10);
        assert_eq!(strip(&out), "abcXY  hij");
    }

    #[test]
    fn a_restyled_cell_keeps_its_character_and_reaches_past_the_text() {
        let style = crate::Style::new().bg(crate::style::Color::Ansi(8));
        let out = restyle_cell("abc", 1, &style);
        assert_eq!(strip(&out), "abc");
        assert!(out.contains("\x1b[100mb"), "{out:?}");
        let past = restyle_cell("ab", 4, &style);
        assert_eq!(strip(&past), "ab   ");
        assert!(past.contains("\x1b[100m "), "{past:?}");
    }

    #[test]
    fn the_right_side_keeps_its_colour() {
        let base = "\x1b[31mred red red red\x1b[0m";
        let out = splice(base, "O", 2, 3, 15);
        assert_eq!(strip(&out), "reO  ed red red");
        // The part after the overlay is red again.
        let after = out.rsplit(RESET).next().unwrap();
        assert!(after.starts_with("\x1b[31m"), "{out:?}");
    }

    #[test]
    fn a_short_base_line_is_padded_to_the_overlay() {
        let out = splice("ab", "box", 5, 3, 10);
        assert_eq!(strip(&out), "ab   box  ");
    }

    #[test]
    fn a_wide_character_on_the_edge_is_not_split() {
        let out = splice("日本語です", "x", 1, 2, 10);
        assert_eq!(visible_width(&out), 10);
        assert!(!strip(&out).contains('本'));
    }

    #[test]
    fn overlays_sit_on_the_visible_rows_of_a_long_frame() {
        let frame: Vec<String> = (0..10).map(|i| format!("line {i}")).collect();
        let lines = vec!["[box]".to_owned()];
        let out = composite(
            &frame,
            &[Floating {
                lines: &lines,
                row: 1,
                col: 0,
                width: 5,
            }],
            10,
            4,
        );
        assert_eq!(out.len(), 10);
        // The screen shows lines 6-9; its second row is line 7.
        assert_eq!(strip(&out[7]), "[box]7    ");
        assert_eq!(out[6], "line 6");
    }

    #[test]
    fn a_short_frame_is_padded_to_the_screen() {
        let frame = vec!["only".to_owned()];
        let lines = vec!["x".to_owned()];
        let out = composite(
            &frame,
            &[Floating {
                lines: &lines,
                row: 3,
                col: 2,
                width: 1,
            }],
            5,
            5,
        );
        assert_eq!(out.len(), 5);
        assert_eq!(strip(&out[3]), "  x  ");
    }

    fn strip(s: &str) -> String {
        segments(s)
            .into_iter()
            .filter_map(|seg| match seg {
                Segment::Grapheme(g) => Some(g),
                Segment::Escape(_) => None,
            })
            .collect()
    }
}
