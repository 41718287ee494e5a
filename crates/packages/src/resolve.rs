//! Every resource a session would find, switched on or off, with where it came from: what
//! `knightcode config` lists. Packages first (the effective entries, see [`crate::effective`]),
//! then the settings files' `extensions`/`skills`/`prompts`/`themes` entries and the
//! discovered folders (`~/.knightcode/agent/<kind>/`, `.knightcode/<kind>/`). The on/off state
//! is worked out with the same pattern rules the loaders apply.

use std::path::Path;
use std::path::PathBuf;

use crate::Layout;
use crate::Scope;
use crate::SettingsFile;
use crate::filter;
use crate::manifest::KINDS;

/// Where a listed resource comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A package: its `source` as its settings entry spells it, and its root folder.
    Package { source: String, root: PathBuf },
    /// A discovered folder of the scope (`<agentDir>/skills/`, `.knightcode/skills/`, …).
    Auto,
    /// A path entry in the scope's settings list of that kind.
    Settings,
}

/// One resource file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `extensions`, `skills`, `prompts` or `themes`.
    pub kind: &'static str,
    pub path: PathBuf,
    pub enabled: bool,
    /// The settings file the resource belongs to (a package's: the file that lists it).
    pub scope: Scope,
    pub origin: Origin,
}

impl Resource {
    /// The folder patterns for this resource are relative to: a package's root, else the
    /// scope's settings folder.
    pub fn base(&self, layout: &Layout) -> PathBuf {
        match &self.origin {
            Origin::Package { root, .. } => root.clone(),
            _ => layout.base_dir(self.scope),
        }
    }

    /// The pattern naming this resource exactly (relative to [`Self::base`] when inside it,
    /// else absolute).
    pub fn pattern(&self, layout: &Layout) -> String {
        let base = self.base(layout);
        match self.path.strip_prefix(&base) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().replace('\\', "/"),
            _ => self.path.to_string_lossy().into_owned(),
        }
    }

    /// The name shown: `file`, `folder/file` for an extension inside a folder of its own,
    /// the folder's name for a `SKILL.md`.
    pub fn display_name(&self) -> String {
        let name = |p: &Path| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let file = name(&self.path);
        let parent = self.path.parent().map(name).unwrap_or_default();
        if self.kind == "extensions" && parent != "extensions" && !parent.is_empty() {
            format!("{parent}/{file}")
        } else if self.kind == "skills" && file == "SKILL.md" {
            parent
        } else {
            file
        }
    }
}

/// The extension entry points of a discovered folder, as the extension loader finds them:
/// scripts, and subfolders' `package.json` entries or `index.ts`/`index.js`.
fn extension_entries(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let script = path.extension().is_some_and(|e| e == "ts" || e == "js");
        if path.is_file() && script {
            out.push(path);
        } else if path.is_dir() {
            out.extend(folder_entries(&path));
        }
    }
    out
}

fn folder_entries(dir: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    if let Some(list) = manifest
        .as_ref()
        .and_then(|m| m.get("knightcode").or_else(|| m.get("pi")))
        .and_then(|k| k.get("extensions"))
        .and_then(serde_json::Value::as_array)
    {
        return list
            .iter()
            .filter_map(serde_json::Value::as_str)
            .map(|e| dir.join(e))
            .filter(|p| p.exists())
            .collect();
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.is_file())
        .take(1)
        .collect()
}

/// `SKILL.md` folders below `dir` (the `.agents/skills` layout: no loose markdown).
fn agents_skills(dir: &Path) -> Vec<PathBuf> {
    filter::files_of("skills", dir)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "SKILL.md"))
        .collect()
}

fn discovered(kind: &str, dir: &Path) -> Vec<PathBuf> {
    if !dir.is_dir() {
        return Vec::new();
    }
    match kind {
        "extensions" => extension_entries(dir),
        _ => filter::files_of(kind, dir),
    }
}

/// `.agents/skills` of `cwd` and its parents up to the repository root, except the user's.
fn project_agents_dirs(cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let user = home.map(|h| h.join(".agents").join("skills"));
    let root = cwd
        .ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf);
    let mut out = Vec::new();
    for dir in cwd.ancestors() {
        let skills = dir.join(".agents").join("skills");
        if Some(&skills) != user.as_ref() {
            out.push(skills);
        }
        if root.as_deref() == Some(dir) {
            break;
        }
    }
    out
}

fn strings(settings: &SettingsFile, key: &str) -> Vec<String> {
    match settings.get(key) {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn is_pattern(entry: &str) -> bool {
    entry.starts_with(['!', '+', '-']) || entry.contains(['*', '?'])
}

/// The resources of the user's scope, and with `project` (only for a trusted project) the
/// project's too. A file found twice is listed once, where it is found first.
pub fn resolve(layout: &Layout, project: bool) -> Vec<Resource> {
    let mut out: Vec<Resource> = Vec::new();
    for effective in crate::effective(layout, project) {
        let Some(root) = effective.entry.installed_path.clone() else {
            continue;
        };
        for (kind, path, enabled) in effective.files() {
            out.push(Resource {
                kind,
                path,
                enabled,
                scope: effective.entry.scope,
                origin: Origin::Package {
                    source: effective.entry.source.clone(),
                    root: root.clone(),
                },
            });
        }
    }
    let mut scopes = vec![Scope::User];
    if project {
        scopes.insert(0, Scope::Project);
    }
    let files: Vec<(Scope, SettingsFile)> = scopes
        .iter()
        .map(|&scope| {
            let path = layout.settings_path(scope);
            let file = SettingsFile::read(&path).unwrap_or_else(|_| SettingsFile::empty(&path));
            (scope, file)
        })
        .collect();
    // Settings entries (project first, as the loaders rank them), then discovered folders.
    for (scope, settings) in &files {
        let base = layout.base_dir(*scope);
        for kind in KINDS {
            let entries = strings(settings, kind);
            let patterns: Vec<String> = entries.iter().filter(|e| is_pattern(e)).cloned().collect();
            let mut found = Vec::new();
            for entry in entries.iter().filter(|e| !is_pattern(e)) {
                let path = crate::source::resolve(entry, &base, layout.home.as_deref());
                if path.is_file() {
                    found.push(path);
                } else if path.is_dir() {
                    found.extend(discovered(kind, &path));
                }
            }
            let enabled = filter::apply_patterns(found.clone(), &patterns, &base);
            for path in found {
                let on = enabled.contains(&path);
                out.push(Resource {
                    kind,
                    path,
                    enabled: on,
                    scope: *scope,
                    origin: Origin::Settings,
                });
            }
        }
    }
    for (scope, settings) in &files {
        let base = layout.base_dir(*scope);
        for kind in KINDS {
            let overrides = strings(settings, kind);
            let mut found = discovered(kind, &base.join(kind));
            if kind == "skills" {
                let agents = match scope {
                    Scope::User => layout
                        .home
                        .iter()
                        .map(|h| h.join(".agents").join("skills"))
                        .collect(),
                    Scope::Project => project_agents_dirs(&layout.cwd, layout.home.as_deref()),
                };
                for dir in agents {
                    found.extend(agents_skills(&dir));
                }
            }
            for path in found {
                let on = filter::enabled_by_overrides(&path, &overrides, &base);
                out.push(Resource {
                    kind,
                    path,
                    enabled: on,
                    scope: *scope,
                    origin: Origin::Auto,
                });
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|r| seen.insert(std::fs::canonicalize(&r.path).unwrap_or_else(|_| r.path.clone())));
    out
}
