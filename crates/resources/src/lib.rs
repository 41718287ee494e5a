//! Skills, prompt templates and themes: where they are found, how their files are read, the
//! system prompt's skills section and the expansion of `/skill:name` and `/template` prompts
//! (`spec/resources.md` §0-2, §5). Plain files in, plain data out: no settings, sessions or
//! terminal here; the runtime hands in the paths and the trust decision.

pub mod frontmatter;
mod ignore_rules;
pub mod loader;
mod paths;
pub mod skills;
pub mod templates;
pub mod themes;

use std::path::PathBuf;

pub use loader::ExtraLists;
pub use loader::ExtraPath;
pub use loader::ResourceConfig;
pub use loader::Resources;
pub use skills::Skill;
pub use skills::SkillReadTool;
pub use templates::PromptTemplate;

/// Where a resource came from (`sourceInfo` of the reference).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceInfo {
    pub path: PathBuf,
    /// `local`, `auto`, `cli`, or a package source.
    pub source: String,
    /// `user`, `project` or `temporary`.
    pub scope: String,
    /// `top-level` or `package`.
    pub origin: String,
    pub base_dir: Option<PathBuf>,
}

/// What kind of problem a diagnostic reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiagnosticKind {
    Warning,
    Error,
    /// Two resources of one kind share a name: the first loaded won.
    Collision {
        /// `skill`, `prompt` or `theme`.
        resource_type: &'static str,
        name: String,
        winner_path: PathBuf,
        loser_path: PathBuf,
    },
}

/// A problem met while loading resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDiagnostic {
    pub kind: DiagnosticKind,
    pub message: String,
    pub path: Option<PathBuf>,
}

impl ResourceDiagnostic {
    pub(crate) fn warning(message: impl Into<String>, path: PathBuf) -> Self {
        Self {
            kind: DiagnosticKind::Warning,
            message: message.into(),
            path: Some(path),
        }
    }

    pub(crate) fn error(message: impl Into<String>, path: PathBuf) -> Self {
        Self {
            kind: DiagnosticKind::Error,
            message: message.into(),
            path: Some(path),
        }
    }
}

impl std::fmt::Display for ResourceDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.kind, &self.path) {
            (
                DiagnosticKind::Collision {
                    winner_path,
                    loser_path,
                    ..
                },
                _,
            ) => write!(
                f,
                "{}: {} wins, {} skipped",
                self.message,
                winner_path.display(),
                loser_path.display()
            ),
            (_, Some(path)) => write!(f, "{}: {}", path.display(), self.message),
            (_, None) => f.write_str(&self.message),
        }
    }
}
