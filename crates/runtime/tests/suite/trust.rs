//! Project trust without a prompt (spec/seed/security.md).

use std::path::PathBuf;

use knightcode_runtime::TrustDecision;
use knightcode_runtime::TrustStore;
use knightcode_runtime::settings::DefaultProjectTrust;
use knightcode_runtime::trust::TrustResolution;
use knightcode_runtime::trust::TrustSource;
use knightcode_runtime::trust::protected_resources;
use knightcode_runtime::trust::resolve;
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

/// A project with a protected resource, a trust store in its own agent dir, and a home.
struct Folder {
    _root: tempfile::TempDir,
    agent: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

fn protected_folder() -> Folder {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let home = root.path().join("home");
    let project = root.path().join("work/project");
    std::fs::create_dir_all(project.join(".knightcode/extensions")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    Folder {
        _root: root,
        agent,
        home,
        project,
    }
}

impl Folder {
    fn resolve(
        &self,
        cli: Option<bool>,
        store: &TrustStore,
        default: DefaultProjectTrust,
    ) -> TrustResolution {
        resolve(&self.project, Some(&self.home), cli, store, default)
    }

    fn protected(&self) -> Vec<PathBuf> {
        vec![self.project.join(".knightcode/extensions")]
    }

    fn decided(&self, trusted: bool, source: TrustSource) -> TrustResolution {
        TrustResolution::Decided(TrustDecision {
            trusted,
            source,
            protected: self.protected(),
        })
    }
}

#[test]
fn resolve_the_command_line_comes_first() {
    let folder = protected_folder();
    let mut store = TrustStore::load(&folder.agent).unwrap();
    store.set(&folder.project, Some(false)).unwrap();
    assert_eq!(
        folder.resolve(Some(true), &store, DefaultProjectTrust::Never),
        folder.decided(true, TrustSource::CommandLine),
        "--approve beats a saved \"no\" and the setting"
    );
    let mut store = TrustStore::load(&folder.agent).unwrap();
    store.set(&folder.project, Some(true)).unwrap();
    assert_eq!(
        folder.resolve(Some(false), &store, DefaultProjectTrust::Always),
        folder.decided(false, TrustSource::CommandLine),
        "--no-approve beats a saved \"yes\" and the setting"
    );
}

#[test]
fn resolve_trusts_a_folder_with_nothing_to_protect_without_asking() {
    let folder = protected_folder();
    std::fs::remove_dir(folder.project.join(".knightcode/extensions")).unwrap();
    let resolution = folder.resolve(None, &TrustStore::default(), DefaultProjectTrust::Never);
    assert_eq!(
        resolution,
        TrustResolution::Decided(TrustDecision {
            trusted: true,
            source: TrustSource::NothingToProtect,
            protected: Vec::new(),
        })
    );
}

#[test]
fn resolve_a_saved_decision_beats_the_setting_and_the_nearest_wins() {
    let folder = protected_folder();
    let mut store = TrustStore::load(&folder.agent).unwrap();
    let work = folder.project.parent().unwrap().to_owned();
    store.set(&work, Some(false)).unwrap();
    let saved_work = TrustSource::Saved(std::fs::canonicalize(&work).unwrap());
    assert_eq!(
        folder.resolve(None, &store, DefaultProjectTrust::Always),
        folder.decided(false, saved_work),
        "an ancestor's decision applies"
    );
    store.set(&folder.project, Some(true)).unwrap();
    let saved_project = TrustSource::Saved(std::fs::canonicalize(&folder.project).unwrap());
    assert_eq!(
        folder.resolve(None, &store, DefaultProjectTrust::Ask),
        folder.decided(true, saved_project),
        "a saved decision means no question"
    );
}

#[test]
fn resolve_falls_back_to_default_project_trust() {
    let folder = protected_folder();
    let store = TrustStore::default();
    assert_eq!(
        folder.resolve(None, &store, DefaultProjectTrust::Always),
        folder.decided(
            true,
            TrustSource::DefaultSetting(DefaultProjectTrust::Always)
        )
    );
    assert_eq!(
        folder.resolve(None, &store, DefaultProjectTrust::Never),
        folder.decided(
            false,
            TrustSource::DefaultSetting(DefaultProjectTrust::Never)
        )
    );
    assert_eq!(
        folder.resolve(None, &store, DefaultProjectTrust::Ask),
        TrustResolution::Ask {
            protected: folder.protected()
        }
    );
}

#[test]
fn without_a_prompt_ask_means_not_trusted() {
    let folder = protected_folder();
    let store = TrustStore::default();
    let decision = resolve_non_interactive(
        &folder.project,
        Some(&folder.home),
        None,
        &store,
        DefaultProjectTrust::Ask,
    );
    assert_eq!(
        decision,
        TrustDecision {
            trusted: false,
            source: TrustSource::DefaultSetting(DefaultProjectTrust::Ask),
            protected: folder.protected(),
        }
    );
    let notice = decision.skipped_notice(&folder.project).unwrap();
    assert!(
        notice.contains("(defaultProjectTrust is \"ask\"); skipped .knightcode/extensions."),
        "{notice}"
    );
    // Every other outcome is the same with or without a prompt.
    let decided = folder.resolve(None, &store, DefaultProjectTrust::Never);
    let TrustResolution::Decided(decision) = decided.clone() else {
        panic!("never decides: {decided:?}");
    };
    assert_eq!(decided.without_prompt(), decision);
}
