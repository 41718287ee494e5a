//! The interactive mode's first run (issue 32 item 1): with no model configured it opens
//! anyway, says what is missing and how to get a model, refuses prompts with that advice,
//! and takes a model configured since (here a login written to `auth.json` by another
//! process) without a restart.

use crate::tui_common;

use knightcode_testkit::ScriptedReply;
use serde_json::Value;
use serde_json::json;
use tui_common::read_jsonl;

#[test]
fn a_first_run_opens_says_what_to_do_and_takes_a_login_made_since() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("picked up at once")]);
    tui_common::without_credentials(&sandbox);
    let mut tui = sandbox.spawn(&[], 110, 40);
    let screen = tui.wait_for_text("No model available.");
    assert!(screen.contains("type /login"), "{screen}");
    assert!(screen.contains("models.json"), "{screen}");
    tui.wait_for("the footer to say there is no model", |s| {
        s.lines().any(|l| l.trim_end().ends_with("no model"))
    });

    tui.submit("hello");
    let screen = tui.wait_for_text("No model selected.");
    // Read as one text: the message wraps at the terminal's width.
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("the model is picked up without a restart"),
        "the refusal says what happens next: {screen}"
    );
    assert!(sandbox.server().requests().is_empty());
    tui.submit("/model");
    tui.wait_for_text("No models are available yet");

    // A login made in another shell (or by pi) is used by the next prompt.
    std::fs::write(
        sandbox.agent.join("auth.json"),
        json!({ "mock": { "type": "api_key", "key": "from-a-login" } }).to_string(),
    )
    .unwrap();
    tui.submit("hello again");
    tui.wait_for_text("picked up at once");
    tui.wait_for("the footer to name the model", |s| s.contains("mock-model"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    let files = sandbox.session_files();
    assert_eq!(files.len(), 1);
    let entries = read_jsonl(&files[0]);
    let changes: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "model_change")
        .collect();
    assert_eq!(
        changes.len(),
        1,
        "only the model picked is recorded: {entries:?}"
    );
    assert_eq!(changes[0]["provider"], "mock");
    assert_eq!(changes[0]["modelId"], "mock-model");
}

#[test]
fn a_provider_added_to_models_json_meanwhile_is_picked_up() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("from the new provider")]);
    let path = sandbox.agent.join("models.json");
    let models = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let mut tui = sandbox.spawn(&[], 110, 40);
    tui.wait_for_text("No model available.");
    // The user follows the advice: a provider in models.json, with its key.
    std::fs::write(&path, models).unwrap();
    tui.submit("hello");
    tui.wait_for_text("from the new provider");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn print_mode_without_a_model_still_stops_with_the_advice() {
    let sandbox = tui_common::sandbox(vec![]);
    tui_common::without_credentials(&sandbox);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_knightcode"))
        .args(["-p", "hello"])
        .current_dir(&sandbox.project)
        .envs(sandbox.env())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("No model available."), "{stderr}");
}
