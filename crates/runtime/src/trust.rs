//! Project trust (`spec/seed/security.md`): whether a folder's protected resources load.
//!
//! Decision order ([`resolve`]): `--approve`/`--no-approve`, then (later) extensions, then the
//! nearest saved decision in `<agentDir>/trust.json`, then `defaultProjectTrust`, whose `ask`
//! is a prompt in the interactive UI and "not trusted" elsewhere.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use serde_json::Value;

use crate::error::Result;
use crate::error::RuntimeError;
use crate::settings::DefaultProjectTrust;

/// The project resources that need a trust decision, found from `cwd`.
pub fn protected_resources(cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let dot = cwd.join(".knightcode");
    let mut found: Vec<PathBuf> = [
        "settings.json",
        "mcp.json",
        "extensions",
        "skills",
        "prompts",
        "themes",
        "SYSTEM.md",
        "APPEND_SYSTEM.md",
    ]
    .iter()
    .map(|name| dot.join(name))
    .filter(|path| path.exists())
    .collect();
    // `.agents/skills` in cwd or any ancestor, except the user's own `~/.agents/skills`.
    let user_skills = home.map(|h| canonical(&h.join(".agents").join("skills")));
    for dir in cwd.ancestors() {
        let skills = dir.join(".agents").join("skills");
        if skills.is_dir() && Some(canonical(&skills)) != user_skills {
            found.push(skills);
        }
    }
    found
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// A trust decision and where it came from, for messages like "untrusted (saved for /a/b)".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustSource {
    NothingToProtect,
    CommandLine,
    Saved(PathBuf),
    DefaultSetting(DefaultProjectTrust),
    /// A user or `-e` extension answered `project_trust`.
    Extension,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustDecision {
    pub trusted: bool,
    pub source: TrustSource,
    /// What the decision covers (empty when nothing needed protecting).
    pub protected: Vec<PathBuf>,
}

/// `<agentDir>/trust.json`: canonical directory -> true/false.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
    decisions: BTreeMap<String, bool>,
}

impl TrustStore {
    pub fn path_in(agent_dir: &Path) -> PathBuf {
        agent_dir.join("trust.json")
    }

    /// Reads the store; a missing file is empty.
    pub fn load(agent_dir: &Path) -> Result<Self> {
        let path = Self::path_in(agent_dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    path,
                    decisions: BTreeMap::new(),
                });
            }
            Err(error) => {
                return Err(RuntimeError::TrustStoreUnreadable {
                    path,
                    message: error.to_string(),
                });
            }
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let value: Value =
            serde_json::from_str(text).map_err(|error| RuntimeError::TrustStoreUnreadable {
                path: path.clone(),
                message: error.to_string(),
            })?;
        let Value::Object(map) = value else {
            return Err(RuntimeError::TrustStoreInvalid {
                path,
                message: "expected an object".to_owned(),
            });
        };
        let mut decisions = BTreeMap::new();
        for (key, value) in map {
            match value {
                Value::Bool(trusted) => {
                    decisions.insert(key, trusted);
                }
                Value::Null => {}
                _ => {
                    return Err(RuntimeError::TrustStoreInvalid {
                        path,
                        message: format!("value for \"{key}\" must be true, false, or null"),
                    });
                }
            }
        }
        Ok(Self { path, decisions })
    }

    /// The closest saved decision for `cwd` or an ancestor.
    pub fn lookup(&self, cwd: &Path) -> Option<(bool, PathBuf)> {
        let cwd = canonical(cwd);
        cwd.ancestors().find_map(|dir| {
            self.decisions
                .get(dir.to_string_lossy().as_ref())
                .map(|trusted| (*trusted, dir.to_owned()))
        })
    }

    /// Saves (or with `None` removes) the decision for `dir`. Written with sorted keys,
    /// two-space indent and a trailing newline; replaced atomically.
    pub fn set(&mut self, dir: &Path, decision: Option<bool>) -> Result<()> {
        let key = canonical(dir).to_string_lossy().into_owned();
        match decision {
            Some(trusted) => {
                self.decisions.insert(key, trusted);
            }
            None => {
                self.decisions.remove(&key);
            }
        }
        let mut text = serde_json::to_string_pretty(&self.decisions).map_err(|source| {
            RuntimeError::Encode {
                what: "the trust store",
                source,
            }
        })?;
        text.push('\n');
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(RuntimeError::io("create directory", parent))?;
        }
        crate::atomic::replace(&self.path, text.as_bytes(), None)
            .map_err(RuntimeError::io("write", &self.path))
    }
}

/// What the check order made of a folder: a decision, or a question only a user can answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustResolution {
    Decided(TrustDecision),
    /// Protected resources, no override, no saved decision, and `defaultProjectTrust` is
    /// `ask`: an interactive front end prompts about `protected`.
    Ask {
        protected: Vec<PathBuf>,
    },
}

impl TrustResolution {
    /// The decision where nobody can be asked (print, JSON, RPC modes): `ask` does not trust.
    pub fn without_prompt(self) -> TrustDecision {
        match self {
            Self::Decided(decision) => decision,
            Self::Ask { protected } => TrustDecision {
                trusted: false,
                source: TrustSource::DefaultSetting(DefaultProjectTrust::Ask),
                protected,
            },
        }
    }
}

/// The one copy of the check order (`spec/trust-security.md` §2): `cli_override`
/// (`--approve` = Some(true), `--no-approve` = Some(false)), then nothing to protect (trusted),
/// then the nearest saved decision, then `defaultProjectTrust` (`always` trusts, `never` does
/// not, `ask` asks).
pub fn resolve(
    cwd: &Path,
    home: Option<&Path>,
    cli_override: Option<bool>,
    store: &TrustStore,
    default_project_trust: DefaultProjectTrust,
) -> TrustResolution {
    let protected = protected_resources(cwd, home);
    let decided = |trusted, source, protected| {
        TrustResolution::Decided(TrustDecision {
            trusted,
            source,
            protected,
        })
    };
    if let Some(trusted) = cli_override {
        return decided(trusted, TrustSource::CommandLine, protected);
    }
    if protected.is_empty() {
        return decided(true, TrustSource::NothingToProtect, protected);
    }
    if let Some((trusted, dir)) = store.lookup(cwd) {
        return decided(trusted, TrustSource::Saved(dir), protected);
    }
    match default_project_trust {
        DefaultProjectTrust::Ask => TrustResolution::Ask { protected },
        setting => decided(
            setting == DefaultProjectTrust::Always,
            TrustSource::DefaultSetting(setting),
            protected,
        ),
    }
}

/// [`resolve`] for a run without an interactive prompt (print, JSON, RPC modes).
pub fn resolve_non_interactive(
    cwd: &Path,
    home: Option<&Path>,
    cli_override: Option<bool>,
    store: &TrustStore,
    default_project_trust: DefaultProjectTrust,
) -> TrustDecision {
    resolve(cwd, home, cli_override, store, default_project_trust).without_prompt()
}

impl TrustDecision {
    /// The stderr notice for an untrusted project whose resources were skipped.
    pub fn skipped_notice(&self, cwd: &Path) -> Option<String> {
        if self.trusted || self.protected.is_empty() {
            return None;
        }
        let names: Vec<String> = self
            .protected
            .iter()
            .map(|p| p.strip_prefix(cwd).unwrap_or(p).display().to_string())
            .collect();
        let why = match &self.source {
            TrustSource::CommandLine => "--no-approve was given".to_owned(),
            TrustSource::Saved(dir) => {
                format!("{} is saved as untrusted in trust.json", dir.display())
            }
            TrustSource::DefaultSetting(value) => {
                format!("defaultProjectTrust is \"{}\"", value.as_str())
            }
            TrustSource::NothingToProtect => String::new(),
            TrustSource::Extension => "an extension decided so (project_trust)".to_owned(),
        };
        Some(format!(
            "Project not trusted ({why}); skipped {}. Run with --approve to load them once, or trust the folder with /trust.",
            names.join(", ")
        ))
    }
}
