//! `/plan` while planning, and the review that opens after a submission: the latest draft
//! and what to do with it. The terminal asks with its own question picker (a note added
//! with Tab, a typed revision request); RPC clients get a `select` and, for a note or a
//! revision request, an `input`.

use knightcode_protocol::plan::PlanState;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use tokio_util::sync::CancellationToken;

use super::PlanMode;
use super::text;
use crate::dialogs::Dialogs;
use crate::dialogs::NoticeKind;
use crate::dialogs::Question;
use crate::dialogs::QuestionAnswer;
use crate::dialogs::QuestionChoice;
use crate::hooks::InputAction;

const IMPLEMENT: &str = "Implement";
const IMPLEMENT_FRESH: &str = "Implement in a fresh session";
const IMPLEMENT_WITH_NOTE: &str = "Implement, with a note…";
const REVISE: &str = "Revise the plan…";
const KEEP_PLANNING: &str = "Keep planning";
const EXIT_PLANNING: &str = "Exit planning";

/// What the user decided about the draft.
enum Decision {
    Implement {
        fresh: bool,
        note: Option<String>,
    },
    /// Feedback for the model, sent as the next (still planning) message.
    Revise(String),
    Exit,
    /// Keep planning without sending anything (also a dismissed review).
    Keep,
}

impl PlanMode {
    pub(super) async fn review(&self, state: &PlanState) -> InputAction {
        let Some(draft) = &state.draft else {
            self.notify(text::NO_DRAFT.to_owned(), NoticeKind::Info)
                .await;
            return InputAction::Handled;
        };
        let dialogs = self.dialogs();
        if !dialogs.has_ui() {
            self.notify(
                format!(
                    "Plan revision {} is ready: /plan approve implements it, /plan off leaves planning, a message revises it.",
                    draft.revision
                ),
                NoticeKind::Info,
            )
            .await;
            return InputAction::Handled;
        }
        let title = format!("Plan revision {}", draft.revision);
        let cancel = CancellationToken::new();
        let decision = match dialogs.ask_question(question(title.clone()), cancel.clone()) {
            Some(wait) => from_answer(wait.await),
            None => ask_with_dialogs(dialogs.as_ref(), &title, &cancel).await,
        };
        // The answer may come after other commands: act on the revision shown only.
        let current = self.state().ok().flatten().unwrap_or_default();
        if current.revision() != Some(draft.revision) || !current.planning() {
            self.notify(
                "The plan changed while the review was open; run /plan to review it again."
                    .to_owned(),
                NoticeKind::Warning,
            )
            .await;
            return InputAction::Handled;
        }
        let outcome = match decision {
            Decision::Implement { fresh, note } => {
                self.approve(&current, fresh, Some(draft.revision), note.as_deref())
                    .await
            }
            Decision::Revise(feedback) => Ok(InputAction::Transform {
                text: feedback,
                images: Vec::new(),
            }),
            Decision::Exit => self.leave(&current).await,
            Decision::Keep => Ok(InputAction::Handled),
        };
        outcome.unwrap_or(InputAction::Handled)
    }
}

/// The terminal's review: four choices (a note with Tab on the implementing ones and on
/// "Keep planning", where it is feedback) and a row to type what should change.
fn question(title: String) -> Question {
    Question {
        title,
        choices: vec![
            QuestionChoice::new(IMPLEMENT).with_note(),
            QuestionChoice::new(IMPLEMENT_FRESH)
                .described(Some(
                    "A new session starts with the plan; this one stays as it is.".to_owned(),
                ))
                .with_note(),
            QuestionChoice::new(KEEP_PLANNING).with_note(),
            QuestionChoice::new(EXIT_PLANNING)
                .described(Some("The draft is kept; /plan returns to it.".to_owned())),
        ],
        typed_answer: Some("Revise the plan".to_owned()),
    }
}

fn from_answer(answer: Option<QuestionAnswer>) -> Decision {
    match answer {
        Some(QuestionAnswer::Choice { index: 0, note }) => {
            Decision::Implement { fresh: false, note }
        }
        Some(QuestionAnswer::Choice { index: 1, note }) => {
            Decision::Implement { fresh: true, note }
        }
        Some(QuestionAnswer::Choice {
            index: 2,
            note: Some(feedback),
        }) => Decision::Revise(feedback),
        Some(QuestionAnswer::Choice { index: 3, .. }) => Decision::Exit,
        Some(QuestionAnswer::Typed(feedback)) => Decision::Revise(feedback),
        _ => Decision::Keep,
    }
}

/// The review through plain dialogs: a `select`, then an `input` for a note or a revision
/// request. Dismissing the second changes nothing.
async fn ask_with_dialogs(
    dialogs: &dyn Dialogs,
    title: &str,
    cancel: &CancellationToken,
) -> Decision {
    let options = [
        IMPLEMENT,
        IMPLEMENT_FRESH,
        IMPLEMENT_WITH_NOTE,
        REVISE,
        KEEP_PLANNING,
        EXIT_PLANNING,
    ]
    .map(str::to_owned)
    .to_vec();
    let choice = dialogs.select(title, options, cancel).await;
    let ask = |title: &'static str| {
        let request = UiRequestKind::Input {
            title: title.to_owned(),
            placeholder: None,
            timeout: None,
        };
        dialogs.extension_ui(request, None, cancel.clone())
    };
    match choice.as_deref() {
        Some(IMPLEMENT) => Decision::Implement {
            fresh: false,
            note: None,
        },
        Some(IMPLEMENT_FRESH) => Decision::Implement {
            fresh: true,
            note: None,
        },
        Some(IMPLEMENT_WITH_NOTE) => match ask("A note for the implementation").await {
            Some(UiReply::Value(note)) => Decision::Implement {
                fresh: false,
                note: Some(note),
            },
            _ => Decision::Keep,
        },
        Some(REVISE) => match ask("What should change in the plan?").await {
            Some(UiReply::Value(feedback)) if !feedback.trim().is_empty() => {
                Decision::Revise(feedback)
            }
            _ => Decision::Keep,
        },
        Some(EXIT_PLANNING) => Decision::Exit,
        _ => Decision::Keep,
    }
}
