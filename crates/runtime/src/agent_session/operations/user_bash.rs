//! User shell commands (`!cmd` in the TUI, RPC `bash`): run in the session folder with the
//! user's shell, output cleaned and streamed chunk by chunk, the result kept as a
//! `bashExecution` message (`spec/rpc.md` §2 "Bash").
//!
//! Output cleaning follows the reference: UTF-8 decoded across chunks, ANSI escape sequences
//! removed (an escape cut off at a chunk end is completed by the next chunk instead of leaking
//! its tail), control characters other than tab and LF dropped, every CR removed. About two
//! display limits of output are kept in memory; once more than one limit of raw bytes has
//! arrived, the whole cleaned output also goes to a private temp file
//! `knightcode-bash-<16 hex>.log`, whose path the result names when the output was cut.

use std::collections::VecDeque;
use std::fs::File;
use std::fs::OpenOptions;
use std::hash::BuildHasher as _;
use std::io::BufWriter;
use std::io::ErrorKind;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_protocol::BashExecutionMessage;
use knightcode_protocol::rpc::BashResult;
use knightcode_tools::DEFAULT_MAX_BYTES;
use knightcode_tools::ExecOps as _;
use knightcode_tools::ExecRequest;
use knightcode_tools::LocalExecOps;
use knightcode_tools::TruncationOptions;
use knightcode_tools::truncate_tail;
use tokio_util::sync::CancellationToken;

use crate::agent_session::now_millis;
use crate::error::Result;
use crate::error::RuntimeError;

/// An escape sequence longer than this is garbage, not a sequence still arriving: it is
/// dropped instead of being carried to the next chunk.
const MAX_ESCAPE_CARRY: usize = 4096;

/// A user shell command ready to run ([`crate::AgentSession::user_bash`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserBash {
    pub command: String,
    /// `!!`: shown to the user, never sent to the model.
    pub exclude_from_context: bool,
    pub cwd: PathBuf,
    pub shell_path: Option<PathBuf>,
    /// `shellCommandPrefix`, run before the command.
    pub prefix: Option<String>,
}

/// A finished user shell command: the RPC result and the message to store.
#[derive(Debug, Clone, PartialEq)]
pub struct BashOutcome {
    pub result: BashResult,
    pub message: BashExecutionMessage,
}

impl UserBash {
    /// Runs the command until it exits or `cancel` fires (which kills its process group).
    /// `on_chunk` receives each piece of cleaned output as it arrives. Fails only when the
    /// command could not be started (missing shell or folder).
    pub async fn run(
        self,
        cancel: CancellationToken,
        on_chunk: impl FnMut(&str) + Send + 'static,
    ) -> Result<BashOutcome> {
        let output = Arc::new(Mutex::new(BashOutput::new(std::env::temp_dir())));
        let sink = Arc::clone(&output);
        let mut on_chunk = on_chunk;
        let command = match &self.prefix {
            Some(prefix) => format!("{prefix}\n{}", self.command),
            None => self.command.clone(),
        };
        let request = ExecRequest {
            command,
            cwd: self.cwd.clone(),
            env: std::env::vars_os().collect(),
            timeout: None,
            cancel: cancel.clone(),
            on_data: Box::new(move |data: &[u8]| {
                let text = lock(&sink).push(data);
                if !text.is_empty() {
                    on_chunk(&text);
                }
            }),
        };
        let exec = LocalExecOps::new(self.shell_path.clone());
        let status = exec.exec(request).await;
        let mut output = lock(&output);
        let (exit_code, cancelled) = match status {
            Ok(status) if !cancel.is_cancelled() => (status.exit_code.map(i64::from), false),
            Ok(_) | Err(knightcode_tools::ToolsError::Aborted) => (None, true),
            Err(error) => return Err(RuntimeError::Rejected(error.to_string())),
        };
        let result = output.finish(exit_code, cancelled);
        let message = BashExecutionMessage {
            command: self.command,
            output: result.output.clone(),
            exit_code: result.exit_code,
            cancelled: result.cancelled,
            truncated: result.truncated,
            full_output_path: result.full_output_path.clone(),
            exclude_from_context: self.exclude_from_context.then_some(true),
            timestamp: now_millis(),
            ..BashExecutionMessage::default()
        };
        Ok(BashOutcome { result, message })
    }
}

fn lock(output: &Mutex<BashOutput>) -> std::sync::MutexGuard<'_, BashOutput> {
    // Every update is a push onto buffers; a panic cannot leave them half-changed.
    output.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where the full output goes once it outgrows memory.
enum Spill {
    None,
    Open {
        path: PathBuf,
        file: BufWriter<File>,
    },
    /// Creating or writing failed; the path (if any) is still reported.
    Failed {
        path: Option<PathBuf>,
    },
}

/// Cleans and collects a command's output (see the module docs).
pub struct BashOutput {
    utf8_pending: Vec<u8>,
    escape_carry: String,
    chunks: VecDeque<String>,
    buffered: usize,
    raw_total: usize,
    temp_dir: PathBuf,
    spill: Spill,
}

impl std::fmt::Debug for BashOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BashOutput")
            .field("buffered", &self.buffered)
            .field("raw_total", &self.raw_total)
            .finish_non_exhaustive()
    }
}

impl BashOutput {
    /// Output whose temp file (if needed) goes to `temp_dir`.
    pub fn new(temp_dir: PathBuf) -> Self {
        Self {
            utf8_pending: Vec::new(),
            escape_carry: String::new(),
            chunks: VecDeque::new(),
            buffered: 0,
            raw_total: 0,
            temp_dir,
            spill: Spill::None,
        }
    }

    /// Adds raw output; returns the cleaned text it contributed (possibly empty).
    pub fn push(&mut self, data: &[u8]) -> String {
        self.raw_total += data.len();
        let mut decoded = std::mem::take(&mut self.escape_carry);
        decode_utf8(&mut self.utf8_pending, data, &mut decoded);
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
        self.write_spill(text);
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
        if !self.utf8_pending.is_empty() {
            self.utf8_pending.clear();
            let mut text = String::new();
            // U+FFFD passes cleaning unchanged.
            clean("\u{FFFD}", &mut text);
            self.keep(&text);
        }
        self.escape_carry.clear();
        let full: String = self.chunks.iter().map(String::as_str).collect();
        let truncation = truncate_tail(&full, TruncationOptions::default());
        if truncation.truncated {
            self.ensure_spill();
        }
        if let Spill::Open { path, file } = &mut self.spill
            && file.flush().is_err()
        {
            self.spill = Spill::Failed {
                path: Some(path.clone()),
            };
        }
        let full_output_path = match &self.spill {
            Spill::Open { path, .. } | Spill::Failed { path: Some(path) } => {
                Some(path.to_string_lossy().into_owned())
            }
            _ => None,
        };
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
        if !matches!(self.spill, Spill::None) {
            return;
        }
        self.spill = Spill::Failed { path: None };
        for _ in 0..4 {
            let path = self
                .temp_dir
                .join(format!("knightcode-bash-{}.log", random_hex()));
            // Exclusive creation never follows a planted link; output may be private.
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => {
                    self.spill = Spill::Open {
                        path,
                        file: BufWriter::new(file),
                    };
                    break;
                }
                Err(error) if error.kind() == ErrorKind::AlreadyExists => continue,
                Err(_) => break,
            }
        }
        let kept: Vec<String> = self.chunks.iter().cloned().collect();
        for chunk in kept {
            self.write_spill(&chunk);
        }
    }

    fn write_spill(&mut self, text: &str) {
        if let Spill::Open { path, file } = &mut self.spill
            && file.write_all(text.as_bytes()).is_err()
        {
            self.spill = Spill::Failed {
                path: Some(path.clone()),
            };
        }
    }
}

/// 16 hex digits, different per call (the std hasher is randomly keyed per process and
/// advances per instance; the clock and pid make collisions across processes unlikely, and
/// exclusive creation catches the rest).
fn random_hex() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let hash = std::collections::hash_map::RandomState::new().hash_one((nanos, std::process::id()));
    format!("{hash:016x}")
}

/// Decodes `data` after the bytes left over from the last call; invalid bytes become U+FFFD,
/// an incomplete sequence at the end waits in `pending`.
fn decode_utf8(pending: &mut Vec<u8>, data: &[u8], out: &mut String) {
    let joined;
    let mut bytes = data;
    if !pending.is_empty() {
        pending.extend_from_slice(data);
        joined = std::mem::take(pending);
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
                        *pending = rest.to_vec();
                        return;
                    }
                }
            }
        }
    }
}

/// Appends `input` without escape sequences, CRs and other control characters to `out`;
/// returns an escape sequence cut off at the end (to be completed by the next chunk).
fn clean(input: &str, out: &mut String) -> String {
    let bytes = input.as_bytes();
    let mut chars = input.char_indices();
    while let Some((start, c)) = chars.next() {
        let skip = match c {
            '\u{1b}' => escape_length(&bytes[start..]),
            '\u{9b}' => csi_length(&bytes[start..], 2),
            '\t' | '\n' => {
                out.push(c);
                continue;
            }
            c if (c as u32) < 0x20 => continue,
            '\u{FFF9}'..='\u{FFFB}' => continue,
            c => {
                out.push(c);
                continue;
            }
        };
        match skip {
            Some(length) => {
                // Escape sequences are ASCII after their introducer, so `length` lands on a
                // character boundary; skip the characters it covers.
                let end = start + length;
                while chars.offset() < end {
                    if chars.next().is_none() {
                        break;
                    }
                }
            }
            None => {
                let rest = &input[start..];
                return if rest.len() > MAX_ESCAPE_CARRY {
                    String::new()
                } else {
                    rest.to_owned()
                };
            }
        }
    }
    String::new()
}

/// Length of the escape sequence at the start of `bytes` (which begins with ESC); `None`
/// when it is incomplete.
fn escape_length(bytes: &[u8]) -> Option<usize> {
    let next = *bytes.get(1)?;
    match next {
        b'[' => csi_length(bytes, 2),
        // OSC, DCS, SOS, PM, APC: a string ended by BEL or ESC \.
        b']' | b'P' | b'X' | b'^' | b'_' => {
            let mut index = 2;
            while index < bytes.len() {
                match bytes[index] {
                    0x07 => return Some(index + 1),
                    0x1b => {
                        let after = *bytes.get(index + 1)?;
                        return Some(if after == b'\\' { index + 2 } else { index });
                    }
                    _ => index += 1,
                }
            }
            None
        }
        // Intermediate bytes, then one final byte (`ESC ( B`, `ESC # 8`).
        0x20..=0x2f => {
            let mut index = 1;
            while bytes.get(index).is_some_and(|b| (0x20..=0x2f).contains(b)) {
                index += 1;
            }
            bytes.get(index).map(|_| index + 1)
        }
        0x40..=0x7e => Some(2),
        // A lone ESC before ordinary text: drop the ESC only.
        _ => Some(1),
    }
}

/// Length of a control sequence whose parameters start at `start`: parameter bytes,
/// intermediate bytes, one final byte.
fn csi_length(bytes: &[u8], start: usize) -> Option<usize> {
    let mut index = start;
    while bytes.get(index).is_some_and(|b| (0x30..=0x3f).contains(b)) {
        index += 1;
    }
    while bytes.get(index).is_some_and(|b| (0x20..=0x2f).contains(b)) {
        index += 1;
    }
    let last = *bytes.get(index)?;
    Some(if (0x40..=0x7e).contains(&last) {
        index + 1
    } else {
        // Malformed: drop what was read, keep the unexpected byte.
        index
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn cleaned(chunks: &[&[u8]]) -> (Vec<String>, BashResult) {
        let dir = tempfile::tempdir().unwrap();
        let mut output = BashOutput::new(dir.path().to_path_buf());
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
        let mut output = BashOutput::new(dir.path().to_path_buf());
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
        let mut output = BashOutput::new(dir.path().to_path_buf());
        output.push(b"partial");
        let result = output.finish(Some(0), true);
        assert_eq!(result.exit_code, None);
        assert!(result.cancelled);
        assert_eq!(result.output, "partial");
    }
}
