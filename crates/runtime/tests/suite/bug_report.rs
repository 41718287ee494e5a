//! `/bug` reports: what goes into the zip, and that no credential does.

use std::io::Read as _;

use knightcode_runtime::bug_report::BugReportInput;
use knightcode_runtime::bug_report::REDACTED;

const ENV_KEY: &str = "sk-ant-env-0123456789abcdef";
const AUTH_KEY: &str = "sk-auth-json-secret-4242424242";
const OAUTH_REFRESH: &str = "refresh-token-from-oauth-77777";
const MODELS_KEY: &str = "sk-models-json-literal-9999";
const HEADER_VALUE: &str = "Bearer header-secret-31337";

fn unzip(path: &std::path::Path) -> Vec<(String, String)> {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
            (file.name().unwrap().into_owned(), text)
        })
        .collect()
}

#[test]
fn the_zip_holds_the_report_and_no_credential() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(
        agent.join("auth.json"),
        serde_json::json!({
            "anthropic": {"type": "api_key", "key": AUTH_KEY},
            "github-copilot": {"type": "oauth", "refresh": OAUTH_REFRESH, "access": "access-abcdef-123", "expires": 1}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        agent.join("models.json"),
        serde_json::json!({"providers": {"local": {
            "baseUrl": "http://127.0.0.1:8080/v1", "api": "openai-completions", "apiKey": MODELS_KEY,
            "headers": {"Authorization": HEADER_VALUE},
            "models": [{"id": "local-model"}]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        agent.join("settings.json"),
        r#"{"defaultProvider": "local", "defaultModel": "local-model"}"#,
    )
    .unwrap();
    let input = BugReportInput {
        description: Some("the footer flickers".to_owned()),
        agent_dir: agent,
        cwd: dir.path().to_owned(),
        env: vec![
            ("ANTHROPIC_API_KEY".to_owned(), ENV_KEY.to_owned()),
            ("TERM".to_owned(), "xterm-256color".to_owned()),
            ("HOME".to_owned(), "/home/someone".to_owned()),
        ],
        version: "0.1.0".to_owned(),
        model: Some("local/local-model".to_owned()),
        thinking: Some("medium".to_owned()),
        session_file: None,
        diagnostics: vec![format!("401 Unauthorized: invalid x-api-key {ENV_KEY}")],
        transcript: Some(format!(
            "{{\"type\":\"message\",\"text\":\"my key is {MODELS_KEY} and {AUTH_KEY}\"}}\n"
        )),
    };
    let files = knightcode_runtime::bug_report::build(&input);
    let zip = dir.path().join("out/report.zip");
    knightcode_runtime::bug_report::write_zip(&zip, &files).unwrap();

    let files = unzip(&zip);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "report.md",
            "environment.json",
            "settings.json",
            "models.json",
            "auth.json",
            "diagnostics.txt",
            "transcript.jsonl"
        ]
    );
    let raw = std::fs::read(&zip).unwrap();
    for secret in [
        ENV_KEY,
        AUTH_KEY,
        OAUTH_REFRESH,
        MODELS_KEY,
        HEADER_VALUE,
        "access-abcdef-123",
    ] {
        for (name, text) in &files {
            assert!(!text.contains(secret), "{secret} in {name}:\n{text}");
        }
        assert!(
            !raw.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} in the zip's bytes"
        );
    }
    let file = |name: &str| &files.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(file("report.md").contains("the footer flickers"));
    assert!(file("report.md").contains("local/local-model (thinking medium)"));
    assert!(file("environment.json").contains("\"ANTHROPIC_API_KEY\": \"(set)\""));
    assert!(file("environment.json").contains("xterm-256color"));
    assert!(
        !file("environment.json").contains("/home/someone"),
        "only named variables"
    );
    assert!(file("models.json").contains("http://127.0.0.1:8080/v1"));
    assert!(file("models.json").contains(REDACTED));
    assert!(file("auth.json").contains("\"type\": \"oauth\""));
    assert!(file("diagnostics.txt").contains("401 Unauthorized"));
    assert!(file("transcript.jsonl").contains("my key is <redacted>"));
}

#[test]
fn unreadable_configuration_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("models.json"), "{ not json").unwrap();
    let input = BugReportInput {
        agent_dir: dir.path().to_owned(),
        ..BugReportInput::default()
    };
    let files = knightcode_runtime::bug_report::build(&input);
    let report = &files[0].1;
    assert!(
        report.contains("models.json: could not be read: not valid JSON"),
        "{report}"
    );
    assert!(report.contains("auth.json: none"));
    assert!(report.contains("transcript: not included"));
}
