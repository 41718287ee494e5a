//! The append-only file writer behind a persisted session.

use std::fs::File;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;

use crate::error::Result;
use crate::error::SessionError;
use crate::lock::SessionLock;

/// Where a session's entries go.
#[derive(Debug)]
pub(crate) enum Storage {
    /// `--no-session`: never touches disk.
    Memory,
    /// Owned file; written lazily until the first message, then append-only.
    File(FileWriter),
    /// Listing, export, fork source: never written.
    ReadOnly { path: PathBuf },
    /// After `close()`: readable, never written again.
    Closed { path: PathBuf },
}

#[derive(Debug)]
pub(crate) struct FileWriter {
    pub(crate) path: PathBuf,
    pub(crate) lock: Arc<SessionLock>,
    /// Open in append mode once the file exists on disk.
    file: Option<File>,
    /// Bytes known to be on disk; a failed append is cut back to this length.
    len: u64,
}

impl FileWriter {
    /// A writer for a file that does not exist yet (lazy creation).
    pub(crate) fn pending(path: PathBuf, lock: Arc<SessionLock>) -> Self {
        Self {
            path,
            lock,
            file: None,
            len: 0,
        }
    }

    /// A writer appending to an existing file of `len` bytes.
    pub(crate) fn existing(path: PathBuf, lock: Arc<SessionLock>, len: u64) -> Result<Self> {
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(SessionError::io("open for appending", &path))?;
        Ok(Self {
            path,
            lock,
            file: Some(file),
            len,
        })
    }

    pub(crate) fn is_on_disk(&self) -> bool {
        self.file.is_some()
    }

    /// Whether the open file is still the one at the path. A session file deleted (or
    /// replaced) while open would take every later entry to a file nobody can read again;
    /// [`Self::reopen_gone`] writes it anew instead.
    pub(crate) fn still_at_path(&self) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        let Some(file) = &self.file else {
            return true;
        };
        match (file.metadata(), std::fs::metadata(&self.path)) {
            (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
            // Gone from its folder (or the folder gone): not the open file any more.
            (Ok(_), Err(_)) => false,
            // The open file cannot be examined: leave the writes to report what is wrong.
            (Err(_), _) => true,
        }
    }

    /// Forgets a file that left its path, so the next write creates the path again with the
    /// whole session ([`Self::create`], which refuses to overwrite another file put there).
    pub(crate) fn reopen_gone(&mut self) {
        self.file = None;
        self.len = 0;
    }

    /// First write: header and every buffered entry at once, to a file that must not exist
    /// yet (or is empty), so that another writer's file is never clobbered.
    pub(crate) fn create(
        &mut self,
        header: &SessionHeader,
        entries: &[SessionEntry],
    ) -> Result<()> {
        self.lock.verify()?;
        let mut text = header.to_json_line()?;
        text.push('\n');
        for entry in entries {
            text.push_str(&entry.to_json_line()?);
            text.push('\n');
        }
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(SessionError::io("create directory", parent))?;
        }
        let existing_len = std::fs::metadata(&self.path).map(|m| m.len()).ok();
        let mut options = OpenOptions::new();
        options.append(true);
        match existing_len {
            None => options.create_new(true),
            Some(0) => &mut options,
            Some(_) => {
                return Err(SessionError::Io {
                    action: "create",
                    path: self.path.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "another file already exists at this path",
                    ),
                });
            }
        };
        let mut file = options
            .open(&self.path)
            .map_err(SessionError::io("create", &self.path))?;
        if let Err(error) = file.write_all(text.as_bytes()) {
            let _ = file.set_len(0);
            return Err(SessionError::Io {
                action: "write",
                path: self.path.clone(),
                source: error,
            });
        }
        self.len = text.len() as u64;
        self.file = Some(file);
        Ok(())
    }

    /// Appends one entry line. On failure the file is cut back so it never ends torn.
    pub(crate) fn append(&mut self, entry: &SessionEntry) -> Result<()> {
        self.lock.verify()?;
        let mut line = entry.to_json_line()?;
        line.push('\n');
        let Some(file) = self.file.as_mut() else {
            return Err(SessionError::NotPersisted);
        };
        if let Err(error) = file.write_all(line.as_bytes()) {
            let _ = file.set_len(self.len);
            return Err(SessionError::Io {
                action: "append to",
                path: self.path.clone(),
                source: error,
            });
        }
        self.len += line.len() as u64;
        Ok(())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Storage {
    pub(crate) fn path(&self) -> Option<&Path> {
        match self {
            Self::Memory => None,
            Self::File(writer) => Some(writer.path()),
            Self::ReadOnly { path } | Self::Closed { path } => Some(path),
        }
    }
}
