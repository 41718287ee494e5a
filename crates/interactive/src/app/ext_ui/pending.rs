//! A dialog waiting for the screen, or on it: an extension's (`ctx.ui.select` …, answered
//! with what the subprotocol carries) or a question of the session's own (a plan's review,
//! `ask_user`, answered with the choice and its note).

use knightcode_protocol::rpc::UiReply;
use knightcode_runtime::dialogs::QuestionAnswer;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::keybindings::Keybindings;
use tokio::sync::oneshot;

use crate::pickers::ExtensionDialog;
use crate::pickers::PickerOutcome;
use crate::pickers::QuestionPicker;

pub struct PendingDialog {
    pub id: u64,
    body: Body,
}

enum Body {
    Extension {
        dialog: ExtensionDialog,
        reply: Option<oneshot::Sender<UiReply>>,
    },
    Question {
        picker: QuestionPicker,
        reply: Option<oneshot::Sender<QuestionAnswer>>,
    },
}

impl PendingDialog {
    pub fn extension(
        id: u64,
        dialog: ExtensionDialog,
        reply: Option<oneshot::Sender<UiReply>>,
    ) -> Self {
        Self {
            id,
            body: Body::Extension { dialog, reply },
        }
    }

    pub fn question(
        id: u64,
        picker: QuestionPicker,
        reply: oneshot::Sender<QuestionAnswer>,
    ) -> Self {
        Self {
            id,
            body: Body::Question {
                picker,
                reply: Some(reply),
            },
        }
    }

    pub fn render(&mut self, width: u16) -> Vec<String> {
        match &mut self.body {
            Body::Extension { dialog, .. } => dialog.render(width),
            Body::Question { picker, .. } => picker.render(width),
        }
    }

    pub fn handle_paste(&mut self, text: &str) {
        match &mut self.body {
            Body::Extension { dialog, .. } => dialog.handle_paste(text),
            Body::Question { picker, .. } => picker.handle_paste(text),
        }
    }

    /// Applies a key; `true` when it closed the dialog (after answering). A question closed
    /// without an answer drops its sender, which the asking side reads as dismissed.
    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> bool {
        match &mut self.body {
            Body::Extension { dialog, reply } => {
                let answer = match dialog.handle_key(key, bindings) {
                    PickerOutcome::Done(answer) => answer,
                    PickerOutcome::Cancel => UiReply::Cancelled,
                    PickerOutcome::Pending => return false,
                    PickerOutcome::Request(never) => match never {},
                };
                if let Some(tx) = reply.take() {
                    let _ = tx.send(answer);
                }
                true
            }
            Body::Question { picker, reply } => match picker.handle_key(key, bindings) {
                PickerOutcome::Done(answer) => {
                    if let Some(tx) = reply.take() {
                        let _ = tx.send(answer);
                    }
                    true
                }
                PickerOutcome::Cancel => {
                    reply.take();
                    true
                }
                PickerOutcome::Pending => false,
                PickerOutcome::Request(never) => match never {},
            },
        }
    }
}
