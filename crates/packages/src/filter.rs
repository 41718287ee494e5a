//! Narrowing a package's resources (spec/resources.md §6): glob and `!` entries of its
//! manifest, and the patterns of a settings entry's object form
//! (`{"source": …, "extensions": ["!old.ts"], "skills": []}`). Patterns match a resource
//! file's path relative to the package root, its name or its absolute path (for a
//! `SKILL.md`, its folder's too), as in the reference.

use std::path::Path;
use std::path::PathBuf;

use globset::GlobBuilder;

/// A glob as the reference's minimatch reads it: `*` stays within a path segment.
fn matches(pattern: &str, text: &str) -> bool {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher().is_match(text))
        .unwrap_or(false)
}

fn posix(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base).map_or_else(|_| posix(path), posix)
}

/// The texts a pattern is tried against: relative path, name, absolute path, and for a
/// skill file the same three of its folder.
fn candidates(path: &Path, base: &Path) -> Vec<String> {
    let mut texts = vec![
        relative(path, base),
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        posix(path),
    ];
    if path.file_name().is_some_and(|n| n == "SKILL.md")
        && let Some(parent) = path.parent()
    {
        texts.push(relative(parent, base));
        texts.push(
            parent
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        texts.push(posix(parent));
    }
    texts
}

fn matches_any(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let texts = candidates(path, base);
    patterns
        .iter()
        .any(|p| texts.iter().any(|t| matches(&p.replace('\\', "/"), t)))
}

/// `+path` and `-path` name a resource exactly (relative or absolute; a skill by its
/// folder too).
fn matches_exact(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let rel = relative(path, base);
    let abs = posix(path);
    let skill_dir = path
        .file_name()
        .is_some_and(|n| n == "SKILL.md")
        .then(|| path.parent())
        .flatten();
    patterns.iter().any(|p| {
        let p = p.strip_prefix("./").unwrap_or(p).replace('\\', "/");
        p == rel
            || p == abs
            || skill_dir.is_some_and(|dir| p == relative(dir, base) || p == posix(dir))
    })
}

/// One glob against a resource's names (see [`candidates`]).
pub(crate) fn matches_one(path: &Path, pattern: &str, base: &Path) -> bool {
    matches_any(path, &[pattern], base)
}

/// One exact `+`/`-` path against a resource.
pub(crate) fn matches_exact_one(path: &Path, pattern: &str, base: &Path) -> bool {
    matches_exact(path, &[pattern], base)
}

/// Keeps the paths `patterns` select: plain patterns include (all when there are none),
/// `!pattern` excludes, `+path` puts an exact path back, `-path` takes one out at the end.
pub(crate) fn apply_patterns(all: Vec<PathBuf>, patterns: &[String], base: &Path) -> Vec<PathBuf> {
    let of = |prefix: char| -> Vec<&str> {
        patterns
            .iter()
            .filter_map(|p| p.strip_prefix(prefix))
            .collect()
    };
    let (force_in, force_out, excludes) = (of('+'), of('-'), of('!'));
    let includes: Vec<&str> = patterns
        .iter()
        .map(String::as_str)
        .filter(|p| !p.starts_with(['+', '-', '!']))
        .collect();
    all.into_iter()
        .filter(|path| {
            let mut keep = includes.is_empty() || matches_any(path, &includes, base);
            if keep && !excludes.is_empty() && matches_any(path, &excludes, base) {
                keep = false;
            }
            if !force_in.is_empty() && matches_exact(path, &force_in, base) {
                keep = true;
            }
            if !force_out.is_empty() && matches_exact(path, &force_out, base) {
                keep = false;
            }
            keep
        })
        .collect()
}

/// Whether a resource found elsewhere (a discovered folder, a package) stays enabled under
/// a settings list's override entries: `!pattern` disables what it matches, `+path` enables
/// an exact path again, `-path` disables one at the end. Plain entries are ignored here
/// (they add paths rather than select).
pub fn enabled_by_overrides(path: &Path, patterns: &[String], base: &Path) -> bool {
    let of = |prefix: char| -> Vec<&str> {
        patterns
            .iter()
            .filter_map(|p| p.strip_prefix(prefix))
            .collect()
    };
    let (excludes, force_in, force_out) = (of('!'), of('+'), of('-'));
    let mut enabled = excludes.is_empty() || !matches_any(path, &excludes, base);
    if !force_in.is_empty() && matches_exact(path, &force_in, base) {
        enabled = true;
    }
    if !force_out.is_empty() && matches_exact(path, &force_out, base) {
        enabled = false;
    }
    enabled
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.') || n == "node_modules")
        })
        .collect();
    paths.sort();
    paths
}

fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension()
        .is_some_and(|e| extensions.iter().any(|x| e == *x))
}

/// Whether a file found by a manifest glob is of `kind` (`package.json` never is).
pub(crate) fn is_kind_file(kind: &str, path: &Path) -> bool {
    if path.file_name().is_some_and(|n| n == "package.json") {
        return false;
    }
    match kind {
        "extensions" => has_extension(path, &["ts", "js"]),
        "skills" | "prompts" => has_extension(path, &["md"]),
        _ => has_extension(path, &["json"]),
    }
}

/// `SKILL.md` files below `dir` (a folder with one is a skill: not looked into further).
fn skill_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let skill = dir.join("SKILL.md");
    if skill.is_file() {
        out.push(skill);
        return;
    }
    for path in sorted_entries(dir) {
        if path.is_dir() {
            skill_files(&path, out);
        }
    }
}

/// The resource files of `kind` a manifest path or convention folder stands for: itself
/// when a file; for a folder, what that kind's loader would take from it.
pub(crate) fn files_of(kind: &str, path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    match kind {
        "extensions" => {
            for entry in sorted_entries(path) {
                if entry.is_file() && has_extension(&entry, &["ts", "js"]) {
                    out.push(entry);
                } else if entry.is_dir() {
                    // A folder extension counts as its folder (its entry point loads).
                    let index = ["index.ts", "index.js", "package.json"]
                        .iter()
                        .any(|n| entry.join(n).is_file());
                    if index {
                        out.push(entry);
                    }
                }
            }
        }
        "skills" => {
            for entry in sorted_entries(path) {
                if entry.is_file() && has_extension(&entry, &["md"]) {
                    out.push(entry);
                } else if entry.is_dir() {
                    skill_files(&entry, &mut out);
                }
            }
        }
        "prompts" => out.extend(
            sorted_entries(path)
                .into_iter()
                .filter(|p| p.is_file() && has_extension(p, &["md"])),
        ),
        _ => out.extend(
            sorted_entries(path)
                .into_iter()
                .filter(|p| p.is_file() && has_extension(p, &["json"])),
        ),
    }
    out
}

/// Every file below `root` (not into dot folders or `node_modules`: those must be named
/// explicitly), for the globs of a manifest.
pub(crate) fn all_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for path in sorted_entries(&dir) {
            if path.is_symlink() && path.is_dir() {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(base: &Path, names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(|n| base.join(n)).collect()
    }

    #[test]
    fn patterns_include_exclude_and_force() {
        let base = Path::new("/pkg");
        let all = paths(
            base,
            &["extensions/a.ts", "extensions/b.ts", "skills/x/SKILL.md"],
        );
        let pick = |patterns: &[&str]| {
            let patterns: Vec<String> = patterns.iter().map(|p| (*p).to_owned()).collect();
            apply_patterns(all.clone(), &patterns, base)
        };
        assert_eq!(pick(&[]), all);
        assert_eq!(
            pick(&["!extensions/b.ts"]),
            paths(base, &["extensions/a.ts", "skills/x/SKILL.md"])
        );
        assert_eq!(
            pick(&["*.ts"]),
            paths(base, &["extensions/a.ts", "extensions/b.ts"])
        );
        assert_eq!(
            pick(&["x"]),
            paths(base, &["skills/x/SKILL.md"]),
            "a skill by its folder"
        );
        assert_eq!(
            pick(&["!*.ts", "+extensions/b.ts"]),
            paths(base, &["extensions/b.ts", "skills/x/SKILL.md"])
        );
        assert_eq!(pick(&["a.ts", "-extensions/a.ts"]), Vec::<PathBuf>::new());
    }
}
