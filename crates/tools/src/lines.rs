//! A window of a text file's lines, read in one pass with bounded memory: `read` needs the
//! lines it shows and the file's total line count, never the whole file in memory (a 2 GB
//! log is scanned, not loaded).

use std::io;
use std::io::Read;

/// Which lines to keep: from the 0-based line `start`, at most `lines` of them (all to the
/// end when `None`), and at most `max_bytes` of their text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineWindow {
    pub start: usize,
    pub lines: Option<usize>,
    pub max_bytes: usize,
}

/// What a pass over the file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineSlice {
    /// The kept lines joined with `\n` (lossy UTF-8), cut at the window's byte bound.
    pub text: String,
    /// Lines in the file as `text.split('\n')` counts them (a final newline ends one more,
    /// empty line), as the reference's `read` reports them.
    pub total: usize,
    /// Length in bytes of the window's first line, whole (for the "line is too long" notice).
    pub first_line_len: usize,
    /// Lines of the window, whole or cut (the window's end, bounded by the file).
    pub window_lines: usize,
}

const CHUNK: usize = 64 * 1024;

/// Reads `reader` to its end once, keeping only the window's bytes.
pub fn slice_lines(mut reader: impl Read, window: LineWindow) -> io::Result<LineSlice> {
    let end = window.lines.map(|n| window.start.saturating_add(n));
    let in_window = |line: usize| line >= window.start && end.is_none_or(|end| line < end);
    let mut kept: Vec<u8> = Vec::new();
    let mut line = 0usize;
    let mut first_line_len = 0usize;
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut rest = &buffer[..read];
        while !rest.is_empty() {
            let (part, newline) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            if line == window.start {
                first_line_len += part.len();
            }
            if in_window(line) {
                let room = window.max_bytes.saturating_sub(kept.len());
                kept.extend_from_slice(&part[..part.len().min(room)]);
            }
            rest = &rest[part.len()..];
            if newline {
                rest = &rest[1..];
                if in_window(line)
                    && end.is_none_or(|end| line + 1 < end)
                    && kept.len() < window.max_bytes
                {
                    kept.push(b'\n');
                }
                line += 1;
            }
        }
    }
    let total = line + 1;
    let window_lines = end.unwrap_or(total).min(total).saturating_sub(window.start);
    Ok(LineSlice {
        text: String::from_utf8_lossy(&kept).into_owned(),
        total,
        first_line_len,
        window_lines,
    })
}

/// Whether `head` (a file's first bytes) looks binary: a NUL byte, as git decides.
pub fn looks_binary(head: &[u8]) -> bool {
    head.contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, start: usize, lines: Option<usize>, max_bytes: usize) -> LineSlice {
        slice_lines(
            text.as_bytes(),
            LineWindow {
                start,
                lines,
                max_bytes,
            },
        )
        .unwrap()
    }

    #[test]
    fn a_window_matches_splitting_the_whole_text() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\nb\n",
            "\n\n",
            "one\ntwo\nthree\nfour\n",
        ] {
            let all: Vec<&str> = text.split('\n').collect();
            for start in 0..all.len() {
                for lines in [None, Some(0), Some(1), Some(2), Some(10)] {
                    let got = slice(text, start, lines, usize::MAX);
                    let end = lines.map_or(all.len(), |n| (start + n).min(all.len()));
                    assert_eq!(
                        got.text,
                        all[start..end].join("\n"),
                        "{text:?} {start} {lines:?}"
                    );
                    assert_eq!(got.total, all.len());
                    assert_eq!(got.window_lines, end - start);
                    assert_eq!(got.first_line_len, all[start].len());
                }
            }
        }
    }

    #[test]
    fn the_kept_text_stops_at_the_byte_bound_but_the_count_goes_on() {
        let text = "x".repeat(200_000) + "\nshort\n";
        let got = slice(&text, 0, None, 1000);
        assert_eq!(got.text.len(), 1000);
        assert_eq!(got.first_line_len, 200_000);
        assert_eq!(got.total, 3);
    }

    #[test]
    fn lines_across_chunk_boundaries_are_counted_once() {
        let line = "y".repeat(CHUNK - 1);
        let text = format!("{line}\n{line}\n{line}");
        let got = slice(&text, 1, Some(1), usize::MAX);
        assert_eq!(got.text, line);
        assert_eq!(got.total, 3);
    }
}
