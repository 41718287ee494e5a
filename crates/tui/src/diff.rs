//! Colouring of the edit tool's display diff (`details.diff`), as the reference's `diff.js`
//! shows it: each line is `+`, `-` or ` `, a right-aligned line number, a space and the
//! text; skipped stretches are `...` lines. Added lines are green, removed red, context
//! dim; when exactly one removed line is followed by exactly one added line, the words
//! that changed between them are also shown inverted.

use similar::{Algorithm, ChangeTag};

use crate::style::{Style, Theme};

/// One parsed diff line: sign, the line-number gutter (with its alignment spaces) and the
/// text after the separating space.
struct DiffLine<'a> {
    sign: char,
    number: &'a str,
    content: &'a str,
}

/// Splits `+ 12 text` into its parts, accepting exactly what the reference's pattern
/// `^([+-\s])(\s*\d*)\s(.*)$` accepts (including its backtracking when digits are not
/// followed by a space).
fn parse_line(line: &str) -> Option<DiffLine<'_>> {
    let sign = line.chars().next()?;
    if !(sign == '+' || sign == '-' || sign.is_whitespace()) {
        return None;
    }
    let rest = &line[sign.len_utf8()..];
    let spaces = rest.len() - rest.trim_start().len();
    let after_spaces = &rest[spaces..];
    let digits = after_spaces.len()
        - after_spaces
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    let after_digits = &after_spaces[digits..];
    if let Some(sep) = after_digits.chars().next().filter(|c| c.is_whitespace()) {
        let number_end = spaces + digits;
        return Some(DiffLine {
            sign,
            number: &rest[..number_end],
            content: &rest[number_end + sep.len_utf8()..],
        });
    }
    // Give back the last leading whitespace character as the separator.
    let sep = rest[..spaces].chars().last()?;
    let number_end = spaces - sep.len_utf8();
    Some(DiffLine {
        sign,
        number: &rest[..number_end],
        content: &rest[spaces..],
    })
}

fn replace_tabs(text: &str) -> String {
    text.replace('\t', "   ")
}

/// Words, runs of whitespace and single other characters: the units changes are shown in.
fn tokenize(text: &str) -> Vec<&str> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut tokens = Vec::new();
    let mut start = 0;
    let mut current: Option<Class> = None;
    for (at, c) in text.char_indices() {
        let kind = class(c);
        if current.is_some_and(|cur| cur != kind || kind == Class::Other) {
            tokens.push(&text[start..at]);
            start = at;
        }
        current = Some(kind);
    }
    if start < text.len() {
        tokens.push(&text[start..]);
    }
    tokens
}

/// Pieces of one side of a changed line: (text, changed).
type Pieces = Vec<(String, bool)>;

fn push_piece(pieces: &mut Pieces, text: &str, changed: bool) {
    match pieces.last_mut() {
        Some((last, last_changed)) if *last_changed == changed => last.push_str(text),
        _ => pieces.push((text.to_owned(), changed)),
    }
}

/// The word-level difference of a modified line, for the removed and the added side.
fn intra_line(old: &str, new: &str) -> (Pieces, Pieces) {
    let old_tokens = tokenize(old);
    let new_tokens = tokenize(new);
    let changes = similar::capture_diff_slices(Algorithm::Myers, &old_tokens, &new_tokens);
    let mut removed = Pieces::new();
    let mut added = Pieces::new();
    for op in &changes {
        for change in op.iter_changes(&old_tokens, &new_tokens) {
            let value = change.value();
            match change.tag() {
                ChangeTag::Equal => {
                    push_piece(&mut removed, value, false);
                    push_piece(&mut added, value, false);
                }
                ChangeTag::Delete => push_piece(&mut removed, value, true),
                ChangeTag::Insert => push_piece(&mut added, value, true),
            }
        }
    }
    (unmark_leading_space(removed), unmark_leading_space(added))
}

/// Indentation at the start of the first change is not highlighted (a re-indented line
/// would otherwise light up its whole left margin).
fn unmark_leading_space(pieces: Pieces) -> Pieces {
    let mut out = Pieces::new();
    let mut first_change = true;
    for (text, changed) in pieces {
        if changed && first_change {
            first_change = false;
            let trimmed = text.trim_start();
            let lead = &text[..text.len() - trimmed.len()];
            push_piece(&mut out, lead, false);
            if !trimmed.is_empty() {
                push_piece(&mut out, trimmed, true);
            }
        } else {
            push_piece(&mut out, &text, changed);
        }
    }
    out.retain(|(text, _)| !text.is_empty());
    out
}

fn paint_pieces(head: &str, pieces: &Pieces, base: Style, changed: Style) -> String {
    let mut all = vec![(head.to_owned(), false)];
    for (text, is_changed) in pieces {
        push_piece(&mut all, text, *is_changed);
    }
    let mut line = String::new();
    for (text, is_changed) in &all {
        let style = if *is_changed { changed } else { base };
        line.push_str(&style.paint(text));
    }
    line
}

fn plain_line(sign: char, line: &DiffLine<'_>, style: Style) -> String {
    style.paint(&format!(
        "{sign}{} {}",
        line.number,
        replace_tabs(line.content)
    ))
}

/// The consecutive lines from `*i` on that start with `sign`; moves `*i` past them.
fn take_run<'a>(lines: &[&'a str], i: &mut usize, sign: char) -> Vec<DiffLine<'a>> {
    let mut run = Vec::new();
    while let Some(line) = lines.get(*i).and_then(|l| parse_line(l)) {
        if line.sign != sign {
            break;
        }
        run.push(line);
        *i += 1;
    }
    run
}

/// The display diff as coloured lines (not wrapped; put them in a `Text` to wrap).
pub fn render_diff(diff: &str, theme: &Theme) -> Vec<String> {
    let lines: Vec<&str> = diff.split('\n').collect();
    let changed_removed = theme.diff_removed.patch(theme.diff_inline);
    let changed_added = theme.diff_added.patch(theme.diff_inline);
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let Some(parsed) = parse_line(lines[i]) else {
            out.push(theme.diff_context.paint(lines[i]));
            i += 1;
            continue;
        };
        match parsed.sign {
            '-' => {
                let removed = take_run(&lines, &mut i, '-');
                let added = take_run(&lines, &mut i, '+');
                if let ([old], [new]) = (removed.as_slice(), added.as_slice()) {
                    let (old_pieces, new_pieces) =
                        intra_line(&replace_tabs(old.content), &replace_tabs(new.content));
                    out.push(paint_pieces(
                        &format!("-{} ", old.number),
                        &old_pieces,
                        theme.diff_removed,
                        changed_removed,
                    ));
                    out.push(paint_pieces(
                        &format!("+{} ", new.number),
                        &new_pieces,
                        theme.diff_added,
                        changed_added,
                    ));
                } else {
                    for line in &removed {
                        out.push(plain_line('-', line, theme.diff_removed));
                    }
                    for line in &added {
                        out.push(plain_line('+', line, theme.diff_added));
                    }
                }
            }
            '+' => {
                out.push(plain_line('+', &parsed, theme.diff_added));
                i += 1;
            }
            _ => {
                out.push(plain_line(' ', &parsed, theme.diff_context));
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_like_the_reference_pattern() {
        let p = parse_line("+12 let x = 1;");
        assert!(
            p.as_ref()
                .is_some_and(|p| p.sign == '+' && p.number == "12" && p.content == "let x = 1;")
        );
        let p = parse_line("-  3 \tindented");
        assert!(
            p.as_ref()
                .is_some_and(|p| p.number == "  3" && p.content == "\tindented")
        );
        let p = parse_line("    ...");
        assert!(
            p.as_ref()
                .is_some_and(|p| p.sign == ' ' && p.number == "  " && p.content == "...")
        );
        // Digits not followed by a space: the pattern backtracks to the leading spaces.
        let p = parse_line("+ 12abc");
        assert!(
            p.as_ref()
                .is_some_and(|p| p.number.is_empty() && p.content == "12abc")
        );
        assert!(parse_line("+12abc").is_none());
        assert!(parse_line("@@ -1 +1 @@").is_none());
        assert!(parse_line("").is_none());
    }

    #[test]
    fn tokens_split_words_spaces_and_symbols() {
        assert_eq!(
            tokenize("a.b  c(d)"),
            vec!["a", ".", "b", "  ", "c", "(", "d", ")"]
        );
    }
}
