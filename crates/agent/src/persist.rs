//! The persistence hook: how the runtime records finished messages while a run goes on.
//!
//! The loop hands every finished message (prompts, steering and follow-up messages, assistant
//! responses, tool results) to the store right after its `message_end` event and before it
//! sends the next model request, so a crash loses at most the response in flight.

use knightcode_protocol::AgentMessage;
use knightcode_protocol::TurnEnd;

use crate::error::PersistError;

/// Receives finished messages in order. An `Err` stops the run with
/// [`crate::AgentError::Persist`].
pub trait MessageStore: Send {
    /// Records a finished message.
    fn append(&mut self, message: &AgentMessage) -> Result<(), PersistError>;

    /// An auto-retry drops `message` (the failed assistant response, already appended) from
    /// the context the model sees next. The session keeps it in its raw history and records
    /// the omission (KnightCode writes a `context_edit` entry).
    fn omit(&mut self, message: &AgentMessage) -> Result<(), PersistError> {
        let _ = message;
        Ok(())
    }

    /// A run's first `agent_start` is about to be emitted: a turn begins (KnightCode writes a
    /// `knightcode.turn` marker). Retries, overflow recovery and messages queued before the
    /// run settles belong to the same turn.
    fn begin_turn(&mut self) -> Result<(), PersistError> {
        Ok(())
    }

    /// The run is about to emit `agent_settled`: its turn ended as `end` says (KnightCode
    /// writes a `knightcode.turnEnd` entry). Called only after [`MessageStore::begin_turn`].
    fn end_turn(&mut self, end: &TurnEnd) -> Result<(), PersistError> {
        let _ = end;
        Ok(())
    }
}

/// A store that keeps nothing (`--no-session`, tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoStore;

impl MessageStore for NoStore {
    fn append(&mut self, _message: &AgentMessage) -> Result<(), PersistError> {
        Ok(())
    }
}

/// Any `FnMut(&AgentMessage) -> Result<(), PersistError>` is a store without omissions.
impl<F> MessageStore for F
where
    F: FnMut(&AgentMessage) -> Result<(), PersistError> + Send,
{
    fn append(&mut self, message: &AgentMessage) -> Result<(), PersistError> {
        self(message)
    }
}
