//! Plan mode's snapshots on a branch (`session-format.md`, "Plan mode snapshots"): the
//! latest `plan-mode` custom entry on the path to the leaf is the state, including one
//! that a compaction left out of model context (custom entries never enter it, and the
//! walk goes over the raw path, not the compacted context).

use knightcode_protocol::SessionEntry;
use knightcode_protocol::plan::MalformedPlanState;
use knightcode_protocol::plan::PLAN_MODE;
use knightcode_protocol::plan::PlanState;

use crate::error::Result;
use crate::manager::SessionManager;
use crate::tree::EntryIndex;
use crate::tree::SessionTree;

/// The plan-mode state on the path to `leaf`: `Ok(None)` when no snapshot is there (plan
/// mode was never used on this branch), `Err` when the latest one cannot be restored.
pub fn plan_state_on_path(
    tree: &SessionTree,
    leaf: Option<EntryIndex>,
) -> std::result::Result<Option<PlanState>, MalformedPlanState> {
    let mut at = leaf;
    // Newest first: the first snapshot met walking up is the one that counts.
    while let Some(index) = at {
        if let SessionEntry::Custom(custom) = tree.entry(index)
            && custom.custom_type == PLAN_MODE
        {
            return PlanState::from_data(custom.data.as_ref()).map(Some);
        }
        at = tree.parent_of(index);
    }
    Ok(None)
}

impl SessionManager {
    /// Writes a full snapshot at the leaf; returns its id.
    pub fn append_plan_state(&mut self, state: &PlanState) -> Result<String> {
        self.append_custom_entry(PLAN_MODE, Some(state.to_data()))
    }

    /// The plan-mode state on the current branch (see [`plan_state_on_path`]).
    pub fn plan_state(&self) -> std::result::Result<Option<PlanState>, MalformedPlanState> {
        plan_state_on_path(&self.tree, self.tree.leaf())
    }

    /// The plan-mode state at `entry_id` (a `/tree` target), or at the root's parent
    /// (`None`): what navigating there would restore.
    pub fn plan_state_at(
        &self,
        entry_id: Option<&str>,
    ) -> std::result::Result<Option<PlanState>, MalformedPlanState> {
        let index = entry_id.and_then(|id| self.tree.index_of(id));
        plan_state_on_path(&self.tree, index)
    }
}

/// The plan-mode state read once and then kept up to date cheaply: a read walks up from
/// the leaf only until it meets the entry it last read at (a run appends a few entries
/// between reads), or a snapshot, or the root (another branch).
#[derive(Debug, Clone, Default)]
pub struct PlanStateCache {
    /// The leaf of the last read and what it found.
    last: Option<(
        String,
        std::result::Result<Option<PlanState>, MalformedPlanState>,
    )>,
}

impl PlanStateCache {
    /// The state on `session`'s current branch.
    pub fn read(
        &mut self,
        session: &SessionManager,
    ) -> std::result::Result<Option<PlanState>, MalformedPlanState> {
        let tree = &session.tree;
        let leaf = tree.leaf();
        let mut at = leaf;
        let found = loop {
            let Some(index) = at else {
                break Ok(None);
            };
            let entry = tree.entry(index);
            if let Some((id, known)) = &self.last
                && entry.id() == id.as_str()
            {
                break known.clone();
            }
            if let SessionEntry::Custom(custom) = entry
                && custom.custom_type == PLAN_MODE
            {
                break PlanState::from_data(custom.data.as_ref()).map(Some);
            }
            at = tree.parent_of(index);
        };
        self.last = leaf.map(|index| (tree.entry(index).id().to_owned(), found.clone()));
        found
    }
}
