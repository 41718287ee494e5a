//! File history for `/undo` and `/tree` (`spec/sessions-extra.md` §10): before `edit` or
//! `write` change a file its original is copied to `<agentDir>/file-history/<session id>/`,
//! once per file per user turn (the turn's checkpoint is the id of its user message); going
//! back past those turns can put the files back.
//!
//! [`FileHistory`] is the store; [`hooks::FileHistoryHooks`] records from the loop's tool
//! hooks; [`plan_navigation`] and [`undo_points`] say what a move in the tree would restore.
//! Shell commands are not tracked: they only mark their turn, so the question can say so.

pub mod hooks;
pub mod index;
pub mod undo;

use std::collections::HashMap;
use std::collections::HashSet;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::SessionEntry;
use knightcode_session::SessionManager;

use self::index::Checkpoint;
use self::index::FileRecord;
use self::index::Index;

/// The variable that turns file history off (`1`, `true` or `yes`).
pub const DISABLE_VAR: &str = "KNIGHTCODE_DISABLE_FILE_CHECKPOINTS";

/// Whether the variable's value turns file history off.
pub fn disabled_by(value: Option<&str>) -> bool {
    value.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// Backups larger than this are copied over the file without comparing first.
const COMPARE_LIMIT: u64 = 4 * 1024 * 1024;

/// One session's file history. Shared by the session and its hooks; every method is cheap
/// when history is off.
#[derive(Debug)]
pub struct FileHistory {
    /// `<agentDir>/file-history`; `None` when history is off.
    root: Option<PathBuf>,
    state: Mutex<State>,
    /// The start-up pruning of old sessions' folders, running on its own thread.
    pruning: Mutex<Option<std::thread::JoinHandle<usize>>>,
}

#[derive(Debug, Default)]
struct State {
    session_id: String,
    /// Read from disk on first use.
    index: Option<Index>,
    /// Records of files that did not exist, by the call that made them: a call that fails
    /// created nothing, so its record is forgotten.
    created_by_call: HashMap<String, (String, String)>,
}

/// What going back would put back: the earliest backup of every file the abandoned turns
/// touched, and whether any of them ran shell commands or failed to back a file up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestorePlan {
    pub files: Vec<PlannedFile>,
    pub shell_ran: bool,
    pub failed: bool,
}

/// A file and what it goes back to: the backup's name, or `None` (it is deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    pub path: PathBuf,
    pub backup: Option<String>,
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreReport {
    pub restored: usize,
    /// Files that could not be put back, with why.
    pub failed: Vec<(PathBuf, String)>,
}

impl RestorePlan {
    /// Whether there is anything to ask or say about.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && !self.shell_ran && !self.failed
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // Every change is a single insert or replace: a panic cannot leave it half-done.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl FileHistory {
    /// History for `session_id` under `agent_dir`, or off.
    pub fn new(agent_dir: &Path, session_id: &str, enabled: bool) -> Self {
        Self {
            root: enabled.then(|| index::history_root(agent_dir)),
            state: Mutex::new(State {
                session_id: session_id.to_owned(),
                ..State::default()
            }),
            pruning: Mutex::default(),
        }
    }

    /// History that records nothing and restores nothing.
    pub fn disabled() -> Self {
        Self {
            root: None,
            state: Mutex::default(),
            pruning: Mutex::default(),
        }
    }

    /// Starts removing the folders of sessions not changed for 30 days, on a thread of its
    /// own: nothing waits for it (see [`FileHistory::wait_for_pruning`]).
    pub fn start_pruning(&self, now: std::time::SystemTime) {
        if let Some(root) = &self.root {
            let handle = index::prune_in_background(root.clone(), now);
            *self.pruning.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle);
        }
    }

    /// Waits for the start-up pruning; how many folders it removed (`None`: it did not run
    /// or was already waited for).
    pub fn wait_for_pruning(&self) -> Option<usize> {
        let handle = self
            .pruning
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()?;
        handle.join().ok()
    }

    pub fn enabled(&self) -> bool {
        self.root.is_some()
    }

    /// The folder of the current session's backups.
    pub fn dir(&self) -> Option<PathBuf> {
        let root = self.root.as_ref()?;
        Some(root.join(&lock(&self.state).session_id))
    }

    /// The session was replaced: from now on history is the new session's.
    pub fn switch_session(&self, session_id: &str) {
        let mut state = lock(&self.state);
        if state.session_id != session_id {
            *state = State {
                session_id: session_id.to_owned(),
                ..State::default()
            };
        }
    }

    /// A fork or clone continues with a copy of this session's history under `session_id`
    /// (its backups are still what its turns started from), then switches to it.
    pub fn fork_to(&self, session_id: &str) {
        if let Some(root) = &self.root {
            let from = root.join(&lock(&self.state).session_id);
            let to = root.join(session_id);
            if let Ok(entries) = std::fs::read_dir(&from)
                && std::fs::create_dir_all(&to).is_ok()
            {
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    // A copy failing only loses that backup; the fork itself goes on.
                    let _ = std::fs::copy(entry.path(), to.join(&name));
                }
            }
        }
        self.switch_session(session_id);
    }

    /// Runs `change` on the loaded index and saves it.
    fn change(&self, change: impl FnOnce(&mut Index, &Path) -> bool) {
        let Some(root) = &self.root else { return };
        let mut state = lock(&self.state);
        let dir = root.join(&state.session_id);
        let index = state
            .index
            .get_or_insert_with(|| index::load(&dir).unwrap_or_else(|_| Index::new()));
        if change(index, &dir) {
            // The in-memory index still answers this session if the disk refuses it.
            let _ = index::save(&dir, index);
        }
    }

    /// Before `edit`/`write` (call `call_id`) changes `path` in the turn of the user message
    /// `checkpoint`: keeps its original unless this turn already did.
    pub fn record(&self, checkpoint: &str, path: &Path, call_id: &str) {
        let key = index::file_key(path);
        let mut created = false;
        self.change(|index, dir| {
            let entry = index.checkpoints.entry(checkpoint.to_owned()).or_default();
            if entry.files.contains_key(&key) {
                return false;
            }
            let backup = match std::fs::symlink_metadata(path) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
                _ => {
                    let name = index::backup_name(&key, checkpoint);
                    let copied = std::fs::create_dir_all(dir)
                        .and_then(|()| std::fs::copy(path, dir.join(&name)));
                    if copied.is_err() {
                        entry.failed = Some(true);
                        return true;
                    }
                    Some(name)
                }
            };
            created = backup.is_none();
            entry.files.insert(
                key.clone(),
                FileRecord {
                    path: path.to_string_lossy().into_owned(),
                    backup,
                    ..FileRecord::default()
                },
            );
            true
        });
        if created {
            lock(&self.state)
                .created_by_call
                .insert(call_id.to_owned(), (checkpoint.to_owned(), key));
        }
    }

    /// The call finished; when it failed, the "did not exist" record it made is dropped
    /// (it created nothing). Real backups stay.
    pub fn call_finished(&self, call_id: &str, failed: bool) {
        let made = lock(&self.state).created_by_call.remove(call_id);
        if let Some((checkpoint, key)) = made.filter(|_| failed) {
            self.change(|index, _| {
                index
                    .checkpoints
                    .get_mut(&checkpoint)
                    .and_then(|c| c.files.shift_remove(&key))
                    .is_some()
            });
        }
    }

    /// A shell command ran in the turn of `checkpoint`.
    pub fn mark_shell(&self, checkpoint: &str) {
        self.change(|index, _| {
            let entry = index.checkpoints.entry(checkpoint.to_owned()).or_default();
            let changed = entry.shell_ran != Some(true);
            entry.shell_ran = Some(true);
            changed
        });
    }

    /// The checkpoint of one user message, if its turn touched anything.
    pub fn checkpoint(&self, user_entry_id: &str) -> Option<Checkpoint> {
        self.root.as_ref()?;
        let mut found = None;
        self.change(|index, _| {
            found = index.checkpoints.get(user_entry_id).cloned();
            false
        });
        found
    }

    /// What undoing the turns of `user_ids` (oldest first) would put back: each file's
    /// earliest backup.
    pub fn plan(&self, user_ids: &[String]) -> RestorePlan {
        let mut plan = RestorePlan::default();
        if !self.enabled() {
            return plan;
        }
        let mut seen = HashSet::new();
        for id in user_ids {
            let Some(checkpoint) = self.checkpoint(id) else {
                continue;
            };
            plan.shell_ran |= checkpoint.shell_ran == Some(true);
            plan.failed |= checkpoint.failed == Some(true);
            for (key, record) in checkpoint.files {
                if seen.insert(key) {
                    plan.files.push(PlannedFile {
                        path: PathBuf::from(record.path),
                        backup: record.backup,
                    });
                }
            }
        }
        plan
    }

    /// Puts the plan's files back: backups copied over (skipped when the file already has
    /// those bytes), parent folders made, files that did not exist deleted.
    pub fn restore(&self, plan: &RestorePlan) -> RestoreReport {
        let mut report = RestoreReport::default();
        let Some(dir) = self.dir() else {
            return report;
        };
        for file in &plan.files {
            match restore_one(&dir, file) {
                Ok(()) => report.restored += 1,
                Err(error) => report.failed.push((file.path.clone(), error.to_string())),
            }
        }
        report
    }
}

fn restore_one(dir: &Path, file: &PlannedFile) -> std::io::Result<()> {
    let Some(backup) = &file.backup else {
        return match std::fs::remove_file(&file.path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        };
    };
    let source = dir.join(backup);
    let size = std::fs::metadata(&source)?.len();
    if size <= COMPARE_LIMIT
        && std::fs::metadata(&file.path).is_ok_and(|m| m.len() == size)
        && std::fs::read(&file.path)? == std::fs::read(&source)?
    {
        return Ok(());
    }
    // A link is followed, as a copy onto it would be: the file it points at is restored.
    let path = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    // Copied beside the file and renamed over it, so a crash mid-restore leaves the file as
    // it was or as restored, never half of each.
    let staging = parent.join(format!(
        ".{}.kc-restore-{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let copied = std::fs::copy(&source, &staging)
        .and_then(|_| std::fs::File::open(&staging)?.sync_all())
        .and_then(|()| std::fs::rename(&staging, &path));
    if copied.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    copied
}

fn is_user(entry: &SessionEntry) -> bool {
    matches!(entry.message(), Some(AgentMessage::User(_)))
}

/// The id of the latest user message on the current branch: the checkpoint of what runs
/// now.
pub fn current_checkpoint(session: &SessionManager) -> Option<String> {
    let mut id = session.leaf_id()?;
    loop {
        let entry = session.entry(id)?;
        if is_user(entry) {
            return Some(id.to_owned());
        }
        id = entry.parent_id()?;
    }
}

/// The user messages a move to `target` abandons, oldest first: those on the current
/// branch after its common ancestor with `target`, and `target` itself when it is a user
/// message (its text goes back to the editor). `None` goes back before the first entry.
pub fn abandoned_turns(session: &SessionManager, target: Option<&str>) -> Vec<String> {
    let Ok(current) = session.branch(None) else {
        return Vec::new();
    };
    let target_path: HashSet<&str> = match target {
        Some(id) => session
            .branch(Some(id))
            .map(|b| b.iter().map(|e| e.id()).collect())
            .unwrap_or_default(),
        None => HashSet::new(),
    };
    let shared = current
        .iter()
        .take_while(|e| target_path.contains(e.id()))
        .count();
    let mut turns: Vec<&SessionEntry> = current[shared..]
        .iter()
        .copied()
        .filter(|e| is_user(e))
        .collect();
    if let Some(entry) = target.and_then(|id| session.entry(id))
        && is_user(entry)
        && !turns.iter().any(|e| e.id() == entry.id())
    {
        turns.push(entry);
        // Oldest first, so the earliest backup of a file wins (stable for equal stamps).
        turns.sort_by(|a, b| a.timestamp().cmp(b.timestamp()));
    }
    turns.into_iter().map(|e| e.id().to_owned()).collect()
}

/// What a move to `target` would restore.
pub fn plan_navigation(
    history: &FileHistory,
    session: &SessionManager,
    target: Option<&str>,
) -> RestorePlan {
    if !history.enabled() {
        return RestorePlan::default();
    }
    history.plan(&abandoned_turns(session, target))
}

/// A user message `/undo` can go back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoPoint {
    pub entry_id: String,
    pub text: String,
    /// The message's timestamp (ISO 8601, as in the session file).
    pub timestamp: String,
    /// Files an undo to here would restore.
    pub files: usize,
    /// A shell command ran in the turns an undo to here abandons.
    pub shell_ran: bool,
}

/// The user messages of the current branch with text, oldest first, each with what an
/// undo to it would restore.
pub fn undo_points(history: &FileHistory, session: &SessionManager) -> Vec<UndoPoint> {
    let Ok(branch) = session.branch(None) else {
        return Vec::new();
    };
    let mut points = Vec::new();
    let mut keys = HashSet::new();
    let mut shell_ran = false;
    // Newest first, gathering what every later turn touched.
    for entry in branch.iter().rev() {
        let Some(AgentMessage::User(user)) = entry.message() else {
            continue;
        };
        if let Some(checkpoint) = history.checkpoint(entry.id()) {
            keys.extend(checkpoint.files.into_keys());
            shell_ran |= checkpoint.shell_ran == Some(true);
        }
        let text = user.content.text();
        if text.trim().is_empty() {
            continue;
        }
        points.push(UndoPoint {
            entry_id: entry.id().to_owned(),
            text,
            timestamp: entry.timestamp().to_owned(),
            files: keys.len(),
            shell_ran,
        });
    }
    points.reverse();
    points
}
