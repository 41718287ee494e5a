#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::new_without_default
)]

use std::path::Path;
use std::path::PathBuf;

use knightcode_resources::ResourceConfig;

/// A throwaway home, agent folder and project.
pub struct Dirs {
    pub _root: tempfile::TempDir,
    pub home: PathBuf,
    pub agent: PathBuf,
    pub project: PathBuf,
}

impl Dirs {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let home = base.join("home");
        let agent = home.join(".knightcode").join("agent");
        let project = base.join("work").join("project");
        for dir in [&home, &agent, &project] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self {
            _root: root,
            home,
            agent,
            project,
        }
    }

    pub fn config(&self, trusted: bool) -> ResourceConfig {
        ResourceConfig {
            cwd: self.project.clone(),
            agent_dir: self.agent.clone(),
            home: Some(self.home.clone()),
            trusted,
            ..ResourceConfig::default()
        }
    }
}

pub fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A `SKILL.md` in `dir/<folder>/`.
pub fn skill(dir: &Path, folder: &str, frontmatter: &str) -> PathBuf {
    let path = dir.join(folder).join("SKILL.md");
    write(
        &path,
        &format!("---\n{frontmatter}\n---\nBody of {folder}.\n"),
    );
    path
}
