//! [`SessionLibrary`]: the session store as a front end sees it — listing, renaming and
//! deleting session files, and the open session's tree, labels and name — through the one
//! store the session itself uses (one ownership registry, one clock). Usable while a prompt
//! runs: the open session is shared with the run, each call takes it briefly.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

pub use knightcode_session::SessionInfo;
use knightcode_session::SessionManager;
use knightcode_session::SessionStore;
pub use knightcode_session::tree::SessionTree;

use crate::agent_session::lock;
use crate::error::Result;
use crate::error::RuntimeError;

pub use knightcode_session::lock::SessionOwner;

/// The process that has the session file at `path` open, when it is another one: read
/// before starting on a file (`--continue`, `--session`) to offer a fork instead.
pub fn session_owner(path: &Path) -> Option<SessionOwner> {
    knightcode_session::lock::other_owner(path)
}

/// Refused: deleting the session this process has open.
pub const DELETE_CURRENT: &str =
    "This is the session you are in; switch to another session before deleting it.";

/// Session files and the open session, for pickers and overlays. Cheap to clone.
#[derive(Clone)]
pub struct SessionLibrary {
    store: SessionStore,
    current: Arc<Mutex<SessionManager>>,
    cwd: PathBuf,
}

impl std::fmt::Debug for SessionLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLibrary")
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

impl SessionLibrary {
    pub(crate) fn new(
        store: SessionStore,
        current: Arc<Mutex<SessionManager>>,
        cwd: PathBuf,
    ) -> Self {
        Self {
            store,
            current,
            cwd,
        }
    }

    /// Sessions in `dir`, newest first; only those started in `cwd` when it is given.
    pub fn list(&self, dir: &Path, cwd: Option<&Path>) -> Vec<SessionInfo> {
        knightcode_session::list::list_sessions(dir, cwd)
    }

    /// Every session under the sessions root, all projects.
    pub fn list_all(&self, sessions_root: &Path) -> Vec<SessionInfo> {
        knightcode_session::list::list_all_sessions(sessions_root)
    }

    /// The process that has the session file at `path` open, when it is another one (the
    /// picker marks such sessions and offers to continue them in a fork).
    pub fn owner(&self, path: &Path) -> Option<SessionOwner> {
        session_owner(path)
    }

    /// `/import`: checks `input` and copies it into `dir` (see
    /// [`crate::export::import_file`]); the copy is what to switch to.
    pub fn import(&self, dir: &Path, input: &Path) -> Result<PathBuf> {
        crate::export::import_file(&self.store, dir, input)
    }

    /// The open session's file, once it has one.
    pub fn current_file(&self) -> Option<PathBuf> {
        lock(&self.current).session_file().map(Path::to_path_buf)
    }

    /// The open session's name.
    pub fn session_name(&self) -> Option<String> {
        lock(&self.current).session_name().map(str::to_owned)
    }

    /// Names a session file: the open session through its own manager, any other by
    /// opening it briefly (which takes and releases its ownership lock, so a session in
    /// use elsewhere is not written behind its owner's back).
    pub fn rename(&self, path: &Path, name: &str) -> Result<()> {
        {
            let mut current = lock(&self.current);
            if current.session_file() == Some(path) {
                current.set_session_name(name)?;
                return Ok(());
            }
        }
        let mut other = self.store.open(path, &self.cwd)?;
        let result = other.set_session_name(name).map(|_| ());
        other.close();
        result.map_err(RuntimeError::from)
    }

    /// Deletes a session file. Refused for the open session and for one another process
    /// owns (its ownership lock is taken first and held while the file goes).
    pub fn delete(&self, path: &Path) -> Result<()> {
        if self.current_file().as_deref() == Some(path) {
            return Err(RuntimeError::Rejected(DELETE_CURRENT.to_owned()));
        }
        let mut owned = self.store.open(path, &self.cwd)?;
        let removed = std::fs::remove_file(path);
        owned.close();
        removed.map_err(|error| {
            RuntimeError::Rejected(format!("Could not delete {}: {error}", path.display()))
        })
    }

    /// Sets or clears the label of an entry of the open session.
    pub fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<()> {
        lock(&self.current).set_label(entry_id, label)?;
        Ok(())
    }

    /// Runs `f` over the open session's tree; `None` when the session has no entries yet.
    pub fn with_tree<T>(&self, f: impl FnOnce(&SessionTree) -> T) -> Option<T> {
        let session = lock(&self.current);
        if session.entries().is_empty() {
            return None;
        }
        Some(f(session.tree()))
    }
}
