//! Tools declared on demand (`codemode` and `deferred` exposure: a `tool_search` match, an
//! extension's `setActiveTools`) follow the branch. Their activation is recorded as a system
//! message with `toolsAdded` (the loop writes it when `tool_search` activates, the request
//! preparation when the active set changed between prompts), and the branch's replayed tool
//! list says which of them are declared there. When the branch changed under the session
//! (a resume, a fork, `/tree`), that list wins for these tools; otherwise the session's own
//! choice stands, so a deactivation between prompts is not undone.

use std::collections::HashSet;

use knightcode_agent::ToolExposure;
use knightcode_agent::ToolRegistry;
use knightcode_protocol::ToolDeclaration;

/// What the session last recorded of the branch's declared tools.
#[derive(Debug, Default)]
pub(crate) struct BranchActivations {
    /// The names the branch declared after the last request was prepared; `None` before the
    /// first (a resumed or forked session then takes the branch's list).
    recorded: Option<HashSet<String>>,
}

impl BranchActivations {
    /// Brings `active` in line with `branch` (the tools the branch's system messages declare)
    /// for the on-demand tools whose declaration the branch changed since it was last
    /// recorded; returns whether `active` changed.
    pub fn restore(
        &self,
        branch: &[ToolDeclaration],
        registry: &ToolRegistry,
        active: &mut Vec<String>,
    ) -> bool {
        let declared: HashSet<&str> = branch.iter().map(|d| d.name.as_str()).collect();
        let mut changed = false;
        for tool in registry.iter() {
            if !matches!(
                tool.exposure(),
                ToolExposure::Codemode | ToolExposure::Deferred
            ) {
                continue;
            }
            let name = &tool.definition().name;
            let on_branch = declared.contains(name.as_str());
            let recorded = self
                .recorded
                .as_ref()
                .is_some_and(|names| names.contains(name));
            if on_branch == recorded {
                continue;
            }
            let is_active = active.contains(name);
            if on_branch && !is_active {
                active.push(name.clone());
                changed = true;
            } else if !on_branch && is_active {
                active.retain(|n| n != name);
                changed = true;
            }
        }
        changed
    }

    /// Remembers what the branch declares once a request's declarations are recorded.
    pub fn record(&mut self, declarations: &[ToolDeclaration]) {
        self.recorded = Some(declarations.iter().map(|d| d.name.clone()).collect());
    }
}
