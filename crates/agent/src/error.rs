//! The crate's error type.
//!
//! Almost nothing that goes wrong in a run is an error here: provider failures end the turn
//! with an assistant message whose `stopReason` is `error`, tool failures become error results
//! the model reads. What remains are failures of the runtime around the loop.

/// Why a run stopped without finishing normally.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The persistence hook could not record a finished message. The run stops so that no
    /// further work happens that the session file would not know about.
    #[error(
        "Could not save the {role} message to the session: {source}. The run was stopped so nothing goes unrecorded; check free disk space and permissions, then continue the session."
    )]
    Persist {
        role: String,
        #[source]
        source: PersistError,
    },

    /// `continue` needs a conversation whose last message the model can answer.
    #[error(
        "Cannot continue: {0}. Send a new prompt instead, or queue a message with steer/follow_up."
    )]
    CannotContinue(String),
}

/// An error reported by a [`crate::MessageStore`].
pub type PersistError = Box<dyn std::error::Error + Send + Sync + 'static>;
