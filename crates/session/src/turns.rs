//! Turn boundaries on a branch (`session-format.md`, "Turn boundaries"): writing the
//! `knightcode.turn` / `knightcode.turnEnd` custom entries and reading them back as turns.
//!
//! An end belongs to the open marker before it on the path; a marker without a valid end
//! (a crash, a killed process, a branch left mid-turn) reads as interrupted.

use knightcode_protocol::SessionEntry;
use knightcode_protocol::TURN_END;
use knightcode_protocol::TURN_MARKER;
use knightcode_protocol::TurnEnd;
use knightcode_protocol::TurnError;
use knightcode_protocol::TurnStatus;

use crate::error::Result;
use crate::manager::SessionManager;
use crate::tree::EntryIndex;
use crate::tree::SessionTree;

/// One turn on a branch, as its markers tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The marker's entry id: the turn id.
    pub id: String,
    pub status: TurnStatus,
    pub error: Option<TurnError>,
    /// The marker's ISO timestamp.
    pub started_at: String,
    /// The end entry's ISO timestamp; `None` for a turn that never ended.
    pub completed_at: Option<String>,
}

/// Whether `entry` is a turn marker or a turn end (never model context; hidden where the
/// conversation is shown).
pub fn is_turn_boundary(entry: &SessionEntry) -> bool {
    matches!(entry, SessionEntry::Custom(custom)
        if custom.custom_type == TURN_MARKER || custom.custom_type == TURN_END)
}

/// Whether `entry` opens a turn.
pub fn is_turn_marker(entry: &SessionEntry) -> bool {
    matches!(entry, SessionEntry::Custom(custom) if custom.custom_type == TURN_MARKER)
}

/// The turns on the path from the root to `leaf`, oldest first.
pub fn turns_on_path(tree: &SessionTree, leaf: Option<EntryIndex>) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    // Whether the last turn is still waiting for its end.
    let mut open = false;
    for index in tree.path_to(leaf) {
        let SessionEntry::Custom(custom) = tree.entry(index) else {
            continue;
        };
        if custom.custom_type == TURN_MARKER {
            turns.push(Turn {
                id: custom.id.to_string(),
                status: TurnStatus::Interrupted,
                error: None,
                started_at: custom.timestamp.to_string(),
                completed_at: None,
            });
            open = true;
        } else if custom.custom_type == TURN_END
            && open
            && let Some(turn) = turns.last_mut()
        {
            open = false;
            if let Some(end) = TurnEnd::from_data(custom.data.as_ref()) {
                turn.status = end.status;
                turn.error = end.error;
                turn.completed_at = Some(custom.timestamp.to_string());
            }
        }
    }
    turns
}

impl SessionManager {
    /// Opens a turn at the leaf; returns the marker's id (the turn id).
    pub fn append_turn_marker(&mut self) -> Result<String> {
        self.append_custom_entry(TURN_MARKER, None)
    }

    /// Closes the open turn.
    pub fn append_turn_end(&mut self, end: &TurnEnd) -> Result<String> {
        self.append_custom_entry(TURN_END, Some(end.to_data()))
    }

    /// The turns on the current branch, oldest first.
    pub fn turns(&self) -> Vec<Turn> {
        turns_on_path(&self.tree, self.tree.leaf())
    }
}
