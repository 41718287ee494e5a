//! [`Places`]: the folders the app works in, fixed for its whole run (the session's
//! folder, the agent's folder with its settings, the user's home, where this project's
//! sessions are kept).

use std::path::Path;
use std::path::PathBuf;

use knightcode_runtime::SessionSetup;

pub struct Places {
    cwd: PathBuf,
    agent_dir: PathBuf,
    home: Option<PathBuf>,
    /// This project's session folder.
    sessions_dir: PathBuf,
    /// Whether session listings filter by folder (a shared custom session directory).
    sessions_filter_by_cwd: bool,
}

impl Places {
    pub fn new(setup: &SessionSetup, options: &super::InteractiveOptions) -> Self {
        Self {
            cwd: setup.cwd.clone(),
            agent_dir: setup.agent_dir.clone(),
            home: setup.home.clone(),
            sessions_dir: options.sessions_dir.clone(),
            sessions_filter_by_cwd: options.sessions_filter_by_cwd,
        }
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// The home folder as text, for shortening paths to `~/…`.
    pub fn home_string(&self) -> Option<String> {
        self.home().map(|h| h.to_string_lossy().into_owned())
    }

    pub fn sessions_dir(&self) -> &Path {
        &self.sessions_dir
    }

    pub fn sessions_filter_by_cwd(&self) -> bool {
        self.sessions_filter_by_cwd
    }
}
