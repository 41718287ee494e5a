//! Output truncation shared by all tools, and the `details.truncation` record.
//!
//! Two independent limits apply, lines and bytes; whichever is reached first wins. Head
//! truncation (file reads, search results) keeps the beginning and never cuts a line; tail
//! truncation (command output) keeps the end and cuts only a single oversized last line.

use serde::Serialize;

/// Most lines a tool returns by default.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Most bytes a tool returns by default (50 KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Longest grep line, in characters, before it is shortened.
pub const GREP_MAX_LINE_LENGTH: usize = 500;
/// The line limit of byte-only truncation (JavaScript's `Number.MAX_SAFE_INTEGER`, which
/// the reference agent records in `maxLines`).
pub const UNLIMITED_LINES: u64 = 9_007_199_254_740_991;

/// Which limit cut the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    Lines,
    Bytes,
}

/// The result of a truncation; serialised as `details.truncation` (field order as the
/// reference agent writes it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncationResult {
    /// The kept content.
    pub content: String,
    pub truncated: bool,
    pub truncated_by: Option<TruncatedBy>,
    /// Lines of the original content.
    pub total_lines: usize,
    /// UTF-8 bytes of the original content.
    pub total_bytes: usize,
    /// Lines kept (complete, except a partial last line in tail truncation).
    pub output_lines: usize,
    /// UTF-8 bytes kept.
    pub output_bytes: usize,
    /// Tail truncation kept only the end of an oversized last line.
    pub last_line_partial: bool,
    /// Head truncation found the first line alone over the byte limit (content is empty).
    pub first_line_exceeds_limit: bool,
    pub max_lines: u64,
    pub max_bytes: usize,
}

/// Limits for one truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncationOptions {
    pub max_lines: u64,
    pub max_bytes: usize,
}

impl Default for TruncationOptions {
    fn default() -> Self {
        Self {
            max_lines: DEFAULT_MAX_LINES as u64,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl TruncationOptions {
    /// Only the byte limit applies (for outputs whose rows another limit already caps).
    pub fn bytes_only() -> Self {
        Self {
            max_lines: UNLIMITED_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Lines for counting: split on `\n`, a trailing newline adds no line, empty text has none.
fn split_lines(content: &str) -> Vec<&str> {
    if content.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = content.split('\n').collect();
    if content.ends_with('\n') {
        lines.pop();
    }
    lines
}

fn untouched(content: &str, total_lines: usize, options: TruncationOptions) -> TruncationResult {
    TruncationResult {
        content: content.to_owned(),
        truncated: false,
        truncated_by: None,
        total_lines,
        total_bytes: content.len(),
        output_lines: total_lines,
        output_bytes: content.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: options.max_lines,
        max_bytes: options.max_bytes,
    }
}

fn within_line_limit(count: usize, max_lines: u64) -> bool {
    (count as u64) <= max_lines
}

/// Keeps the beginning of `content`: whole lines while both limits hold.
pub fn truncate_head(content: &str, options: TruncationOptions) -> TruncationResult {
    let lines = split_lines(content);
    let total_lines = lines.len();
    if within_line_limit(total_lines, options.max_lines) && content.len() <= options.max_bytes {
        return untouched(content, total_lines, options);
    }
    let mut result = untouched(content, total_lines, options);
    result.truncated = true;
    if lines
        .first()
        .is_some_and(|first| first.len() > options.max_bytes)
    {
        result.content.clear();
        result.truncated_by = Some(TruncatedBy::Bytes);
        result.output_lines = 0;
        result.output_bytes = 0;
        result.first_line_exceeds_limit = true;
        return result;
    }
    let mut kept = 0usize;
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    for (index, line) in lines.iter().enumerate() {
        if !within_line_limit(index + 1, options.max_lines) {
            break;
        }
        let cost = line.len() + usize::from(index > 0);
        if bytes + cost > options.max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        kept += 1;
        bytes += cost;
    }
    if !within_line_limit(kept, options.max_lines.saturating_sub(1)) && bytes <= options.max_bytes {
        by = TruncatedBy::Lines;
    }
    // Kept lines are a prefix of `content`, so the output is a prefix slice of it.
    result.content = content.get(..bytes).unwrap_or_default().to_owned();
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = bytes;
    result
}

/// Keeps the end of `content`; an oversized last line keeps its final `max_bytes` bytes.
pub fn truncate_tail(content: &str, options: TruncationOptions) -> TruncationResult {
    let lines = split_lines(content);
    let total_lines = lines.len();
    if within_line_limit(total_lines, options.max_lines) && content.len() <= options.max_bytes {
        return untouched(content, total_lines, options);
    }
    let mut result = untouched(content, total_lines, options);
    result.truncated = true;
    let mut kept = 0usize;
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    let mut partial: Option<&str> = None;
    for line in lines.iter().rev() {
        if !within_line_limit(kept + 1, options.max_lines) {
            break;
        }
        let cost = line.len() + usize::from(kept > 0);
        if bytes + cost > options.max_bytes {
            by = TruncatedBy::Bytes;
            if kept == 0 {
                let tail = tail_at_char_boundary(line, options.max_bytes);
                bytes = tail.len();
                kept = 1;
                partial = Some(tail);
            }
            break;
        }
        kept += 1;
        bytes += cost;
    }
    if !within_line_limit(kept, options.max_lines.saturating_sub(1)) && bytes <= options.max_bytes {
        by = TruncatedBy::Lines;
    }
    result.content = match partial {
        Some(tail) => tail.to_owned(),
        None => lines[total_lines - kept..].join("\n"),
    };
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = result.content.len();
    result.last_line_partial = partial.is_some();
    result
}

/// The last at most `max_bytes` bytes of `text`, starting on a character boundary.
pub(crate) fn tail_at_char_boundary(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut start = text.len() - max_bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Shortens one line to `max_chars` characters plus `... [truncated]`; says whether it did.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        None => (line.to_owned(), false),
        Some((cut, _)) => (format!("{}... [truncated]", &line[..cut]), true),
    }
}

/// `512B`, `1.5KB`, `3.2MB`, rounding halves up like JavaScript's `toFixed(1)`.
pub fn format_size(bytes: u64) -> String {
    const KB: u128 = 1024;
    const MB: u128 = 1024 * 1024;
    let value = u128::from(bytes);
    let tenths = |unit: u128| (value * 20 + unit) / (unit * 2);
    if value < KB {
        format!("{bytes}B")
    } else if value < MB {
        let t = tenths(KB);
        format!("{}.{}KB", t / 10, t % 10)
    } else {
        let t = tenths(MB);
        format!("{}.{}MB", t / 10, t % 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(max_lines: u64, max_bytes: usize) -> TruncationOptions {
        TruncationOptions {
            max_lines,
            max_bytes,
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(1024), "1.0KB");
        assert_eq!(format_size(1280), "1.3KB");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(10 * 1024 * 1024), "10.0MB");
    }

    #[test]
    fn head_keeps_whole_lines() {
        let result = truncate_head("a\nbb\nccc\n", opts(2, 100));
        assert_eq!(result.content, "a\nbb");
        assert_eq!(result.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!((result.total_lines, result.output_lines), (3, 2));

        let result = truncate_head("aaaa\nbbbb\ncccc", opts(10, 9));
        assert_eq!(result.content, "aaaa\nbbbb");
        assert_eq!(result.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!(result.output_bytes, 9);

        let result = truncate_head("aaaaaaaaaa\nb", opts(10, 5));
        assert!(result.first_line_exceeds_limit);
        assert_eq!(result.content, "");

        let result = truncate_head("a\nb\n", opts(10, 100));
        assert!(!result.truncated);
        assert_eq!(result.total_lines, 2);
        assert_eq!(truncate_head("", opts(10, 100)).total_lines, 0);
    }

    #[test]
    fn tail_keeps_the_end() {
        let result = truncate_tail("a\nbb\nccc", opts(2, 100));
        assert_eq!(result.content, "bb\nccc");
        assert_eq!(result.truncated_by, Some(TruncatedBy::Lines));

        let result = truncate_tail("x\néééé", opts(10, 5));
        assert!(result.last_line_partial);
        assert_eq!(result.content, "éé");
        assert_eq!(result.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn lines_are_shortened_by_characters() {
        assert_eq!(truncate_line("abc", 3), ("abc".to_owned(), false));
        assert_eq!(
            truncate_line("ééééé", 2),
            ("éé... [truncated]".to_owned(), true)
        );
    }

    #[test]
    fn record_serialises_in_reference_order() {
        let json = serde_json::to_string(&truncate_head("a", opts(1, 1))).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"content":"a","truncated":false,"truncatedBy":null,"totalLines":1,"totalBytes":1,"outputLines":1,"outputBytes":1,"lastLinePartial":false,"firstLineExceedsLimit":false,"maxLines":1,"maxBytes":1}"#
        );
    }
}
