#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Project trust without a prompt (spec/seed/security.md).

use knightcode_runtime::TrustStore;
use knightcode_runtime::settings::DefaultProjectTrust;
use knightcode_runtime::trust::TrustSource;
use knightcode_runtime::trust::protected_resources;
use knightcode_runtime::trust::resolve_non_interactive;

#[test]
fn a_bare_dot_dir_needs_no_decision() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".knightcode")).unwrap();
    assert!(protected_resources(project.path(), None).is_empty());
    let store = TrustStore::default();
    let decision =
        resolve_non_interactive(project.path(), None, None, &store, DefaultProjectTrust::Ask);
    assert!(decision.trusted);
    assert_eq!(decision.source, TrustSource::NothingToProtect);
}

#[test]
fn decision_order_cli_then_saved_then_default() {
    let agent = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("work/project");
    std::fs::create_dir_all(project.join(".knightcode")).unwrap();
    std::fs::write(project.join(".knightcode/settings.json"), "{}").unwrap();
    let home = tempfile::tempdir().unwrap();

    let mut store = TrustStore::load(agent.path()).unwrap();
    let ask = resolve_non_interactive(
        &project,
        Some(home.path()),
        None,
        &store,
        DefaultProjectTrust::Ask,
    );
    assert!(!ask.trusted, "ask without a UI skips");
    let notice = ask.skipped_notice(&project).unwrap();
    assert!(notice.contains(".knightcode/settings.json"), "{notice}");
    assert!(notice.contains("--approve"), "{notice}");
    assert!(
        resolve_non_interactive(
            &project,
            Some(home.path()),
            None,
            &store,
            DefaultProjectTrust::Always
        )
        .trusted
    );
    assert!(
        !resolve_non_interactive(
            &project,
            Some(home.path()),
            None,
            &store,
            DefaultProjectTrust::Never
        )
        .trusted
    );

    // A saved decision for an ancestor applies; the nearest one wins.
    store.set(&root.path().join("work"), Some(true)).unwrap();
    let reloaded = TrustStore::load(agent.path()).unwrap();
    assert!(
        resolve_non_interactive(
            &project,
            Some(home.path()),
            None,
            &reloaded,
            DefaultProjectTrust::Never
        )
        .trusted
    );
    store.set(&project, Some(false)).unwrap();
    let reloaded = TrustStore::load(agent.path()).unwrap();
    let decision = resolve_non_interactive(
        &project,
        Some(home.path()),
        None,
        &reloaded,
        DefaultProjectTrust::Always,
    );
    assert!(!decision.trusted);
    assert!(matches!(decision.source, TrustSource::Saved(_)));

    // The command line beats everything.
    assert!(
        resolve_non_interactive(
            &project,
            Some(home.path()),
            Some(true),
            &reloaded,
            DefaultProjectTrust::Never
        )
        .trusted
    );

    let text = std::fs::read_to_string(TrustStore::path_in(agent.path())).unwrap();
    assert!(text.ends_with("}\n"));
    assert!(text.contains(": true") && text.contains(": false"));
}

#[test]
fn invalid_trust_stores_are_reported() {
    let agent = tempfile::tempdir().unwrap();
    std::fs::write(TrustStore::path_in(agent.path()), r#"{"/a": "yes"}"#).unwrap();
    let error = TrustStore::load(agent.path()).unwrap_err().to_string();
    assert!(
        error.contains(r#"value for "/a" must be true, false, or null"#),
        "{error}"
    );
    std::fs::write(TrustStore::path_in(agent.path()), "[1]").unwrap();
    assert!(
        TrustStore::load(agent.path())
            .unwrap_err()
            .to_string()
            .contains("expected an object")
    );
    std::fs::write(TrustStore::path_in(agent.path()), "{").unwrap();
    assert!(
        TrustStore::load(agent.path())
            .unwrap_err()
            .to_string()
            .starts_with("Failed to read trust store")
    );
}

#[test]
fn agents_skills_in_an_ancestor_is_protected_but_not_the_users_own() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".agents/skills")).unwrap();
    let project = home.path().join("code/app");
    std::fs::create_dir_all(&project).unwrap();
    assert!(protected_resources(&project, Some(home.path())).is_empty());
    std::fs::create_dir_all(home.path().join("code/.agents/skills")).unwrap();
    assert_eq!(protected_resources(&project, Some(home.path())).len(), 1);
}
