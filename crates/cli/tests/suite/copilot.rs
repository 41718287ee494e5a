//! GitHub Copilot: `knightcode auth login github-copilot` through a stand-in for GitHub's
//! device flow and Copilot's token endpoint (approval, `slow_down`, denial, expiry), the
//! login stored as pi stores it, refreshed when it lapses, and the requests carrying the
//! headers pi sends (recorded from pi by `scripts/pi/record-copilot.sh`).

use crate::oneshot_common;

use knightcode_ai::copilot::COPILOT_API_URL_ENV;
use knightcode_ai::copilot::COPILOT_TOKEN_URL_ENV;
use knightcode_ai::copilot::GITHUB_URL_ENV;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::oauth::GithubServer;
use knightcode_testkit::oauth::github::GITHUB_TOKEN;
use knightcode_testkit::oauth::github::Poll;
use knightcode_testkit::process::Dialogue;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use oneshot_common::Sandbox;
use serde_json::Value;
use serde_json::json;

fn sandbox() -> Sandbox {
    Sandbox::with_url("http://127.0.0.1:9", crate::common::Models::Single)
}

fn auth_json(sb: &Sandbox) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sb.agent.join("auth.json")).unwrap()).unwrap()
}

/// `auth login github-copilot` against `github`, answering the host prompt with `host`.
fn login(sb: &Sandbox, github: &GithubServer, host: &str) -> (bool, String, String) {
    let mut command = sb.command(&["auth", "login", "github-copilot"]);
    command
        .env(GITHUB_URL_ENV, github.url())
        .env(COPILOT_TOKEN_URL_ENV, github.copilot_token_url())
        .env(COPILOT_API_URL_ENV, github.url());
    let mut dialogue =
        Dialogue::spawn(&mut command, "knightcode auth login github-copilot").unwrap();
    dialogue.write_line(host).unwrap();
    let (status, stdout, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    (status.success(), stdout, stderr)
}

fn copilot_models() -> usize {
    knightcode_ai::models::builtin_models()
        .iter()
        .filter(|m| m.provider == "github-copilot")
        .count()
}

#[test]
fn a_device_login_is_stored_as_pi_stores_it_and_used_for_requests() {
    let github = GithubServer::start(vec![Poll::Pending, Poll::Approved], 60).unwrap();
    let sb = sandbox();
    let (ok, stdout, stderr) = login(&sb, &github, "");
    assert!(ok, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("GitHub Enterprise URL/domain (blank for github.com) [company.ghe.com]: "),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "Open https://github.com/login/device in your browser and enter code: ABCD-1234"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("Logged in to GitHub Copilot. Credentials saved to"),
        "{stdout}"
    );
    assert_eq!(github.polls(), 2, "pending, then approved");
    let token_request = &github.token_requests()[0];
    let header = |name: &str| {
        token_request
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("editor-version"), Some("vscode/1.107.0"));
    assert_eq!(header("copilot-integration-id"), Some("vscode-chat"));
    assert_eq!(header("user-agent"), Some("GitHubCopilotChat/0.35.0"));
    // Every catalog model is switched on, as pi does after a login.
    assert_eq!(github.enabled_models().len(), copilot_models());

    let entry = &auth_json(&sb)["github-copilot"];
    let keys: Vec<&String> = entry.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "refresh", "access", "expires"]);
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["refresh"], GITHUB_TOKEN);
    assert_eq!(entry["access"], GithubServer::copilot_token(1));
    let expires = entry["expires"].as_i64().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // 30 minutes, less pi's five-minute margin.
    assert!(
        (expires - now - 25 * 60_000).abs() < 60_000,
        "{expires} vs {now}"
    );

    // The login is what the next request sends, with Copilot's headers.
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .unwrap();
    let output = oneshot_common::command(&sb, &["-p", "--model", "github-copilot/gpt-4o", "hi"])
        .env(COPILOT_API_URL_ENV, server.base_url())
        .output_within(PROCESS_LIMIT, "knightcode -p")
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sent = &server.requests()[0];
    let bearer = format!("Bearer {}", GithubServer::copilot_token(1));
    assert_eq!(sent.header("authorization"), Some(bearer.as_str()));
    assert_eq!(sent.header("x-initiator"), Some("user"));
    assert_eq!(sent.header("openai-intent"), Some("conversation-edits"));
    assert_eq!(sent.header("editor-version"), Some("vscode/1.107.0"));
}

#[test]
fn slow_down_stretches_the_wait_and_an_enterprise_host_is_kept() {
    let github = GithubServer::start(vec![Poll::SlowDown(Some(1)), Poll::Approved], 60).unwrap();
    let sb = sandbox();
    let (ok, stdout, stderr) = login(&sb, &github, "https://company.ghe.com/some/page");
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(github.polls(), 2);
    let entry = &auth_json(&sb)["github-copilot"];
    assert_eq!(entry["enterpriseUrl"], "company.ghe.com");
    assert_eq!(entry["refresh"], GITHUB_TOKEN);
}

#[test]
fn a_denied_an_expired_or_a_lapsed_code_says_so_and_stores_nothing() {
    let cases = [
        (
            Poll::Error("access_denied".into()),
            60,
            "GitHub denied the authorization",
        ),
        (
            Poll::Error("expired_token".into()),
            60,
            "The device code expired before it was approved",
        ),
        (Poll::Pending, 1, "Device flow timed out"),
    ];
    for (poll, expires_in, says) in cases {
        let github = GithubServer::start(vec![poll], expires_in).unwrap();
        let sb = sandbox();
        let (ok, stdout, stderr) = login(&sb, &github, "");
        assert!(!ok, "{stdout}");
        assert!(
            stderr.contains(&format!("Error: Failed to login to GitHub Copilot: {says}")),
            "{stderr}"
        );
        assert!(!sb.agent.join("auth.json").exists());
    }
    // A host that is no host is refused before GitHub is asked.
    let github = GithubServer::start(vec![Poll::Approved], 60).unwrap();
    let sb = sandbox();
    let (ok, _, stderr) = login(&sb, &github, "https://");
    assert!(!ok);
    assert!(
        stderr.contains("Invalid GitHub Enterprise URL/domain"),
        "{stderr}"
    );
    assert!(github.log().is_empty(), "{:?}", github.log());
}

#[test]
fn an_expired_copilot_token_is_traded_again_for_the_stored_github_token() {
    let github = GithubServer::start(vec![Poll::Approved], 60).unwrap();
    let server = MockServer::start_blocking(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("hello")],
    )
    .unwrap();
    let sb = sandbox();
    let auth = json!({"github-copilot": {"type": "oauth", "refresh": GITHUB_TOKEN,
        "access": "tid=old;proxy-ep=proxy.old.test", "expires": 1,
        "enterpriseUrl": "company.ghe.com"}});
    std::fs::write(sb.agent.join("auth.json"), auth.to_string()).unwrap();
    let output = oneshot_common::command(
        &sb,
        &[
            "-p",
            "--model",
            "github-copilot/claude-sonnet-4.5",
            "say hello",
        ],
    )
    .env(COPILOT_TOKEN_URL_ENV, github.copilot_token_url())
    .env(COPILOT_API_URL_ENV, server.base_url())
    .output_within(PROCESS_LIMIT, "knightcode -p")
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "hello");
    assert_eq!(github.token_requests().len(), 1);
    let entry = &auth_json(&sb)["github-copilot"];
    assert_eq!(entry["access"], GithubServer::copilot_token(1));
    assert_eq!(entry["refresh"], GITHUB_TOKEN);
    assert_eq!(entry["enterpriseUrl"], "company.ghe.com");
    assert!(entry["expires"].as_i64().unwrap() > 1);
    // Anthropic's format with Copilot's bearer token, not an API key.
    let sent = &server.requests()[0];
    let bearer = format!("Bearer {}", GithubServer::copilot_token(1));
    assert_eq!(sent.header("authorization"), Some(bearer.as_str()));
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(sent.header("x-initiator"), Some("user"));
    assert_eq!(sent.header("copilot-integration-id"), Some("vscode-chat"));
}

/// The headers of a request that `scripts/pi/record-copilot.sh` keeps.
fn shape(request: &knightcode_testkit::RecordedRequest) -> Value {
    const KEPT: [&str; 13] = [
        "accept",
        "anthropic-beta",
        "anthropic-dangerous-direct-browser-access",
        "authorization",
        "content-type",
        "copilot-integration-id",
        "copilot-vision-request",
        "editor-plugin-version",
        "editor-version",
        "openai-intent",
        "user-agent",
        "x-api-key",
        "x-initiator",
    ];
    let headers: serde_json::Map<String, Value> = KEPT
        .iter()
        .map(|name| ((*name).to_owned(), json!(request.header(name))))
        .collect();
    json!({"path": request.path, "headers": headers})
}

/// A 1x1 PNG, as the recording attaches it.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// The conversations of pi's recording, for each API Copilot's models use: a tool call and
/// an answer, with the GitHub token from the environment; and a prompt with an image.
#[test]
fn the_requests_carry_the_headers_pi_sends() {
    use base64::Engine as _;
    let tool_turns = || {
        vec![
            ScriptedReply::tool_call("call_1", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("The file says hello."),
        ]
    };
    for (format, model, name, image) in [
        (
            WireFormat::AnthropicMessages,
            "claude-sonnet-4.5",
            "anthropic-messages",
            false,
        ),
        (
            WireFormat::OpenAiCompletions,
            "gpt-4o",
            "openai-completions",
            false,
        ),
        (
            WireFormat::OpenAiResponses,
            "gpt-5-mini",
            "openai-responses",
            false,
        ),
        (WireFormat::OpenAiCompletions, "gpt-4o", "vision", true),
    ] {
        let replies = match image {
            true => vec![ScriptedReply::text("A white pixel.")],
            false => tool_turns(),
        };
        let server = MockServer::start_blocking(format, replies).unwrap();
        let sb = oneshot_common::sandbox(&server);
        let models = json!({"providers": {"github-copilot": {"baseUrl": server.base_url()}}});
        std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
        let model = format!("github-copilot/{model}");
        let png = base64::engine::general_purpose::STANDARD
            .decode(PIXEL)
            .unwrap();
        std::fs::write(sb.project.join("pixel.png"), png).unwrap();
        let mut args = vec!["-p", "--model", &model];
        if image {
            args.push("@pixel.png");
        }
        args.push("What does notes.txt say?");
        let output = oneshot_common::command(&sb, &args)
            .env("COPILOT_GITHUB_TOKEN", "gho_fixture_token")
            .output_within(PROCESS_LIMIT, "knightcode")
            .unwrap();
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let ours: Vec<Value> = server.requests().iter().map(shape).collect();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../fixtures/pi/copilot/{name}.json"));
        let theirs: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(Value::Array(ours), theirs, "{name}");
    }
}
