//! The example corpus: `examples/extensions` of the reference agent's npm package, fetched at
//! test time with `npm pack` into a cache outside the clone (the examples are never
//! committed), with `npm install` run in the examples that declare dependencies, plus a copy
//! whose imports name our package names.

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::REGISTRY_LIMIT;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

pub const PACKAGE: &str = "@mariozechner/pi-coding-agent";
pub const VERSION: &str = "0.73.1";

/// Import specifiers of the reference packages and the names our host also answers to; the
/// second copy of the corpus is rewritten with them (longest first, so no prefix clashes).
const RENAMES: [(&str, &str); 4] = [
    ("@mariozechner/pi-coding-agent", "@knightcodeai/cli"),
    ("@mariozechner/pi-agent-core", "@knightcode/agent"),
    ("@mariozechner/pi-ai", "@knightcode/ai"),
    ("@mariozechner/pi-tui", "@knightcode/tui"),
];

pub struct Corpus {
    /// The unpacked package (`dist/`, `examples/`, …).
    pub package: PathBuf,
    /// `examples/extensions` as shipped.
    pub original: PathBuf,
    /// The same tree with the imports rewritten to our package names.
    pub rewritten: PathBuf,
}

pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("KC_EXAMPLES_CACHE") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    base.join("knightcode-rs").join("npm")
}

pub fn run(command: &mut Command, what: &str) {
    let output = command
        .output_within(REGISTRY_LIMIT, what)
        .unwrap_or_else(|e| panic!("{what}: cannot run it ({e}); npm and tar must be installed"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The corpus of this version, prepared once per cache: a finished entry is renamed into
/// place whole, so a concurrent or interrupted run never sees half of one.
pub fn corpus() -> Corpus {
    // npm is required even when the cache is warm, so a machine without it fails here
    // rather than passing on a cache someone else filled.
    run(Command::new("npm").arg("--version"), "npm --version");
    let root = cache_root();
    let entry = root.join(format!("pi-coding-agent-{VERSION}"));
    if !entry.join("done").exists() {
        std::fs::create_dir_all(&root).unwrap();
        let staging = tempfile::tempdir_in(&root).unwrap();
        prepare(staging.path());
        std::fs::write(staging.path().join("done"), VERSION).unwrap();
        let staged = staging.keep();
        if std::fs::rename(&staged, &entry).is_err() {
            // Another run finished first; its entry is as good as ours.
            std::fs::remove_dir_all(&staged).unwrap();
        }
    }
    let package = entry.join("package");
    Corpus {
        original: package.join("examples").join("extensions"),
        package,
        rewritten: entry.join("rewritten"),
    }
}

fn prepare(dir: &Path) {
    run(
        Command::new("npm")
            .args(["pack", &format!("{PACKAGE}@{VERSION}"), "--silent"])
            .args(["--pack-destination"])
            .arg(dir)
            .current_dir(dir),
        "npm pack",
    );
    let tarball = dir.join(format!("mariozechner-pi-coding-agent-{VERSION}.tgz"));
    run(
        Command::new("tar")
            .arg("xzf")
            .arg(&tarball)
            .current_dir(dir),
        "tar",
    );
    let examples = dir.join("package").join("examples").join("extensions");
    for example in std::fs::read_dir(&examples).unwrap() {
        let example = example.unwrap().path();
        let manifest = example.join("package.json");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        if manifest["dependencies"]
            .as_object()
            .is_some_and(|d| !d.is_empty())
        {
            run(
                Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                    .args(["--ignore-scripts", "--omit=dev"])
                    .current_dir(&example),
                &format!("npm install in {}", example.display()),
            );
        }
    }
    copy_rewritten(&examples, &dir.join("rewritten"));
}

/// Copies `from` to `to`, rewriting the imports of the sources outside `node_modules`.
fn copy_rewritten(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            if entry.file_name() == "node_modules" {
                copy_plain(&source, &target);
            } else {
                copy_rewritten(&source, &target);
            }
        } else if kind.is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let code = [".ts", ".js", ".mjs", ".cjs", ".mts", ".tsx"]
                .iter()
                .any(|ext| name.ends_with(ext));
            if code {
                let mut text = std::fs::read_to_string(&source).unwrap();
                for (old, new) in RENAMES {
                    text = text.replace(old, new);
                }
                std::fs::write(&target, text).unwrap();
            } else {
                std::fs::copy(&source, &target).unwrap();
            }
        }
    }
}

fn copy_plain(from: &Path, to: &Path) {
    run(
        Command::new("cp").arg("-R").arg(from).arg(to),
        "cp node_modules",
    );
}

/// The example entries (files and directories), sorted; the README is not one.
pub fn examples(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    names.sort();
    names
}
