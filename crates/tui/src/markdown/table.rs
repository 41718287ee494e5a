//! Table layout: column widths fitted to the available width the way the reference does
//! it (natural widths when they fit; otherwise every column keeps room for its longest word,
//! up to 30 columns, and the rest is shared in proportion to what each column lacks), cells
//! word-wrapped inside box-drawing borders.

use crate::width::{visible_width, wrap_text_with_ansi};

/// Words longer than this may be broken inside a cell rather than widen their column.
const MAX_UNBROKEN_WORD: usize = 30;

fn longest_word(text: &str) -> usize {
    text.split_whitespace()
        .map(visible_width)
        .max()
        .unwrap_or(0)
        .min(MAX_UNBROKEN_WORD)
}

/// Widths of the cell areas (without borders and cell padding), or `None` when the width
/// cannot hold one column each.
pub(super) fn column_widths(
    header: &[String],
    rows: &[Vec<String>],
    width: usize,
) -> Option<Vec<usize>> {
    let columns = header.len();
    // "│ " + " │ " between columns + " │"
    let overhead = 3 * columns + 1;
    let available = width.checked_sub(overhead).filter(|&a| a >= columns)?;

    let mut natural: Vec<usize> = header.iter().map(|cell| visible_width(cell)).collect();
    let mut min_words: Vec<usize> = header
        .iter()
        .map(|cell| longest_word(cell).max(1))
        .collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            natural[i] = natural[i].max(visible_width(cell));
            min_words[i] = min_words[i].max(longest_word(cell));
        }
    }

    let mut minimum = min_words.clone();
    if minimum.iter().sum::<usize>() > available {
        // Not even the longest words fit: share what there is by how long they are.
        minimum = vec![1; columns];
        let remaining = available - columns;
        let weights: Vec<usize> = min_words.iter().map(|w| w.saturating_sub(1)).collect();
        let total: usize = weights.iter().sum();
        for (min, weight) in minimum.iter_mut().zip(&weights) {
            *min += (weight * remaining).checked_div(total).unwrap_or(0);
        }
        let mut leftover = available.saturating_sub(minimum.iter().sum());
        for min in &mut minimum {
            if leftover == 0 {
                break;
            }
            *min += 1;
            leftover -= 1;
        }
    }

    if natural.iter().sum::<usize>() + overhead <= width {
        return Some(
            natural
                .iter()
                .zip(&minimum)
                .map(|(n, m)| *n.max(m))
                .collect(),
        );
    }
    let min_total: usize = minimum.iter().sum();
    let potential: usize = natural
        .iter()
        .zip(&minimum)
        .map(|(n, m)| n.saturating_sub(*m))
        .sum();
    let extra = available.saturating_sub(min_total);
    let mut widths: Vec<usize> = natural
        .iter()
        .zip(&minimum)
        .map(|(n, m)| {
            let lacking = n.saturating_sub(*m);
            m + (lacking * extra).checked_div(potential).unwrap_or(0)
        })
        .collect();
    let mut remaining = available.saturating_sub(widths.iter().sum());
    while remaining > 0 {
        let mut grew = false;
        for (w, n) in widths.iter_mut().zip(&natural) {
            if remaining > 0 && *w < *n {
                *w += 1;
                remaining -= 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    Some(widths)
}

fn rule(widths: &[usize], left: &str, middle: &str, right: &str) -> String {
    let cells: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    format!("{left}─{}─{right}", cells.join(&format!("─{middle}─")))
}

fn row_lines(cells: &[String], widths: &[usize], out: &mut Vec<String>) {
    let wrapped: Vec<Vec<String>> = widths
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let text = cells.get(i).map(String::as_str).unwrap_or("");
            wrap_text_with_ansi(text, (*w).max(1))
        })
        .collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    for line in 0..height {
        let parts: Vec<String> = wrapped
            .iter()
            .zip(widths)
            .map(|(cell, w)| {
                let text = cell.get(line).map(String::as_str).unwrap_or("");
                let pad = w.saturating_sub(visible_width(text));
                format!("{text}{}", " ".repeat(pad))
            })
            .collect();
        out.push(format!("│ {} │", parts.join(" │ ")));
    }
}

/// The bordered table, or `None` when it does not fit (the caller shows the source).
pub(super) fn render(header: &[String], rows: &[Vec<String>], width: usize) -> Option<Vec<String>> {
    if header.is_empty() {
        return Some(Vec::new());
    }
    let widths = column_widths(header, rows, width)?;
    let mut out = vec![rule(&widths, "┌", "┬", "┐")];
    row_lines(header, &widths, &mut out);
    let separator = rule(&widths, "├", "┼", "┤");
    out.push(separator.clone());
    for (i, row) in rows.iter().enumerate() {
        row_lines(row, &widths, &mut out);
        if i + 1 < rows.len() {
            out.push(separator.clone());
        }
    }
    out.push(rule(&widths, "└", "┴", "┘"));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| (*c).to_owned()).collect()
    }

    #[test]
    fn natural_widths_when_they_fit() {
        let widths = column_widths(&strings(&["a", "bb"]), &[strings(&["ccc", "d"])], 40);
        assert_eq!(widths, Some(vec![3, 2]));
    }

    #[test]
    fn shrinks_to_the_width_and_refuses_when_hopeless() {
        let header = strings(&["name", "description"]);
        let rows = vec![strings(&["x", "a long description of several words"])];
        let widths = column_widths(&header, &rows, 30);
        assert_eq!(
            widths.as_ref().map(|w| w.iter().sum::<usize>() + 7),
            Some(30)
        );
        assert_eq!(column_widths(&header, &rows, 8), None);
    }
}
