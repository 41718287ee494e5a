//! What a package provides: the `knightcode` key of its `package.json` (or the reference's
//! `pi` key), else its convention folders.

use std::path::Path;
use std::path::PathBuf;

use serde_json::Value;

/// The resource paths (files or folders) of one package, for the loaders of each kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageResources {
    pub extensions: Vec<PathBuf>,
    pub skills: Vec<PathBuf>,
    pub prompts: Vec<PathBuf>,
    pub themes: Vec<PathBuf>,
}

impl PackageResources {
    pub fn is_empty(&self) -> bool {
        self.extensions.is_empty()
            && self.skills.is_empty()
            && self.prompts.is_empty()
            && self.themes.is_empty()
    }
}

/// The four kinds of resource, in the order they are shown and loaded.
pub const KINDS: [&str; 4] = ["extensions", "skills", "prompts", "themes"];

/// The resources of the package at `root`. Manifest entries are paths relative to the
/// root, globs (matched against the package's files) and `!` exclusions. A missing,
/// unreadable or manifest-less `package.json` falls back to the folders.
pub fn package_resources(root: &Path) -> PackageResources {
    let manifest = manifest(root);
    let mut out = PackageResources::default();
    for kind in KINDS {
        let paths = match &manifest {
            Some(manifest) => manifest_entries(root, kind, manifest.get(kind)),
            None => {
                let dir = root.join(kind);
                if dir.is_dir() { vec![dir] } else { Vec::new() }
            }
        };
        *slot(&mut out, kind) = paths;
    }
    out
}

/// The `knightcode` (or `pi`) object of the `package.json` at `root`.
fn manifest(root: &Path) -> Option<Value> {
    std::fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|pkg| {
            ["knightcode", "pi"]
                .iter()
                .find_map(|key| pkg.get(key).filter(|v| v.is_object()).cloned())
        })
}

/// A local folder named as an extension (`-e <dir>`) is a package when its `package.json`
/// has a manifest or it has one of the convention folders (`extensions/`, `skills/`,
/// `prompts/`, `themes/`): then it loads with the package rules, and an `index.ts` beside
/// them is not loaded. `None` otherwise (the folder itself is the extension).
pub fn local_package(root: &Path) -> Option<PackageResources> {
    let is_package = manifest(root).is_some() || KINDS.iter().any(|kind| root.join(kind).is_dir());
    is_package.then(|| package_resources(root))
}

/// [`package_resources`] narrowed by a settings entry's object form: for each kind the
/// entry names, `[]` keeps none and patterns select among the package's files of that kind
/// (see `filter`); a kind it leaves out keeps all.
pub fn filtered_resources(
    root: &Path,
    filter: &serde_json::Map<String, Value>,
) -> PackageResources {
    let mut out = package_resources(root);
    for kind in KINDS {
        let Some(Value::Array(patterns)) = filter.get(kind) else {
            continue;
        };
        let patterns: Vec<String> = patterns
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let paths = slot(&mut out, kind);
        if patterns.is_empty() {
            paths.clear();
            continue;
        }
        let files: Vec<PathBuf> = paths
            .iter()
            .flat_map(|p| crate::filter::files_of(kind, p))
            .collect();
        *paths = crate::filter::apply_patterns(files, &patterns, root);
    }
    out
}

/// Every resource file of the package at `root`, by kind, each with whether the settings
/// entry's object form (`filter`) keeps it: what `knightcode config` lists, and what an
/// `autoload: false` delta adjusts.
pub fn resource_files(
    root: &Path,
    filter: Option<&serde_json::Map<String, Value>>,
) -> Vec<(&'static str, PathBuf, bool)> {
    let all = package_resources(root);
    let mut out = Vec::new();
    for kind in KINDS {
        let files: Vec<PathBuf> = slot_ref(&all, kind)
            .iter()
            .flat_map(|p| crate::filter::files_of(kind, p))
            .collect();
        let patterns = filter.and_then(|f| f.get(kind)).and_then(Value::as_array);
        let enabled: Vec<PathBuf> = match patterns {
            None => files.clone(),
            Some(patterns) if patterns.is_empty() => Vec::new(),
            Some(patterns) => {
                let patterns: Vec<String> = patterns
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                crate::filter::apply_patterns(files.clone(), &patterns, root)
            }
        };
        for file in files {
            let on = enabled.contains(&file);
            out.push((kind, file, on));
        }
    }
    out
}

/// Applies an `autoload: false` entry's lists to `files` (from [`resource_files`]): only
/// what its patterns name changes; `+path` and plain patterns switch on, `-path` and
/// `!pattern` switch off, later entries winning.
pub fn apply_delta(
    files: &mut [(&'static str, PathBuf, bool)],
    delta: &serde_json::Map<String, Value>,
    root: &Path,
) {
    for kind in KINDS {
        let Some(Value::Array(patterns)) = delta.get(kind) else {
            continue;
        };
        for pattern in patterns.iter().filter_map(Value::as_str) {
            let (target, on, exact) = match pattern.chars().next() {
                Some('+') => (&pattern[1..], true, true),
                Some('-') => (&pattern[1..], false, true),
                Some('!') => (&pattern[1..], false, false),
                _ => (pattern, true, false),
            };
            for (k, path, enabled) in files.iter_mut() {
                if *k != kind {
                    continue;
                }
                let hit = if exact {
                    crate::filter::matches_exact_one(path, target, root)
                } else {
                    crate::filter::matches_one(path, target, root)
                };
                if hit {
                    *enabled = on;
                }
            }
        }
    }
}

fn slot_ref<'a>(out: &'a PackageResources, kind: &str) -> &'a Vec<PathBuf> {
    match kind {
        "extensions" => &out.extensions,
        "skills" => &out.skills,
        "prompts" => &out.prompts,
        _ => &out.themes,
    }
}

fn slot<'a>(out: &'a mut PackageResources, kind: &str) -> &'a mut Vec<PathBuf> {
    match kind {
        "extensions" => &mut out.extensions,
        "skills" => &mut out.skills,
        "prompts" => &mut out.prompts,
        _ => &mut out.themes,
    }
}

fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '[', '{'])
}

/// The paths a manifest list names: plain entries as they are, glob entries matched against
/// the package's files, then `!` entries taken out (both in the order of the files).
fn manifest_entries(root: &Path, kind: &str, entries: Option<&Value>) -> Vec<PathBuf> {
    let Some(Value::Array(entries)) = entries else {
        return Vec::new();
    };
    let entries: Vec<&str> = entries.iter().filter_map(Value::as_str).collect();
    let plain: Vec<PathBuf> = entries
        .iter()
        .filter(|e| !e.starts_with('!') && !is_glob(e))
        .map(|e| root.join(e.trim_start_matches("./")))
        .filter(|p| p.exists())
        .collect();
    let globs: Vec<String> = entries
        .iter()
        .filter(|e| !e.starts_with('!') && is_glob(e))
        .map(|e| e.trim_start_matches("./").to_owned())
        .collect();
    let excludes: Vec<String> = entries
        .iter()
        .filter(|e| e.starts_with('!'))
        .map(|e| (*e).to_owned())
        .collect();
    if globs.is_empty() && excludes.is_empty() {
        return plain;
    }
    let mut found = Vec::new();
    if !excludes.is_empty() {
        // Exclusions act on files: folders named plainly stand for what they hold.
        found.extend(plain.iter().flat_map(|p| crate::filter::files_of(kind, p)));
    } else {
        found.extend(plain);
    }
    if !globs.is_empty() {
        let files = crate::filter::all_files(root)
            .into_iter()
            .filter(|f| crate::filter::is_kind_file(kind, f))
            .collect();
        for file in crate::filter::apply_patterns(files, &globs, root) {
            if !found.contains(&file) {
                found.push(file);
            }
        }
    }
    crate::filter::apply_patterns(found, &excludes, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convention_folders_without_a_manifest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("skills/a")).unwrap();
        std::fs::create_dir_all(dir.path().join("prompts")).unwrap();
        std::fs::write(dir.path().join("package.json"), r#"{"name":"x"}"#).unwrap();
        let found = package_resources(dir.path());
        assert_eq!(found.skills, vec![dir.path().join("skills")]);
        assert_eq!(found.prompts, vec![dir.path().join("prompts")]);
        assert!(found.extensions.is_empty() && found.themes.is_empty());
    }

    #[test]
    fn manifest_wins_over_folders_and_the_pi_key_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("skills")).unwrap();
        std::fs::create_dir_all(dir.path().join("my-skills")).unwrap();
        std::fs::write(dir.path().join("t.json"), "{}").unwrap();
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"pi":{"skills":["./my-skills","missing"],"themes":["t.json","*.json"]}}"#,
        )
        .unwrap();
        let found = package_resources(dir.path());
        assert_eq!(found.skills, vec![dir.path().join("my-skills")]);
        assert_eq!(
            found.themes,
            vec![dir.path().join("t.json")],
            "*.json matches t.json once"
        );

        std::fs::write(
            dir.path().join("package.json"),
            r#"{"knightcode":{"prompts":[]},"pi":{"skills":["my-skills"]}}"#,
        )
        .unwrap();
        assert!(package_resources(dir.path()).is_empty());
    }

    #[test]
    fn a_local_folder_is_a_package_with_a_manifest_or_a_convention_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("index.ts"), "").unwrap();
        std::fs::create_dir_all(root.join("agents")).unwrap();
        assert_eq!(local_package(root), None, "index.ts and other folders only");
        std::fs::write(root.join("package.json"), r#"{"main":"index.ts"}"#).unwrap();
        assert_eq!(
            local_package(root),
            None,
            "a package.json without a manifest"
        );
        std::fs::write(root.join("package.json"), r#"{"pi":{}}"#).unwrap();
        assert_eq!(local_package(root), Some(PackageResources::default()));
        std::fs::remove_file(root.join("package.json")).unwrap();
        std::fs::create_dir_all(root.join("prompts")).unwrap();
        let found = local_package(root).unwrap();
        assert_eq!(found.prompts, vec![root.join("prompts")]);
        assert!(found.extensions.is_empty());
    }
}
