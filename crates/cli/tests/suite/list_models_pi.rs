//! `--list-models` prints what the reference prints for the same provider keys in the
//! environment: the same providers, models, context windows, output limits and
//! capabilities, in the same order and layout (recorded from the reference by
//! `scripts/catalog/record-list-models.sh`).

use std::path::PathBuf;

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;

fn recorded(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi/list-models")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn list_models(args: &[&str]) -> String {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    // The reference has no local model servers; a developer's own would add rows.
    std::fs::write(agent.join("settings.json"), r#"{"localModels": false}"#).unwrap();
    let vars: Vec<(String, String)> = recorded("env.txt")
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_knightcode"))
        .arg("--list-models")
        .args(args)
        .current_dir(root.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", root.path())
        .env("KNIGHTCODE_CODING_AGENT_DIR", &agent)
        .envs(vars)
        .stdin(std::process::Stdio::null())
        .output_within(PROCESS_LIMIT, "knightcode --list-models")
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_whole_list_matches_the_reference() {
    let ours = list_models(&[]);
    let theirs = recorded("all.txt");
    assert!(theirs.lines().count() > 400);
    if ours != theirs {
        let first = ours
            .lines()
            .zip(theirs.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "first difference at line {}:\n ours:   {:?}\n theirs: {:?}",
            first + 1,
            ours.lines().nth(first),
            theirs.lines().nth(first)
        );
    }
}

#[test]
fn a_search_matches_the_reference() {
    assert_eq!(list_models(&["sonnet"]), recorded("search-sonnet.txt"));
}
