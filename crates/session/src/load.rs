//! Reading session files: streaming parse, torn-tail detection, malformed-line tolerance.
//!
//! Reading never modifies the file; repairs are decided here and carried out by an owning
//! open (`manager.rs`).

use std::fs::File;
use std::io::BufRead;
use std::io::BufReader;
use std::io::Read;
use std::path::Path;

use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;

use crate::error::Result;
use crate::error::SessionError;

/// Something odd found while reading a session file. None of these stop the load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadWarning {
    /// A line that is not JSON was skipped (1-based line number).
    MalformedLine { line: usize, error: String },
    /// A JSON line whose known fields have the wrong shape; kept as an untyped entry.
    UntypedEntry { line: usize, error: String },
    /// The file ended in the middle of a line (a crash mid-write); `bytes` were not loaded.
    TornTail { line: usize, bytes: usize },
    /// Two entries share an id; the later one wins lookups.
    DuplicateId { id: String },
    /// An entry names a parent that does not exist (a lost or damaged line): it is attached
    /// to the entry before it in the file (`attached_to`), so the intact history before it
    /// stays in its context; the first entry becomes a root.
    Orphan {
        id: String,
        parent_id: String,
        attached_to: Option<String>,
    },
    /// Following parents from this entry loops; the loop is cut here.
    Cycle { id: String },
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MalformedLine { line, error } => {
                write!(f, "line {line} is not valid JSON and was skipped ({error})")
            }
            Self::UntypedEntry { line, error } => write!(
                f,
                "line {line} has an unexpected shape and is kept unchanged but not interpreted ({error})"
            ),
            Self::TornTail { line, bytes } => write!(
                f,
                "line {line} was cut off mid-write ({bytes} bytes, probably a crash); it was set aside"
            ),
            Self::DuplicateId { id } => write!(
                f,
                "entry id {id} appears more than once; the last one is used"
            ),
            Self::Orphan {
                id,
                parent_id,
                attached_to: Some(previous),
            } => write!(
                f,
                "entry {id} points at missing parent {parent_id} (a lost or damaged line); it is attached to {previous}, the entry before it in the file, so the history before it is kept"
            ),
            Self::Orphan {
                id,
                parent_id,
                attached_to: None,
            } => write!(
                f,
                "entry {id} points at missing parent {parent_id} (a lost or damaged line); it is treated as a root"
            ),
            Self::Cycle { id } => write!(
                f,
                "entry {id} is part of a parent loop; the loop was cut there"
            ),
        }
    }
}

/// A torn final line: where it starts and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// The parsed content of a session file.
#[derive(Debug, Clone)]
pub struct LoadedFile {
    pub header: SessionHeader,
    pub entries: Vec<SessionEntry>,
    pub warnings: Vec<LoadWarning>,
    pub torn_tail: Option<TornTail>,
    /// The last complete entry lacks its `\n` (the owner appends one).
    pub missing_final_newline: bool,
    /// Byte length of the file as read.
    pub len: u64,
}

/// Turns an untyped `{"type":"session",…}` record into a header with a string id.
pub(crate) fn header_from_entry(entry: &SessionEntry) -> Option<SessionHeader> {
    let SessionEntry::Unknown(map) = entry else {
        return None;
    };
    if map.get("type").and_then(|v| v.as_str()) != Some("session") {
        return None;
    }
    if !map.get("id").is_some_and(serde_json::Value::is_string) {
        return None;
    }
    let mut rest = (**map).clone();
    rest.shift_remove("type");
    serde_json::from_value(serde_json::Value::Object(rest)).ok()
}

/// Parses one line. `Ok(None)` means it is not JSON at all.
pub(crate) fn parse_line(
    line: &[u8],
    line_no: usize,
    warnings: &mut Vec<LoadWarning>,
) -> Option<SessionEntry> {
    match serde_json::from_slice::<SessionEntry>(line) {
        Ok(entry) => Some(entry),
        Err(typed_error) => match serde_json::from_slice::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(map)) => {
                warnings.push(LoadWarning::UntypedEntry {
                    line: line_no,
                    error: typed_error.to_string(),
                });
                Some(SessionEntry::Unknown(Box::new(map)))
            }
            Ok(_) => {
                warnings.push(LoadWarning::MalformedLine {
                    line: line_no,
                    error: "not a JSON object".to_owned(),
                });
                None
            }
            Err(error) => {
                warnings.push(LoadWarning::MalformedLine {
                    line: line_no,
                    error: error.to_string(),
                });
                None
            }
        },
    }
}

fn trim_line_end(mut line: &[u8]) -> &[u8] {
    if let Some(rest) = line.strip_suffix(b"\n") {
        line = rest;
    }
    if let Some(rest) = line.strip_suffix(b"\r") {
        line = rest;
    }
    line
}

/// Bytes handed to one parse job. Small enough to bound memory in flight, large enough that
/// thread hand-offs cost nothing next to parsing.
const CHUNK_BYTES: usize = 1 << 20;

/// What one chunk of complete lines parsed into; line numbers are relative to the chunk.
#[derive(Default)]
struct ParsedChunk {
    lines: usize,
    records: Vec<(usize, SessionEntry)>,
    warnings: Vec<LoadWarning>,
}

fn parse_chunk(bytes: &[u8]) -> ParsedChunk {
    let mut parsed = ParsedChunk {
        lines: memchr::memchr_iter(b'\n', bytes).count(),
        ..ParsedChunk::default()
    };
    // Fast path: one streaming deserializer over the whole chunk reuses its scratch buffer
    // across lines. The first line it cannot take is handed to the line-by-line path.
    let resume_at = match std::str::from_utf8(bytes) {
        Ok(text) => stream_chunk(text, &mut parsed.records),
        Err(_) => 0,
    };
    parse_lines(bytes, resume_at, &mut parsed);
    parsed
}

/// Parses records until the first problem; returns the byte offset of the line where
/// line-by-line parsing must take over (`text.len()` when everything parsed).
fn stream_chunk(text: &str, records: &mut Vec<(usize, SessionEntry)>) -> usize {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<SessionEntry>();
    let mut previous_end = 0;
    loop {
        let value_start = skip_whitespace(text.as_bytes(), stream.byte_offset());
        match stream.next() {
            None => return text.len(),
            Some(Ok(entry)) => {
                // One record per line: a second value on the same line means the line is not
                // what a writer produces; let the line parser judge it.
                if records.is_empty() || text[previous_end..value_start].contains('\n') {
                    records.push((0, entry));
                    previous_end = stream.byte_offset();
                } else {
                    records.pop();
                    return line_start(text.as_bytes(), value_start);
                }
            }
            Some(Err(_)) => {
                let start = line_start(text.as_bytes(), value_start);
                if previous_end > start {
                    // The failure is on the line of the last accepted value.
                    records.pop();
                }
                return start;
            }
        }
    }
}

fn skip_whitespace(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(bytes.len(), |p| from + p)
}

fn line_start(bytes: &[u8], offset: usize) -> usize {
    memchr::memrchr(b'\n', &bytes[..offset.min(bytes.len())]).map_or(0, |p| p + 1)
}

/// The tolerant path: each line on its own, malformed ones reported with their line number.
fn parse_lines(bytes: &[u8], from: usize, parsed: &mut ParsedChunk) {
    if from >= bytes.len() {
        return;
    }
    let first_line = memchr::memchr_iter(b'\n', &bytes[..from]).count();
    for (index, raw) in bytes[from..].split(|b| *b == b'\n').enumerate() {
        let line = trim_line_end(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line_no = first_line + index + 1;
        if let Some(entry) = parse_line(line, line_no, &mut parsed.warnings) {
            parsed.records.push((line_no, entry));
        }
    }
}

fn shift_line(warning: &mut LoadWarning, base: usize) {
    match warning {
        LoadWarning::MalformedLine { line, .. }
        | LoadWarning::UntypedEntry { line, .. }
        | LoadWarning::TornTail { line, .. } => *line += base,
        _ => {}
    }
}

/// Collects parsed chunks in file order into the final entry list.
struct Assembler<'a> {
    path: &'a Path,
    header: Option<SessionHeader>,
    entries: Vec<SessionEntry>,
    warnings: Vec<LoadWarning>,
    base_line: usize,
    file_size: u64,
}

impl Assembler<'_> {
    fn add(&mut self, chunk: ParsedChunk, chunk_bytes: usize) -> Result<()> {
        if self.entries.capacity() == 0
            && chunk.records.len() > 1
            && chunk_bytes < self.file_size as usize
        {
            // Size the list once from the first chunk's density, so a large session is not
            // copied through repeated doublings (which would double its peak memory).
            let per_record = (chunk_bytes / chunk.records.len()).max(1) as u64;
            let estimate = self.file_size / per_record;
            self.entries
                .reserve((estimate + estimate / 20 + 16) as usize);
        }
        for mut warning in chunk.warnings {
            shift_line(&mut warning, self.base_line);
            self.warnings.push(warning);
        }
        for (_, entry) in chunk.records {
            if self.header.is_none() {
                match header_from_entry(&entry) {
                    Some(found) => self.header = Some(found),
                    // The first record must be the header; anything else is not a session.
                    None => {
                        return Err(SessionError::NotASession {
                            path: self.path.to_owned(),
                        });
                    }
                }
                continue;
            }
            self.entries.push(entry);
        }
        self.base_line += chunk.lines;
        Ok(())
    }

    /// Judges the bytes after the last newline: a complete record missing its `\n`, or a
    /// torn write.
    fn finish(mut self, tail: Vec<u8>, len: u64) -> Result<Option<LoadedFile>> {
        if len == 0 {
            return Ok(None);
        }
        let mut torn_tail = None;
        let mut missing_final_newline = false;
        let tail_line = trim_line_end(&tail);
        if !tail_line.iter().all(u8::is_ascii_whitespace) {
            let line_no = self.base_line + 1;
            let mut tail_warnings = Vec::new();
            match parse_line(tail_line, line_no, &mut tail_warnings) {
                Some(entry) if tail_warnings.is_empty() => {
                    missing_final_newline = true;
                    push_record(entry, &mut self.header, &mut self.entries);
                }
                _ => {
                    self.warnings.push(LoadWarning::TornTail {
                        line: line_no,
                        bytes: tail.len(),
                    });
                    torn_tail = Some(TornTail {
                        offset: len - tail.len() as u64,
                        bytes: tail,
                    });
                }
            }
        }
        let Some(header) = self.header else {
            return Err(SessionError::NotASession {
                path: self.path.to_owned(),
            });
        };
        Ok(Some(LoadedFile {
            header,
            entries: self.entries,
            warnings: self.warnings,
            torn_tail,
            missing_final_newline,
            len,
        }))
    }
}

/// Reads a session file. `Ok(None)`: the file is empty. Error `NotASession`: it has content
/// but no header line. Large files are parsed on all cores in 1 MiB chunks of complete lines;
/// a final line without its `\n` is either a missing newline (it parses) or a torn write.
pub fn load_file(path: &Path) -> Result<Option<LoadedFile>> {
    let mut file = File::open(path).map_err(SessionError::io("open", path))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4);
    let mut assembler = Assembler {
        path,
        header: None,
        entries: Vec::new(),
        warnings: Vec::new(),
        base_line: 0,
        file_size: size,
    };
    if workers > 1 && size > 2 * CHUNK_BYTES as u64 {
        let (tail, len) = parse_in_parallel(&mut file, path, workers, &mut assembler)?;
        return assembler.finish(tail, len);
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.read_to_end(&mut bytes)
        .map_err(SessionError::io("read", path))?;
    load_into(assembler, bytes)
}

/// [`load_file`] on bytes already in memory (read on one thread): what a small file goes
/// through, and the fuzzing entry point. `path` only names the file in errors and warnings.
pub fn load_bytes(path: &Path, bytes: Vec<u8>) -> Result<Option<LoadedFile>> {
    let assembler = Assembler {
        path,
        header: None,
        entries: Vec::new(),
        warnings: Vec::new(),
        base_line: 0,
        file_size: bytes.len() as u64,
    };
    load_into(assembler, bytes)
}

fn load_into(mut assembler: Assembler<'_>, mut bytes: Vec<u8>) -> Result<Option<LoadedFile>> {
    let len = bytes.len() as u64;
    let tail = match memchr::memrchr(b'\n', &bytes) {
        Some(last_newline) => bytes.split_off(last_newline + 1),
        None => std::mem::take(&mut bytes),
    };
    assembler.add(parse_chunk(&bytes), bytes.len())?;
    assembler.finish(tail, len)
}

/// Reads 1 MiB chunks of complete lines and parses them on `workers` threads, handing results
/// to `assembler` in file order as they complete. Queues are bounded, so only a few chunks are
/// in memory besides the entries themselves. Returns the bytes after the last newline and
/// the file length.
fn parse_in_parallel(
    file: &mut File,
    path: &Path,
    workers: usize,
    assembler: &mut Assembler<'_>,
) -> Result<(Vec<u8>, u64)> {
    let (job_tx, job_rx) = std::sync::mpsc::sync_channel::<(usize, Vec<u8>)>(workers);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, ParsedChunk, Vec<u8>)>();
    let job_rx = std::sync::Mutex::new(job_rx);
    let mut tail: Vec<u8> = Vec::new();
    let mut len: u64 = 0;
    std::thread::scope(|scope| -> Result<()> {
        let job_rx = &job_rx;
        for _ in 0..workers {
            let done_tx = done_tx.clone();
            scope.spawn(move || {
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, bytes)) = job else { return };
                    let parsed = parse_chunk(&bytes);
                    // The buffer goes back for reuse: no page faults for fresh memory and no
                    // cross-thread frees of large blocks.
                    if done_tx.send((seq, parsed, bytes)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let mut pending: std::collections::BTreeMap<usize, (usize, ParsedChunk)> =
            Default::default();
        let mut next = 0;
        let mut free_buffers: Vec<Vec<u8>> = Vec::new();
        let mut deliver = |seq: usize,
                           chunk: ParsedChunk,
                           buffer: Vec<u8>,
                           free: &mut Vec<Vec<u8>>|
         -> Result<()> {
            pending.insert(seq, (buffer.len(), chunk));
            free.push(buffer);
            while let Some((bytes, chunk)) = pending.remove(&next) {
                assembler.add(chunk, bytes)?;
                next += 1;
            }
            Ok(())
        };
        // The first assembly error (a file that is not a session) wins; parsing still drains.
        let mut assemble_result = Ok(());
        let mut seq = 0;
        let read_result = loop {
            while let Ok((done_seq, chunk, buffer)) = done_rx.try_recv() {
                if assemble_result.is_ok() {
                    assemble_result = deliver(done_seq, chunk, buffer, &mut free_buffers);
                }
            }
            let mut buf = free_buffers
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(CHUNK_BYTES + CHUNK_BYTES / 4));
            buf.clear();
            buf.extend_from_slice(&tail);
            let read = match (&mut *file).take(CHUNK_BYTES as u64).read_to_end(&mut buf) {
                Ok(read) => read,
                Err(error) => break Err(SessionError::io("read", path)(error)),
            };
            len += read as u64;
            if read == 0 {
                tail = buf;
                break Ok(());
            }
            // Everything after the last newline waits for the next chunk.
            match memchr::memrchr(b'\n', &buf) {
                Some(last_newline) => {
                    tail.clear();
                    tail.extend_from_slice(&buf[last_newline + 1..]);
                    buf.truncate(last_newline + 1);
                    if job_tx.send((seq, buf)).is_err() {
                        break Ok(());
                    }
                    seq += 1;
                }
                None => tail = buf,
            }
        };
        drop(job_tx);
        for (done_seq, chunk, buffer) in done_rx.iter() {
            if assemble_result.is_ok() {
                assemble_result = deliver(done_seq, chunk, buffer, &mut free_buffers);
            }
        }
        read_result.and(assemble_result)
    })?;
    Ok((tail, len))
}

fn push_record(
    entry: SessionEntry,
    header: &mut Option<SessionHeader>,
    entries: &mut Vec<SessionEntry>,
) {
    if header.is_none() {
        *header = header_from_entry(&entry);
    } else {
        entries.push(entry);
    }
}

/// Reads just the header (for listings): the first parsable line within the first MiB.
pub fn read_header(path: &Path) -> Result<Option<SessionHeader>> {
    const HEADER_SCAN_LIMIT: u64 = 1 << 20;
    let file = File::open(path).map_err(SessionError::io("open", path))?;
    let mut reader = BufReader::with_capacity(4096, std::io::Read::take(file, HEADER_SCAN_LIMIT));
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(SessionError::io("read", path))?;
        if read == 0 {
            return Ok(None);
        }
        let line = trim_line_end(&buf);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut ignored = Vec::new();
        if let Some(entry) = parse_line(line, 1, &mut ignored) {
            return Ok(header_from_entry(&entry));
        }
    }
}
