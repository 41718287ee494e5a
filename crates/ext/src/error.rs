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
}
