use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use crate::error::SandboxError;

/// How much a sandboxed command may change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SandboxMode {
    /// No sandbox (the default, as in the reference agent).
    #[default]
    Off,
    /// Reads anywhere, writes nowhere (but the null and terminal devices).
    ReadOnly,
    /// Reads anywhere, writes in the project, the temp folders, the agent's own folders and
    /// any `writableRoots`.
    WorkspaceWrite,
}

impl SandboxMode {
    pub const NAMES: [&'static str; 3] = ["read-only", "workspace-write", "off"];

    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxMode {
    type Err = SandboxError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "off" => Ok(SandboxMode::Off),
            "read-only" => Ok(SandboxMode::ReadOnly),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            other => Err(SandboxError::Arguments(format!(
                "unknown sandbox mode {other:?} (expected {})",
                SandboxMode::NAMES.join(", ")
            ))),
        }
    }
}

/// Devices every sandboxed command may write: output thrown away, terminals, and the
/// shared-memory folder some runtimes need.
pub(crate) const WRITABLE_DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
    "/dev/random",
];

/// What a sandboxed command may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Folders (and their contents) writable under `workspace-write`; unused otherwise.
    pub writable_roots: Vec<PathBuf>,
    /// Outbound and inbound network: when false, only Unix sockets can be created and no TCP
    /// port can be connected to or bound.
    pub network: bool,
}

impl SandboxPolicy {
    /// No sandbox.
    pub fn off() -> Self {
        Self::default()
    }

    /// `mode` for a session in `project`: under `workspace-write`, the project, the temp
    /// folders (`TMPDIR`, `/tmp`, `/var/tmp`), `agent_dirs` (the agent's own folders) and
    /// `extra_roots` are writable.
    pub fn for_project(
        mode: SandboxMode,
        project: &Path,
        agent_dirs: &[PathBuf],
        extra_roots: &[PathBuf],
        network: bool,
    ) -> Self {
        let mut writable_roots = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            let temp = std::env::temp_dir();
            let candidates = std::iter::once(project.to_path_buf())
                .chain([temp, PathBuf::from("/tmp"), PathBuf::from("/var/tmp")])
                .chain(agent_dirs.iter().cloned())
                .chain(extra_roots.iter().cloned());
            for root in candidates {
                let root = canonical(&root);
                if !writable_roots.contains(&root) {
                    writable_roots.push(root);
                }
            }
        }
        Self {
            mode,
            writable_roots,
            network: network || mode == SandboxMode::Off,
        }
    }

    /// Whether a file tool may write (create, replace, make folders at) `path`, resolved
    /// through symbolic links as the kernel would, so a link in the project that points
    /// outside it does not open a way out.
    pub fn check_write(&self, path: &Path) -> Result<(), SandboxError> {
        let allowed = match self.mode {
            SandboxMode::Off => true,
            SandboxMode::ReadOnly => false,
            SandboxMode::WorkspaceWrite => {
                let resolved = canonical(path);
                self.writable_roots
                    .iter()
                    .any(|root| resolved.starts_with(root))
            }
        };
        if allowed {
            return Ok(());
        }
        Err(SandboxError::WriteRefused {
            mode: self.mode,
            path: path.to_path_buf(),
            roots: self.writable_roots.clone(),
        })
    }
}

/// `path` made absolute and resolved component by component as the kernel walks it: each
/// existing prefix through its links (a dangling link to where it points), `..` from the
/// resolved folder, what does not exist yet appended as written.
fn canonical(path: &Path) -> PathBuf {
    resolve(path, 0)
}

/// Links followed before giving up, as the kernel's `ELOOP` limit.
const MAX_LINKS: u32 = 40;

fn resolve(path: &Path, links: u32) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut resolved = PathBuf::from("/");
    for component in absolute.components() {
        match component {
            Component::Normal(name) => {
                let next = resolved.join(name);
                resolved = match next.canonicalize() {
                    Ok(real) => real,
                    Err(_) => match std::fs::read_link(&next) {
                        // A dangling link: a write through it creates its target.
                        Ok(target) if links < MAX_LINKS => {
                            resolve(&resolved.join(target), links + 1)
                        }
                        _ => next,
                    },
                };
            }
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    resolved
}
