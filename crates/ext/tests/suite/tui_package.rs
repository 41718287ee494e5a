//! `@knightcode/tui` against the reference: the cases in `tui_package/cases.mjs` run in our
//! host and under Node with the real `@mariozechner/pi-tui` (installed at test time with
//! npm into a cache outside the clone, never committed), and must show the same text.

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use knightcode_testkit::process::REGISTRY_LIMIT;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use serde_json::Value;

const PI_TUI: &str = "@mariozechner/pi-tui@0.73.1";
const CASES: &str = include_str!("tui_package/cases.mjs");

/// What a screen shows of a string: escape sequences (SGR, OSC, APC cursor markers) removed.
fn screen_text(value: &Value) -> Value {
    match value {
        Value::String(s) => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(at) = rest.find('\x1b') {
                out.push_str(&rest[..at]);
                let seq = &rest[at..];
                let end = match seq.as_bytes().get(1) {
                    Some(b'[') => seq[2..]
                        .find(|c: char| ('\x40'..='\x7e').contains(&c))
                        .map_or(seq.len(), |i| i + 3),
                    Some(b']' | b'_') => seq
                        .find('\x07')
                        .map(|i| i + 1)
                        .or_else(|| seq.find("\x1b\\").map(|i| i + 2))
                        .unwrap_or(seq.len()),
                    _ => 1,
                };
                rest = &seq[end..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(screen_text).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), screen_text(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    base.join("knightcode-rs").join("npm").join("pi-tui-0.73.1")
}

/// The reference package with its dependencies, installed once per cache (a finished
/// install is renamed into place whole, so concurrent runs never see half of one).
fn reference_package() -> PathBuf {
    let entry = cache_dir();
    if !entry.join("done").exists() {
        let root = entry.parent().unwrap();
        std::fs::create_dir_all(root).unwrap();
        let staging = tempfile::tempdir_in(root).unwrap();
        let output = Command::new("npm")
            .args([
                "install",
                "--no-save",
                "--omit=optional",
                "--ignore-scripts",
            ])
            .args(["--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(staging.path())
            .arg(PI_TUI)
            .output_within(
                REGISTRY_LIMIT,
                "npm install of the reference @mariozechner/pi-tui",
            )
            .expect("npm must be installed to fetch the reference @mariozechner/pi-tui");
        assert!(
            output.status.success(),
            "npm install {PI_TUI} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::write(staging.path().join("done"), PI_TUI).unwrap();
        let staged = staging.keep();
        if std::fs::rename(&staged, &entry).is_err() {
            std::fs::remove_dir_all(&staged).unwrap();
        }
    }
    entry
}

fn reference_output(dir: &Path) -> Value {
    let package = reference_package();
    std::os::unix::fs::symlink(package.join("node_modules"), dir.join("node_modules")).unwrap();
    std::fs::write(dir.join("cases.mjs"), CASES).unwrap();
    let output = Command::new("node")
        .current_dir(dir)
        .args([
            "--input-type=module",
            "-e",
            "import { run } from './cases.mjs'; process.stdout.write(JSON.stringify(run()));",
        ])
        .output_within(PROCESS_LIMIT, "node running the cases on the reference")
        .expect("node must be installed to run the reference @mariozechner/pi-tui");
    assert!(
        output.status.success(),
        "the cases failed under Node:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

async fn our_output(dir: &Path) -> Value {
    std::fs::write(dir.join("cases.mjs"), CASES).unwrap();
    let extension = dir.join("probe.ts");
    std::fs::write(
        &extension,
        r#"
import { run } from "./cases.mjs";
export default function (pi) {
  pi.registerTool({
    name: "cases", label: "cases", description: "d", parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: JSON.stringify(run()) }], details: undefined }; },
  });
}
"#,
    )
    .unwrap();
    let host = ExtensionHost::load(HostConfig {
        paths: vec![extension],
        cwd: dir.to_path_buf(),
        mode: "print".to_owned(),
        flags: serde_json::Map::new(),
        memory_limit: None,
    })
    .await
    .unwrap();
    crate::common::probe_result(&host, dir).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn components_keys_and_text_show_what_the_reference_shows() {
    let ours_dir = tempfile::tempdir().unwrap();
    let reference_dir = tempfile::tempdir().unwrap();
    let ours = screen_text(&our_output(ours_dir.path()).await);
    let reference = screen_text(&reference_output(reference_dir.path()));
    let (Value::Object(ours), Value::Object(reference)) = (&ours, &reference) else {
        panic!("the cases return an object");
    };
    let mut differences = Vec::new();
    for (case, expected) in reference {
        let got = ours.get(case).unwrap_or(&Value::Null);
        if got != expected {
            differences.push(format!(
                "{case}:\n  reference: {expected}\n  ours:      {got}"
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} case(s) differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
