//! `knightcode config`'s model: what it lists, what a switch writes, and that the package
//! loading reads it back the same way (an `autoload: false` project entry as a delta).

use std::path::Path;

use knightcode_packages::Layout;
use knightcode_packages::Scope;
use knightcode_packages::resolve::Origin;
use knightcode_packages::resolve::resolve;
use knightcode_packages::toggle::toggle;

fn skill(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("SKILL.md"),
        format!("---\nname: {name}\ndescription: d\n---\n"),
    )
    .unwrap();
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn setup() -> (tempfile::TempDir, Layout) {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let cwd = root.path().join("project");
    skill(&agent.join("skills"), "mine");
    skill(&root.path().join("pkg/skills"), "shared");
    std::fs::create_dir_all(cwd.join(".knightcode")).unwrap();
    std::fs::write(agent.join("settings.json"), r#"{"packages":["../pkg"]}"#).unwrap();
    let layout = Layout {
        agent_dir: agent,
        cwd,
        home: None,
    };
    (root, layout)
}

fn state(layout: &Layout, project: bool, name: &str) -> Option<(bool, Scope)> {
    resolve(layout, project)
        .into_iter()
        .find(|r| r.display_name() == name)
        .map(|r| (r.enabled, r.scope))
}

fn package_skills(layout: &Layout, trusted: bool) -> Vec<String> {
    knightcode_packages::installed_resources(layout, trusted)
        .into_iter()
        .flat_map(|(_, r)| r.skills)
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn lists_packages_then_top_level_and_toggles_write_overrides() {
    let (root, layout) = setup();
    let all = resolve(&layout, false);
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(matches!(all[0].origin, Origin::Package { .. }));
    assert_eq!(all[0].display_name(), "shared");
    assert_eq!(all[1].origin, Origin::Auto);

    toggle(&layout, &all[1], Scope::User, false, None).unwrap();
    toggle(&layout, &all[0], Scope::User, false, None).unwrap();
    let user = json(&layout.agent_dir.join("settings.json"));
    assert_eq!(user["skills"], serde_json::json!(["-skills/mine/SKILL.md"]));
    assert_eq!(
        user["packages"],
        serde_json::json!([{"source": "../pkg", "skills": ["-skills/shared/SKILL.md"]}])
    );
    assert_eq!(state(&layout, false, "mine"), Some((false, Scope::User)));
    assert_eq!(state(&layout, false, "shared"), Some((false, Scope::User)));
    assert!(package_skills(&layout, false).is_empty());

    // On again: `+p` replaces `-p`.
    toggle(&layout, &all[1], Scope::User, true, None).unwrap();
    let user = json(&layout.agent_dir.join("settings.json"));
    assert_eq!(user["skills"], serde_json::json!(["+skills/mine/SKILL.md"]));
    drop(root);
}

#[test]
fn project_mode_writes_an_autoload_false_delta_over_the_user_package() {
    let (_root, layout) = setup();
    let project_file = layout.cwd.join(".knightcode/settings.json");
    let shared = resolve(&layout, true)
        .into_iter()
        .find(|r| r.display_name() == "shared")
        .unwrap();
    assert_eq!(shared.scope, Scope::User);

    toggle(&layout, &shared, Scope::Project, false, Some(true)).unwrap();
    assert_eq!(
        json(&project_file)["packages"],
        serde_json::json!([{"source": "../../pkg", "autoload": false, "skills": ["-skills/shared/SKILL.md"]}])
    );
    // The project skips it; the user's own runs (and an untrusted project) keep it.
    assert!(package_skills(&layout, true).is_empty());
    assert_eq!(package_skills(&layout, false).len(), 1);
    assert_eq!(state(&layout, true, "shared"), Some((false, Scope::User)));
    assert_eq!(state(&layout, false, "shared"), Some((true, Scope::User)));

    // Back to the inherited state: the delta goes.
    toggle(&layout, &shared, Scope::Project, true, Some(true)).unwrap();
    assert_eq!(json(&project_file)["packages"], serde_json::json!([]));
    assert_eq!(package_skills(&layout, true).len(), 1);

    // An inherited top-level resource: its path and the override in the project's list.
    let mine = resolve(&layout, true)
        .into_iter()
        .find(|r| r.display_name() == "mine")
        .unwrap();
    toggle(&layout, &mine, Scope::Project, false, Some(true)).unwrap();
    let path = mine.path.to_string_lossy().into_owned();
    assert_eq!(
        json(&project_file)["skills"],
        serde_json::json!([format!("-{path}"), path])
    );
    toggle(&layout, &mine, Scope::Project, true, Some(true)).unwrap();
    assert!(json(&project_file).get("skills").is_none());
}

#[test]
fn a_project_entry_replaces_the_users_unless_it_is_a_delta() {
    let (root, layout) = setup();
    skill(&root.path().join("pkg/skills"), "second");
    let project_file = layout.cwd.join(".knightcode/settings.json");
    std::fs::write(
        &project_file,
        r#"{"packages":[{"source":"../../pkg","skills":["second"]}]}"#,
    )
    .unwrap();
    let names = |trusted| -> Vec<String> {
        package_skills(&layout, trusted)
            .iter()
            .map(|p| p.rsplit('/').nth(1).unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(true), vec!["second"]);
    assert_eq!(package_skills(&layout, false).len(), 1);

    // A delta with no user entry under it loads only what it names.
    std::fs::write(agent_settings(&layout), "{}").unwrap();
    std::fs::write(
        &project_file,
        r#"{"packages":[{"source":"../../pkg","autoload":false,"skills":["+skills/second"]}]}"#,
    )
    .unwrap();
    assert_eq!(names(true), vec!["second"]);
}

fn agent_settings(layout: &Layout) -> std::path::PathBuf {
    layout.agent_dir.join("settings.json")
}

#[test]
fn missing_project_packages_leave_out_local_paths_and_deltas_over_the_users() {
    let (_root, layout) = setup();
    std::fs::write(
        layout.agent_dir.join("settings.json"),
        r#"{"packages":["npm:shared-pkg"]}"#,
    )
    .unwrap();
    std::fs::write(
        layout.cwd.join(".knightcode/settings.json"),
        r#"{"packages":["npm:team-pkg@1","./vendor",{"source":"npm:shared-pkg","autoload":false,"skills":["-x"]},{"source":"git:example.com/u/r","autoload":false}]}"#,
    )
    .unwrap();
    assert_eq!(
        knightcode_packages::missing_project_packages(&layout),
        ["npm:team-pkg@1", "git:example.com/u/r"]
    );
}
