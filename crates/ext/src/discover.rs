//! Which extension files load (spec §2): `-e` sources first, then `<agentDir>/extensions/`,
//! then the project's `.knightcode/extensions/` when the project is trusted (an untrusted
//! project's files are never read). Paths are de-duplicated by canonical path.

use std::path::Path;
use std::path::PathBuf;

/// Where to look.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `-e` values, resolved against `cwd` (always loaded, even with `--no-extensions`).
    pub cli: Vec<String>,
    /// `--no-extensions` / `-ne`.
    pub no_extensions: bool,
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    pub project_trusted: bool,
    /// The `extensions` settings entries and the extension paths of installed packages
    /// (resolved, narrowed by their settings entries; the project's only when it is
    /// trusted): scripts, extension folders, or folders of extensions such as a package's
    /// `extensions/`. A path that does not exist is kept, so loading it reports the error.
    pub packages: Vec<PathBuf>,
}

fn is_script(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ts" || e == "js")
}

/// A directory's entry points: its `package.json` `knightcode.extensions` (or legacy `pi`)
/// list, else `index.ts`, else `index.js`.
fn package_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Ok(text) = std::fs::read_to_string(dir.join("package.json"))
        && let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text)
    {
        let list = manifest
            .get("knightcode")
            .or_else(|| manifest.get("pi"))
            .and_then(|k| k.get("extensions"))
            .and_then(serde_json::Value::as_array);
        if let Some(list) = list {
            let entries: Vec<PathBuf> = list
                .iter()
                .filter_map(serde_json::Value::as_str)
                .map(|e| dir.join(e))
                .filter(|p| p.exists())
                .collect();
            return Some(entries);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
        .map(|p| vec![p])
}

/// One level of a discovered directory: scripts, and subdirectories with an entry point.
fn scan(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        if path.is_file() && is_script(&path) {
            out.push(path);
        } else if path.is_dir()
            && let Some(entries) = package_entries(&path)
        {
            out.extend(entries);
        }
    }
    out
}

/// The `main` file a `package.json` names.
fn main_entry(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let manifest = serde_json::from_str::<serde_json::Value>(&text).ok()?;
    let main = dir.join(manifest.get("main")?.as_str()?);
    main.is_file().then_some(main)
}

/// An explicitly named source: a file, or a directory imported as a module (its manifest's
/// list, `index.ts`, `index.js`, or `package.json`'s `main`). A directory with none of them
/// is kept as it is, so loading it fails as in the reference ("Cannot find module"); a
/// `-e` folder that is a package was expanded to its entries before (see the runtime).
fn explicit(path: &Path) -> Vec<PathBuf> {
    if path.is_dir() {
        package_entries(path)
            .or_else(|| main_entry(path).map(|main| vec![main]))
            .unwrap_or_else(|| vec![path.to_path_buf()])
    } else {
        vec![path.to_path_buf()]
    }
}

/// The entry files of a folder of extensions, such as a package's `extensions/`: its own
/// manifest list or index, else its scripts and the entries of its subfolders.
pub fn folder_entries(dir: &Path) -> Vec<PathBuf> {
    package_entries(dir).unwrap_or_else(|| scan(dir))
}

/// The entry files to load, in load order. A `-e` path that does not exist is kept, so
/// loading it reports the error.
pub fn discover(sources: &Sources) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for value in &sources.cli {
        let path = sources.cwd.join(value);
        found.extend(explicit(&path));
    }
    if !sources.no_extensions {
        found.extend(scan(&sources.agent_dir.join("extensions")));
        if sources.project_trusted {
            found.extend(scan(&sources.cwd.join(".knightcode").join("extensions")));
        }
        for path in &sources.packages {
            match package_entries(path) {
                Some(entries) if path.is_dir() => found.extend(entries),
                _ if path.is_dir() => found.extend(scan(path)),
                _ => found.push(path.clone()),
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    found
        .into_iter()
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn one_level_rules_trust_and_no_extensions() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let agent = root.join("agent");
        let user = agent.join("extensions");
        std::fs::create_dir_all(user.join("pkg")).unwrap();
        std::fs::create_dir_all(user.join("empty")).unwrap();
        std::fs::create_dir_all(user.join("deep/inner")).unwrap();
        std::fs::write(user.join("a.ts"), "").unwrap();
        std::fs::write(user.join("notes.md"), "").unwrap();
        std::fs::write(user.join("pkg/index.ts"), "").unwrap();
        std::fs::write(user.join("deep/inner/index.ts"), "").unwrap();
        let project = root.join("proj/.knightcode/extensions");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("p.js"), "").unwrap();
        std::fs::write(root.join("proj/cli.ts"), "").unwrap();
        let mut sources = Sources {
            cli: vec!["cli.ts".to_owned()],
            no_extensions: false,
            cwd: root.join("proj"),
            agent_dir: agent,
            project_trusted: false,
            packages: Vec::new(),
        };
        assert_eq!(
            discover(&sources),
            vec![
                root.join("proj/cli.ts"),
                user.join("a.ts"),
                user.join("pkg/index.ts")
            ]
        );
        sources.project_trusted = true;
        assert_eq!(discover(&sources).last(), Some(&project.join("p.js")));
        // A package's extensions folder is scanned, a package folder loads its entry.
        std::fs::create_dir_all(root.join("pkg/extensions")).unwrap();
        std::fs::write(root.join("pkg/extensions/t.ts"), "").unwrap();
        sources.packages = vec![root.join("pkg/extensions"), user.join("pkg")];
        let found = discover(&sources);
        assert!(
            found.contains(&root.join("pkg/extensions/t.ts")),
            "{found:?}"
        );
        assert_eq!(
            found
                .iter()
                .filter(|p| **p == user.join("pkg/index.ts"))
                .count(),
            1,
            "de-duplicated"
        );
        sources.no_extensions = true;
        assert_eq!(discover(&sources), vec![root.join("proj/cli.ts")]);
    }

    #[test]
    fn an_explicit_folder_is_imported_as_a_module() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for name in ["indexed", "main", "plain"] {
            std::fs::create_dir_all(root.join(name)).unwrap();
            std::fs::write(root.join(name).join("other.ts"), "").unwrap();
        }
        std::fs::write(root.join("indexed/index.ts"), "").unwrap();
        std::fs::write(root.join("main/entry.ts"), "").unwrap();
        std::fs::write(root.join("main/package.json"), r#"{"main":"entry.ts"}"#).unwrap();
        let sources = |name: &str| Sources {
            cli: vec![name.to_owned()],
            no_extensions: true,
            cwd: root.clone(),
            ..Sources::default()
        };
        assert_eq!(
            discover(&sources("indexed")),
            vec![root.join("indexed/index.ts")]
        );
        assert_eq!(discover(&sources("main")), vec![root.join("main/entry.ts")]);
        // No entry point: the folder itself, whose loading then fails.
        assert_eq!(discover(&sources("plain")), vec![root.join("plain")]);
        assert_eq!(
            folder_entries(&root.join("plain")),
            vec![root.join("plain/other.ts")]
        );
    }
}
