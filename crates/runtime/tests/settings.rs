#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Settings files, merge rules and trust gating (spec/settings.md).

use std::path::Path;

use knightcode_runtime::Settings;
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
    assert_eq!(settings.default_model(), Some("b"));
    assert_eq!(settings.get("retry.enabled"), Some(&json!(true)));
    assert_eq!(settings.retry().max_retries, 1);
    assert_eq!(settings.get("enabledModels"), Some(&json!(["z"])));
    assert_eq!(settings.steering_mode(), "one-at-a-time", "null is skipped");
}

#[test]
fn global_only_keys_ignore_the_project() {
    let settings = layers(
        json!({}),
        json!({"defaultProjectTrust": "always", "httpProxy": "http://evil"}),
    );
    assert_eq!(settings.default_project_trust(), "ask");
    assert_eq!(settings.get("httpProxy"), None);
}

#[test]
fn default_tools_resolution() {
    assert_eq!(
        layers(json!({}), json!({})).default_tools(),
        ["read", "bash", "edit", "write"]
    );
    assert_eq!(
        layers(json!({"defaultTools": ["+grep", "-bash"]}), json!({})).default_tools(),
        ["read", "edit", "write", "grep"]
    );
    assert_eq!(
        layers(
            json!({"defaultTools": ["read", "ls"]}),
            json!({"defaultTools": ["+find"]})
        )
        .default_tools(),
        ["read", "ls", "find"],
        "a project list of only modifiers extends the global list"
    );
    assert_eq!(
        layers(
            json!({"defaultTools": ["read", "ls"]}),
            json!({"defaultTools": ["bash"]})
        )
        .default_tools(),
        ["bash"]
    );
    assert!(
        layers(json!({"defaultTools": []}), json!({}))
            .default_tools()
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
    assert_eq!(settings.steering_mode(), "all");
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
        Settings::load(agent.path(), project.path(), false).default_model(),
        Some("g")
    );
    let trusted = Settings::load(agent.path(), project.path(), true);
    assert_eq!(trusted.default_model(), Some("p"));
    assert!(trusted.has_project_settings());
    // sessionDir is read before trust is known.
    assert_eq!(
        bootstrap_session_dir(agent.path(), project.path()).as_deref(),
        Some("here")
    );

    write(
        &project.path().join(".knightcode/settings.json"),
        "{ not json",
    );
    let broken = Settings::load(agent.path(), project.path(), true);
    assert_eq!(broken.default_model(), Some("g"));
    assert_eq!(broken.diagnostics().len(), 1);
    assert!(
        broken.diagnostics()[0]
            .to_string()
            .contains("ignoring project settings")
    );
}
