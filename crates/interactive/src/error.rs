//! The crate's error type.

/// What can stop the interactive mode.
#[derive(Debug, thiserror::Error)]
pub enum InteractiveError {
    #[error(transparent)]
    Tui(#[from] knightcode_tui::TuiError),
    #[error(transparent)]
    Runtime(#[from] knightcode_runtime::RuntimeError),
    #[error("terminal I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Message(String),
}
