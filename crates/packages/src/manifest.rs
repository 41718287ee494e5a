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

const KINDS: [&str; 4] = ["extensions", "skills", "prompts", "themes"];

/// The resources of the package at `root`. Manifest entries are paths relative to the
/// root; entries with glob characters or a leading `!` are not supported yet and skipped.
/// A missing, unreadable or manifest-less `package.json` falls back to the folders.
pub fn package_resources(root: &Path) -> PackageResources {
    let manifest = std::fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|pkg| {
            ["knightcode", "pi"]
                .iter()
                .find_map(|key| pkg.get(key).filter(|v| v.is_object()).cloned())
        });
    let mut out = PackageResources::default();
    for kind in KINDS {
        let paths = match &manifest {
            Some(manifest) => manifest_entries(root, manifest.get(kind)),
            None => {
                let dir = root.join(kind);
                if dir.is_dir() { vec![dir] } else { Vec::new() }
            }
        };
        *slot(&mut out, kind) = paths;
    }
    out
}

fn slot<'a>(out: &'a mut PackageResources, kind: &str) -> &'a mut Vec<PathBuf> {
    match kind {
        "extensions" => &mut out.extensions,
        "skills" => &mut out.skills,
        "prompts" => &mut out.prompts,
        _ => &mut out.themes,
    }
}

fn manifest_entries(root: &Path, entries: Option<&Value>) -> Vec<PathBuf> {
    let Some(Value::Array(entries)) = entries else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(Value::as_str)
        .filter(|e| !e.starts_with('!') && !e.contains(['*', '?', '[', '{']))
        .map(|e| root.join(e.trim_start_matches("./")))
        .filter(|p| p.exists())
        .collect()
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
        assert_eq!(found.themes, vec![dir.path().join("t.json")]);

        std::fs::write(
            dir.path().join("package.json"),
            r#"{"knightcode":{"prompts":[]},"pi":{"skills":["my-skills"]}}"#,
        )
        .unwrap();
        assert!(package_resources(dir.path()).is_empty());
    }
}
