#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn key(code: KeyCode) -> Key {
    Key::plain(code)
}

fn skill(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("SKILL.md"),
        format!("---\nname: {name}\ndescription: d\n---\n"),
    )
    .unwrap();
}

/// The user's skill `alpha`, folder extension and package `../pkg` (skill `shared`); the
/// project's prompt `p.md`.
fn layout(root: &Path) -> Layout {
    let agent = root.join("agent");
    skill(&agent.join("skills"), "alpha");
    std::fs::create_dir_all(agent.join("extensions/folder")).unwrap();
    std::fs::write(agent.join("extensions/folder/index.ts"), "").unwrap();
    skill(&root.join("pkg/skills"), "shared");
    std::fs::write(agent.join("settings.json"), r#"{"packages":["../pkg"]}"#).unwrap();
    let cwd = root.join("project");
    std::fs::create_dir_all(cwd.join(".knightcode/prompts")).unwrap();
    std::fs::write(cwd.join(".knightcode/prompts/p.md"), "Hi").unwrap();
    Layout {
        agent_dir: agent,
        cwd,
        home: Some(root.to_path_buf()),
    }
}

fn text(screen: &ConfigScreen) -> String {
    screen.render(72).join("\n")
}

#[test]
fn global_mode_groups_packages_first_and_moves_over_items_only() {
    let root = tempfile::tempdir().unwrap();
    let mut screen = ConfigScreen::new(layout(root.path()), true, false, Theme::plain());
    let bindings = Keybindings::defaults();
    let rule = "─".repeat(72);
    let expected = [
        "",
        &rule,
        "",
        "Global Resources              tab switch mode · space toggle · esc close",
        "~/agent/settings.json",
        "",
        // The search field, its cursor a space.
        ">  ",
        "",
        "  ../pkg (user)",
        "    Skills",
        ">     [x] shared",
        "  User (~/agent/)",
        "    Extensions",
        "      [x] folder/index.ts",
        "    Skills",
        "      [x] alpha",
        "",
        &rule,
    ]
    .join("\n");
    assert_eq!(text(&screen), expected);
    screen.handle_key(&key(KeyCode::Down), &bindings);
    assert!(text(&screen).contains(">     [x] folder/index.ts"));
    screen.handle_key(&key(KeyCode::Down), &bindings);
    screen.handle_key(&key(KeyCode::Down), &bindings);
    assert!(
        text(&screen).contains(">     [x] alpha"),
        "stays on the last"
    );
    screen.handle_key(&key(KeyCode::PageUp), &bindings);
    assert!(text(&screen).contains(">     [x] shared"));

    for c in "zzz".chars() {
        screen.handle_key(&key(KeyCode::Char(c)), &bindings);
    }
    assert!(text(&screen).contains("  No resources found"));
    assert_eq!(
        screen.handle_key(&key(KeyCode::Escape), &bindings),
        ConfigOutcome::Close
    );
}

#[test]
fn project_mode_dims_what_is_inherited_and_an_untrusted_project_is_not_read() {
    let root = tempfile::tempdir().unwrap();
    let layout = layout(root.path());
    let bindings = Keybindings::defaults();
    let mut screen = ConfigScreen::new(layout.clone(), true, true, Theme::plain());
    let shown = text(&screen);
    assert!(shown.contains("Project Local Resources"), "{shown}");
    assert!(
        shown.contains(".knightcode/settings.json · inherited global resources are dimmed"),
        "{shown}"
    );
    assert!(
        shown.contains("  ../pkg (user) · inherited global"),
        "{shown}"
    );
    assert!(
        shown.contains(">     [x] shared  inherited global"),
        "{shown}"
    );
    assert!(
        shown.contains("  Project (.knightcode/)\n    Prompts\n      [x] p.md"),
        "{shown}"
    );
    screen.handle_key(&key(KeyCode::Char(' ')), &bindings);
    assert!(text(&screen).contains(">     [ ] shared  project override"));
    screen.handle_key(&key(KeyCode::Tab), &bindings);
    assert_eq!(screen.mode(), Scope::User);
    assert!(text(&screen).contains(">     [x] shared"));

    let untrusted = ConfigScreen::new(layout, false, true, Theme::plain());
    let shown = text(&untrusted);
    assert!(
        shown.contains("This project is not trusted: its settings and folders are not read."),
        "{shown}"
    );
    assert!(!shown.contains("p.md"), "{shown}");
}

#[test]
fn an_inherited_top_level_override_stays_inherited_when_the_screen_opens_again() {
    let root = tempfile::tempdir().unwrap();
    let layout = layout(root.path());
    let bindings = Keybindings::defaults();
    let project_file = layout.cwd.join(".knightcode/settings.json");
    let open = || ConfigScreen::new(layout.clone(), true, true, Theme::plain());
    let mut screen = open();
    for c in "alpha".chars() {
        screen.handle_key(&key(KeyCode::Char(c)), &bindings);
    }
    assert!(text(&screen).contains(">     [x] alpha  inherited global"));
    screen.handle_key(&key(KeyCode::Enter), &bindings);
    assert!(text(&screen).contains(">     [ ] alpha  project override"));
    let written = std::fs::read_to_string(&project_file).unwrap();
    assert!(written.contains("\"-"), "{written}");

    let mut screen = open();
    for c in "alpha".chars() {
        screen.handle_key(&key(KeyCode::Char(c)), &bindings);
    }
    let shown = text(&screen);
    assert!(
        shown.contains("  User (~/agent/) · inherited global"),
        "{shown}"
    );
    assert!(
        shown.contains(">     [ ] alpha  project override"),
        "{shown}"
    );
    screen.handle_key(&key(KeyCode::Enter), &bindings);
    assert!(text(&screen).contains(">     [x] alpha  inherited global"));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&project_file).unwrap()).unwrap();
    assert_eq!(written, serde_json::json!({}), "the override went");
}
