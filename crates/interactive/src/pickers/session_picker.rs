//! The session picker of `/resume` and `--resume`: search, sort, named-only filter, paths,
//! current folder vs all projects, rename and delete.
//!
//! Renaming and deleting touch files, so the picker asks the app to do them
//! ([`SessionRequest`]) and the app reports back: [`SessionPicker::set_name`] after a
//! rename, [`SessionPicker::remove`] after a delete, [`SessionPicker::set_status`] on
//! failure. The same goes for loading every project's sessions the first time Tab asks for
//! them ([`SessionPicker::set_all_sessions`]).

use std::path::Path;
use std::path::PathBuf;

use knightcode_runtime::sessions::SessionInfo;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

use super::PickerOutcome;
use super::common::DEFAULT_MAX_ROWS;
use super::common::cursor_style;
use super::common::is_release;
use super::line_input::LineInput;
use super::line_input::typed_char;
use super::session_search::Query;
use super::session_search::Row;
pub use super::session_search::SortMode;
use super::session_search::list_rows;

/// What the picker needs besides the sessions.
#[derive(Debug, Clone, Default)]
pub struct SessionPickerOptions {
    /// "Now" in Unix milliseconds, for the ages (`5m`, `2h`, ...).
    pub now_ms: i64,
    /// The home folder, shown as `~` in paths.
    pub home: Option<String>,
    /// The open session's file: marked in the list and never deleted. Compared as given,
    /// so pass it the way the session listing spells paths.
    pub current_session: Option<PathBuf>,
    /// Offer renaming (the app needs a way to write a name into any session file).
    pub allow_rename: bool,
    /// Sessions another process has open, marked `in use` (picking one offers a fork).
    pub in_use: std::collections::HashSet<PathBuf>,
}

/// Work the app does for the picker while it stays open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRequest {
    /// The user switched to all projects for the first time: list every project's sessions
    /// and hand them over with [`SessionPicker::set_all_sessions`] (or
    /// [`SessionPicker::set_load_error`]).
    LoadAllSessions,
    /// Write `name` into the session file, then call [`SessionPicker::set_name`].
    Rename { path: PathBuf, name: String },
    /// Delete the session file (never the current session: the picker refuses that), then
    /// call [`SessionPicker::remove`].
    Delete(PathBuf),
}

/// Which sessions are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    CurrentFolder,
    All,
}

#[derive(Debug, Clone)]
enum AllSessions {
    NotLoaded,
    Loading,
    Loaded(Vec<SessionInfo>),
}

#[derive(Debug, Clone)]
enum Mode {
    List,
    Rename { path: PathBuf, input: LineInput },
    ConfirmDelete { path: PathBuf },
}

#[derive(Debug, Clone)]
pub(crate) struct Status {
    pub(crate) text: String,
    pub(crate) error: bool,
}

/// The `/resume` picker.
pub struct SessionPicker {
    pub(crate) theme: Theme,
    pub(crate) options: SessionPickerOptions,
    pub(crate) cursor_style: Style,
    current: Vec<SessionInfo>,
    all: AllSessions,
    pub(crate) scope: Scope,
    pub(crate) sort: SortMode,
    pub(crate) named_only: bool,
    pub(crate) show_path: bool,
    pub(crate) search: LineInput,
    pub(crate) query: Query,
    pub(crate) rows: Vec<Row>,
    pub(crate) selected: usize,
    pub(crate) max_rows: usize,
    mode: Mode,
    pub(crate) status: Option<Status>,
    /// For the key hints.
    pub(crate) bindings: Keybindings,
}

impl SessionPicker {
    /// A picker over the current folder's sessions (newest first, as
    /// `SessionLibrary::list` returns them).
    /// `bindings` are the ones hints show (keys are matched against those `handle_key` gets).
    pub fn new(
        current: Vec<SessionInfo>,
        theme: Theme,
        bindings: &Keybindings,
        options: SessionPickerOptions,
    ) -> Self {
        let cursor_style = cursor_style(&theme);
        let mut picker = Self {
            theme,
            options,
            cursor_style,
            current,
            all: AllSessions::NotLoaded,
            scope: Scope::CurrentFolder,
            sort: SortMode::Threaded,
            named_only: false,
            show_path: false,
            search: LineInput::new(),
            query: Query::parse(""),
            rows: Vec::new(),
            selected: 0,
            max_rows: DEFAULT_MAX_ROWS,
            mode: Mode::List,
            status: None,
            bindings: bindings.clone(),
        };
        picker.refilter(None);
        picker
    }

    /// Hands over every project's sessions (after [`SessionRequest::LoadAllSessions`], or
    /// up front when the app has them already).
    pub fn set_all_sessions(&mut self, sessions: Vec<SessionInfo>) {
        self.all = AllSessions::Loaded(sessions);
        if self.scope == Scope::All {
            self.refilter(None);
        }
    }

    /// Loading every project's sessions failed: back to "not loaded" (Tab tries again).
    pub fn set_load_error(&mut self, message: &str) {
        self.all = AllSessions::NotLoaded;
        self.set_status(&format!("Failed to load sessions: {message}"), true);
        if self.scope == Scope::All {
            self.refilter(None);
        }
    }

    /// How many session rows to show at most.
    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(1);
    }

    /// A message in place of the hints until the next key (errors in the error colour).
    pub fn set_status(&mut self, text: &str, error: bool) {
        self.status = Some(Status {
            text: text.to_owned(),
            error,
        });
    }

    /// A session was renamed (`None`: its name was cleared).
    pub fn set_name(&mut self, path: &Path, name: Option<String>) {
        for session in self.sessions_mut() {
            if session.path == path {
                session.name.clone_from(&name);
            }
        }
        self.refilter(self.selected_path().map(Path::to_owned));
    }

    /// A session file was deleted: drop its row from both scopes.
    pub fn remove(&mut self, path: &Path) {
        let selected = self.selected;
        self.current.retain(|s| s.path != path);
        if let AllSessions::Loaded(all) = &mut self.all {
            all.retain(|s| s.path != path);
        }
        if matches!(&self.mode, Mode::ConfirmDelete { path: p } if p == path) {
            self.mode = Mode::List;
        }
        self.refilter(None);
        self.selected = selected.min(self.rows.len().saturating_sub(1));
    }

    /// The session under the cursor.
    pub fn selected_path(&self) -> Option<&Path> {
        self.selected_session().map(|s| s.path.as_path())
    }

    /// The sessions of the scope on screen.
    pub fn sessions(&self) -> &[SessionInfo] {
        match (self.scope, &self.all) {
            (Scope::CurrentFolder, _) => &self.current,
            (Scope::All, AllSessions::Loaded(all)) => all,
            (Scope::All, _) => &[],
        }
    }

    /// The paths of the listed rows, top to bottom (all of them, not just the visible ones).
    pub fn listed_paths(&self) -> Vec<&Path> {
        let sessions = self.sessions();
        self.rows
            .iter()
            .map(|row| sessions[row.index].path.as_path())
            .collect()
    }

    pub fn scope(&self) -> Scope {
        self.scope
    }

    pub fn sort_mode(&self) -> SortMode {
        self.sort
    }

    pub fn named_only(&self) -> bool {
        self.named_only
    }

    pub fn shows_paths(&self) -> bool {
        self.show_path
    }

    pub fn search_text(&self) -> &str {
        self.search.text()
    }

    /// True while an inline rename is open.
    pub fn is_renaming(&self) -> bool {
        matches!(self.mode, Mode::Rename { .. })
    }

    /// The session waiting for a delete confirmation.
    pub fn confirming_delete(&self) -> Option<&Path> {
        match &self.mode {
            Mode::ConfirmDelete { path } => Some(path),
            _ => None,
        }
    }

    /// Typed text from a bracketed paste goes into the search (or the rename field).
    pub fn handle_paste(&mut self, text: &str) {
        match &mut self.mode {
            Mode::Rename { input, .. } => input.insert(text),
            Mode::ConfirmDelete { .. } => {}
            Mode::List => {
                self.search.insert(text);
                self.query_changed();
            }
        }
    }

    pub fn handle_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<PathBuf, SessionRequest> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        self.status = None;
        match std::mem::replace(&mut self.mode, Mode::List) {
            Mode::Rename { path, mut input } => {
                if bindings.matches("tui.select.cancel", key) {
                    return PickerOutcome::Pending;
                }
                if bindings.matches("tui.select.confirm", key) {
                    let name = input.text().trim().to_owned();
                    if name.is_empty() {
                        self.mode = Mode::Rename { path, input };
                        return PickerOutcome::Pending;
                    }
                    return PickerOutcome::Request(SessionRequest::Rename { path, name });
                }
                input.handle_key(key, bindings);
                self.mode = Mode::Rename { path, input };
                PickerOutcome::Pending
            }
            Mode::ConfirmDelete { path } => {
                let typed = typed_char(key).map(|c| c.to_ascii_lowercase());
                if typed == Some('y') || bindings.matches("tui.select.confirm", key) {
                    return PickerOutcome::Request(SessionRequest::Delete(path));
                }
                if typed != Some('n') && !bindings.matches("tui.select.cancel", key) {
                    // Anything else keeps the question open.
                    self.mode = Mode::ConfirmDelete { path };
                }
                PickerOutcome::Pending
            }
            Mode::List => self.handle_list_key(key, bindings),
        }
    }

    fn handle_list_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<PathBuf, SessionRequest> {
        if bindings.matches("tui.input.tab", key) {
            return self.toggle_scope();
        }
        if bindings.matches("app.session.toggleSort", key) {
            self.sort = self.sort.next();
            self.refilter(self.selected_path().map(Path::to_owned));
        } else if bindings.matches("app.session.toggleNamedFilter", key) {
            self.named_only = !self.named_only;
            self.refilter(self.selected_path().map(Path::to_owned));
        } else if bindings.matches("app.session.togglePath", key) {
            self.show_path = !self.show_path;
        } else if bindings.matches("app.session.delete", key) {
            self.start_delete();
        } else if bindings.matches("app.session.deleteNoninvasive", key) {
            // Only a shortcut while the search is empty; otherwise it edits the search as
            // the same key does in the editor.
            if self.search.is_empty() {
                self.start_delete();
            } else {
                self.search.delete_word_backward();
                self.query_changed();
            }
        } else if bindings.matches("app.session.rename", key) {
            self.start_rename();
        } else if bindings.matches("tui.select.up", key) {
            self.selected = self.selected.saturating_sub(1);
        } else if bindings.matches("tui.select.down", key) {
            self.selected = (self.selected + 1).min(self.rows.len().saturating_sub(1));
        } else if bindings.matches("tui.select.pageUp", key) {
            self.selected = self.selected.saturating_sub(self.max_rows);
        } else if bindings.matches("tui.select.pageDown", key) {
            self.selected = (self.selected + self.max_rows).min(self.rows.len().saturating_sub(1));
        } else if bindings.matches("tui.select.confirm", key) {
            if let Some(path) = self.selected_path() {
                return PickerOutcome::Done(path.to_owned());
            }
        } else if bindings.matches("tui.select.cancel", key) {
            // As the hint says ("escape cancel") and as pi does: one press closes, search
            // or not.
            return PickerOutcome::Cancel;
        } else if self.search.handle_key(key, bindings) {
            self.query_changed();
        }
        PickerOutcome::Pending
    }

    fn toggle_scope(&mut self) -> PickerOutcome<PathBuf, SessionRequest> {
        let keep = self.selected_path().map(Path::to_owned);
        if self.scope == Scope::All {
            self.scope = Scope::CurrentFolder;
            self.refilter(keep);
            return PickerOutcome::Pending;
        }
        self.scope = Scope::All;
        match self.all {
            AllSessions::NotLoaded => {
                self.all = AllSessions::Loading;
                self.refilter(None);
                PickerOutcome::Request(SessionRequest::LoadAllSessions)
            }
            AllSessions::Loading => PickerOutcome::Pending,
            AllSessions::Loaded(_) => {
                self.refilter(keep);
                PickerOutcome::Pending
            }
        }
    }

    fn start_delete(&mut self) {
        let Some(session) = self.selected_session() else {
            return;
        };
        if self.is_current(&session.path) {
            self.set_status("Cannot delete the currently active session", true);
            return;
        }
        self.mode = Mode::ConfirmDelete {
            path: session.path.clone(),
        };
    }

    fn start_rename(&mut self) {
        if !self.options.allow_rename {
            return;
        }
        let Some(session) = self.selected_session() else {
            return;
        };
        self.mode = Mode::Rename {
            path: session.path.clone(),
            input: LineInput::with_text(session.name.as_deref().unwrap_or("")),
        };
    }

    fn query_changed(&mut self) {
        self.query = Query::parse(self.search.text());
        // New search results start at the best match.
        self.refilter(None);
        self.selected = 0;
    }

    /// Recomputes the rows, keeping `keep` selected when it is still listed.
    fn refilter(&mut self, keep: Option<PathBuf>) {
        self.rows = list_rows(self.sessions(), &self.query, self.sort, self.named_only);
        let sessions = self.sessions();
        let kept = keep.and_then(|path| {
            self.rows
                .iter()
                .position(|row| sessions[row.index].path == path)
        });
        self.selected = kept.unwrap_or(0);
    }

    fn sessions_mut(&mut self) -> impl Iterator<Item = &mut SessionInfo> {
        let all: &mut [SessionInfo] = match &mut self.all {
            AllSessions::Loaded(all) => all,
            _ => &mut [],
        };
        self.current.iter_mut().chain(all.iter_mut())
    }

    pub(crate) fn selected_session(&self) -> Option<&SessionInfo> {
        let row = self.rows.get(self.selected)?;
        self.sessions().get(row.index)
    }

    /// Marks more sessions as open in another process (all projects' listing).
    pub fn mark_in_use(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        self.options.in_use.extend(paths);
    }

    pub(crate) fn is_in_use(&self, path: &Path) -> bool {
        self.options.in_use.contains(path)
    }

    pub(crate) fn is_current(&self, path: &Path) -> bool {
        self.options.current_session.as_deref() == Some(path)
    }

    pub(crate) fn is_loading(&self) -> bool {
        self.scope == Scope::All && matches!(self.all, AllSessions::Loading)
    }

    pub(crate) fn rename_input(&self) -> Option<&LineInput> {
        match &self.mode {
            Mode::Rename { input, .. } => Some(input),
            _ => None,
        }
    }
}

impl Component for SessionPicker {
    fn render(&mut self, width: u16) -> Vec<String> {
        super::session_list::render(self, width)
    }
}
