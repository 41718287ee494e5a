//! Why a command was refused or failed. Front ends match the kinds (a cancelled navigation is
//! not an error to show, a busy session asks to retry); the text is what users and RPC
//! clients read, in the reference's words where it has them (`spec/rpc.md` §2).

use super::handlers::ALREADY_PROCESSING;
use super::handlers::BRANCH_SUMMARY_BUSY;
use super::handlers::COMPACTION_BUSY;
use super::handlers::NAVIGATION_BUSY;
use super::handlers::UNDO_BUSY;
use super::task::NAVIGATION_CANCELLED;
use crate::compaction::COMPACTION_CANCELLED;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// A prompt without a queueing mode while a run goes on.
    #[error("{ALREADY_PROCESSING}")]
    AlreadyProcessing,
    /// A navigation while another one waits for the aborted run to end.
    #[error("{NAVIGATION_BUSY}")]
    NavigationBusy,
    /// A prompt while the built-in `/undo` waits for an answer.
    #[error("{UNDO_BUSY}")]
    UndoBusy,
    /// A prompt (or `compact`) while `/tree` summarises the branch it leaves.
    #[error("{BRANCH_SUMMARY_BUSY}")]
    BranchSummaryBusy,
    /// A prompt (or `compact`) while a compaction runs.
    #[error("{COMPACTION_BUSY}")]
    CompactionBusy,
    /// The navigation was cancelled (an abort, or an extension's `session_before_tree`);
    /// the leaf did not move.
    #[error("{NAVIGATION_CANCELLED}")]
    NavigationCancelled,
    /// The compaction was cancelled (an abort, or an extension); nothing was written.
    #[error("{COMPACTION_CANCELLED}")]
    CompactionCancelled,
    /// A steering or follow-up message that names an extension command (`steer`,
    /// `follow_up`): commands run at once or not at all.
    #[error(
        "Extension command \"/{0}\" cannot be queued. Use prompt() or execute the command when not streaming."
    )]
    NotQueueable(String),
    /// The session task has ended; nothing answers any more.
    #[error("The session has ended.")]
    Ended,
    /// The command has no meaning in the session's state.
    #[error("This command is not available.")]
    NotAvailable,
    /// Any other refusal or failure, in the session's words (an unknown model, a bad entry
    /// id, a file that could not be written, …).
    #[error("{0}")]
    Failed(String),
}

impl From<crate::error::RuntimeError> for CommandError {
    fn from(error: crate::error::RuntimeError) -> Self {
        match error {
            crate::error::RuntimeError::NavigationCancelled => Self::NavigationCancelled,
            other => Self::Failed(other.to_string()),
        }
    }
}

impl From<crate::compaction::CompactionError> for CommandError {
    fn from(error: crate::compaction::CompactionError) -> Self {
        match error {
            crate::compaction::CompactionError::Cancelled => Self::CompactionCancelled,
            other => Self::Failed(other.to_string()),
        }
    }
}
