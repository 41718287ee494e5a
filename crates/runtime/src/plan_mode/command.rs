//! `/plan`, `/plan <task>`, `/plan off` and `/plan approve [fresh] [N [note]]`, run where a
//! prompt arrives (the input hook), so print, JSON, RPC and the interactive mode share them.

use knightcode_protocol::plan::PlanMessageKind;
use knightcode_protocol::plan::PlanMode as Mode;
use knightcode_protocol::plan::PlanState;

use super::PlanMode;
use super::text;
use crate::dialogs::NoticeKind;
use crate::hooks::InputAction;

/// One `/plan` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PlanCommand {
    /// `/plan`: enter, or review the draft when planning.
    Enter,
    /// `/plan <task>`: enter if needed and run the task as a planning prompt.
    Task(String),
    /// `/plan off`.
    Off,
    /// `/plan approve [fresh] [N [note]]`.
    Approve {
        fresh: bool,
        revision: Option<u64>,
        note: Option<String>,
    },
    /// `/plan approve` with something other than a revision after it.
    BadApprove,
}

impl PlanMode {
    /// Whether `text` is a `/plan` command this built-in answers (an extension's own
    /// `sendUserMessage` is sent as written).
    pub(crate) fn answers(&self, text: &str, source: crate::hooks::InputSource) -> bool {
        self.enabled()
            && source != crate::hooks::InputSource::Extension
            && parse_command(text).is_some()
    }

    /// A command that came while a run goes on (or with messages queued): refused at once
    /// rather than queued as text for the model.
    pub(crate) async fn refuse_busy(&self) {
        self.notify(text::BUSY.to_owned(), NoticeKind::Warning)
            .await;
    }

    fn has_queued(&self) -> bool {
        self.actions
            .get()
            .and_then(|actions| actions.view())
            .is_some_and(|view| view.has_queued())
    }
}

/// The command in `text`, when it is one (`/plan` alone or followed by whitespace).
pub(crate) fn parse_command(text: &str) -> Option<PlanCommand> {
    let rest = text.trim().strip_prefix("/plan")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let rest = rest.trim();
    if rest.is_empty() {
        return Some(PlanCommand::Enter);
    }
    if rest == "off" {
        return Some(PlanCommand::Off);
    }
    let Some(args) = rest
        .strip_prefix("approve")
        .filter(|a| a.is_empty() || a.starts_with(char::is_whitespace))
    else {
        return Some(PlanCommand::Task(rest.to_owned()));
    };
    let mut args = args.trim();
    let fresh = match args
        .strip_prefix("fresh")
        .filter(|a| a.is_empty() || a.starts_with(char::is_whitespace))
    {
        Some(after) => {
            args = after.trim();
            true
        }
        None => false,
    };
    if args.is_empty() {
        return Some(PlanCommand::Approve {
            fresh,
            revision: None,
            note: None,
        });
    }
    let (number, note) = args
        .split_once(char::is_whitespace)
        .map_or((args, ""), |(n, note)| (n, note.trim()));
    match number.parse::<u64>() {
        Ok(revision) => Some(PlanCommand::Approve {
            fresh,
            revision: Some(revision),
            note: (!note.is_empty()).then(|| note.to_owned()),
        }),
        Err(_) => Some(PlanCommand::BadApprove),
    }
}

impl PlanMode {
    /// Runs `command`: the state changes are written before this returns; a command that
    /// starts a run hands back its prompt.
    pub(crate) async fn run_command(&self, command: PlanCommand) -> InputAction {
        // As in the reference, every command needs an idle session with nothing queued: a
        // queued message was meant for the conversation as it stood.
        if self.has_queued() {
            self.refuse_busy().await;
            return InputAction::Handled;
        }
        let state = match self.state() {
            Ok(state) => state.unwrap_or_default(),
            Err(error) => {
                self.notify(
                    format!("Plan mode cannot read this branch's state: {error}."),
                    NoticeKind::Error,
                )
                .await;
                return InputAction::Handled;
            }
        };
        let outcome = match command {
            PlanCommand::Enter if state.planning() => Ok(self.review(&state).await),
            PlanCommand::Enter => self.enter(&state).await.map(|_| InputAction::Handled),
            PlanCommand::Task(task) => {
                let entered = if state.planning() {
                    Ok(true)
                } else {
                    self.enter(&state).await
                };
                entered.map(|entered| match entered {
                    true => InputAction::Transform {
                        text: task,
                        images: Vec::new(),
                    },
                    false => InputAction::Handled,
                })
            }
            PlanCommand::Off => self.leave(&state).await,
            PlanCommand::Approve {
                fresh,
                revision,
                note,
            } => self.approve(&state, fresh, revision, note.as_deref()).await,
            PlanCommand::BadApprove => {
                self.notify(
                    "Usage: /plan approve [fresh] [N [note]] (N is the revision to approve)."
                        .to_owned(),
                    NoticeKind::Error,
                )
                .await;
                Ok(InputAction::Handled)
            }
        };
        match outcome {
            Ok(action) => action,
            Err(error) => {
                self.notify(
                    format!("Plan mode could not save its state: {error}."),
                    NoticeKind::Error,
                )
                .await;
                InputAction::Handled
            }
        }
    }

    /// Starts a planning cycle: approval cleared, the draft and its revisions kept. `false`
    /// when the tool settings cannot plan (said to the user; nothing changed).
    async fn enter(&self, state: &PlanState) -> crate::Result<bool> {
        if let Some(why) = self.entry_refusal() {
            self.notify(
                format!("Cannot enter plan mode: {why}. Start without that option."),
                NoticeKind::Error,
            )
            .await;
            // Refused before anything changed; nothing runs.
            return Ok(false);
        }
        self.save(&PlanState {
            mode: Mode::Planning,
            draft: state.draft.clone(),
            approved: None,
        })?;
        self.append_message(
            PlanMessageKind::Instructions,
            text::instructions(&self.tool_names()),
        )?;
        self.just_entered
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.notify(text::ENTERED.to_owned(), NoticeKind::Info)
            .await;
        Ok(true)
    }

    /// `/plan off`: planning ends, the draft stays.
    pub(super) async fn leave(&self, state: &PlanState) -> crate::Result<InputAction> {
        if !state.planning() {
            self.notify(text::NOT_PLANNING.to_owned(), NoticeKind::Info)
                .await;
            return Ok(InputAction::Handled);
        }
        self.save(&PlanState {
            mode: Mode::Off,
            draft: state.draft.clone(),
            approved: None,
        })?;
        self.append_message(PlanMessageKind::Exit, text::exit())?;
        self.notify(text::LEFT.to_owned(), NoticeKind::Info).await;
        Ok(InputAction::Handled)
    }

    /// `/plan approve`: the approval is saved, then the plan runs as the prompt.
    pub(super) async fn approve(
        &self,
        state: &PlanState,
        fresh: bool,
        revision: Option<u64>,
        note: Option<&str>,
    ) -> crate::Result<InputAction> {
        let Some(draft) = &state.draft else {
            self.notify(text::NOTHING_TO_APPROVE.to_owned(), NoticeKind::Error)
                .await;
            return Ok(InputAction::Handled);
        };
        if let Some(asked) = revision
            && asked != draft.revision
        {
            self.notify(
                format!(
                    "Revision {asked} is not the current plan (the latest is revision {}); run /plan to review it again.",
                    draft.revision
                ),
                NoticeKind::Error,
            )
            .await;
            return Ok(InputAction::Handled);
        }
        self.save(&PlanState {
            mode: Mode::Off,
            draft: Some(draft.clone()),
            approved: Some(draft.revision),
        })?;
        self.append_message(PlanMessageKind::Exit, text::approved(draft.revision))?;
        let implement = text::implement(draft.revision, &draft.markdown, note);
        if !fresh {
            return Ok(InputAction::Transform {
                text: implement,
                images: Vec::new(),
            });
        }
        // A new session whose header links the planning one; the plan is its first prompt.
        let parent = crate::agent_session::lock(&self.session)
            .session_file()
            .map(|path| path.display().to_string());
        let queued = self
            .actions
            .get()
            .ok_or_else(|| "the session is not running".to_owned())
            .and_then(|actions| {
                actions
                    .new_session_with_prompt(parent.clone(), implement)
                    .map_err(|e| e.to_string())
            });
        let (said, kind) = match queued {
            Ok(()) => (
                match &parent {
                    Some(parent) => format!(
                        "Implementing plan revision {} in a new session; the planning session is {parent}.",
                        draft.revision
                    ),
                    None => format!(
                        "Implementing plan revision {} in a new session.",
                        draft.revision
                    ),
                },
                NoticeKind::Info,
            ),
            Err(why) => (
                format!(
                    "Plan revision {} is approved, but a new session could not start ({why}); /plan approve implements it here.",
                    draft.revision
                ),
                NoticeKind::Error,
            ),
        };
        self.notify(said, kind).await;
        Ok(InputAction::Handled)
    }
}
