use std::path::PathBuf;

/// Everything that can go wrong in the session store. Messages say what happened and what to
/// do next, because they reach users verbatim.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("could not {action} {path}: {source}{}", io_advice(source))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("Session file is not a valid knightcode session: {path}")]
    NotASession { path: PathBuf },

    #[error(
        "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character"
    )]
    InvalidSessionId { id: String },

    #[error("Entry {id} not found")]
    EntryNotFound { id: String },

    #[error("Invalid entry ID for forking")]
    InvalidForkEntry { id: String },

    #[error(
        "session {path} is in use by another knightcode process (pid {pid} on {host}, last seen {age_secs}s ago); continue in a fork instead, or wait for it to exit"
    )]
    Locked {
        path: PathBuf,
        pid: u32,
        host: String,
        age_secs: u64,
    },

    #[error(
        "another knightcode process took over {path} after this one stalled; this process no longer writes to it. Reopen the session to continue"
    )]
    OwnershipLost { path: PathBuf },

    #[error(
        "session {path} has more than one hard link; knightcode refuses to own it because another name could bypass its lock. Copy the file instead of hard-linking it"
    )]
    HardLinked { path: PathBuf },

    #[error("session {path} is closed; open it again to write")]
    Closed { path: PathBuf },

    #[error(
        "session {path} is a folder, not a session file; pass a session file (<folder>/<name>.jsonl), or --session-dir to keep sessions in that folder"
    )]
    IsADirectory { path: PathBuf },

    #[error(
        "session {path} was written by a newer knightcode (session format {version}; this build writes {supported}); it was left unchanged. Update knightcode to continue it"
    )]
    NewerVersion {
        path: PathBuf,
        version: u32,
        supported: u32,
    },

    #[error("session {path} was opened read-only")]
    ReadOnly { path: PathBuf },

    #[error("This session has not been saved yet; send a message first")]
    NotPersisted,

    #[error("Cannot fork: source session file is empty or invalid: {path}")]
    InvalidForkSource { path: PathBuf },

    #[error("could not encode a session entry: {0}")]
    Encode(#[from] serde_json::Error),
}

impl SessionError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}

pub type Result<T, E = SessionError> = std::result::Result<T, E>;

/// What to do about a file-system error, by its kind: a folder that cannot be written, or a
/// disk (or file size limit) that is full. What was stored before the failure stays intact.
fn io_advice(error: &std::io::Error) -> &'static str {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => {
            ". The session folder is not writable: fix its permissions, choose another folder \
             with --session-dir, or run with --no-session"
        }
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded | ErrorKind::FileTooLarge => {
            ". The disk is full (or a file size limit was reached): free some space, then \
             continue with --continue; everything stored before this is intact"
        }
        _ => "",
    }
}
