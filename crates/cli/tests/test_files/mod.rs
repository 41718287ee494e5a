#![allow(clippy::unwrap_used)]
//! Files the binary writes, read back by the integration tests (shared by the one-shot, RPC
//! and interactive harnesses).
#![allow(dead_code)]

use std::path::Path;
use std::path::PathBuf;

/// Every session file under `<agent>/sessions`, sorted by name (oldest first).
pub fn session_files(agent: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(dirs) = std::fs::read_dir(agent.join("sessions")) else {
        return files;
    };
    for dir in dirs {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The lines of a JSONL file as JSON values.
pub fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}
