//! Settings files, merge rules and trust gating (spec/settings.md).

use std::path::Path;

use knightcode_agent::QueueMode;
use knightcode_runtime::Settings;
use knightcode_runtime::settings::BootstrapSessionDir;
use knightcode_runtime::settings::DefaultProjectTrust;
use knightcode_runtime::settings::bootstrap_session_dir;
use serde_json::json;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn layers(global: serde_json::Value, project: serde_json::Value) -> Settings {
    Settings::from_layers(
        global.as_object().unwrap().clone(),
        project.as_object().unwrap().clone(),
    )
}

#[test]
fn project_overrides_global_objects_merge_and_arrays_replace() {
    let settings = layers(
        json!({"defaultModel": "a", "retry": {"enabled": true, "maxRetries": 5}, "enabledModels": ["x", "y"]}),
        json!({"defaultModel": "b", "retry": {"maxRetries": 1}, "enabledModels": ["z"], "steeringMode": null}),
    );
    assert_eq!(settings.values().default_model.as_deref(), Some("b"));
    assert_eq!(settings.get("retry.enabled"), Some(&json!(true)));
    assert_eq!(settings.values().retry.max_retries, 1);
    assert_eq!(settings.get("enabledModels"), Some(&json!(["z"])));
    assert_eq!(
        settings.values().steering_mode,
        QueueMode::OneAtATime,
        "null is skipped"
    );
}

#[test]
fn global_only_keys_ignore_the_project() {
    let settings = layers(
        json!({}),
        json!({"defaultProjectTrust": "always", "httpProxy": "http://evil"}),
    );
    assert_eq!(
        settings.values().default_project_trust,
        DefaultProjectTrust::Ask
    );
    assert_eq!(settings.get("httpProxy"), None);
}

#[test]
fn default_tools_resolution() {
    assert_eq!(
        layers(json!({}), json!({})).values().default_tools,
        ["read", "bash", "edit", "write"]
    );
    assert_eq!(
        layers(json!({"defaultTools": ["+grep", "-bash"]}), json!({}))
            .values()
            .default_tools,
        ["read", "edit", "write", "grep"]
    );
    assert_eq!(
        layers(
            json!({"defaultTools": ["read", "ls"]}),
            json!({"defaultTools": ["+find"]})
        )
        .values()
        .default_tools,
        ["read", "ls", "find"],
        "a project list of only modifiers extends the global list"
    );
    assert_eq!(
        layers(
            json!({"defaultTools": ["read", "ls"]}),
            json!({"defaultTools": ["bash"]})
        )
        .values()
        .default_tools,
        ["bash"]
    );
    assert!(
        layers(json!({"defaultTools": []}), json!({}))
            .values()
            .default_tools
            .is_empty()
    );
}

#[test]
fn legacy_keys_are_migrated() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("settings.json"),
        r#"{"queueMode":"all","websockets":true,"retry":{"maxDelayMs":5}}"#,
    );
    let settings = Settings::load(dir.path(), dir.path(), false);
    assert_eq!(settings.values().steering_mode, QueueMode::All);
    assert_eq!(settings.get("transport"), Some(&json!("websocket")));
    assert_eq!(
        settings.get("retry.provider.maxRetryDelayMs"),
        Some(&json!(5))
    );
}

#[test]
fn untrusted_projects_are_not_read_and_broken_files_are_diagnosed() {
    let agent = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        &agent.path().join("settings.json"),
        "\u{feff}{\"defaultModel\":\"g\"}",
    );
    write(
        &project.path().join(".knightcode/settings.json"),
        r#"{"defaultModel":"p","sessionDir":"here"}"#,
    );
    assert_eq!(
        Settings::load(agent.path(), project.path(), false)
            .values()
            .default_model
            .as_deref(),
        Some("g")
    );
    let trusted = Settings::load(agent.path(), project.path(), true);
    assert_eq!(trusted.values().default_model.as_deref(), Some("p"));
    assert!(trusted.has_project_settings());
    // The project's sessionDir counts only when the project is trusted before the session
    // starts; otherwise the global value (none here) applies and the project's is reported.
    let bootstrap = |approve| bootstrap_session_dir(agent.path(), project.path(), None, approve);
    assert_eq!(
        bootstrap(Some(true)),
        BootstrapSessionDir {
            dir: Some("here".to_owned()),
            ignored_project_dir: None,
        }
    );
    for untrusted in [Some(false), None] {
        assert_eq!(
            bootstrap(untrusted),
            BootstrapSessionDir {
                dir: None,
                ignored_project_dir: Some("here".to_owned()),
            },
            "--approve {untrusted:?}"
        );
    }

    write(
        &project.path().join(".knightcode/settings.json"),
        "{ not json",
    );
    let broken = Settings::load(agent.path(), project.path(), true);
    assert_eq!(broken.values().default_model.as_deref(), Some("g"));
    assert_eq!(broken.diagnostics().len(), 1);
    assert!(
        broken.diagnostics()[0]
            .to_string()
            .contains("ignoring project settings")
    );
}

#[test]
fn invalid_values_name_their_file_and_do_not_stop_writes() {
    let agent = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        &agent.path().join("settings.json"),
        r#"{"steeringMode":"both","defaultModel":"g"}"#,
    );
    write(
        &project.path().join(".knightcode/settings.json"),
        r#"{"compaction":{"enabled":"off"}}"#,
    );
    let settings = Settings::load(agent.path(), project.path(), true);
    assert_eq!(settings.values().default_model.as_deref(), Some("g"));
    assert_eq!(settings.values().steering_mode, QueueMode::OneAtATime);
    assert!(settings.values().compaction_enabled);
    let texts: Vec<String> = settings
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].starts_with(&format!(
            "global settings {}: steeringMode is \"both\"",
            agent.path().join("settings.json").display()
        )),
        "{texts:?}"
    );
    assert!(
        texts[1].starts_with(&format!(
            "project settings {}: compaction.enabled is \"off\", expected true or false",
            project.path().join(".knightcode/settings.json").display()
        )),
        "{texts:?}"
    );
    // Only an unreadable file keeps this process from writing it.
    assert!(!settings.global_file_unusable());

    // A value saved by this process replaces the invalid one, and its diagnostic.
    let fixed = settings.with_overrides(json!({"steeringMode": "all"}).as_object().unwrap());
    assert_eq!(fixed.values().steering_mode, QueueMode::All);
    assert_eq!(fixed.diagnostics().len(), 1);

    write(&agent.path().join("settings.json"), "{");
    assert!(Settings::load(agent.path(), project.path(), true).global_file_unusable());
}
