//! Resources that come with extensions. A `-e` folder that is a package (a manifest, or an
//! `extensions/`, `skills/`, `prompts/` or `themes/` folder) loads with the package rules:
//! its skills, prompt templates and themes join the session's and its extensions are the
//! package's, not an `index.ts` beside them. And extensions name more paths from
//! `resources_discover`, after `session_start` at start-up and after `/reload`; those load
//! like any other, with source info naming the extension.

use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

use knightcode_ext::ExtensionHost;
use knightcode_resources::ExtraLists;
use knightcode_resources::ExtraPath;
use knightcode_resources::SourceInfo;
use serde_json::Value;
use serde_json::json;

/// `a/./b/../c` as `a/c`, without touching the file system (how the reference's
/// `path.resolve` names a package).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The `-e` folders that are packages, each with what it provides.
fn cli_packages(
    cli: &[String],
    cwd: &Path,
) -> Vec<(PathBuf, knightcode_packages::PackageResources)> {
    cli.iter()
        .map(|value| normalize(&cwd.join(value)))
        .filter(|path| path.is_dir())
        .filter_map(|root| knightcode_packages::local_package(&root).map(|found| (root, found)))
        .collect()
}

/// The `-e` values with each folder that is a package replaced by its extension entries
/// (files, and the entries of its extension folders).
pub(crate) fn cli_entries(cli: &[String], cwd: &Path) -> Vec<String> {
    let text = |p: PathBuf| p.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for value in cli {
        let root = normalize(&cwd.join(value));
        match root
            .is_dir()
            .then(|| knightcode_packages::local_package(&root))
            .flatten()
        {
            Some(found) => {
                for entry in found.extensions {
                    if entry.is_dir() {
                        out.extend(
                            knightcode_ext::discover::folder_entries(&entry)
                                .into_iter()
                                .map(text),
                        );
                    } else {
                        out.push(text(entry));
                    }
                }
            }
            None => out.push(value.clone()),
        }
    }
    out
}

/// The skills, templates and themes of the `-e` folders that are packages, with the source
/// info the reference gives them: a template is the package's (`origin: package`, the
/// folder as source and base), a skill is the command line's (`cli`, top level).
pub fn cli_package_resources(cli: &[String], cwd: &Path) -> ExtraLists {
    let mut out = ExtraLists::default();
    for (root, found) in cli_packages(cli, cwd) {
        let package = SourceInfo {
            path: root.clone(),
            source: root.to_string_lossy().into_owned(),
            scope: "temporary".to_owned(),
            origin: "package".to_owned(),
            base_dir: Some(root.clone()),
        };
        let command_line = SourceInfo {
            path: root.clone(),
            source: "cli".to_owned(),
            scope: "temporary".to_owned(),
            origin: "top-level".to_owned(),
            base_dir: None,
        };
        out.skills
            .extend(found.skills.into_iter().map(|path| ExtraPath {
                path,
                source: command_line.clone(),
            }));
        out.prompts
            .extend(found.prompts.into_iter().map(|path| ExtraPath {
                path,
                source: package.clone(),
            }));
        out.themes.extend(found.themes);
    }
    out
}

/// The `sourceInfo` of what an extension named: `source` is `extension:<name>`, the
/// extension's file name without `.ts`/`.js`, and `baseDir` its folder. An extension
/// loaded through a `-e` folder's entry point is named by that folder (as the reference,
/// whose extension path is the folder then).
fn discovered_source(path: &Path, extension_path: &str, cli: &[String], cwd: &Path) -> SourceInfo {
    let info = |source: String, base_dir: Option<PathBuf>| SourceInfo {
        path: path.to_path_buf(),
        source,
        scope: "temporary".to_owned(),
        origin: "top-level".to_owned(),
        base_dir,
    };
    if let Some(inner) = extension_path
        .strip_prefix('<')
        .and_then(|p| p.strip_suffix('>'))
    {
        return info(format!("extension:{inner}"), None);
    }
    let file = Path::new(extension_path);
    let through_folder = cli.iter().map(|v| normalize(&cwd.join(v))).find(|dir| {
        dir.is_dir()
            && knightcode_ext::discover::discover(&knightcode_ext::discover::Sources {
                cli: vec![dir.to_string_lossy().into_owned()],
                no_extensions: true,
                ..Default::default()
            })
            .iter()
            .any(|entry| entry == file)
    });
    let named = through_folder.as_deref().unwrap_or(file);
    let name = named
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name
        .strip_suffix(".ts")
        .or_else(|| name.strip_suffix(".js"))
        .unwrap_or(&name);
    info(
        format!("extension:{name}"),
        named.parent().map(Path::to_path_buf),
    )
}

/// Asks the extensions for resource paths (`resources_discover`, `reason` `startup` or
/// `reload`): every handler's paths, in load order, each carrying the extension that named
/// it. Nothing when no extension listens.
pub(crate) async fn discover(
    host: &ExtensionHost,
    cwd: &Path,
    reason: &str,
    cli: &[String],
) -> ExtraLists {
    let mut out = ExtraLists::default();
    if !host.handles("resources_discover") {
        return out;
    }
    let payload = json!({ "cwd": cwd.to_string_lossy(), "reason": reason });
    let Some(result) = host.dispatch("resources_discover", payload).await else {
        return out;
    };
    let entries = |key: &str| {
        result
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let path = entry.get("path")?.as_str()?.trim();
                let extension = entry.get("extensionPath")?.as_str()?;
                Some((PathBuf::from(path), extension.to_owned()))
            })
            .collect::<Vec<_>>()
    };
    let named = |(path, extension): (PathBuf, String)| ExtraPath {
        source: discovered_source(&path, &extension, cli, cwd),
        path,
    };
    out.skills = entries("skillPaths").into_iter().map(named).collect();
    out.prompts = entries("promptPaths").into_iter().map(named).collect();
    out.themes = entries("themePaths")
        .into_iter()
        .map(|(path, _)| cwd.join(path))
        .collect();
    out
}
