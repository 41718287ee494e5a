//! The collector for user shell commands (`!cmd` in the TUI, RPC `bash`).

use std::collections::VecDeque;
use std::path::PathBuf;

use knightcode_protocol::rpc::BashResult;

use super::Utf8Stream;
use super::clean::clean;
use super::temp_log::TempLog;
use crate::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, truncate_tail};

/// Cleans and collects a user shell command's output: UTF-8 decoded across chunks, escape
/// sequences removed (one cut off at a chunk end is completed by the next chunk instead of
/// leaking its tail), control characters other than tab and LF dropped, every CR removed.
/// About two display limits of output are kept in memory; once more than one limit of raw
/// bytes has arrived, the whole cleaned output also goes to a private temp file
/// `knightcode-bash-<16 hex>.log`, whose path the result names when the output was cut.
pub struct UserShellOutput {
    utf8: Utf8Stream,
    escape_carry: String,
    chunks: VecDeque<String>,
    buffered: usize,
    raw_total: usize,
    temp_dir: PathBuf,
    spill: TempLog,
}

impl std::fmt::Debug for UserShellOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserShellOutput")
            .field("buffered", &self.buffered)
            .field("raw_total", &self.raw_total)
            .finish_non_exhaustive()
    }
}

impl UserShellOutput {
    /// Output whose temp file (if needed) goes to `temp_dir`.
    pub fn new(temp_dir: PathBuf) -> Self {
        Self {
            utf8: Utf8Stream::default(),
            escape_carry: String::new(),
            chunks: VecDeque::new(),
            buffered: 0,
            raw_total: 0,
            temp_dir,
            spill: TempLog::default(),
        }
    }

    /// Adds raw output; returns the cleaned text it contributed (possibly empty).
    pub fn push(&mut self, data: &[u8]) -> String {
        self.raw_total += data.len();
        let mut decoded = std::mem::take(&mut self.escape_carry);
        self.utf8.decode(data, &mut decoded);
        let mut text = String::with_capacity(decoded.len());
        self.escape_carry = clean(&decoded, &mut text);
        if self.raw_total > DEFAULT_MAX_BYTES {
            self.ensure_spill();
        }
        self.keep(&text);
        text
    }

    fn keep(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.spill.write(text.as_bytes());
        self.chunks.push_back(text.to_owned());
        self.buffered += text.len();
        while self.buffered > DEFAULT_MAX_BYTES * 2 && self.chunks.len() > 1 {
            if let Some(dropped) = self.chunks.pop_front() {
                self.buffered -= dropped.len();
            }
        }
    }

    /// Ends the output: an incomplete UTF-8 sequence becomes U+FFFD, an unfinished escape
    /// is dropped, the kept output is cut to its last 2000 lines / 50 KB.
    pub fn finish(&mut self, exit_code: Option<i64>, cancelled: bool) -> BashResult {
        let mut replacement = String::new();
        self.utf8.finish(&mut replacement);
        if !replacement.is_empty() {
            let mut text = String::new();
            // U+FFFD passes cleaning unchanged.
            clean(&replacement, &mut text);
            self.keep(&text);
        }
        self.escape_carry.clear();
        let full: String = self.chunks.iter().map(String::as_str).collect();
        let truncation = truncate_tail(&full, TruncationOptions::default());
        if truncation.truncated {
            self.ensure_spill();
        }
        self.spill.flush();
        let full_output_path = self
            .spill
            .path()
            .map(|path| path.to_string_lossy().into_owned());
        BashResult {
            output: if truncation.truncated {
                truncation.content
            } else {
                full
            },
            exit_code: if cancelled { None } else { exit_code },
            cancelled,
            truncated: truncation.truncated,
            full_output_path,
            ..BashResult::default()
        }
    }

    fn ensure_spill(&mut self) {
        if self.spill.is_started() {
            return;
        }
        self.spill.create(&self.temp_dir, "knightcode-bash");
        for chunk in &self.chunks {
            self.spill.write(chunk.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn cleaned(chunks: &[&[u8]]) -> (Vec<String>, BashResult) {
        let dir = tempfile::tempdir().unwrap();
        let mut output = UserShellOutput::new(dir.path().to_path_buf());
        let texts = chunks.iter().map(|c| output.push(c)).collect();
        (texts, output.finish(Some(0), false))
    }

    #[test]
    fn strips_escapes_controls_and_carriage_returns() {
        let (texts, result) = cleaned(&[
            b"\x1b[1;31mred\x1b[0m\r\n",
            b"\x1b]8;;http://x\x07link\x1b]8;;\x1b\\ \x07bell\x00\ttab\n",
            b"\xc2\x9b2Kc1 csi\n",
        ]);
        assert_eq!(texts, ["red\n", "link bell\ttab\n", "c1 csi\n"]);
        assert_eq!(result.output, "red\nlink bell\ttab\nc1 csi\n");
        assert!(!result.truncated && result.full_output_path.is_none());
    }

    #[test]
    fn escapes_and_characters_split_across_chunks() {
        let (texts, result) = cleaned(&[b"a\x1b[3", b"2mb\xe2\x82", b"\xac\x1b", b"[0mc\xff"]);
        assert_eq!(texts, ["a", "b", "€", "c\u{FFFD}"]);
        assert_eq!(result.output, "ab€c\u{FFFD}");
    }

    #[test]
    fn large_output_is_cut_and_saved_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut output = UserShellOutput::new(dir.path().to_path_buf());
        let line = "0123456789".repeat(9) + "\n";
        let mut all = String::new();
        for _ in 0..3000 {
            output.push(line.as_bytes());
            all.push_str(&line);
        }
        let result = output.finish(Some(1), false);
        assert!(result.truncated);
        assert_eq!(result.exit_code, Some(1));
        assert!(result.output.len() <= DEFAULT_MAX_BYTES);
        // The tail keeps whole lines; the final line break does not start another line.
        assert!(all.trim_end().ends_with(&result.output));
        let path = result.full_output_path.unwrap();
        assert!(path.contains("knightcode-bash-"));
        assert_eq!(std::fs::read_to_string(path).unwrap(), all);
    }

    #[test]
    fn cancelled_has_no_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let mut output = UserShellOutput::new(dir.path().to_path_buf());
        output.push(b"partial");
        let result = output.finish(Some(0), true);
        assert_eq!(result.exit_code, None);
        assert!(result.cancelled);
        assert_eq!(result.output, "partial");
    }
}
