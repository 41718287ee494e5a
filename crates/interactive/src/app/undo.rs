//! Going back with files: `/undo`'s picker, and the restore question every move back in
//! the tree (`/undo`, `/tree`, double escape) asks when the abandoned turns changed files.
//! The wording is the runtime's, so RPC clients are asked the same.

use knightcode_runtime::Command;
use knightcode_runtime::actor::SummaryRequest;
use knightcode_runtime::file_history::undo;

use super::actions::Pending;
use super::overlay::GoingBack;
use super::overlay::Overlay;
use super::ui::Ui;
use crate::pickers::ConfirmPrompt;
use crate::pickers::ForkCandidate;
use crate::pickers::ForkPicker;

impl Ui {
    /// `/undo`: the branch's user messages, newest at the bottom, each with its time and
    /// the files an undo to it would restore.
    pub fn open_undo_picker(&mut self) {
        if self.session.running() || self.session.compacting() {
            self.info(undo::UNDO_BUSY);
            return;
        }
        let Some(view) = self.session.view() else {
            return;
        };
        let points = view.undo_points();
        if points.is_empty() {
            self.info(undo::NOTHING_TO_UNDO);
            return;
        }
        let details = points
            .iter()
            .map(|p| {
                let mut line = undo::local_time(&p.timestamp);
                if p.files > 0 {
                    line.push_str(&format!(
                        " · restores {}",
                        if p.files == 1 {
                            "1 file".to_owned()
                        } else {
                            format!("{} files", p.files)
                        }
                    ));
                }
                if p.shell_ran {
                    line.push_str(" · shell commands ran");
                }
                line
            })
            .collect();
        let candidates = points
            .into_iter()
            .map(|p| ForkCandidate {
                entry_id: p.entry_id,
                text: p.text,
            })
            .collect();
        let picker = ForkPicker::undo(
            candidates,
            details,
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.screen.overlay = Some(Overlay::Undo(picker));
        self.mark_urgent();
    }

    /// A move in the tree the user chose: asks about files first when the turns it leaves
    /// changed some, else goes.
    pub fn go_back(&mut self, entry_id: Option<String>, summary: Option<SummaryRequest>) {
        let plan = self
            .session
            .view()
            .map(|v| v.restore_plan(entry_id.as_deref()))
            .unwrap_or_default();
        if plan.files.is_empty() {
            let warning = undo::untracked_warning(&plan);
            self.navigate(GoingBack { entry_id, summary }, false, warning);
            return;
        }
        let prompt = ConfirmPrompt::new(
            undo::RESTORE_TITLE,
            "The turns you are leaving changed files. Escape stays where you are.",
            vec![
                undo::CONVERSATION_ONLY.to_owned(),
                undo::restore_option(&plan),
            ],
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.screen.overlay = Some(Overlay::Restore(prompt, GoingBack { entry_id, summary }));
        self.mark_urgent();
    }

    /// Moves in the tree; with a summary the branch left behind is summarised first (a
    /// working row shows it, escape cancels).
    pub fn navigate_now(&mut self, going: GoingBack, restore_files: bool) {
        self.navigate(going, restore_files, None);
    }

    fn navigate(&mut self, going: GoingBack, restore_files: bool, warning: Option<String>) {
        if going.summary.is_some() {
            self.session.set_compacting(true);
            self.set_working(Some(super::actions::SUMMARIZING_BRANCH));
        }
        self.send(
            Command::NavigateTree {
                entry_id: going.entry_id,
                summary: going.summary,
                label: None,
                restore_files,
            },
            Pending::Navigated(warning),
        );
    }
}
