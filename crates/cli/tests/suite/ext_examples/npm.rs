//! The npm-packages corpus: extension packages published on the npm registry (not the
//! reference's examples), each pinned, installed together with their dependencies by one
//! `npm install` into the cache the example corpus uses (`~/.cache/knightcode-rs/npm`).
//! Nothing of them is committed.

use std::path::PathBuf;
use std::process::Command;

use super::corpus::cache_root;
use super::corpus::run;

/// The packages of the registry that declare a `pi` manifest with extensions, most
/// downloaded first, pinned (the versions the registry served when they were chosen).
pub const PACKAGES: [(&str, &str); 12] = [
    ("pi-subagents", "0.67.0"),
    ("pi-markdown-preview", "0.16.0"),
    ("pi-web-access", "0.28.0"),
    ("@aliou/pi-processes", "0.12.0"),
    ("pi-mcp-adapter", "2.36.0"),
    ("pi-prompt-template-model", "0.12.2"),
    ("pi-aliases", "1.0.7"),
    ("pi-mermaid", "0.3.0"),
    ("pi-system-theme", "0.5.0"),
    ("pi-sync-system-theme", "0.2.5"),
    ("@baochunli/pi-collaborating-agents", "0.4.6"),
    ("pi-plan-mode", "0.2.4"),
];

/// The `node_modules` folder holding every package of [`PACKAGES`], installed once per
/// list: the cache entry is named by a digest of the list, and a finished one is renamed
/// into place whole, so a concurrent or interrupted run never sees half of one.
pub fn node_modules() -> PathBuf {
    install_pinned("npm-packages", &PACKAGES)
}

/// The `node_modules` folder holding `packages` (pinned `name`, `version` pairs), installed
/// once per list into the cache as `<label>-<digest>` (the MCP tests' servers come from
/// here too).
pub fn install_pinned(label: &str, packages: &[(&str, &str)]) -> PathBuf {
    // npm is required even when the cache is warm (see `corpus::corpus`).
    run(Command::new("npm").arg("--version"), "npm --version");
    let specs: Vec<String> = packages.iter().map(|(n, v)| format!("{n}@{v}")).collect();
    let root = cache_root();
    let entry = root.join(format!("{label}-{:016x}", digest(&specs.join(" "))));
    if !entry.join("done").exists() {
        std::fs::create_dir_all(&root).unwrap();
        let staging = tempfile::tempdir_in(&root).unwrap();
        std::fs::write(
            staging.path().join("package.json"),
            r#"{"name": "knightcode-npm-corpus", "private": true}"#,
        )
        .unwrap();
        // Peers (`@earendil-works/pi-*`, `typebox`) are installed too, as npm does by
        // default: the reference agent resolves those imports from here.
        run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                .args(["--ignore-scripts", "--omit=dev", "--save-exact"])
                .args(&specs)
                .current_dir(staging.path()),
            &format!("npm install of {label}"),
        );
        std::fs::write(staging.path().join("done"), specs.join("\n")).unwrap();
        let staged = staging.keep();
        if std::fs::rename(&staged, &entry).is_err() {
            // Another run finished first; its entry is as good as ours.
            std::fs::remove_dir_all(&staged).unwrap();
        }
    }
    entry.join("node_modules")
}

/// FNV-1a: a stable name for the list (std's hasher may change between releases).
fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
