//! Instruction files (`AGENTS.md` family) and the system-prompt files `SYSTEM.md` and
//! `APPEND_SYSTEM.md` (`spec/resources.md` §3-4).

use std::path::Path;
use std::path::PathBuf;

/// Per directory, the first of these that is a regular file is used; an override file thus
/// replaces the others of its own directory only.
const CANDIDATES: &[&str] = &[
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
];

/// One loaded instruction file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub path: PathBuf,
    pub content: String,
}

fn read_text(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.strip_prefix('\u{feff}')
            .map(str::to_owned)
            .unwrap_or(text),
    )
}

fn first_candidate(dir: &Path) -> Option<PathBuf> {
    CANDIDATES
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
}

/// The instruction files for `cwd`: the agent directory's first, then every directory from
/// the filesystem root down to `cwd`. Loaded regardless of project trust.
pub fn discover_context_files(agent_dir: &Path, cwd: &Path) -> Vec<ContextFile> {
    let mut dirs: Vec<&Path> = vec![agent_dir];
    let mut ancestors: Vec<&Path> = cwd.ancestors().collect();
    ancestors.reverse();
    dirs.extend(ancestors);
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut files = Vec::new();
    for dir in dirs {
        let Some(path) = first_candidate(dir) else {
            continue;
        };
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Some(content) = read_text(&path) {
            files.push(ContextFile { path, content });
        }
    }
    files
}

/// Where the base prompt comes from when it replaces the default preamble.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptFiles {
    /// Replaces the default preamble (and drops the tools/rules/docs sections).
    pub custom_prompt: Option<String>,
    /// Joined into the `addendum` section.
    pub append: Vec<String>,
}

/// A `--system-prompt`/`--append-system-prompt` value: a file's contents when it names an
/// existing file, else the text itself.
pub fn text_or_file(value: &str, cwd: &Path) -> String {
    let path = cwd.join(value);
    if path.is_file() {
        read_text(&path).unwrap_or_else(|| value.to_owned())
    } else {
        value.to_owned()
    }
}

/// Resolves the prompt files: CLI values first, then the project's `.knightcode/` files (only
/// when trusted), then the agent directory's. Project and global files are not combined.
pub fn resolve_prompt_files(
    agent_dir: &Path,
    cwd: &Path,
    project_trusted: bool,
    cli_system_prompt: Option<&str>,
    cli_append: &[String],
) -> PromptFiles {
    let project_dir = cwd.join(".knightcode");
    let pick = |name: &str| -> Option<String> {
        let project = project_dir.join(name);
        if project_trusted && project.is_file() {
            return read_text(&project);
        }
        let global = agent_dir.join(name);
        global.is_file().then(|| read_text(&global)).flatten()
    };
    let custom_prompt = match cli_system_prompt {
        Some(value) => Some(text_or_file(value, cwd)),
        None => pick("SYSTEM.md"),
    };
    let append = if cli_append.is_empty() {
        pick("APPEND_SYSTEM.md").into_iter().collect()
    } else {
        cli_append
            .iter()
            .map(|value| text_or_file(value, cwd))
            .collect()
    };
    PromptFiles {
        custom_prompt,
        append,
    }
}
