//! Editor completion: slash commands after a leading `/`, project files after `@`
//! (gitignore-aware, fuzzy), and paths on Tab.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;

use knightcode_runtime::resources::CompletionCommand;

use knightcode_tui::editor::CompletionItem;
use knightcode_tui::editor::CompletionProvider;
use knightcode_tui::editor::Completions;
use knightcode_tui::fuzzy::fuzzy_filter_indices;

use crate::commands::BUILTIN_COMMANDS;

/// Files listed for `@` at most; a bigger tree still completes, from the first ones found.
const MAX_FILES: usize = 50_000;
/// Rows offered at once.
const MAX_ITEMS: usize = 50;

/// Prompt templates and skill commands, shared between the app (which fills it at start and
/// on `/reload`) and the completer.
#[derive(Debug, Clone, Default)]
pub struct ResourceCommands(Arc<Mutex<Vec<CompletionCommand>>>);

impl ResourceCommands {
    pub fn set(&self, commands: Vec<CompletionCommand>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = commands;
    }

    fn get(&self) -> Vec<CompletionCommand> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

pub struct Completer {
    cwd: PathBuf,
    /// Project files relative to `cwd`, listed on the first `@` (a cache, filled once).
    files: OnceLock<Vec<String>>,
    resources: ResourceCommands,
}

impl Completer {
    pub fn new(cwd: PathBuf, resources: ResourceCommands) -> Self {
        Self {
            cwd,
            files: OnceLock::new(),
            resources,
        }
    }

    fn files(&self) -> &[String] {
        self.files.get_or_init(|| list_files(&self.cwd))
    }

    /// Built-ins, then prompt templates and skills; an argument hint goes before the
    /// description.
    fn commands(&self, typed: &str) -> Option<Completions> {
        let mut all: Vec<(String, String, String)> = BUILTIN_COMMANDS
            .iter()
            .map(|c| {
                (
                    c.name.to_owned(),
                    c.hint.to_owned(),
                    c.description.to_owned(),
                )
            })
            .collect();
        all.extend(
            self.resources
                .get()
                .into_iter()
                .map(|c| (c.name, c.hint.unwrap_or_default(), c.description)),
        );
        let indices = if typed.is_empty() {
            (0..all.len()).collect()
        } else {
            fuzzy_filter_indices(all.iter().map(|(name, _, _)| name.as_str()), typed)
        };
        let items: Vec<CompletionItem> = indices
            .into_iter()
            .map(|i| {
                let (name, hint, description) = &all[i];
                let description = match (hint.is_empty(), description.is_empty()) {
                    (true, _) => description.clone(),
                    (false, true) => hint.clone(),
                    (false, false) => format!("{hint} — {description}"),
                };
                CompletionItem {
                    value: format!("/{name}"),
                    label: format!("/{name}"),
                    description: (!description.is_empty()).then_some(description),
                }
            })
            .collect();
        (!items.is_empty()).then(|| Completions {
            items,
            prefix: format!("/{typed}"),
        })
    }

    /// `@` completion over files and folders (folders end in `/`). With a folder typed
    /// (`@src/`), what is inside it: its own entries first while nothing follows the `/`,
    /// else a fuzzy match on the rest of the path. Accepting a folder keeps completing in it.
    fn files_matching(&self, typed: &str) -> Option<Completions> {
        let entries = self.files();
        // `@"my folder/…`: the quote is not part of the path.
        let path = typed.strip_prefix('"').unwrap_or(typed);
        let (dir, rest) = match path.rfind('/') {
            Some(at) => (&path[..=at], &path[at + 1..]),
            None => ("", path),
        };
        // Typing the start of their name (`@knightcode-s`) asks for exported sessions.
        let exports_wanted = {
            let typed = rest.to_lowercase();
            typed.len() >= 2
                && (typed.starts_with(EXPORT_PREFIX) || EXPORT_PREFIX.starts_with(&typed))
        };
        let inside: Vec<usize> = (0..entries.len())
            .filter(|&i| entries[i].starts_with(dir) && entries[i].len() > dir.len())
            .filter(|&i| exports_wanted || !is_exported_session(&entries[i]))
            .collect();
        let indices: Vec<usize> = if rest.is_empty() {
            // The folder's own entries (not everything below it), folders first.
            let mut children: Vec<usize> = inside
                .into_iter()
                .filter(|&i| {
                    let tail = &entries[i][dir.len()..];
                    !tail.trim_end_matches('/').contains('/')
                })
                .collect();
            children.sort_by_key(|&i| (!entries[i].ends_with('/'), i));
            children.truncate(MAX_ITEMS);
            children
        } else {
            let names: Vec<&str> = inside.iter().map(|&i| &entries[i][dir.len()..]).collect();
            rank_files(&names, rest)
                .into_iter()
                .take(MAX_ITEMS)
                .map(|n| inside[n])
                .collect()
        };
        let items: Vec<CompletionItem> = indices
            .into_iter()
            .map(|i| CompletionItem {
                value: format!("@{}", quote_if_needed(&entries[i])),
                label: entries[i].clone(),
                description: None,
            })
            .collect();
        (!items.is_empty()).then(|| Completions {
            items,
            prefix: format!("@{typed}"),
        })
    }

    /// Tab on a word that looks like a path: the folder's entries starting with its name.
    fn paths(&self, word: &str) -> Option<Completions> {
        let (dir_part, name_part) = match word.rfind('/') {
            Some(at) => (&word[..=at], &word[at + 1..]),
            None => ("", word),
        };
        let dir = if let Some(rest) = dir_part.strip_prefix("~/") {
            std::env::home_dir()?.join(rest)
        } else if dir_part.starts_with('/') {
            PathBuf::from(dir_part)
        } else {
            self.cwd.join(dir_part)
        };
        let mut names: Vec<(String, bool)> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let is_dir = entry.file_type().ok()?.is_dir();
                (name.starts_with(name_part)
                    && (!name.starts_with('.') || name_part.starts_with('.')))
                .then_some((name, is_dir))
            })
            .collect();
        names.sort();
        let items: Vec<CompletionItem> = names
            .into_iter()
            .take(MAX_ITEMS)
            .map(|(name, is_dir)| {
                let suffix = if is_dir { "/" } else { "" };
                CompletionItem {
                    value: format!("{dir_part}{name}{suffix}"),
                    label: format!("{name}{suffix}"),
                    description: None,
                }
            })
            .collect();
        (!items.is_empty()).then(|| Completions {
            items,
            prefix: word.to_owned(),
        })
    }
}

fn quote_if_needed(path: &str) -> String {
    if path.contains(' ') {
        format!("\"{path}\"")
    } else {
        path.to_owned()
    }
}

impl CompletionProvider for Completer {
    fn complete(&self, before_cursor: &str, force: bool) -> Option<Completions> {
        // `/command` at the very start of the prompt, before any space.
        if let Some(typed) = before_cursor.strip_prefix('/')
            && !typed.contains(char::is_whitespace)
            && !before_cursor.contains('\n')
        {
            return self.commands(typed);
        }
        let word_start = before_cursor
            .rfind(char::is_whitespace)
            .map_or(0, |at| at + 1);
        let word = &before_cursor[word_start..];
        if let Some(typed) = word.strip_prefix('@') {
            return self.files_matching(typed);
        }
        if force {
            return self.paths(word);
        }
        None
    }
}

/// How well a path answers `@query`, higher first, as pi ranks: its name is the query (100),
/// starts with it (80), contains it (50); its path contains it (30); folders 10 more. Paths
/// that only match fuzzily (the letters in order) follow every such match.
fn substring_rank(path: &str, query: &str) -> Option<u8> {
    let is_dir = path.ends_with('/');
    let path = path.trim_end_matches('/').to_lowercase();
    let name = path.rsplit('/').next().unwrap_or(&path);
    let rank = if name == query {
        100
    } else if name.starts_with(query) {
        80
    } else if name.contains(query) {
        50
    } else if path.contains(query) {
        30
    } else {
        return None;
    };
    Some(rank + if is_dir { 10 } else { 0 })
}

/// A session this program exported (`/export` writes `knightcode-session-….html` into the
/// working folder): offered only when its name is what is typed, not for every `@h…`.
fn is_exported_session(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with(EXPORT_PREFIX) && name.ends_with(".html")
}

/// How `/export` names its files.
const EXPORT_PREFIX: &str = "knightcode-session-";

/// The indices of `paths` that match `query`, best first: pi's substring ranks, then
/// fuzzy matches; within a rank the shorter path, then fuzzy order.
fn rank_files(paths: &[&str], query: &str) -> Vec<usize> {
    let lowered = query.to_lowercase();
    let fuzzy = fuzzy_filter_indices(paths.iter().copied(), query);
    let mut ranked: Vec<(std::cmp::Reverse<u8>, usize, usize, usize)> = fuzzy
        .into_iter()
        .enumerate()
        .map(|(order, index)| {
            let rank = substring_rank(paths[index], &lowered).unwrap_or(0);
            (std::cmp::Reverse(rank), paths[index].len(), order, index)
        })
        .collect();
    // Every substring match is among the fuzzy ones: its letters come in order.
    ranked.sort();
    ranked.into_iter().map(|(_, _, _, index)| index).collect()
}

/// Files and folders (with a trailing `/`) under `cwd`, honouring .gitignore, .ignore and
/// git's excludes; hidden files and `.git` skipped.
fn list_files(cwd: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(cwd)
        .hidden(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .build();
    for entry in walker.filter_map(Result::ok) {
        if files.len() >= MAX_FILES {
            break;
        }
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let Ok(relative) = entry.path().strip_prefix(cwd) else {
            continue;
        };
        let relative = relative.to_string_lossy();
        if kind.is_file() {
            files.push(relative.into_owned());
        } else if kind.is_dir() && !relative.is_empty() {
            files.push(format!("{relative}/"));
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_commands_files_and_paths() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join("src")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("README.md"), "").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join(".gitignore"), "target\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join("target")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("target/junk.rs"), "").unwrap_or_else(|e| panic!("{e}"));
        let completer = Completer::new(dir.path().to_path_buf(), ResourceCommands::default());

        let commands = completer
            .complete("/mod", false)
            .unwrap_or_else(|| panic!("no commands"));
        assert_eq!(commands.items[0].value, "/model");
        assert_eq!(commands.prefix, "/mod");
        assert!(completer.complete("/model x", false).is_none());

        let files = completer
            .complete("look at @main", false)
            .unwrap_or_else(|| panic!("no files"));
        assert_eq!(files.items[0].label, "src/main.rs");
        assert_eq!(files.items[0].value, "@src/main.rs");
        let all = completer
            .complete("@", false)
            .unwrap_or_else(|| panic!("no files"));
        assert!(
            all.items.iter().all(|i| !i.label.starts_with("target")),
            "gitignored files are not offered"
        );

        let folders = completer
            .complete("@sr", false)
            .unwrap_or_else(|| panic!("no folders"));
        assert_eq!(folders.items[0].value, "@src/");
        let inside = completer
            .complete("@src/", false)
            .unwrap_or_else(|| panic!("nothing inside"));
        let labels: Vec<&str> = inside.items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["src/main.rs"]);
        let top = completer
            .complete("@", false)
            .unwrap_or_else(|| panic!("no entries"));
        assert_eq!(top.items[0].label, "src/", "folders first at the top level");

        // As pi: the name that is the query, then names that start with it, then names
        // and paths that contain it; fuzzy matches last; exported sessions only on request.
        let names = [
            "the.rs",
            "hide.txt",
            "hello.md",
            "src/hex.rs",
            "knightcode-session-2026_x.html",
        ];
        for name in names {
            std::fs::write(dir.path().join(name), "").unwrap_or_else(|e| panic!("{e}"));
        }
        let completer = Completer::new(dir.path().to_path_buf(), ResourceCommands::default());
        let he = completer
            .complete("@he", false)
            .unwrap_or_else(|| panic!("no files"));
        let labels: Vec<&str> = he.items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["hello.md", "src/hex.rs", "the.rs", "hide.txt"]);
        let exports = completer
            .complete("@knightcode-s", false)
            .unwrap_or_else(|| panic!("no exports"));
        assert_eq!(exports.items[0].label, "knightcode-session-2026_x.html");

        let paths = completer
            .complete("cat sr", true)
            .unwrap_or_else(|| panic!("no paths"));
        assert_eq!(paths.items[0].value, "src/");
        assert!(completer.complete("cat sr", false).is_none());
    }
}
