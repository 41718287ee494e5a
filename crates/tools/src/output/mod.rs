//! Collects streaming command output with bounded memory, for the `bash` tool
//! ([`OutputAccumulator`]) and for user shell commands ([`UserShellOutput`]).
//!
//! Both decode UTF-8 across chunks ([`Utf8Stream`]) and, once output outgrows what they keep,
//! write it whole to a private temp file ([`TempLog`]) whose path the result names. They keep
//! and cut output differently because the reference agent does (`spec/tools.md` §4 and
//! `spec/rpc.md` "Bash"): the tool keeps a rolling tail and saves raw bytes; user shell
//! commands strip escapes, keep whole chunks and save the cleaned text.

mod clean;
mod temp_log;
mod user_shell;

use std::path::{Path, PathBuf};

pub(crate) use temp_log::TempLog;
pub use user_shell::UserShellOutput;

use crate::truncate::{
    TruncatedBy, TruncationOptions, TruncationResult, tail_at_char_boundary, truncate_tail,
};

/// Decodes UTF-8 across chunk boundaries; invalid bytes become U+FFFD.
#[derive(Debug, Default)]
pub(crate) struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Appends the text `chunk` completes; an incomplete sequence at its end waits for the
    /// next chunk.
    pub(crate) fn decode(&mut self, chunk: &[u8], out: &mut String) {
        let joined;
        let mut bytes = chunk;
        if !self.pending.is_empty() {
            self.pending.extend_from_slice(chunk);
            joined = std::mem::take(&mut self.pending);
            bytes = &joined;
        }
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    out.push_str(text);
                    return;
                }
                Err(error) => {
                    let (valid, rest) = bytes.split_at(error.valid_up_to());
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            bytes = &rest[bad..];
                        }
                        None => {
                            // An incomplete sequence at the end: wait for the next chunk.
                            self.pending = rest.to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Ends the stream: an incomplete sequence left over becomes U+FFFD.
    pub(crate) fn finish(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            self.pending.clear();
            out.push('\u{FFFD}');
        }
    }
}

/// A display snapshot of the output so far.
#[derive(Debug, Clone)]
pub(crate) struct OutputSnapshot {
    pub content: String,
    pub truncation: TruncationResult,
    pub full_output_path: Option<PathBuf>,
}

pub(crate) struct OutputAccumulator {
    options: TruncationOptions,
    max_rolling_bytes: usize,
    prefix: String,
    dir: PathBuf,
    decoder: Utf8Stream,
    raw_chunks: Vec<Vec<u8>>,
    tail: String,
    tail_starts_at_line: bool,
    total_raw_bytes: usize,
    total_decoded_bytes: usize,
    completed_lines: usize,
    has_open_line: bool,
    current_line_bytes: usize,
    spill: TempLog,
    scratch: String,
}

impl OutputAccumulator {
    /// `prefix` names the temp file (`<dir>/<prefix>-<16 hex>.log`).
    pub(crate) fn new(prefix: &str, dir: &Path) -> Self {
        let options = TruncationOptions::default();
        Self {
            options,
            max_rolling_bytes: (options.max_bytes * 2).max(1),
            prefix: prefix.to_owned(),
            dir: dir.to_path_buf(),
            decoder: Utf8Stream::default(),
            raw_chunks: Vec::new(),
            tail: String::new(),
            tail_starts_at_line: true,
            total_raw_bytes: 0,
            total_decoded_bytes: 0,
            completed_lines: 0,
            has_open_line: false,
            current_line_bytes: 0,
            spill: TempLog::default(),
            scratch: String::new(),
        }
    }

    pub(crate) fn append(&mut self, data: &[u8]) {
        self.total_raw_bytes += data.len();
        let mut text = std::mem::take(&mut self.scratch);
        text.clear();
        self.decoder.decode(data, &mut text);
        self.append_text(&text);
        self.scratch = text;
        if self.spill.is_started() || self.outgrew_display() {
            self.ensure_spill();
            self.spill.write(data);
        } else if !data.is_empty() {
            self.raw_chunks.push(data.to_vec());
        }
    }

    pub(crate) fn finish(&mut self) {
        let mut text = String::new();
        self.decoder.finish(&mut text);
        self.append_text(&text);
        if self.outgrew_display() {
            self.ensure_spill();
        }
    }

    /// Bytes of the last (possibly unterminated) line.
    pub(crate) fn last_line_bytes(&self) -> usize {
        self.current_line_bytes
    }

    fn total_lines(&self) -> usize {
        self.completed_lines + usize::from(self.has_open_line)
    }

    fn outgrew_display(&self) -> bool {
        self.total_raw_bytes > self.options.max_bytes
            || self.total_decoded_bytes > self.options.max_bytes
            || (self.total_lines() as u64) > self.options.max_lines
    }

    fn append_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_decoded_bytes += text.len();
        self.tail.push_str(text);
        if self.tail.len() > self.max_rolling_bytes * 2 {
            self.trim_tail();
        }
        match text.rfind('\n') {
            None => {
                self.current_line_bytes += text.len();
                self.has_open_line = true;
            }
            Some(last) => {
                self.completed_lines += count_newlines(text.as_bytes());
                let rest = &text[last + 1..];
                self.current_line_bytes = rest.len();
                self.has_open_line = !rest.is_empty();
            }
        }
    }

    fn trim_tail(&mut self) {
        let kept = tail_at_char_boundary(&self.tail, self.max_rolling_bytes);
        let start = self.tail.len() - kept.len();
        if start > 0 {
            self.tail_starts_at_line = self.tail.as_bytes()[start - 1] == b'\n';
            self.tail.drain(..start);
        }
    }

    fn snapshot_text(&self) -> &str {
        if self.tail_starts_at_line {
            return &self.tail;
        }
        // The tail begins mid-line: drop that partial first line.
        match self.tail.find('\n') {
            Some(index) => &self.tail[index + 1..],
            None => &self.tail,
        }
    }

    /// The display tail; with `persist_if_truncated` the temp file is created if the
    /// output was cut, so the notice can name it.
    pub(crate) fn snapshot(&mut self, persist_if_truncated: bool) -> OutputSnapshot {
        let tail = truncate_tail(self.snapshot_text(), self.options);
        let total_lines = self.total_lines();
        let truncated = (total_lines as u64) > self.options.max_lines
            || self.total_decoded_bytes > self.options.max_bytes;
        let truncated_by = if truncated {
            tail.truncated_by
                .or(Some(if self.total_decoded_bytes > self.options.max_bytes {
                    TruncatedBy::Bytes
                } else {
                    TruncatedBy::Lines
                }))
        } else {
            None
        };
        let truncation = TruncationResult {
            truncated,
            truncated_by,
            total_lines,
            total_bytes: self.total_decoded_bytes,
            ..tail
        };
        if persist_if_truncated && truncation.truncated {
            self.ensure_spill();
        }
        OutputSnapshot {
            content: truncation.content.clone(),
            truncation,
            full_output_path: self.spill.path().map(Path::to_path_buf),
        }
    }

    /// Why the full output could not be saved, if it could not.
    pub(crate) fn spill_failure(&self) -> Option<&str> {
        self.spill.failure()
    }

    fn ensure_spill(&mut self) {
        if self.spill.is_started() {
            return;
        }
        self.spill.create(&self.dir, &self.prefix);
        for chunk in std::mem::take(&mut self.raw_chunks) {
            self.spill.write(&chunk);
        }
    }

    /// Flushes the temp file; call once output has ended.
    pub(crate) fn close(&mut self) {
        self.spill.flush();
    }

    /// The output for a program that reads it (a codemode script), after [`Self::close`]:
    /// all of it up to `limit` bytes, or its first and last `limit / 2` bytes around a line
    /// saying how much was left out, and whether anything was. Output that outgrew the
    /// display tail is read back from the temp file; when that could not be saved, the tail
    /// is all there is.
    pub(crate) fn whole(&self, snapshot: &OutputSnapshot, limit: u64) -> (String, bool) {
        let saved = self.spill.path().filter(|_| self.spill.failure().is_none());
        let Some(path) = saved else {
            return (snapshot.content.clone(), snapshot.truncation.truncated);
        };
        read_ends(path, limit).unwrap_or_else(|_| (snapshot.content.clone(), true))
    }
}

/// The file at `path` as text if it is at most `limit` bytes, else its two ends.
fn read_ends(path: &Path, limit: u64) -> std::io::Result<(String, bool)> {
    use std::io::Read as _;
    use std::io::Seek as _;
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size <= limit {
        let mut bytes = Vec::with_capacity(size as usize);
        file.read_to_end(&mut bytes)?;
        return Ok((String::from_utf8_lossy(&bytes).into_owned(), false));
    }
    let half = limit / 2;
    let mut head = vec![0; half as usize];
    file.read_exact(&mut head)?;
    file.seek(std::io::SeekFrom::Start(size - half))?;
    let mut tail = Vec::with_capacity(half as usize);
    file.read_to_end(&mut tail)?;
    let text = format!(
        "{}\n\n[{} bytes left out]\n\n{}",
        String::from_utf8_lossy(&head),
        size - 2 * half,
        String::from_utf8_lossy(&tail)
    );
    Ok((text, true))
}

fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_split_and_invalid_utf8() {
        let mut stream = Utf8Stream::default();
        let mut out = String::new();
        let euro = "€".as_bytes();
        stream.decode(&euro[..1], &mut out);
        stream.decode(&euro[1..], &mut out);
        stream.decode(b"a\xffb", &mut out);
        stream.decode(&euro[..2], &mut out);
        stream.finish(&mut out);
        assert_eq!(out, "€a\u{FFFD}b\u{FFFD}");
    }

    #[test]
    fn small_output_stays_in_memory() {
        let dir = std::env::temp_dir();
        let mut acc = OutputAccumulator::new("knightcode-test", &dir);
        acc.append(b"hello\nworld");
        acc.finish();
        let snapshot = acc.snapshot(true);
        assert_eq!(snapshot.content, "hello\nworld");
        assert!(!snapshot.truncation.truncated);
        assert_eq!(snapshot.truncation.total_lines, 2);
        assert!(snapshot.full_output_path.is_none());
    }
}
