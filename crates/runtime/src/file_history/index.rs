//! The on-disk side of file history (`spec/sessions-extra.md` §10): backup names,
//! `index.json` (read, and written atomically), and the start-up pruning of old sessions'
//! folders.

use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use std::time::SystemTime;

pub use knightcode_protocol::file_history::Checkpoint;
pub use knightcode_protocol::file_history::FileRecord;
pub use knightcode_protocol::file_history::Index;

/// Folders whose last change is older than this are removed at start-up.
pub const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// `<agentDir>/file-history`: one folder per session id.
pub fn history_root(agent_dir: &Path) -> PathBuf {
    agent_dir.join("file-history")
}

/// The key of a file: its absolute path (lower-cased on Windows, whose paths ignore case).
pub fn file_key(path: &Path) -> String {
    let key = path.to_string_lossy().into_owned();
    if cfg!(windows) {
        key.to_lowercase()
    } else {
        key
    }
}

/// `<first 16 hex digits of sha256(key)>@<user entry id>`.
pub fn backup_name(key: &str, user_entry_id: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, key.as_bytes());
    let mut name = String::with_capacity(17 + user_entry_id.len());
    for byte in &digest.as_ref()[..8] {
        use std::fmt::Write as _;
        let _ = write!(name, "{byte:02x}");
    }
    name.push('@');
    name.push_str(user_entry_id);
    name
}

/// Reads a session's index; a missing file is an empty index. A damaged one is an error so
/// that it is not overwritten with less.
pub fn load(dir: &Path) -> std::io::Result<Index> {
    match std::fs::read(dir.join("index.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Index::new()),
        Err(error) => Err(error),
    }
}

/// Replaces the index whole (`crate::atomic`), so a reader (or a crash) never sees half of
/// it.
pub fn save(dir: &Path, index: &Index) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_vec(index).map_err(std::io::Error::other)?;
    crate::atomic::replace(&dir.join("index.json"), &json, None)
}

/// Removes every session folder under `root` last changed before `now - MAX_AGE`; returns
/// how many went. Unreadable entries are skipped: pruning is housekeeping, never an error.
pub fn prune(root: &Path, now: SystemTime) -> usize {
    let Some(cutoff) = now.checked_sub(MAX_AGE) else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_dir() {
            continue;
        }
        if meta.modified().is_ok_and(|m| m < cutoff)
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// [`prune`] on a thread of its own, so start-up never waits for the disk.
pub fn prune_in_background(root: PathBuf, now: SystemTime) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || prune(&root, now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_names_are_sixteen_hex_digits_of_the_key_hash_then_the_entry() {
        assert_eq!(
            backup_name("/home/u/a.txt", "abcd1234"),
            "7f5d5e2be93fbb37@abcd1234"
        );
    }
}
