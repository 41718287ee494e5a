//! Text machinery of the edit tool: line endings, BOM, fuzzy matching, applying edits, and
//! the two diff formats (a numbered display diff and a unified patch).

use std::time::Duration;

use similar::{DiffOp, DiffTag, TextDiff};
use unicode_normalization::UnicodeNormalization;

use crate::error::ToolsError;

/// Diffing gives up refining after this long and reports a coarser (still correct) diff,
/// so a pathological pair of files cannot hang a tool call.
const DIFF_TIMEOUT: Duration = Duration::from_secs(5);

const BOM: char = '\u{FEFF}';

/// Splits a leading byte-order mark off (models never include it in `oldText`).
pub fn split_bom(text: &str) -> (&str, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (&text[..BOM.len_utf8()], rest),
        None => ("", text),
    }
}

pub fn strip_bom(text: &str) -> &str {
    split_bom(text).1
}

/// A file's line ending: CRLF when its first `\n` is part of `\r\n`, else LF.
pub fn detect_crlf(text: &str) -> bool {
    text.find('\n')
        .is_some_and(|index| index > 0 && text.as_bytes()[index - 1] == b'\r')
}

/// `\r\n` and lone `\r` become `\n`.
pub fn normalize_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

pub fn restore_crlf(text: &str, crlf: bool) -> String {
    if crlf {
        text.replace('\n', "\r\n")
    } else {
        text.to_owned()
    }
}

/// JavaScript's `String.prototype.trimEnd` whitespace (it differs from Rust's in a few
/// code points; fuzzy matching must agree with the reference agent).
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// The forgiving form both sides are compared in when an exact match fails: NFKC, no
/// trailing whitespace on any line, ASCII quotes, dashes and spaces.
pub fn normalize_for_fuzzy_match(text: &str) -> String {
    let nfkc: String = text.nfkc().collect();
    let trimmed: Vec<&str> = nfkc
        .split('\n')
        .map(|line| line.trim_end_matches(is_js_whitespace))
        .collect();
    trimmed
        .join("\n")
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

/// One replacement requested by the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old_text: String,
    pub new_text: String,
}

#[derive(Debug, Clone)]
struct Replacement {
    edit_index: usize,
    start: usize,
    len: usize,
    new_text: String,
}

/// `needle`'s position in `content`, trying an exact match first and then the fuzzy form
/// (positions then refer to the fuzzy form of `content`). Returns (start, length, fuzzy).
fn find_text(
    content: &str,
    fuzzy_content: &mut Option<String>,
    needle: &str,
) -> Option<(usize, usize, bool)> {
    if let Some(start) = content.find(needle) {
        return Some((start, needle.len(), false));
    }
    let fuzzy_content = fuzzy_content.get_or_insert_with(|| normalize_for_fuzzy_match(content));
    let fuzzy_needle = normalize_for_fuzzy_match(needle);
    fuzzy_content
        .find(&fuzzy_needle)
        .map(|start| (start, fuzzy_needle.len(), true))
}

/// Non-overlapping occurrences of `needle` in `content`, both in fuzzy form.
fn count_occurrences(fuzzy_content: &str, needle: &str) -> usize {
    let needle = normalize_for_fuzzy_match(needle);
    if needle.is_empty() {
        // JavaScript's `split("")` yields one piece per UTF-16 unit.
        return fuzzy_content.encode_utf16().count().saturating_sub(1);
    }
    fuzzy_content.matches(needle.as_str()).count()
}

fn not_found(path: &str, index: usize, total: usize) -> ToolsError {
    ToolsError::Message(if total == 1 {
        format!(
            "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
        )
    } else {
        format!(
            "Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace and newlines."
        )
    })
}

fn duplicate(path: &str, index: usize, total: usize, count: usize) -> ToolsError {
    ToolsError::Message(if total == 1 {
        format!(
            "Found {count} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
        )
    } else {
        format!(
            "Found {count} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
        )
    })
}

fn internal(message: &str) -> ToolsError {
    ToolsError::message(message)
}

/// Replaces back to front so earlier positions stay valid; positions are relative to
/// `content` shifted by `offset`.
fn apply_replacements(
    content: &str,
    replacements: &[Replacement],
    offset: usize,
) -> Result<String, ToolsError> {
    let mut result = content.to_owned();
    for replacement in replacements.iter().rev() {
        let start = replacement.start - offset;
        let end = start + replacement.len;
        if result.get(start..end).is_none() {
            return Err(internal("Replacement range is outside the base content."));
        }
        result.replace_range(start..end, &replacement.new_text);
    }
    Ok(result)
}

/// Lines with their `\n` (the last one may lack it).
fn split_lines_with_endings(content: &str) -> Vec<&str> {
    content.split_inclusive('\n').collect()
}

/// Applies replacements found in `base` (the fuzzy form of `original`) so that only the
/// lines they touch come from `base`; every other line keeps its original bytes, so the
/// trailing spaces and typographic quotes elsewhere in the file survive.
fn apply_preserving_unchanged_lines(
    original: &str,
    base: &str,
    replacements: &[Replacement],
) -> Result<String, ToolsError> {
    let original_lines = split_lines_with_endings(original);
    let mut spans = Vec::new();
    let mut offset = 0;
    for line in split_lines_with_endings(base) {
        spans.push((offset, offset + line.len()));
        offset += line.len();
    }
    if original_lines.len() != spans.len() {
        return Err(internal(
            "Cannot preserve unchanged lines because the base content has a different line count.",
        ));
    }
    let mut sorted = replacements.to_vec();
    sorted.sort_by_key(|r| r.start);
    // (first line, end line exclusive, replacements)
    let mut groups: Vec<(usize, usize, Vec<Replacement>)> = Vec::new();
    for replacement in sorted {
        let start = replacement.start;
        let end = start + replacement.len;
        let first = spans
            .iter()
            .position(|&(s, e)| start >= s && start < e)
            .ok_or_else(|| internal("Replacement range is outside the base content."))?;
        let mut last = first;
        while last < spans.len() && spans[last].1 < end {
            last += 1;
        }
        if last >= spans.len() {
            return Err(internal("Replacement range is outside the base content."));
        }
        match groups.last_mut() {
            Some(group) if first < group.1 => {
                group.1 = group.1.max(last + 1);
                group.2.push(replacement);
            }
            _ => groups.push((first, last + 1, vec![replacement])),
        }
    }
    let mut result = String::with_capacity(original.len());
    let mut next_line = 0;
    for (first, end, group) in &groups {
        result.extend(original_lines[next_line..*first].iter().copied());
        let from = spans[*first].0;
        let to = spans[end - 1].1;
        result.push_str(&apply_replacements(&base[from..to], group, from)?);
        next_line = *end;
    }
    result.extend(original_lines[next_line..].iter().copied());
    Ok(result)
}

/// Applies `edits` to LF-normalised `content`, every edit matched against the original.
/// Returns the new content; errors carry the texts the model is shown.
pub fn apply_edits(content: &str, edits: &[Edit], path: &str) -> Result<String, ToolsError> {
    let total = edits.len();
    let edits: Vec<Edit> = edits
        .iter()
        .map(|edit| Edit {
            old_text: normalize_to_lf(&edit.old_text),
            new_text: normalize_to_lf(&edit.new_text),
        })
        .collect();
    for (index, edit) in edits.iter().enumerate() {
        if edit.old_text.is_empty() {
            return Err(ToolsError::Message(if total == 1 {
                format!("oldText must not be empty in {path}.")
            } else {
                format!("edits[{index}].oldText must not be empty in {path}.")
            }));
        }
    }

    let mut fuzzy_content = None;
    let mut any_fuzzy = false;
    for edit in &edits {
        if let Some((_, _, fuzzy)) = find_text(content, &mut fuzzy_content, &edit.old_text) {
            any_fuzzy |= fuzzy;
        }
    }
    // Once any edit needs fuzzy matching, all edits are matched in the fuzzy form so their
    // positions are comparable.
    let base: String = if any_fuzzy {
        fuzzy_content.unwrap_or_else(|| normalize_for_fuzzy_match(content))
    } else {
        content.to_owned()
    };

    let mut fuzzy_base = None;
    let mut replacements = Vec::with_capacity(total);
    for (index, edit) in edits.iter().enumerate() {
        let (start, len, _) = find_text(&base, &mut fuzzy_base, &edit.old_text)
            .ok_or_else(|| not_found(path, index, total))?;
        let fuzzy = fuzzy_base.get_or_insert_with(|| normalize_for_fuzzy_match(&base));
        let count = count_occurrences(fuzzy, &edit.old_text);
        if count > 1 {
            return Err(duplicate(path, index, total, count));
        }
        replacements.push(Replacement {
            edit_index: index,
            start,
            len,
            new_text: edit.new_text.clone(),
        });
    }
    replacements.sort_by_key(|r| r.start);
    for pair in replacements.windows(2) {
        if pair[0].start + pair[0].len > pair[1].start {
            return Err(ToolsError::Message(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
                pair[0].edit_index, pair[1].edit_index
            )));
        }
    }

    let new_content = if any_fuzzy {
        apply_preserving_unchanged_lines(content, &base, &replacements)?
    } else {
        apply_replacements(&base, &replacements, 0)?
    };
    if new_content == content {
        return Err(ToolsError::Message(if total == 1 {
            format!(
                "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            )
        } else {
            format!("No changes made to {path}. The replacements produced identical content.")
        }));
    }
    Ok(new_content)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PartKind {
    Equal,
    Removed,
    Added,
}

/// Consecutive lines of one kind, without their newlines.
struct Part<'a> {
    kind: PartKind,
    lines: Vec<&'a str>,
}

fn line_diff<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, 'a, str> {
    similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new)
}

/// The diff's operations with their positions recounted from their lengths. similar 2.7
/// sometimes gives an operation after a `Replace` of unequal sides a stale `new_index`
/// (found by fuzzing: `Delete { new_index: 8 }` where the new side was at 14), which made
/// the patch's hunk arithmetic underflow. The lengths and their order are right, so the
/// positions follow from them.
fn line_ops(diff: &TextDiff<'_, '_, '_, str>) -> Vec<DiffOp> {
    let (mut old_index, mut new_index) = (0, 0);
    diff.ops()
        .iter()
        .map(|op| {
            let (old_len, new_len) = (op.old_range().len(), op.new_range().len());
            let recounted = match op.tag() {
                DiffTag::Equal => DiffOp::Equal {
                    old_index,
                    new_index,
                    len: old_len,
                },
                DiffTag::Delete => DiffOp::Delete {
                    old_index,
                    old_len,
                    new_index,
                },
                DiffTag::Insert => DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                },
                DiffTag::Replace => DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                },
            };
            old_index += old_len;
            new_index += new_len;
            recounted
        })
        .collect()
}

fn diff_parts<'a>(diff: &TextDiff<'a, 'a, 'a, str>) -> Vec<Part<'a>> {
    let old = diff.old_slices();
    let new = diff.new_slices();
    let mut parts: Vec<Part<'a>> = Vec::new();
    let mut push = |kind: PartKind, slices: &[&'a str]| {
        let lines = slices
            .iter()
            .map(|line| line.strip_suffix('\n').unwrap_or(line));
        match parts.last_mut() {
            Some(last) if last.kind == kind => last.lines.extend(lines),
            _ => parts.push(Part {
                kind,
                lines: lines.collect(),
            }),
        }
    };
    for op in line_ops(diff) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                push(PartKind::Equal, &old[old_index..old_index + len]);
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => push(PartKind::Removed, &old[old_index..old_index + old_len]),
            DiffOp::Insert {
                new_index, new_len, ..
            } => push(PartKind::Added, &new[new_index..new_index + new_len]),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                push(PartKind::Removed, &old[old_index..old_index + old_len]);
                push(PartKind::Added, &new[new_index..new_index + new_len]);
            }
        }
    }
    parts
}

/// The display diff: `+`/`-`/` ` lines numbered (new-file numbers for added and context
/// lines, old-file numbers for removed ones), at most `context` unchanged lines around each
/// change, skipped stretches shown as `...`. A `...` never stands for a single line: that
/// line shows instead (it takes the same room and says more). Also returns the first changed
/// line of the new file.
pub fn display_diff_with_context(old: &str, new: &str, context: usize) -> (String, Option<usize>) {
    let diff = line_diff(old, new);
    let parts = diff_parts(&diff);
    let max_line = old.split('\n').count().max(new.split('\n').count());
    let width = max_line.to_string().len();
    let skipped_marker = format!(" {} ...", " ".repeat(width));
    let mut out: Vec<String> = Vec::new();
    let (mut old_no, mut new_no) = (1usize, 1usize);
    let mut last_was_change = false;
    let mut first_changed = None;
    for (index, part) in parts.iter().enumerate() {
        if part.kind != PartKind::Equal {
            first_changed.get_or_insert(new_no);
            for line in &part.lines {
                if part.kind == PartKind::Added {
                    out.push(format!("+{new_no:>width$} {line}"));
                    new_no += 1;
                } else {
                    out.push(format!("-{old_no:>width$} {line}"));
                    old_no += 1;
                }
            }
            last_was_change = true;
            continue;
        }
        let lines = &part.lines;
        let next_is_change = parts
            .get(index + 1)
            .is_some_and(|p| p.kind != PartKind::Equal);
        let show =
            |out: &mut Vec<String>, shown: &[&str], new_no: &mut usize, old_no: &mut usize| {
                for line in shown {
                    out.push(format!(" {:>width$} {line}", *new_no));
                    *new_no += 1;
                    *old_no += 1;
                }
            };
        if last_was_change && next_is_change && lines.len() > context * 2 + 1 {
            show(&mut out, &lines[..context], &mut new_no, &mut old_no);
            let skipped = lines.len() - 2 * context;
            out.push(skipped_marker.clone());
            old_no += skipped;
            new_no += skipped;
            show(
                &mut out,
                &lines[lines.len() - context..],
                &mut new_no,
                &mut old_no,
            );
        } else if last_was_change && next_is_change {
            show(&mut out, lines, &mut new_no, &mut old_no);
        } else if last_was_change {
            let shown = if lines.len() > context + 1 {
                context
            } else {
                lines.len()
            };
            show(&mut out, &lines[..shown], &mut new_no, &mut old_no);
            let skipped = lines.len() - shown;
            if skipped > 0 {
                out.push(skipped_marker.clone());
                old_no += skipped;
                new_no += skipped;
            }
        } else if next_is_change {
            let skipped = match lines.len().saturating_sub(context) {
                1 => 0,
                skipped => skipped,
            };
            if skipped > 0 {
                out.push(skipped_marker.clone());
                old_no += skipped;
                new_no += skipped;
            }
            show(&mut out, &lines[skipped..], &mut new_no, &mut old_no);
        } else {
            old_no += lines.len();
            new_no += lines.len();
        }
        last_was_change = false;
    }
    (out.join("\n"), first_changed)
}

/// [`display_diff_with_context`] with pi's four lines of context.
pub fn display_diff(old: &str, new: &str) -> (String, Option<usize>) {
    display_diff_with_context(old, new, 4)
}

/// A unified diff with file headers only (`--- path` / `+++ path`), as jsdiff's
/// `createTwoFilesPatch` writes it: ranges always carry a length, `\ No newline at end of
/// file` follows a last line without one.
pub fn unified_patch(path: &str, old: &str, new: &str, context: usize) -> String {
    let diff = line_diff(old, new);
    let (old_lines, new_lines) = (diff.old_slices(), diff.new_slices());
    let mut out = format!("--- {path}\n+++ {path}\n");
    for group in similar::group_diff_ops(line_ops(&diff), context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let old_len = last.old_range().end - old_start;
        let new_start = first.new_range().start;
        let new_len = last.new_range().end - new_start;
        let shown = |start: usize, len: usize| if len == 0 { start } else { start + 1 };
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            shown(old_start, old_len),
            shown(new_start, new_len)
        ));
        for op in &group {
            let (old_range, new_range) = (op.old_range(), op.new_range());
            let lines: Vec<(char, &str)> = match op.tag() {
                DiffTag::Equal => old_lines[old_range].iter().map(|l| (' ', *l)).collect(),
                DiffTag::Delete => old_lines[old_range].iter().map(|l| ('-', *l)).collect(),
                DiffTag::Insert => new_lines[new_range].iter().map(|l| ('+', *l)).collect(),
                DiffTag::Replace => old_lines[old_range]
                    .iter()
                    .map(|l| ('-', *l))
                    .chain(new_lines[new_range].iter().map(|l| ('+', *l)))
                    .collect(),
            };
            for (sign, value) in lines {
                out.push(sign);
                out.push_str(value);
                if !value.ends_with('\n') {
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old_text: old.to_owned(),
            new_text: new.to_owned(),
        }
    }

    /// Found by fuzzing (fuzz/regressions/edit_match): similar's ops for this pair put the
    /// final `Delete` at new line 8 instead of 14, and the hunk length underflowed.
    #[test]
    fn a_stale_position_from_the_differ_does_not_break_the_patch() {
        let old = "{\u{fffd}\n\n\n\n\n\n\n\n\u{fffd}\u{fffd}\n";
        let new = format!("{{{}", "\n".repeat(14));
        let patch = unified_patch("f", old, &new, 3);
        assert!(patch.contains("@@ -1,4 +1,10 @@\n"), "{patch}");
        assert!(patch.contains("@@ -6,4 +12,3 @@\n"), "{patch}");
        assert!(patch.ends_with("-\u{fffd}\u{fffd}\n"), "{patch}");
        let (display, first) = display_diff(old, &new);
        assert_eq!(first, Some(1));
        assert!(display.contains("- 9 \u{fffd}\u{fffd}"), "{display}");
    }

    #[test]
    fn line_endings_follow_the_first_newline() {
        assert!(detect_crlf("a\r\nb\n"));
        assert!(!detect_crlf("a\nb\r\n"));
        assert!(!detect_crlf("no newline"));
        assert_eq!(normalize_to_lf("a\r\nb\rc"), "a\nb\nc");
    }

    #[test]
    fn fuzzy_form_is_forgiving() {
        assert_eq!(
            normalize_for_fuzzy_match("“quote” it’s — x\u{00A0}y  \nz\t"),
            "\"quote\" it's - x y\nz"
        );
    }

    #[test]
    fn fuzzy_edit_keeps_other_lines_byte_for_byte() {
        let content = "keep “this”   \nsay “hi”\nlast  \n";
        let result = apply_edits(content, &[edit("say \"hi\"", "say \"bye\"")], "f");
        assert_eq!(
            result.ok().as_deref(),
            Some("keep “this”   \nsay \"bye\"\nlast  \n")
        );
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let result = apply_edits("abcdef", &[edit("abc", "x"), edit("cde", "y")], "f");
        assert_eq!(
            result.err().map(|e| e.to_string()).as_deref(),
            Some(
                "edits[0] and edits[1] overlap in f. Merge them into one edit or target disjoint regions."
            )
        );
    }

    #[test]
    fn display_diff_numbers_lines() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\n5\nsix\n7\n8\n9\n10\n";
        let (diff, first) = display_diff(old, new);
        assert_eq!(first, Some(6));
        // Four lines of context as pi; the fifth before and after would be a `...` for one
        // line, so it shows.
        assert_eq!(
            diff,
            "  1 1\n  2 2\n  3 3\n  4 4\n  5 5\n- 6 6\n+ 6 six\n  7 7\n  8 8\n  9 9\n 10 10"
        );
    }

    #[test]
    fn display_diff_skips_only_stretches_of_two_lines_or_more() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new = old
            .replace("\n7\n", "\nseven\n")
            .replace("\n18\n", "\neighteen\n");
        let (diff, _) = display_diff(&old, &new);
        let lines: Vec<&str> = diff.lines().collect();
        // 1-2 skipped, 3-6 shown; between the changes 8-17 is ten lines: 4, `...`, 4;
        // after 18 two lines remain and show.
        assert_eq!(lines[0], "    ...");
        assert_eq!(lines[1], "  3 3");
        assert_eq!(lines[7], "  8 8");
        assert_eq!(lines[11], "    ...");
        assert_eq!(lines[12], " 14 14");
        assert_eq!(lines.last(), Some(&" 20 20"));
        assert_eq!(lines.iter().filter(|l| l.trim() == "...").count(), 2);
    }

    #[test]
    fn unified_patch_matches_jsdiff_shape() {
        let patch = unified_patch("f.txt", "a\nb\nc", "a\nB\nc", 4);
        assert_eq!(
            patch,
            "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n"
        );
    }
}
