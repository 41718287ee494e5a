//! `knightcode config` in a real pseudo-terminal: the list, filtering, a switch written to
//! the settings file at once, Tab between the user's and the project's settings, `-l`, and
//! then a real run that loads or skips what was switched.

use crate::package_fixtures;
use crate::tui_common;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;

use std::path::Path;

use knightcode_testkit::ScriptedReply;
use tui_common::Sandbox;

fn skill(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("SKILL.md"),
        format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo it.\n"),
    )
    .unwrap();
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `alpha` in the user's skills folder, `review.md` in the user's prompts, and a package
/// folder with the skill `shared` in the user's settings.
fn resources(sandbox: &Sandbox) -> String {
    skill(&sandbox.agent.join("skills"), "alpha");
    std::fs::create_dir_all(sandbox.agent.join("prompts")).unwrap();
    std::fs::write(
        sandbox.agent.join("prompts/review.md"),
        "---\ndescription: Review\n---\nReview it.\n",
    )
    .unwrap();
    let pkg = sandbox.home.join("pkg");
    skill(&pkg.join("skills"), "shared");
    let source = pkg.to_string_lossy().into_owned();
    std::fs::write(
        sandbox.agent.join("settings.json"),
        serde_json::json!({"packages": [source]}).to_string(),
    )
    .unwrap();
    source
}

/// A print-mode run in the sandbox; the system prompt it sent.
fn system_prompt(sandbox: &Sandbox, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_knightcode"))
        .args(args)
        .args(["-p", "hi"])
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("KNIGHTCODE_CODING_AGENT_DIR", &sandbox.agent)
        .output_within(PROCESS_LIMIT, "knightcode -p")
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = sandbox.server().requests();
    requests.last().unwrap().body.to_string()
}

#[test]
fn the_global_screen_lists_filters_and_switches_a_skill_off_for_the_next_run() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("ok"); 2]);
    let source = resources(&sandbox);
    let mut tui = sandbox.spawn(&["config"], 100, 30);
    let screen = tui.wait_for_text("Global Resources");
    for text in [
        &format!("{source} (user)"),
        "Skills",
        "[x] shared",
        "[x] alpha",
        "Prompts",
        "[x] review.md",
        "tab switch mode · space toggle · esc close",
    ] {
        assert!(screen.contains(text), "{text:?} in\n{screen}");
    }
    // Packages come first; the cursor starts on the first item.
    assert!(screen.find("shared").unwrap() < screen.find("alpha").unwrap());
    assert!(screen.contains(">     [x] shared"), "{screen}");

    tui.send("rev");
    let screen = tui.wait_for("only the prompt left", |s| !s.contains("alpha"));
    assert!(
        screen.contains("review.md") && !screen.contains("shared"),
        "{screen}"
    );
    tui.send("\x7f\x7f\x7f");
    tui.wait_for_text("[x] alpha");
    // Down moves between items only (over the group and kind headings).
    tui.send("\x1b[B");
    tui.wait_for_text(">     [x] alpha");
    tui.send(" ");
    tui.wait_for_text(">     [ ] alpha");
    assert_eq!(
        json(&sandbox.agent.join("settings.json"))["skills"],
        serde_json::json!(["-skills/alpha/SKILL.md"])
    );
    // Enter switches too: the package's skill, in the package entry's object form.
    tui.send("\x1b[A\r");
    tui.wait_for_text(">     [ ] shared");
    assert_eq!(
        json(&sandbox.agent.join("settings.json"))["packages"],
        serde_json::json!([{"source": source, "skills": ["-skills/shared/SKILL.md"]}])
    );
    tui.send("\r");
    tui.wait_for_text(">     [x] shared");
    tui.send("\x1b");
    assert_eq!(tui.wait_exit(), 0);

    let prompt = system_prompt(&sandbox, &[]);
    assert!(!prompt.contains("<name>alpha</name>"), "{prompt}");
    assert!(prompt.contains("<name>shared</name>"), "{prompt}");
}

#[test]
fn project_mode_overrides_an_inherited_package_skill_for_this_project_only() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("ok"); 2]);
    let source = resources(&sandbox);
    skill(&sandbox.project.join(".knightcode/skills"), "local");
    let project_file = sandbox.project.join(".knightcode/settings.json");

    // Untrusted: nothing of the project is read, and the screen says so.
    let mut tui = sandbox.spawn(&["config", "-l"], 110, 30);
    let screen = tui.wait_for_text("Project Local Resources");
    assert!(
        screen.contains("This project is not trusted: its settings and folders are not read."),
        "{screen}"
    );
    assert!(!screen.contains("local"), "{screen}");
    tui.send("\t");
    tui.wait_for_text("Global Resources");
    tui.send("\x03");
    assert_eq!(tui.wait_exit(), 0);

    let mut tui = sandbox.spawn(&["config", "-l", "--approve"], 110, 30);
    let screen = tui.wait_for_text("Project Local Resources");
    assert!(
        screen.contains(&format!("{source} (user) · inherited global")),
        "{screen}"
    );
    assert!(screen.contains("Project (.knightcode/)"), "{screen}");
    assert!(screen.contains("[x] shared  inherited global"), "{screen}");
    // The inherited package skill is under the cursor: off for this project.
    tui.send(" ");
    tui.wait_for_text("[ ] shared  project override");
    assert_eq!(
        json(&project_file)["packages"],
        serde_json::json!([{"source": source, "autoload": false, "skills": ["-skills/shared/SKILL.md"]}])
    );
    // An inherited skill of the user's folder: its path and `-path` in the project's list.
    tui.send("alpha");
    tui.wait_for_text(">     [x] alpha  inherited global");
    tui.send(" ");
    tui.wait_for_text(">     [ ] alpha  project override");
    let alpha = sandbox.agent.join("skills/alpha/SKILL.md");
    let alpha = alpha.to_string_lossy();
    assert_eq!(
        json(&project_file)["skills"],
        serde_json::json!([format!("-{alpha}"), alpha])
    );
    tui.send(&"\x7f".repeat(5));
    // The user's settings still have both on.
    tui.send("\t");
    let screen = tui.wait_for_text("Global Resources");
    assert!(screen.contains("[x] shared"), "{screen}");
    assert!(screen.contains("[x] alpha"), "{screen}");
    assert!(!screen.contains("local"), "{screen}");
    tui.send("\x1b");
    assert_eq!(tui.wait_exit(), 0);
    assert_eq!(
        json(&sandbox.agent.join("settings.json"))["packages"],
        serde_json::json!([source])
    );

    let prompt = system_prompt(&sandbox, &["--approve"]);
    assert!(!prompt.contains("<name>shared</name>"), "{prompt}");
    assert!(!prompt.contains("<name>alpha</name>"), "{prompt}");
    assert!(prompt.contains("<name>local</name>"), "{prompt}");
    let prompt = system_prompt(&sandbox, &["--no-approve"]);
    assert!(prompt.contains("<name>shared</name>"), "{prompt}");
    assert!(prompt.contains("<name>alpha</name>"), "{prompt}");
}

#[test]
fn the_interactive_mode_installs_a_trusted_projects_missing_package_and_says_so() {
    let sandbox = tui_common::sandbox(vec![]);
    let redirect = package_fixtures::bare_repo(&sandbox.home);
    std::fs::create_dir_all(sandbox.project.join(".knightcode")).unwrap();
    std::fs::write(
        sandbox.project.join(".knightcode/settings.json"),
        r#"{"packages":["git:example.com/user/repo.git@v1"]}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn_with_env(&["--approve"], &redirect.pairs(), 120, 30);
    let screen =
        tui.wait_for_text("Installed the project package git:example.com/user/repo.git@v1");
    // git's own output stayed off the screen.
    assert!(!screen.contains("Cloning into"), "{screen}");
    assert!(
        sandbox
            .project
            .join(".knightcode/git/example.com/user/repo/skills/first/SKILL.md")
            .is_file()
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn switched_off_extensions_of_a_folder_and_a_package_do_not_load() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("ok")]);
    let extensions = sandbox.agent.join("extensions");
    std::fs::create_dir_all(extensions.join("folder")).unwrap();
    std::fs::write(
        extensions.join("hello.ts"),
        package_fixtures::tool_extension("hello_tool"),
    )
    .unwrap();
    std::fs::write(
        extensions.join("folder/index.ts"),
        package_fixtures::tool_extension("folder_tool"),
    )
    .unwrap();
    let pkg = sandbox.home.join("pkg");
    std::fs::create_dir_all(pkg.join("extensions")).unwrap();
    std::fs::write(
        pkg.join("extensions/pkg.ts"),
        package_fixtures::tool_extension("pkg_tool"),
    )
    .unwrap();
    std::fs::write(
        sandbox.agent.join("settings.json"),
        serde_json::json!({"packages": [pkg.to_string_lossy()]}).to_string(),
    )
    .unwrap();

    let mut tui = sandbox.spawn(&["config"], 100, 30);
    let screen = tui.wait_for_text("Global Resources");
    assert!(screen.contains("[x] folder/index.ts"), "{screen}");
    assert!(screen.contains("[x] hello.ts"), "{screen}");
    tui.send("folder");
    tui.wait_for_text(">     [x] folder/index.ts");
    tui.send(" ");
    tui.wait_for_text(">     [ ] folder/index.ts");
    tui.send(&"\x7f".repeat(6));
    tui.send("pkg.ts");
    tui.wait_for_text(">     [x] pkg.ts");
    tui.send(" ");
    tui.wait_for_text(">     [ ] pkg.ts");
    tui.send("\x1b");
    assert_eq!(tui.wait_exit(), 0);
    let saved = json(&sandbox.agent.join("settings.json"));
    assert_eq!(
        saved["extensions"],
        serde_json::json!(["-extensions/folder/index.ts"])
    );
    assert_eq!(
        saved["packages"][0]["extensions"],
        serde_json::json!(["-extensions/pkg.ts"])
    );

    let body = system_prompt(&sandbox, &[]);
    assert!(body.contains("\"hello_tool\""), "{body}");
    assert!(!body.contains("folder_tool"), "{body}");
    assert!(!body.contains("pkg_tool"), "{body}");
}
