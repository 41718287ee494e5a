//! The agent loop's persistence: what the session file records of each finished message.

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_protocol::AgentMessage;
use knightcode_session::SessionManager;

use super::lock;

/// The agent loop's persistence hook: finished messages go to the session file; a failed
/// attempt that is retried is left out of future context with a `context_edit`, so raw
/// history keeps it but the model never sees it again; each run is framed by turn markers.
pub(super) struct SessionRecorder {
    pub(super) session: Arc<Mutex<SessionManager>>,
}

impl knightcode_agent::MessageStore for SessionRecorder {
    fn append(
        &mut self,
        message: &AgentMessage,
    ) -> std::result::Result<(), knightcode_agent::PersistError> {
        let mut session = lock(&self.session);
        // Extension messages are `custom_message` entries, as the reference writes them.
        match message {
            AgentMessage::Custom(custom) => {
                session.append_custom_message(
                    &custom.custom_type,
                    custom.content.clone(),
                    custom.display,
                    custom.details.clone(),
                )?;
            }
            other => {
                session.append_message(other.clone())?;
            }
        }
        Ok(())
    }

    fn omit(
        &mut self,
        message: &AgentMessage,
    ) -> std::result::Result<(), knightcode_agent::PersistError> {
        let mut session = lock(&self.session);
        let target = session
            .branch(None)?
            .iter()
            .rev()
            .find(|entry| entry.message() == Some(message))
            .map(|entry| entry.id().to_owned());
        if let Some(target) = target {
            session.append_context_edit(&target, None)?;
        }
        Ok(())
    }

    /// The built-in turn markers (`session-format.md`, "Turn boundaries"): written here, at
    /// the run's first `agent_start` and at `agent_settled`, as the reference's built-in
    /// extension writes them from those events.
    fn begin_turn(&mut self) -> std::result::Result<(), knightcode_agent::PersistError> {
        lock(&self.session).append_turn_marker()?;
        Ok(())
    }

    fn end_turn(
        &mut self,
        end: &knightcode_protocol::TurnEnd,
    ) -> std::result::Result<(), knightcode_agent::PersistError> {
        lock(&self.session).append_turn_end(end)?;
        Ok(())
    }
}
