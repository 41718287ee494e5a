//! Going back with files: the restore part of a move in the tree, and the built-in `/undo`
//! for front ends that ask through [`crate::dialogs::Dialogs`] (RPC, print).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::AgentSession;
use super::lock;
use crate::file_history::RestorePlan;
use crate::file_history::RestoreReport;
use crate::file_history::plan_navigation;
use crate::file_history::undo;
use crate::file_history::undo_points;

/// Where a move in the tree left things.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Navigated {
    /// The text of the user message gone back to (for the editor).
    pub text: Option<String>,
    /// What putting the files back did, when asked to.
    pub restored: Option<RestoreReport>,
}

impl AgentSession {
    /// The restore a move to `target` would make, worked out before the leaf moves.
    pub(super) fn restore_plan_for(
        &self,
        target: Option<&str>,
        restore_files: bool,
    ) -> Option<RestorePlan> {
        if !restore_files || !self.file_history.enabled() {
            return None;
        }
        Some(plan_navigation(
            &self.file_history,
            &lock(&self.session),
            target,
        ))
    }

    /// After the leaf moved: files back as the plan says.
    pub(super) fn apply_restore(&self, plan: Option<RestorePlan>) -> Option<RestoreReport> {
        plan.filter(|p| !p.files.is_empty())
            .map(|plan| self.file_history.restore(&plan))
    }

    /// `/undo` without a picker of the front end's own: the user messages as a numbered
    /// `select` (newest first), then the restore question when files would change, then the
    /// move; the message's text goes to the editor. Never summarises. A cancelled question
    /// changes nothing.
    pub async fn undo_with_dialogs(&mut self) -> crate::Result<()> {
        let dialogs = Arc::clone(&self.dialogs);
        let cancel = CancellationToken::new();
        let points = undo_points(&self.file_history, &lock(&self.session));
        if points.is_empty() {
            dialogs
                .notify(undo::NOTHING_TO_UNDO, crate::dialogs::NoticeKind::Info)
                .await;
            return Ok(());
        }
        let lines: Vec<String> = points
            .iter()
            .rev()
            .enumerate()
            .map(|(n, point)| undo::point_line(n + 1, point))
            .collect();
        let Some(chosen) = dialogs
            .select(undo::UNDO_TITLE, lines.clone(), &cancel)
            .await
        else {
            return Ok(());
        };
        let Some(at) = lines.iter().position(|l| *l == chosen) else {
            return Ok(());
        };
        let target = points[points.len() - 1 - at].entry_id.clone();
        let plan = plan_navigation(&self.file_history, &lock(&self.session), Some(&target));
        let Some(restore) = undo::ask_restore(dialogs.as_ref(), &plan, &cancel).await else {
            return Ok(());
        };
        let navigated = self
            .navigate_tree_announced(Some(&target), None, restore)
            .await?;
        if let Some(text) = &navigated.text {
            dialogs.set_editor_text(text).await;
        }
        undo::announce(dialogs.as_ref(), &plan, navigated.restored.as_ref()).await;
        Ok(())
    }
}

/// Whether a prompt is the built-in `/undo` (arguments are ignored, as the reference does).
pub fn is_undo_command(text: &str) -> bool {
    let text = text.trim_start();
    text == "/undo"
        || text
            .strip_prefix("/undo")
            .is_some_and(|rest| rest.starts_with(char::is_whitespace))
}
