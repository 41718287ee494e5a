//! The private temp file that receives a command's whole output once it outgrows memory.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Names tried before giving up when a random name is already taken.
const CREATE_ATTEMPTS: usize = 4;

/// `<dir>/<prefix>-<16 hex>.log`, created on demand. Failures are kept, not returned: the
/// output is still shown, and the result says why it could not be saved.
#[derive(Default)]
pub struct TempLog {
    state: State,
}

#[derive(Default)]
enum State {
    #[default]
    NotStarted,
    Open {
        path: PathBuf,
        file: BufWriter<File>,
    },
    /// Creating or writing failed; a file that was created is still named.
    Failed {
        path: Option<PathBuf>,
        reason: String,
    },
}

impl std::fmt::Debug for TempLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TempLog")
            .field("path", &self.path())
            .field("failure", &self.failure())
            .finish()
    }
}

impl TempLog {
    /// Whether [`TempLog::create`] has been called (successfully or not).
    pub fn is_started(&self) -> bool {
        !matches!(self.state, State::NotStarted)
    }

    /// Creates the file; does nothing once started.
    pub fn create(&mut self, dir: &Path, prefix: &str) {
        if self.is_started() {
            return;
        }
        let mut attempt = 0;
        self.state = loop {
            attempt += 1;
            let path = dir.join(format!("{prefix}-{}.log", random_hex()));
            // Exclusive creation never follows a link someone planted at the path; output can
            // be private, so only the owner may read it.
            let opened = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match opened {
                Ok(file) => {
                    break State::Open {
                        path,
                        file: BufWriter::new(file),
                    };
                }
                Err(error)
                    if error.kind() == ErrorKind::AlreadyExists && attempt < CREATE_ATTEMPTS => {}
                Err(error) => {
                    break State::Failed {
                        path: None,
                        reason: format!("could not create {}: {error}", path.display()),
                    };
                }
            }
        };
    }

    /// Appends to the file if it is open.
    pub fn write(&mut self, data: &[u8]) {
        if let State::Open { path, file } = &mut self.state
            && let Err(error) = file.write_all(data)
        {
            self.state = State::Failed {
                path: Some(path.clone()),
                reason: format!("could not write {}: {error}", path.display()),
            };
        }
    }

    /// Flushes the file; call once output has ended.
    pub fn flush(&mut self) {
        if let State::Open { path, file } = &mut self.state
            && let Err(error) = file.flush()
        {
            self.state = State::Failed {
                path: Some(path.clone()),
                reason: format!("could not write {}: {error}", path.display()),
            };
        }
    }

    /// The file, if one was created (also when writing to it failed later).
    pub fn path(&self) -> Option<&Path> {
        match &self.state {
            State::Open { path, .. } => Some(path),
            State::Failed { path, .. } => path.as_deref(),
            State::NotStarted => None,
        }
    }

    /// Why the output could not be saved, if it could not.
    pub fn failure(&self) -> Option<&str> {
        match &self.state {
            State::Failed { reason, .. } => Some(reason),
            _ => None,
        }
    }
}

/// 16 hex digits from the OS random source (time-based if that is unavailable, which only
/// risks a name collision that exclusive creation then reports).
fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = (nanos as u64 ^ u64::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_are_private_and_unique() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = TempLog::default();
        first.create(dir.path(), "knightcode-bash");
        first.write(b"abc");
        first.flush();
        let path = first.path().unwrap().to_path_buf();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let hex = name
            .strip_prefix("knightcode-bash-")
            .and_then(|rest| rest.strip_suffix(".log"))
            .unwrap();
        assert!(hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
        let mode = std::fs::metadata(&path).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        let mut second = TempLog::default();
        second.create(dir.path(), "knightcode-bash");
        assert_ne!(second.path(), first.path());
    }

    #[test]
    fn a_folder_that_cannot_hold_it_is_reported() {
        let mut log = TempLog::default();
        log.create(Path::new("/nonexistent/folder"), "knightcode-bash");
        assert!(log.is_started());
        assert_eq!(log.path(), None);
        let reason = log.failure().unwrap();
        assert!(reason.starts_with("could not create /nonexistent/folder/knightcode-bash-"));
    }
}
