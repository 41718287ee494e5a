//! Prompt templates and skills in a real pseudo-terminal: `/` completion lists them with
//! their argument hints, a template expands when sent, and `/reload` picks up a skill
//! written while the app runs.

use crate::tui_common;

use knightcode_testkit::ScriptedReply;

fn write(path: &std::path::Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[test]
fn slash_completion_lists_templates_with_hints_and_skills() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Reviewed it.")]);
    write(
        &sandbox.agent.join("prompts").join("review.md"),
        "---\ndescription: Review a file\nargument-hint: <file> [focus]\n---\nReview $1 for ${@:2}.\n",
    );
    write(
        &sandbox.agent.join("skills").join("lint").join("SKILL.md"),
        "---\ndescription: Lint the project\n---\nRun the linter.\n",
    );
    let mut tui = sandbox.spawn(&[], 120, 30);
    tui.wait_for_text("mock-model");
    tui.send("/rev");
    tui.wait_for_text("<file> [focus] — [u] Review a file");
    tui.send("\x15");
    tui.send("/skill:");
    tui.wait_for_text("[u] Lint the project");
    tui.send("\x15");
    tui.submit("/review main.rs speed");
    tui.wait_for_text("Reviewed it.");
    let history = tui.history().join("\n");
    assert!(history.contains("Review main.rs for speed."), "{history}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn reload_picks_up_a_skill_written_while_running() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("ok")]);
    let mut tui = sandbox.spawn(&[], 120, 30);
    tui.wait_for_text("mock-model");
    tui.send("/skill:");
    tui.wait_for("no skill offered yet", |s| !s.contains("/skill:fresh"));
    tui.send("\x15");
    write(
        &sandbox.agent.join("skills").join("fresh").join("SKILL.md"),
        "---\ndescription: Written after start-up\n---\nFresh steps.\n",
    );
    tui.submit("/reload");
    tui.wait_for_text("Reloaded keybindings, skills, prompt templates and context files: 1 skill");
    tui.send("/skill:fr");
    tui.wait_for_text("[u] Written after start-up");
    tui.send("\x15");
    tui.submit("/skill:fresh now");
    // The transcript folds the skill's instructions to one line, then shows the message.
    let screen = tui.wait_for_text("fresh (ctrl+o to expand)");
    assert!(!screen.contains("Fresh steps."), "{screen}");
    tui.wait_for_text("ok");
    let texts: Vec<String> = sandbox
        .server()
        .requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().unwrap().clone())
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            other => other[0]["text"].as_str().unwrap_or_default().to_owned(),
        })
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("Fresh steps.") && t.ends_with("now")),
        "{texts:?}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
