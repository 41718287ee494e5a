//! `mcp.log`: what servers log (`notifications/message`), one line per message in the agent
//! folder, `<time> [<server>] <level> <logger>: <message>` with continuation lines indented.
//! Several sessions may write the same file, so each message is one append; past 5 MB the
//! file moves to `mcp.log.1`. Logging is best effort: a write that fails is dropped, never a
//! tool's failure.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::PoisonError;

use serde_json::Value;

/// The size past which the log moves to `mcp.log.1`.
const MAX_LOG_BYTES: u64 = 5 * 1024 * 1024;

/// The log file of a session's servers.
#[derive(Debug)]
pub struct ServerLog {
    path: PathBuf,
    /// Its size as last seen (`None` until the first write).
    size: Mutex<Option<u64>>,
}

impl ServerLog {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            size: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Appends one message of `server` (`level`, `logger`, `data` as the notification has them).
    pub fn write(&self, server: &str, level: &str, logger: Option<&str>, data: &Value) {
        let line = format_line(server, level, logger, data, chrono::Utc::now());
        let mut size = self.size.lock().unwrap_or_else(PoisonError::into_inner);
        let known = match *size {
            Some(known) => known,
            None => {
                if let Some(dir) = self.path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                self.current_size()
            }
        };
        // Another session may have moved it already: look again before moving it.
        let known = if known > MAX_LOG_BYTES && self.current_size() > MAX_LOG_BYTES {
            let mut rotated = self.path.clone().into_os_string();
            rotated.push(".1");
            let _ = std::fs::rename(&self.path, rotated);
            self.current_size()
        } else {
            known
        };
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        *size = Some(
            known
                + if written.is_ok() {
                    line.len() as u64
                } else {
                    0
                },
        );
    }

    fn current_size(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }
}

/// One message as a line (continuation lines indented by four spaces).
pub fn format_line(
    server: &str,
    level: &str,
    logger: Option<&str>,
    data: &Value,
    now: chrono::DateTime<chrono::Utc>,
) -> String {
    let text = match data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let text = text.replace("\r\n", "\n").replace('\n', "\n    ");
    let logger = logger
        .filter(|l| !l.is_empty())
        .map(|l| format!(" {l}:"))
        .unwrap_or_default();
    let time = now.format("%Y-%m-%dT%H:%M:%S%.3fZ");
    format!("{time} [{server}] {level}{logger} {text}\n")
}
