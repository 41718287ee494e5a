//! The crate's error type.

use knightcode_agent::tool::ToolError;

/// Why an operation of this crate failed.
///
/// Messages are written for the model: tool results show them verbatim.
#[derive(Debug, thiserror::Error)]
pub enum ToolsError {
    /// The caller's cancellation token fired.
    #[error("Operation aborted")]
    Aborted,
    /// A command ran past its timeout and was killed.
    #[error("Command timed out")]
    TimedOut,
    /// A failure described for the model.
    #[error("{0}")]
    Message(String),
    /// An I/O failure the caller did not describe further.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ToolsError {
    pub fn message(text: impl Into<String>) -> Self {
        Self::Message(text.into())
    }
}

impl From<ToolsError> for ToolError {
    fn from(error: ToolsError) -> Self {
        match error {
            ToolsError::Aborted => ToolError::Aborted("Operation aborted".to_owned()),
            other => ToolError::Failed(other.to_string()),
        }
    }
}
