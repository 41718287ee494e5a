//! Carrying out [`Action`]s: each becomes a command to the session task, and its reply — in
//! order with the session's events — finishes the job ([`Pending`]). The screen keeps
//! serving keys throughout; the session decides what waits for a running prompt (model and
//! session changes), what aborts it first (going to another session or branch) and what
//! happens alongside (steering, `!` commands, reads).

use knightcode_protocol::AgentEvent;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::actor::CommandError;
use knightcode_runtime::actor::Queueing;
use knightcode_runtime::actor::SummaryRequest;
use knightcode_runtime::hooks::InputSource;

use super::input::Action;
use super::overlay::OverlayResult;
use super::ui::Ui;
use super::ui::Wake;
use crate::commands;
use crate::commands::SlashCommand;
use crate::pickers::BranchSummaryChoice;

/// The working row while only `!` commands run.
const SHELL_WORKING: &str = "Running shell command…";

/// What to do with the reply to a command the app sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    /// A prompt: started, queued, handled or refused.
    Prompt,
    /// Steering or a follow-up, with its text: a refused one goes back to an empty editor.
    Queued(String),
    /// A `!` command filling the card at this index.
    Bash { card: usize, id: String },
    /// A fresh snapshot; `reload` rebuilds the transcript (another session or branch), then
    /// `then` is shown.
    Snapshot { reload: bool, then: AfterReload },
    /// Say this when done (with a fresh snapshot; `reload` as above).
    Changed { done: String, reload: bool },
    /// A model switch or cycle: the hint names the model.
    Model,
    /// A thinking-level change or cycle.
    Thinking,
    /// A fork: the text goes to the editor.
    Forked,
    /// A tree navigation: the text of a user message goes to the editor; the notice (what
    /// could not be undone) is said once the transcript is rebuilt.
    Navigated(Option<String>),
    /// A name was set.
    Named(String),
    /// `/compact`: the card comes with the events; a failure is said here.
    Compacted,
    /// `/tools`: the web tools' state to show.
    WebTools,
    /// `/tools` without arguments: the state, to open the picker with.
    WebToolsPicker,
    /// `/reload`: completion takes up the new commands; a notice says what was loaded.
    Reloaded,
    /// Nothing beyond reporting a failure.
    Quiet,
    /// `/login` or `/logout` changed `auth.json`: what to say once the session has read it.
    Credentials(super::login::AfterCredentials),
    /// A fresh snapshot, then this status line (and error).
    SnapshotThenSay {
        status: String,
        error: Option<String>,
    },
    /// `/export`, `/share` and `/bug` wrote a file (see `sharing`).
    Exported(super::sharing::ExportFor),
}

/// What to show once a snapshot has been taken up (after the transcript was rebuilt, so it
/// stays on screen).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AfterReload {
    pub notice: Option<String>,
    pub hint: Option<String>,
    pub editor: Option<String>,
    /// Tell the extensions waiting for it that their new session is on screen.
    pub answer_extensions: bool,
}

impl Pending {
    /// A snapshot that rebuilds the transcript, then shows `then`.
    fn reload(then: AfterReload) -> Self {
        Self::Snapshot { reload: true, then }
    }
}

/// Handles one wake-up and returns the actions it produced.
impl Ui {
    pub fn on_wake(&mut self, wake: Wake) -> Vec<Action> {
        match wake {
            Wake::Input(bytes) => {
                let events = self.parse_input(&bytes);
                self.keys.queue(events);
                self.next_queued_input()
            }
            Wake::Queued => self.next_queued_input(),
            Wake::InputClosed => {
                // The terminal is gone: nothing more can be typed or shown.
                self.quit();
                vec![Action::Abort]
            }
            Wake::Event(event) => {
                self.on_session_event(event);
                // Whatever else has arrived is handled in the same wake-up.
                self.drain_events();
                Vec::new()
            }
            Wake::SessionEnded => {
                self.link.disconnect();
                self.session.set_running(false);
                self.set_working(None);
                self.error("The session stopped unexpectedly (this is a bug in knightcode). Everything up to the last response is saved; quit with ctrl+d and continue with knightcode --continue.");
                Vec::new()
            }
            Wake::Clipboard(read) => {
                self.on_clipboard_image(read);
                Vec::new()
            }
            Wake::Job(done) => {
                self.on_job_done(done);
                Vec::new()
            }
            Wake::ThemeFile => {
                self.reload_theme_file();
                Vec::new()
            }
            Wake::ExtensionUi(message) => self.on_extension_ui(message),
            Wake::Resize => {
                self.on_resize();
                Vec::new()
            }
            Wake::Timer => {
                self.drain_events();
                let events = self.on_timer();
                self.keys.queue(events);
                self.next_queued_input()
            }
            Wake::Signal(code) => {
                self.quit_with(code);
                vec![Action::Abort]
            }
        }
    }

    /// One item of the session's stream.
    pub fn on_session_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::Agent(AgentEvent::BashExecutionUpdate { id, delta }) => {
                let card = id.as_deref().and_then(|id| self.session.bash_card(id));
                if let Some(card) = card.and_then(|c| self.screen.transcript.bash_card(c)) {
                    card.append_output(&delta);
                    self.mark_dirty();
                }
            }
            SessionEvent::Agent(event) => {
                let settled = matches!(event, AgentEvent::AgentSettled { .. });
                self.on_agent_event(&event);
                if settled {
                    self.session.set_running(false);
                    if !self.session.bash_running() {
                        self.set_working(None);
                    } else {
                        self.set_working(Some(SHELL_WORKING));
                    }
                    self.request_snapshot();
                    self.open_plan_review();
                }
            }
            SessionEvent::Reply { tag, reply } => {
                if let Some(pending) = self.link.reply_to(tag) {
                    self.on_reply(pending, reply);
                }
            }
            SessionEvent::Diagnostic(diagnostic) => {
                use knightcode_runtime::diagnostics::DiagnosticLevel;
                match diagnostic.level {
                    DiagnosticLevel::Info => self.info(&diagnostic.message),
                    DiagnosticLevel::Warning => self.warn(&diagnostic.message),
                    DiagnosticLevel::Error => self.error(&diagnostic.message),
                }
            }
            SessionEvent::RunFailed(message) => self.error(&format!("The run failed: {message}")),
        }
    }

    /// A run that submitted a plan settled: its review opens (`/plan`), as if typed, unless
    /// the user is typing or has messages queued (they run first; `/plan` reviews later).
    fn open_plan_review(&mut self) {
        if !std::mem::take(&mut self.plan_review_due) {
            return;
        }
        let queued = !self.screen.steering.is_empty() || !self.screen.follow_ups.is_empty();
        if queued || !self.screen.editor.is_empty() || self.session.running() {
            return;
        }
        submit(self, "/plan".to_owned(), Vec::new());
    }

    fn on_reply(&mut self, pending: Pending, reply: Reply) {
        if matches!(pending, Pending::Navigated(_)) && self.session.compacting() {
            // The branch summary is written (or not).
            self.session_job_ended();
            if let Reply::Failed(CommandError::NavigationCancelled) = &reply {
                self.info("Navigation cancelled; you are still on the same branch.");
                return;
            }
        }
        if let (Pending::Compacted, Reply::Failed(error)) = (&pending, &reply) {
            if *error == CommandError::CompactionCancelled {
                self.info("Compaction cancelled.");
            } else {
                self.error(&error.to_string());
            }
            return;
        }
        if let Pending::Exported(purpose) = pending {
            self.on_exported(purpose, reply);
            return;
        }
        if let Reply::Failed(error) = &reply {
            let message = &error.to_string();
            if pending == Pending::Prompt {
                self.session.set_running(false);
                self.set_working(None);
            }
            if let Pending::Bash { id, .. } = &pending {
                self.session.bash_ended(id);
                self.bash_finished();
                self.error(&format!("The command could not run: {message}"));
                return;
            }
            if let Pending::Queued(text) = &pending
                && self.screen.editor.is_empty()
            {
                self.screen.editor.set_text(text);
            }
            self.error(message);
            return;
        }
        match (pending, reply) {
            (Pending::Prompt, Reply::Prompt(PromptDisposition::Handled)) => {
                self.session.set_running(false);
                self.set_working(None);
            }
            (Pending::Prompt | Pending::Queued(_), _) => {}
            (Pending::Bash { card, id }, Reply::Bash(result)) => {
                self.session.bash_ended(&id);
                if let Some(c) = self.screen.transcript.bash_card(card) {
                    c.finish_result(&result);
                }
                self.bash_finished();
            }
            (Pending::Snapshot { reload, then }, Reply::Snapshot(snapshot)) => {
                self.apply_snapshot(*snapshot);
                if reload {
                    self.reload_transcript();
                }
                if let Some(text) = then.editor {
                    self.screen.editor.set_text(&text);
                }
                if let Some(notice) = then.notice {
                    self.info(&notice);
                }
                if then.hint.is_some() {
                    self.screen.hint = then.hint;
                }
                if then.answer_extensions {
                    self.ext_ui.answer_replaced();
                }
            }
            (Pending::Changed { done, reload }, _) => {
                let then = AfterReload {
                    notice: Some(done),
                    ..AfterReload::default()
                };
                self.send(Command::Snapshot, Pending::Snapshot { reload, then });
            }
            (Pending::Model, Reply::ModelSet(switch) | Reply::ModelCycled(Some(switch))) => {
                let scope = if switch.scoped { " (scoped)" } else { "" };
                self.status(&format!(
                    "Model: {}/{}{scope} · thinking {}",
                    switch.model.provider,
                    switch.model.id,
                    switch.thinking.as_str()
                ));
                self.request_snapshot();
            }
            (Pending::Model, Reply::ModelCycled(None)) => {
                if self.session.scoped_models().is_empty() {
                    self.info(super::overlay::ONLY_ONE_MODEL);
                } else {
                    self.info("Only one model is in the scope; change it with /scoped-models.");
                }
            }
            (Pending::Thinking, Reply::ThinkingCycled(None)) => {
                self.info("This model does not support thinking levels.");
            }
            (Pending::Thinking, Reply::ThinkingCycled(Some(change))) => {
                self.status(&format!("Thinking level: {}", change.level.as_str()));
                self.request_snapshot();
            }
            (Pending::Thinking, _) => self.request_snapshot(),
            (Pending::Forked, Reply::Forked { text }) => {
                let then = AfterReload {
                    notice: Some(
                        "Forked into a new session; edit the message and press enter.".to_owned(),
                    ),
                    editor: Some(text),
                    ..AfterReload::default()
                };
                self.send(Command::Snapshot, Pending::reload(then));
            }
            (Pending::Navigated(warning), Reply::Navigated { text, restored }) => {
                let notice = match restored {
                    Some(report) => Some(knightcode_runtime::file_history::undo::restored_notice(
                        &report,
                    )),
                    None => warning,
                };
                let then = AfterReload {
                    notice,
                    hint: text.is_some().then(|| {
                        "Edit the message and press enter to branch from here.".to_owned()
                    }),
                    editor: text,
                    answer_extensions: false,
                };
                self.send(Command::Snapshot, Pending::reload(then));
            }
            (Pending::Reloaded, Reply::Reloaded(resources)) => self.reloaded(&resources),
            (Pending::Credentials(after), Reply::CredentialsReloaded(switch)) => {
                self.credentials_reloaded(after, switch);
            }
            (Pending::SnapshotThenSay { status, error }, Reply::Snapshot(snapshot)) => {
                self.apply_snapshot(*snapshot);
                self.status(&status);
                if let Some(error) = error {
                    self.error(&error);
                }
            }
            (Pending::Named(name), _) => {
                self.update_footer();
                self.status(&format!("Session named \"{name}\"."));
            }
            (Pending::WebToolsPicker, Reply::WebTools(status)) => {
                self.open_web_tools_picker(&status);
            }
            (Pending::WebTools, Reply::WebTools(status)) => {
                self.info(&super::web_tools::describe(&status));
                if let Some(error) = &status.save_error {
                    self.error(error);
                }
            }
            _ => {}
        }
        self.mark_urgent();
    }

    /// A compaction or branch summary ended: the working row goes back to the run's, a
    /// shell command's, or none.
    pub fn session_job_ended(&mut self) {
        self.session.set_compacting(false);
        let row = if self.session.running() {
            Some("Working…")
        } else if self.session.bash_running() {
            Some(SHELL_WORKING)
        } else {
            None
        };
        self.set_working(row);
    }

    fn bash_finished(&mut self) {
        if !self.session.bash_running() && !self.session.running() {
            self.set_working(None);
        }
        // The command may have switched branches.
        self.update_footer();
        self.mark_dirty();
    }
}

/// Moves in the tree, asking first whether to put files back when the move leaves turns
/// that changed some.
fn navigate(ui: &mut Ui, entry_id: Option<String>, summary: Option<SummaryRequest>) {
    ui.go_back(entry_id, summary);
}

/// The working row while a left branch is summarised.
pub const SUMMARIZING_BRANCH: &str = "Summarizing the branch you left…";

/// Carries out actions.
pub fn perform(ui: &mut Ui, actions: Vec<Action>) {
    for action in actions {
        perform_one(ui, action);
    }
}

fn perform_one(ui: &mut Ui, action: Action) {
    match action {
        Action::Submit(text) => {
            let images = ui.take_images();
            submit(ui, text, images);
        }
        Action::FollowUp(text) if ui.session.running() => {
            let images = ui.take_images();
            ui.send(
                Command::FollowUp {
                    text: text.clone(),
                    images,
                },
                Pending::Queued(text),
            );
        }
        Action::FollowUp(text) => {
            let images = ui.take_images();
            submit(ui, text, images);
        }
        Action::Abort => {
            if ui.session.running() {
                ui.link.abort_now();
                ui.set_working(Some("Interrupting…"));
            } else if ui.session.compacting() {
                // A compaction outside a run (`/compact`, before a prompt) is the session
                // task's own work: it stops on the command.
                ui.send(Command::Abort, Pending::Quiet);
                ui.set_working(Some("Interrupting…"));
            }
            if ui.session.bash_running() {
                ui.send(Command::AbortBash, Pending::Quiet);
            }
        }
        Action::CycleModel { forward } => {
            ui.send(Command::CycleModel { forward }, Pending::Model);
            applies_later(ui);
        }
        Action::CycleThinking => {
            ui.send(Command::CycleThinkingLevel, Pending::Thinking);
            applies_later(ui);
        }
        Action::Picked(result) => picked(ui, result),
        Action::OpenTree => ui.open_tree(),
        Action::OpenFork => ui.open_fork_picker(),
        Action::ExternalEditor => ui.external_editor(),
        Action::Suspend => ui.suspend(),
        Action::Quit => {
            if ui.session.running() {
                ui.link.abort_now();
            }
            ui.quit();
        }
    }
}

/// While a prompt runs, model and session changes wait for it to end: say so.
fn applies_later(ui: &mut Ui) {
    if ui.session.running() {
        ui.screen.hint = Some("The change applies when the current response ends.".to_owned());
    }
}

/// A submitted line: a slash command, a shell command, a prompt (steering while one runs).
pub fn submit(ui: &mut Ui, text: String, images: Vec<ContentBlock>) {
    ui.screen.hint = None;
    ui.screen.editor.clear();
    if let Some(command) = commands::parse(text.trim_start())
        && !matches!(command, SlashCommand::Unknown(_))
        && !ui.ext_ui.takes_command(text.trim_start())
    {
        slash_command(ui, command);
        return;
    }
    if let Some(command) = text.strip_prefix('!') {
        let (command, excluded) = match command.strip_prefix('!') {
            Some(rest) => (rest, true),
            None => (command, false),
        };
        let command = command.trim();
        if command.is_empty() {
            return;
        }
        let card = ui
            .screen
            .transcript
            .start_bash(command.to_owned(), excluded);
        let id = format!("bash-{card}");
        ui.session.bash_started(id.clone(), card);
        // The working row says a command runs and which key cancels it (while the agent
        // works, its own row stays).
        if !ui.session.running() {
            ui.set_working(Some(SHELL_WORKING));
        }
        ui.send(
            Command::Bash {
                command: command.to_owned(),
                exclude_from_context: excluded,
                id: Some(id.clone()),
            },
            Pending::Bash { card, id },
        );
        ui.mark_urgent();
        return;
    }
    if ui.session.running() {
        ui.send(
            Command::Prompt {
                text: text.clone(),
                images,
                queueing: Some(Queueing::Steer),
                source: InputSource::Interactive,
            },
            Pending::Queued(text),
        );
        ui.mark_urgent();
        return;
    }
    // Running from now on: a second Enter before the session answers steers this run.
    ui.session.set_running(true);
    if !ui.ext_ui.is_command(&text) {
        ui.set_working(Some("Working…"));
    }
    ui.send(
        Command::Prompt {
            text,
            images,
            queueing: None,
            source: InputSource::Interactive,
        },
        Pending::Prompt,
    );
    ui.draw();
}

/// A slash command.
fn slash_command(ui: &mut Ui, command: SlashCommand) {
    match command {
        SlashCommand::Hotkeys => ui.show_hotkeys(),
        SlashCommand::Changelog => ui.show_changelog(),
        SlashCommand::Session => ui.show_session_info(),
        SlashCommand::Compact(focus) => {
            ui.send(
                Command::Compact {
                    custom_instructions: focus,
                },
                Pending::Compacted,
            );
        }
        SlashCommand::Copy => ui.copy_last(),
        SlashCommand::Tools(Ok(change)) => {
            let pending = if change == knightcode_runtime::web_tools::WebToolsChange::default() {
                Pending::WebToolsPicker
            } else {
                Pending::WebTools
            };
            ui.send(Command::ConfigureWebTools(change), pending);
        }
        SlashCommand::Tools(Err(usage)) => ui.info(&usage),
        SlashCommand::Export(path) => ui.export_session(path),
        SlashCommand::Import(path) => ui.ask_import(path),
        SlashCommand::Share => ui.share_session(),
        SlashCommand::Bug(description) => ui.ask_bug_report(description),
        SlashCommand::Name(name) => ui.name_session(name.as_deref()),
        SlashCommand::Login(provider) => ui.open_login(provider.as_deref()),
        SlashCommand::Logout(provider) => ui.open_logout(provider.as_deref()),
        SlashCommand::Resume => ui.open_session_picker(),
        SlashCommand::Tree => ui.open_tree(),
        SlashCommand::Fork => ui.open_fork_picker(),
        SlashCommand::Undo => ui.open_undo_picker(),
        SlashCommand::Model(None) => ui.open_model_picker(),
        SlashCommand::ScopedModels => ui.open_scope_picker(),
        SlashCommand::Thinking(None) => ui.open_thinking_picker(),
        SlashCommand::Settings => ui.open_settings_menu(),
        SlashCommand::Trust => ui.open_trust_picker(),
        SlashCommand::Reload => ui.reload(),
        SlashCommand::Quit => perform_one(ui, Action::Quit),
        SlashCommand::New => {
            ui.send(
                Command::NewSession {
                    parent_session: None,
                },
                Pending::Changed {
                    done: "Started a new session.".to_owned(),
                    reload: true,
                },
            );
        }
        SlashCommand::Clone => {
            ui.send(
                Command::Clone,
                Pending::Changed {
                    done: "Cloned the current branch into a new session.".to_owned(),
                    reload: true,
                },
            );
        }
        SlashCommand::Model(Some(spec)) => {
            let found = ui
                .session
                .models()
                .iter()
                .find(|m| format!("{}/{}", m.provider, m.id) == spec || m.id == spec)
                .map(|m| (m.provider.clone(), m.id.clone()));
            match found {
                Some((provider, model_id)) => set_model(ui, provider, model_id),
                None => ui.error(&format!("Model not found: {spec}. Use /model to pick one.")),
            }
        }
        SlashCommand::Thinking(Some(level)) => set_thinking(ui, &level),
        // Not a command after all: the model gets the text as typed (parse never says so).
        SlashCommand::Unknown(_) => {}
    }
}

fn set_model(ui: &mut Ui, provider: String, model_id: String) {
    ui.send(Command::SetModel { provider, model_id }, Pending::Model);
    applies_later(ui);
}

fn set_thinking(ui: &mut Ui, level: &str) {
    let Some(parsed) = knightcode_ai::ThinkingLevel::parse(level) else {
        ui.error(&format!(
            "Unknown thinking level '{level}'. Levels: {}",
            ui.session
                .thinking_levels()
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return;
    };
    ui.send(Command::SetThinkingLevel(parsed), Pending::Thinking);
    ui.status(&format!("Thinking level: {}", parsed.as_str()));
    applies_later(ui);
}

fn picked(ui: &mut Ui, result: OverlayResult) {
    match result {
        OverlayResult::Session(path) => {
            if let Some(prompt) = ui.fork_busy_prompt(&path, "Keep the current session") {
                ui.screen.overlay = Some(prompt);
                ui.mark_urgent();
                return;
            }
            let done = format!("Resumed {}", path.display());
            ui.send(
                Command::SwitchSession(path),
                Pending::Changed { done, reload: true },
            );
        }
        OverlayResult::Model { provider, id } => set_model(ui, provider, id),
        OverlayResult::Thinking(level) => set_thinking(ui, level.as_str()),
        OverlayResult::Scope(choice) => {
            let what = match choice.models.len() {
                0 => "ctrl+p cycles every model".to_owned(),
                1 => "ctrl+p has 1 model to cycle through".to_owned(),
                n => format!("ctrl+p cycles through {n} models"),
            };
            let saved = if choice.save {
                " (saved to settings)"
            } else {
                ""
            };
            ui.send(
                Command::SetScopedModels {
                    models: choice.models,
                    save: choice.save,
                },
                Pending::Changed {
                    done: format!("Scoped models: {what}{saved}."),
                    reload: false,
                },
            );
        }
        OverlayResult::TreeEntry { entry_id } => {
            let ask = match (&entry_id, ui.session.view()) {
                (Some(id), Some(view)) => {
                    !ui.session.skip_branch_summary_prompt() && view.navigation_abandons(id)
                }
                _ => false,
            };
            match entry_id {
                Some(entry_id) if ask => ui.ask_branch_summary(entry_id),
                entry_id => navigate(ui, entry_id, None),
            }
        }
        OverlayResult::TreeSummary { entry_id, choice } => {
            let summary = match choice {
                BranchSummaryChoice::NoSummary => None,
                BranchSummaryChoice::Summarize => Some(SummaryRequest::default()),
                BranchSummaryChoice::Custom(focus) => Some(SummaryRequest {
                    custom_instructions: Some(focus),
                    replace_instructions: false,
                }),
            };
            navigate(ui, Some(entry_id), summary);
        }
        OverlayResult::Choice(question, answer) => ui.on_choice(question, answer),
        OverlayResult::ForkSessionFile(path) => {
            let done = format!(
                "Continued {} in a fork: a new session file (the other process keeps the original).",
                path.display()
            );
            ui.send(
                Command::ForkSessionFile(path),
                Pending::Changed { done, reload: true },
            );
        }
        OverlayResult::Undo(entry_id) => navigate(ui, Some(entry_id), None),
        OverlayResult::Restore {
            going,
            restore_files,
        } => ui.navigate_now(going, restore_files),
        OverlayResult::Fork(entry_id) => {
            ui.send(Command::Fork(entry_id), Pending::Forked);
        }
        OverlayResult::Trust(choice) => ui.save_trust(choice),
        OverlayResult::WebTools(change) => {
            ui.send(Command::ConfigureWebTools(change), Pending::WebTools);
        }
        OverlayResult::Request(request) => ui.overlay_request(request),
        OverlayResult::LoginMethod(kind) => ui.login_method_picked(kind),
        OverlayResult::LoginProvider(choice) => ui.login_provider_picked(choice),
        OverlayResult::LoginInput(text) => ui.login_input(text),
        OverlayResult::LoginCancelled => ui.login_cancelled(),
        OverlayResult::Logout(provider) => ui.logout(provider),
    }
}
