//! The extension host's errors; every message says what happened and what to do next.

/// What can go wrong in the extension host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtError {
    /// A file could not be parsed or stripped.
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// An extension failed to load (its file, a factory that threw, a bad export).
    #[error("Failed to load extension \"{path}\": {message}")]
    Load { path: String, message: String },
    /// The JS thread could not start or has stopped.
    #[error("the extension host stopped: {0}")]
    Stopped(String),
    /// An extension passed the host something its API does not take.
    #[error("{0}")]
    Invalid(String),
    /// The HTTP client behind `fetch` could not be set up (TLS roots, proxy settings).
    #[error("fetch is unavailable: {0}")]
    Http(String),
}

/// Why a call into the extensions' code has no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The extension code threw or rejected: its message.
    #[error("{0}")]
    Threw(String),
    /// An abort interrupted the extension code before it answered.
    #[error("the extension code was interrupted by an abort")]
    Interrupted,
    /// The JS thread has stopped (a reload, the end of the session).
    #[error("the extension host stopped")]
    Stopped,
    /// The answer was not the JSON the host's own bootstrap code writes.
    #[error("the extension host answered something unreadable: {0}")]
    Malformed(String),
}

/// Why the session did not carry out an operation an extension asked for (through
/// [`crate::SessionPort`]). Extensions see the message as the error they catch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    /// The extension passed arguments the operation does not take.
    #[error("{0}")]
    Invalid(String),
    /// The session refused or could not do it (busy, cancelled, nothing to compact, a
    /// session file that could not be written): its message.
    #[error("{0}")]
    Failed(String),
    /// The operation exists in the reference but not here yet.
    #[error("{0} is not supported by KnightCode's extension host yet")]
    Unsupported(String),
    /// The session has not started yet (extensions still loading).
    #[error("{what}: the session is not running")]
    NotRunning { what: String },
    /// The session has ended; nothing is listening any more.
    #[error("{what}: the session has ended")]
    Ended { what: String },
}

/// A module specifier that names nothing we can load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Cannot find module '{specifier}' imported from {importer}")]
pub struct ResolveError {
    pub specifier: String,
    pub importer: String,
}
