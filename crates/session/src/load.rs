//! Reading session files: streaming parse, torn-tail detection, malformed-line tolerance.
//!
//! Reading never modifies the file; repairs are decided here and carried out by an owning
//! open (`manager.rs`).

use std::fs::File;
use std::io::BufRead;
use std::io::BufReader;
use std::path::Path;

use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;
use knightcode_protocol::wire::Extra;

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
    /// An entry names a parent that does not exist; it is treated as a root.
    Orphan { id: String, parent_id: String },
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
            Self::Orphan { id, parent_id } => write!(
                f,
                "entry {id} points at missing parent {parent_id}; it is treated as a root"
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
    let mut rest: Extra = map.clone();
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
                Some(SessionEntry::Unknown(map))
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

/// Reads a session file. `Ok(None)`: the file is empty. Error `NotASession`: it has content
/// but no header line.
pub fn load_file(path: &Path) -> Result<Option<LoadedFile>> {
    let file = File::open(path).map_err(SessionError::io("open", path))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut header: Option<SessionHeader> = None;
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    let mut torn_tail = None;
    let mut missing_final_newline = false;
    let mut offset: u64 = 0;
    let mut line_no = 0usize;
    let mut buf = Vec::with_capacity(4096);
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(SessionError::io("read", path))?;
        if read == 0 {
            break;
        }
        line_no += 1;
        let line_start = offset;
        offset += read as u64;
        let complete = buf.last() == Some(&b'\n');
        let line = trim_line_end(&buf);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut line_warnings = Vec::new();
        let parsed = parse_line(line, line_no, &mut line_warnings);
        if !complete {
            match parsed {
                Some(entry) if line_warnings.is_empty() => {
                    missing_final_newline = true;
                    push_record(entry, &mut header, &mut entries);
                }
                _ => {
                    warnings.push(LoadWarning::TornTail {
                        line: line_no,
                        bytes: buf.len(),
                    });
                    torn_tail = Some(TornTail {
                        offset: line_start,
                        bytes: buf.clone(),
                    });
                }
            }
            break;
        }
        warnings.append(&mut line_warnings);
        if let Some(entry) = parsed {
            if header.is_none() {
                match header_from_entry(&entry) {
                    Some(found) => header = Some(found),
                    // The first record must be the header; anything else is not a session.
                    None => {
                        return Err(SessionError::NotASession {
                            path: path.to_owned(),
                        });
                    }
                }
                continue;
            }
            entries.push(entry);
        }
    }
    if offset == 0 {
        return Ok(None);
    }
    let Some(header) = header else {
        return Err(SessionError::NotASession {
            path: path.to_owned(),
        });
    };
    Ok(Some(LoadedFile {
        header,
        entries,
        warnings,
        torn_tail,
        missing_final_newline,
        len: offset,
    }))
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
