//! The crate's error type.

/// Everything that can go wrong in the terminal UI toolkit.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// Reading from or writing to the terminal failed.
    #[error("terminal I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// A `keybindings.json` file could not be used.
    #[error("keybindings file {path} is not valid: {reason}; fix or delete it to use the defaults")]
    Keybindings { path: String, reason: String },
}
