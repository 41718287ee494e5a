//! Session discovery: listings for `/resume`, `--continue` and lookups by id or prefix.
//! Read-only: never repairs, migrates or locks the files it reads.

use std::path::Path;
use std::path::PathBuf;
use std::time::SystemTime;

use chrono::DateTime;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::SessionEntry;

use crate::error::Result;
use crate::error::SessionError;
use crate::load::load_file;
use crate::load::read_header;

/// What a session picker shows about one session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub path: PathBuf,
    pub id: String,
    pub cwd: String,
    pub name: Option<String>,
    pub parent_session_path: Option<String>,
    /// Header timestamp (ISO).
    pub created: String,
    /// Unix ms of the latest user/assistant message, else the header time, else file mtime.
    pub modified: i64,
    pub message_count: usize,
    /// First user message text, or `(no messages)`.
    pub first_message: String,
    /// All user and assistant text joined by spaces (for search).
    pub all_messages_text: String,
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl") && path.is_file())
        .collect()
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn millis(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn same_dir(a: &str, b: &Path) -> bool {
    let a = Path::new(a);
    if a == b {
        return true;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Reads one session file into a [`SessionInfo`].
pub fn session_info(path: &Path) -> Result<SessionInfo> {
    let loaded = load_file(path)?.ok_or_else(|| SessionError::NotASession {
        path: path.to_owned(),
    })?;
    let header_ms = DateTime::parse_from_rfc3339(&loaded.header.timestamp)
        .map(|t| t.timestamp_millis())
        .ok();
    let mut name = None;
    let mut message_count = 0;
    let mut first_message = None;
    let mut all_text: Vec<String> = Vec::new();
    let mut latest_message_ms: Option<i64> = None;
    for entry in &loaded.entries {
        match entry {
            SessionEntry::Message(message) => {
                message_count += 1;
                let text = match &message.message {
                    AgentMessage::User(user) => {
                        let text = user.content.text();
                        if first_message.is_none() && !text.trim().is_empty() {
                            first_message = Some(text.clone());
                        }
                        Some(text)
                    }
                    AgentMessage::Assistant(assistant) => Some(assistant.text()),
                    _ => None,
                };
                if let Some(text) = text {
                    if let Some(ts) = message.message.timestamp() {
                        latest_message_ms = Some(latest_message_ms.map_or(ts.0, |m| m.max(ts.0)));
                    }
                    if !text.is_empty() {
                        all_text.push(text);
                    }
                }
            }
            SessionEntry::SessionInfo(info) => {
                name = info
                    .name
                    .as_deref()
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned);
            }
            _ => {}
        }
    }
    Ok(SessionInfo {
        path: path.to_owned(),
        id: loaded.header.id.clone(),
        cwd: loaded.header.cwd.clone(),
        name,
        parent_session_path: loaded.header.parent_session.clone(),
        created: loaded.header.timestamp,
        modified: latest_message_ms
            .or(header_ms)
            .unwrap_or_else(|| millis(mtime(path))),
        message_count,
        first_message: first_message.unwrap_or_else(|| "(no messages)".to_owned()),
        all_messages_text: all_text.join(" "),
    })
}

/// Sessions in `dir`, newest first. With `cwd`, only sessions whose header cwd matches
/// (custom session directories are shared by projects). Unreadable files are skipped.
pub fn list_sessions(dir: &Path, cwd: Option<&Path>) -> Vec<SessionInfo> {
    let mut sessions: Vec<SessionInfo> = jsonl_files(dir)
        .iter()
        .filter_map(|path| session_info(path).ok())
        .filter(|info| cwd.is_none_or(|cwd| same_dir(&info.cwd, cwd)))
        .collect();
    sessions.sort_by_key(|info| std::cmp::Reverse(info.modified));
    sessions
}

/// Every session under `<agentDir>/sessions/*/`, newest first.
pub fn list_all_sessions(sessions_root: &Path) -> Vec<SessionInfo> {
    let Ok(read) = std::fs::read_dir(sessions_root) else {
        return Vec::new();
    };
    let mut sessions: Vec<SessionInfo> = read
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_dir())
        .flat_map(|dir| list_sessions(&dir, None))
        .collect();
    sessions.sort_by_key(|info| std::cmp::Reverse(info.modified));
    sessions
}

/// The most recently modified session file (by mtime) with a valid header (`--continue`).
pub fn most_recent_session(dir: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    let mut files: Vec<(SystemTime, PathBuf)> = jsonl_files(dir)
        .into_iter()
        .map(|p| (mtime(&p), p))
        .collect();
    files.sort_by_key(|file| std::cmp::Reverse(file.0));
    files
        .into_iter()
        .map(|(_, path)| path)
        .find(|path| match read_header(path) {
            Ok(Some(header)) => cwd.is_none_or(|cwd| same_dir(&header.cwd, cwd)),
            _ => false,
        })
}

/// Finds a session by exact id, then by id prefix (newest mtime wins when ids repeat).
pub fn find_session(dir: &Path, cwd: Option<&Path>, id_or_prefix: &str) -> Option<PathBuf> {
    let mut candidates: Vec<(SystemTime, PathBuf, String)> = jsonl_files(dir)
        .into_iter()
        .filter_map(|path| {
            let header = read_header(&path).ok()??;
            if !cwd.is_none_or(|cwd| same_dir(&header.cwd, cwd)) {
                return None;
            }
            Some((mtime(&path), path, header.id))
        })
        .collect();
    candidates.sort_by_key(|candidate| std::cmp::Reverse(candidate.0));
    candidates
        .iter()
        .find(|(_, _, id)| id == id_or_prefix)
        .or_else(|| {
            candidates
                .iter()
                .find(|(_, _, id)| id.starts_with(id_or_prefix))
        })
        .map(|(_, path, _)| path.clone())
}
