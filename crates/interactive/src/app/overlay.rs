//! The picker in the editor's place, and what the app does with its results.

use std::path::PathBuf;

use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::keybindings::Keybindings;

use super::ui::Ui;
use crate::pickers::BranchSummaryChoice;
use crate::pickers::BranchSummaryPrompt;
use crate::pickers::ConfirmPrompt;
use crate::pickers::ForkPicker;
use crate::pickers::LoginDialog;
use crate::pickers::ModelPicker;
use crate::pickers::PickerOutcome;
use crate::pickers::ProviderPicker;
use crate::pickers::ScopeChoice;
use crate::pickers::ScopePicker;
use crate::pickers::SessionPicker;
use crate::pickers::SessionPickerOptions;
use crate::pickers::SessionRequest;
use crate::pickers::SettingsMenu;
use crate::pickers::SettingsRequest;
use crate::pickers::ThinkingPicker;
use crate::pickers::TreeRequest;
use crate::pickers::TreeView;
use crate::pickers::TreeViewOptions;
use crate::pickers::TrustChoice;
use crate::pickers::TrustPrompt;
use knightcode_ai::login::LoginChoice;
use knightcode_ai::login::LoginKind;

/// The picker on screen.
pub enum Overlay {
    Sessions(SessionPicker),
    Models(ModelPicker),
    Scope(ScopePicker),
    Thinking(ThinkingPicker),
    /// `/settings`: stays open while its changes apply.
    Settings(SettingsMenu),
    Tree(TreeView),
    Fork(ForkPicker),
    Trust(TrustPrompt),
    BranchSummary(BranchSummaryPrompt),
    /// A session another process owns was picked: continue it in a fork?
    ForkBusy(ConfirmPrompt, PathBuf),
    /// `/tools`: the change each answer makes.
    WebTools(
        ConfirmPrompt,
        Vec<knightcode_runtime::web_tools::WebToolsChange>,
    ),
    /// `/undo`: the user messages of the branch.
    Undo(ForkPicker),
    /// Going back past turns that changed files: put them back too?
    Restore(ConfirmPrompt, GoingBack),
    /// A question of a slash command (`/import`, `/bug`); the answer's index goes back.
    Choice(ConfirmPrompt, super::sharing::Question),
    /// An extension's dialog (`ctx.ui.select` …); it answers the extension itself.
    Extension(super::ext_ui::PendingDialog),
    /// An extension's component (`ctx.ui.custom`); keys go to it (see `input.rs`).
    Js(super::ext_ui::JsPanel),
    /// `/login`: a subscription or an API key?
    LoginMethod(ConfirmPrompt),
    /// `/login`: the providers of one kind; escape goes back to the kinds.
    LoginProviders(ProviderPicker, Vec<LoginChoice>),
    /// `/login`: the login under way; escape stops it.
    Login(LoginDialog),
    /// `/logout`: the providers with stored credentials.
    LogoutProviders(ProviderPicker, Vec<String>),
}

/// A move in the tree waiting for the restore question's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct GoingBack {
    pub entry_id: Option<String>,
    pub summary: Option<knightcode_runtime::actor::SummaryRequest>,
}

/// What a picker asks for while open.
#[derive(Debug, Clone, PartialEq)]
pub enum OverlayRequest {
    Session(SessionRequest),
    Tree(TreeRequest),
    Settings(SettingsRequest),
}

/// A picker's result.
#[derive(Debug, Clone, PartialEq)]
pub enum OverlayResult {
    Session(PathBuf),
    Model {
        provider: String,
        id: String,
    },
    Thinking(knightcode_ai::ThinkingLevel),
    /// `/scoped-models` closed with a change.
    Scope(ScopeChoice),
    /// `/tree`: the entry to continue from (`None`: before the first message).
    TreeEntry {
        entry_id: Option<String>,
    },
    Fork(String),
    /// Continue this session file (owned by another process) in a fork of it.
    ForkSessionFile(PathBuf),
    /// `/tools`: the change picked.
    WebTools(knightcode_runtime::web_tools::WebToolsChange),
    /// The answer (an index) to a slash command's question.
    Choice(super::sharing::Question, usize),
    Trust(TrustChoice),
    /// `/tree` leaving a branch: how to summarise it.
    TreeSummary {
        entry_id: String,
        choice: BranchSummaryChoice,
    },
    /// `/undo`: go back to before this user message.
    Undo(String),
    /// The restore question's answer (escape cancels the move instead).
    Restore {
        going: GoingBack,
        restore_files: bool,
    },
    /// The picker stays open; the app does I/O for it.
    Request(OverlayRequest),
    /// `/login`: the kind of login picked (`None`: escape, closed).
    LoginMethod(Option<LoginKind>),
    /// `/login`: the provider picked (`None`: escape, back to the kinds).
    LoginProvider(Option<LoginChoice>),
    /// `/login`: what was typed into the dialog (it stays open).
    LoginInput(String),
    /// `/login`: escape in the dialog.
    LoginCancelled,
    /// `/logout`: the provider picked.
    Logout(String),
}

/// What a key did.
pub enum OverlayStep {
    Pending,
    Closed,
    Done(OverlayResult),
    Request(OverlayResult),
}

fn step<T, R>(
    outcome: PickerOutcome<T, R>,
    done: impl FnOnce(T) -> OverlayResult,
    request: impl FnOnce(R) -> OverlayResult,
) -> OverlayStep {
    match outcome {
        PickerOutcome::Pending => OverlayStep::Pending,
        PickerOutcome::Cancel => OverlayStep::Closed,
        PickerOutcome::Done(value) => OverlayStep::Done(done(value)),
        PickerOutcome::Request(value) => OverlayStep::Request(request(value)),
    }
}

impl Overlay {
    pub fn set_max_rows(&mut self, rows: usize) {
        match self {
            Self::Sessions(p) => p.set_max_rows(rows),
            Self::Models(p) => p.set_max_rows(rows),
            Self::Scope(p) => p.set_max_rows(rows),
            Self::Thinking(p) => p.set_max_rows(rows),
            Self::Settings(p) => p.set_max_rows(rows),
            Self::Tree(p) => p.set_max_rows(rows),
            Self::Fork(p) | Self::Undo(p) => p.set_max_rows(rows),
            Self::Trust(_)
            | Self::BranchSummary(_)
            | Self::ForkBusy(..)
            | Self::Restore(..)
            | Self::WebTools(..)
            | Self::Choice(..)
            | Self::Extension(_)
            | Self::Js(_)
            | Self::LoginMethod(_)
            | Self::LoginProviders(..)
            | Self::Login(_)
            | Self::LogoutProviders(..) => {}
        }
    }

    pub fn render(&mut self, width: u16) -> Vec<String> {
        match self {
            Self::Sessions(p) => p.render(width),
            Self::Models(p) => p.render(width),
            Self::Scope(p) => p.render(width),
            Self::Thinking(p) => p.render(width),
            Self::Settings(p) => p.render(width),
            Self::Tree(p) => p.render(width),
            Self::Fork(p) | Self::Undo(p) => p.render(width),
            Self::Trust(p) => p.render(width),
            Self::BranchSummary(p) => p.render(width),
            Self::ForkBusy(p, _)
            | Self::Restore(p, _)
            | Self::WebTools(p, _)
            | Self::Choice(p, _)
            | Self::LoginMethod(p) => p.render(width),
            Self::LoginProviders(p, _) | Self::LogoutProviders(p, _) => p.render(width),
            Self::Login(p) => p.render(width),
            Self::Extension(p) => p.render(width),
            Self::Js(panel) => panel
                .lines
                .iter()
                .map(|line| knightcode_tui::width::truncate_to_width(line, usize::from(width), ""))
                .collect(),
        }
    }

    pub fn handle_paste(&mut self, text: &str) {
        match self {
            Self::Sessions(p) => p.handle_paste(text),
            Self::Models(p) => p.handle_paste(text),
            Self::Scope(p) => p.handle_paste(text),
            Self::Tree(p) => p.handle_paste(text),
            Self::BranchSummary(p) => p.handle_paste(text),
            Self::Settings(p) => p.handle_paste(text),
            Self::Extension(p) => p.handle_paste(text),
            Self::LoginProviders(p, _) | Self::LogoutProviders(p, _) => p.handle_paste(text),
            Self::Login(p) => p.handle_paste(text),
            Self::LoginMethod(_)
            | Self::Thinking(_)
            | Self::Fork(_)
            | Self::Undo(_)
            | Self::Trust(_)
            | Self::ForkBusy(..)
            | Self::Restore(..)
            | Self::WebTools(..)
            | Self::Choice(..)
            | Self::Js(_) => {}
        }
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> OverlayStep {
        match self {
            Self::Sessions(p) => step(p.handle_key(key, bindings), OverlayResult::Session, |r| {
                OverlayResult::Request(OverlayRequest::Session(r))
            }),
            Self::Models(p) => step(
                p.handle_key(key, bindings),
                |c| OverlayResult::Model {
                    provider: c.provider,
                    id: c.id,
                },
                |never| match never {},
            ),
            Self::Scope(p) => {
                step(
                    p.handle_key(key, bindings),
                    OverlayResult::Scope,
                    |never| match never {},
                )
            }
            Self::Thinking(p) => step(
                p.handle_key(key, bindings),
                |c| OverlayResult::Thinking(c.level),
                |never| match never {},
            ),
            Self::Settings(p) => step(
                p.handle_key(key, bindings),
                |never| match never {},
                |r| OverlayResult::Request(OverlayRequest::Settings(r)),
            ),
            Self::Tree(p) => step(
                p.handle_key(key, bindings),
                |s| OverlayResult::TreeEntry {
                    entry_id: Some(s.entry_id),
                },
                |r| OverlayResult::Request(OverlayRequest::Tree(r)),
            ),
            Self::Fork(p) => {
                step(
                    p.handle_key(key, bindings),
                    OverlayResult::Fork,
                    |never| match never {},
                )
            }
            Self::Trust(p) => {
                step(
                    p.handle_key(key, bindings),
                    OverlayResult::Trust,
                    |never| match never {},
                )
            }
            Self::BranchSummary(p) => {
                let entry_id = p.entry_id.clone();
                step(
                    p.handle_key(key, bindings),
                    |choice| OverlayResult::TreeSummary { entry_id, choice },
                    |never| match never {},
                )
            }
            Self::Undo(p) => {
                step(
                    p.handle_key(key, bindings),
                    OverlayResult::Undo,
                    |never| match never {},
                )
            }
            // Escape cancels the move; the first answer leaves the files alone.
            Self::Restore(p, going) => match p.handle_key(key, bindings) {
                PickerOutcome::Done(answer) => OverlayStep::Done(OverlayResult::Restore {
                    going: going.clone(),
                    restore_files: answer == 1,
                }),
                PickerOutcome::Cancel => OverlayStep::Closed,
                PickerOutcome::Pending => OverlayStep::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            // The first answer forks; the other keeps the current session (a cancel).
            Self::ForkBusy(p, path) => match p.handle_key(key, bindings) {
                PickerOutcome::Done(0) => {
                    OverlayStep::Done(OverlayResult::ForkSessionFile(path.clone()))
                }
                PickerOutcome::Done(_) | PickerOutcome::Cancel => OverlayStep::Closed,
                PickerOutcome::Pending => OverlayStep::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            Self::WebTools(p, changes) => match p.handle_key(key, bindings) {
                PickerOutcome::Done(index) => match changes.get(index) {
                    Some(change) => OverlayStep::Done(OverlayResult::WebTools(change.clone())),
                    None => OverlayStep::Closed,
                },
                PickerOutcome::Cancel => OverlayStep::Closed,
                PickerOutcome::Pending => OverlayStep::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            Self::Choice(p, question) => match p.handle_key(key, bindings) {
                PickerOutcome::Done(answer) => {
                    OverlayStep::Done(OverlayResult::Choice(question.clone(), answer))
                }
                PickerOutcome::Cancel => {
                    OverlayStep::Done(OverlayResult::Choice(question.clone(), usize::MAX))
                }
                PickerOutcome::Pending => OverlayStep::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            // Keys reach the component before the overlay is asked (input.rs).
            Self::Js(_) => OverlayStep::Pending,
            Self::LoginMethod(p) => match p.handle_key(key, bindings) {
                PickerOutcome::Done(answer) => {
                    let kind = if answer == 0 {
                        LoginKind::Subscription
                    } else {
                        LoginKind::ApiKey
                    };
                    OverlayStep::Done(OverlayResult::LoginMethod(Some(kind)))
                }
                PickerOutcome::Cancel => OverlayStep::Done(OverlayResult::LoginMethod(None)),
                PickerOutcome::Pending => OverlayStep::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            Self::LoginProviders(p, choices) => match p.handle_key(key, bindings) {
                PickerOutcome::Done(index) => {
                    OverlayStep::Done(OverlayResult::LoginProvider(choices.get(index).cloned()))
                }
                PickerOutcome::Cancel => OverlayStep::Done(OverlayResult::LoginProvider(None)),
                PickerOutcome::Pending => OverlayStep::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            Self::Login(p) => match p.handle_key(key, bindings) {
                PickerOutcome::Done(text) => OverlayStep::Request(OverlayResult::LoginInput(text)),
                PickerOutcome::Cancel => OverlayStep::Done(OverlayResult::LoginCancelled),
                PickerOutcome::Pending => OverlayStep::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            Self::LogoutProviders(p, providers) => match p.handle_key(key, bindings) {
                PickerOutcome::Done(index) => match providers.get(index) {
                    Some(provider) => OverlayStep::Done(OverlayResult::Logout(provider.clone())),
                    None => OverlayStep::Closed,
                },
                PickerOutcome::Cancel => OverlayStep::Closed,
                PickerOutcome::Pending => OverlayStep::Pending,
                PickerOutcome::Request(never) => match never {},
            },
            Self::Extension(p) => match p.handle_key(key, bindings) {
                true => OverlayStep::Closed,
                false => OverlayStep::Pending,
            },
        }
    }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Said when there is no other model to pick or cycle to.
pub const ONLY_ONE_MODEL: &str =
    "Only one model is available; add credentials for more (see --list-models).";

impl Ui {
    pub(super) fn show_overlay(&mut self, overlay: Overlay) {
        self.screen.overlay = Some(overlay);
        self.mark_urgent();
    }

    /// `/tree` is about to leave a branch: ask whether to summarise it.
    pub fn ask_branch_summary(&mut self, entry_id: String) {
        let prompt =
            BranchSummaryPrompt::new(entry_id, self.screen.theme.clone(), self.prefs.bindings());
        self.show_overlay(Overlay::BranchSummary(prompt));
    }

    pub fn open_session_picker(&mut self) {
        let (dir, filter) = (
            self.places.sessions_dir().to_path_buf(),
            self.places.sessions_filter_by_cwd(),
        );
        let cwd = self.places.cwd().to_path_buf();
        let Some(library) = self.session.library().cloned() else {
            return;
        };
        let current = library.list(&dir, filter.then_some(cwd.as_path()));
        let current_file = library.current_file();
        let in_use = current
            .iter()
            .filter(|s| library.owner(&s.path).is_some())
            .map(|s| s.path.clone())
            .collect();
        let picker = SessionPicker::new(
            current,
            self.screen.theme.clone(),
            self.prefs.bindings(),
            SessionPickerOptions {
                now_ms: now_ms(),
                home: self.places.home_string(),
                current_session: current_file,
                allow_rename: true,
                in_use,
            },
        );
        self.show_overlay(Overlay::Sessions(picker));
    }

    pub fn open_model_picker(&mut self) {
        if self.session.models().is_empty() {
            self.info(
                "No models are available yet: log in with /login, set a provider's API key in the environment, add a provider to models.json, or start a local model server (Ollama, LM Studio, llama.cpp, vLLM). One configured since the start is picked up without a restart.",
            );
            // Asking for a snapshot picks up a model configured since.
            self.request_snapshot();
            return;
        }
        let current = self
            .session
            .current_model()
            .map(|m| (m.provider.clone(), m.id.clone()));
        let mut picker = ModelPicker::new(
            self.session.models().to_vec(),
            current.as_ref().map(|(p, i)| (p.as_str(), i.as_str())),
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        if !self.session.scoped_models().is_empty() {
            let scoped: Vec<(&str, &str)> = self
                .session
                .scoped_models()
                .iter()
                .map(|(p, i)| (p.as_str(), i.as_str()))
                .collect();
            picker.set_scoped(&scoped);
        }
        self.show_overlay(Overlay::Models(picker));
    }

    pub fn open_scope_picker(&mut self) {
        if self.session.models().len() < 2 {
            self.info(ONLY_ONE_MODEL);
            return;
        }
        let picker = ScopePicker::new(
            self.session.models().to_vec(),
            self.session.scoped_models(),
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.show_overlay(Overlay::Scope(picker));
    }

    pub fn open_thinking_picker(&mut self) {
        if self.session.thinking_levels().len() < 2 {
            self.info("This model does not support thinking levels.");
            return;
        }
        let Some(current) = self.session.view().map(|v| v.thinking_level()) else {
            return;
        };
        let picker = ThinkingPicker::new(
            self.session.thinking_levels().to_vec(),
            current,
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.show_overlay(Overlay::Thinking(picker));
    }

    pub fn open_tree(&mut self) {
        let Some(library) = self.session.library().cloned() else {
            return;
        };
        let options = TreeViewOptions {
            filter: self.prefs.display().tree_filter,
            now_ms: now_ms(),
            home: self.places.home_string(),
            ..TreeViewOptions::default()
        };
        let (theme, bindings) = (self.screen.theme.clone(), self.prefs.bindings());
        match library.with_tree(|tree| TreeView::new(tree, theme, bindings, options)) {
            Some(view) => self.show_overlay(Overlay::Tree(view)),
            None => self.info("The session is empty; there is no tree to navigate yet."),
        }
    }

    pub fn open_fork_picker(&mut self) {
        let Some(view) = self.session.view() else {
            return;
        };
        let candidates = view.fork_messages();
        if candidates.is_empty() {
            self.info("There is no user message to fork from yet.");
            return;
        }
        let picker = ForkPicker::new(
            candidates
                .into_iter()
                .map(|m| crate::pickers::ForkCandidate {
                    entry_id: m.entry_id,
                    text: m.text,
                })
                .collect(),
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.show_overlay(Overlay::Fork(picker));
    }

    /// A session another process owns was picked: ask whether to continue it in a fork.
    /// `None` when nobody else owns it (it can be opened as it is).
    pub fn fork_busy_prompt(&self, path: &std::path::Path, keep: &str) -> Option<Overlay> {
        let library = self.session.library()?;
        if library.current_file().as_deref() == Some(path) {
            return None;
        }
        let owner = library.owner(path)?;
        Some(self.fork_busy_overlay(path, &owner, keep))
    }

    /// The question for a session `owner` has open: continue in a fork, or `keep`.
    pub fn fork_busy_overlay(
        &self,
        path: &std::path::Path,
        owner: &knightcode_runtime::sessions::SessionOwner,
        keep: &str,
    ) -> Overlay {
        let prompt = ConfirmPrompt::new(
            "Session in use",
            format!(
                "{} is open in another knightcode process (pid {} on {}). Only one process writes to a session; a fork copies it into a new session file and leaves the original alone.",
                path.display(),
                owner.pid,
                owner.host
            ),
            vec!["Continue in a fork".to_owned(), keep.to_owned()],
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        Overlay::ForkBusy(prompt, path.to_path_buf())
    }

    /// `/tools` without arguments: the state, and a list of what to change.
    pub fn open_web_tools_picker(
        &mut self,
        status: &knightcode_runtime::web_tools::WebToolsStatus,
    ) {
        let (answers, changes) = super::web_tools::choices(status);
        let prompt = ConfirmPrompt::new(
            "Web tools",
            super::web_tools::summary(status),
            answers,
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.show_overlay(Overlay::WebTools(prompt, changes));
    }

    pub fn open_trust_picker(&mut self) {
        let prompt = super::startup::trust_selector(self);
        self.show_overlay(Overlay::Trust(prompt));
    }

    /// I/O a picker asked for; the picker stays open and hears back.
    pub fn overlay_request(&mut self, request: OverlayRequest) {
        match request {
            OverlayRequest::Session(SessionRequest::LoadAllSessions) => {
                let all = self
                    .session
                    .library()
                    .map(|library| library.list_all(&self.places.agent_dir().join("sessions")))
                    .unwrap_or_default();
                let in_use: Vec<PathBuf> =
                    self.session.library().map_or_else(Vec::new, |library| {
                        all.iter()
                            .filter(|s| library.owner(&s.path).is_some())
                            .map(|s| s.path.clone())
                            .collect()
                    });
                if let Some(Overlay::Sessions(p)) = &mut self.screen.overlay {
                    p.set_all_sessions(all);
                    p.mark_in_use(in_use);
                }
            }
            OverlayRequest::Session(SessionRequest::Rename { path, name }) => {
                let result = match self.session.library() {
                    Some(library) => library.rename(&path, &name).map_err(|e| e.to_string()),
                    None => Err("the session is unavailable".to_owned()),
                };
                if let Some(Overlay::Sessions(p)) = &mut self.screen.overlay {
                    match result {
                        Ok(()) => p.set_name(&path, Some(name)),
                        Err(error) => p.set_status(&error, true),
                    }
                }
                self.update_footer();
            }
            OverlayRequest::Session(SessionRequest::Delete(path)) => {
                let result = match self.session.library() {
                    Some(library) => library.delete(&path).map_err(|e| e.to_string()),
                    None => Err("the session is unavailable".to_owned()),
                };
                if let Some(Overlay::Sessions(p)) = &mut self.screen.overlay {
                    match result {
                        Ok(()) => p.remove(&path),
                        Err(error) => p.set_status(&error, true),
                    }
                }
            }
            OverlayRequest::Settings(request) => self.settings_request(request),
            OverlayRequest::Tree(TreeRequest::Copy { text }) => {
                self.copy_to_clipboard(&text);
            }
            OverlayRequest::Tree(TreeRequest::Label { id, label }) => {
                let result = self.session.library().map(|library| {
                    library
                        .set_label(&id, label.as_deref())
                        .map_err(|e| e.to_string())
                });
                if let Some(Err(error)) = result {
                    self.error(&format!("Could not save the label: {error}"));
                }
            }
        }
        self.mark_urgent();
    }
}
