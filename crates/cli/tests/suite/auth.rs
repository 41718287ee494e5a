//! `knightcode auth`: API keys typed in and stored as pi stores them, the Claude Pro/Max login
//! against a stand-in OAuth service (pasted code, loopback callback, refusals), the login then
//! used for requests, and `check` / `print-api-key` / `print-bearer-token` as cli.md §6 says.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::oauth::OAuthServer;
use knightcode_testkit::oauth::TokenAnswer;
use knightcode_testkit::oauth::browser_get;
use knightcode_testkit::process::Dialogue;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use oneshot_common::Sandbox;
use oneshot_common::knightcode;
use oneshot_common::with_input;
use serde_json::Value;
use serde_json::json;

fn sandbox() -> Sandbox {
    Sandbox::with_url("http://127.0.0.1:9", crate::common::Models::Single)
}

fn auth_json(sb: &Sandbox) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sb.agent.join("auth.json")).unwrap()).unwrap()
}

const PI_LOGIN: &str =
    r#"{"anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 99999999999999}}"#;

#[test]
fn an_api_key_is_stored_as_pi_stores_it_and_removed_again() {
    let sb = sandbox();
    std::fs::write(sb.agent.join("auth.json"), PI_LOGIN).unwrap();

    let (code, stdout, stderr) = with_input(&sb, &["auth", "login", "openai"], "sk-typed");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("Saved API key for OpenAI. Credentials saved to"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("sk-typed"),
        "the key is never echoed: {stdout}"
    );
    let stored = auth_json(&sb);
    assert_eq!(
        stored["openai"],
        json!({"type": "api_key", "key": "sk-typed"})
    );
    // The other entry is untouched.
    assert_eq!(stored["anthropic"]["refresh"], "r");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(sb.agent.join("auth.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let run = knightcode(&sb, &["auth", "print-api-key", "--provider", "openai"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "sk-typed\n"),
        "{}",
        run.stderr
    );
    let run = knightcode(&sb, &["auth", "check", "--provider", "openai"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, "ready\n"));
    let run = knightcode(
        &sb,
        &[
            "auth",
            "check",
            "--model",
            "gpt-5",
            "--json",
            "--credentials",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(&run.stdout).unwrap(),
        json!({"status": "ready", "provider": "openai", "authType": "api_key", "credentials": "sk-typed"})
    );

    let run = knightcode(&sb, &["auth", "logout", "openai"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "Removed stored API key for OpenAI. Environment variables and models.json config are unchanged.\n"
    );
    let stored = auth_json(&sb);
    assert!(stored.get("openai").is_none());
    assert_eq!(stored["anthropic"]["access"], "a");
    let run = knightcode(&sb, &["auth", "logout", "openai"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("Error: No stored credentials for \"openai\""),
        "{}",
        run.stderr
    );
}

#[test]
fn an_empty_key_or_an_unknown_provider_is_refused_and_nothing_is_written() {
    let sb = sandbox();
    let (code, _, stderr) = with_input(&sb, &["auth", "login", "openai"], "  ");
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "Error: Failed to save API key for OpenAI: API key cannot be empty.\n"
    );
    let (code, _, stderr) = with_input(&sb, &["auth", "login", "no-such"], "k");
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("Error: Unknown provider \"no-such\""),
        "{stderr}"
    );
    let run = knightcode(&sb, &["auth", "login"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("knightcode auth login <provider>"),
        "{}",
        run.stderr
    );
    let run = knightcode(&sb, &["auth", "login", "amazon-bedrock"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("AWS credentials"), "{}", run.stderr);
    assert!(!sb.agent.join("auth.json").exists());
}

#[test]
fn check_and_print_answer_with_the_references_words_and_exit_codes() {
    let sb = sandbox();
    let run = knightcode(&sb, &["auth", "check", "--provider", "openai"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, "not_ready\n"));
    let run = knightcode(&sb, &["auth", "check", "--provider", "nope", "--json"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "{\"status\":\"not_ready\",\"provider\":\"nope\",\"reason\":\"provider_not_found\"}\n"
    );
    // The mock provider's key comes from models.json.
    let run = knightcode(&sb, &["auth", "check", "--provider", "mock", "--json"]);
    assert_eq!(
        run.stdout,
        "{\"status\":\"ready\",\"provider\":\"mock\",\"authType\":\"api_key\"}\n"
    );
    let run = knightcode(&sb, &["auth", "check"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "Error: Auth checks require --provider <provider> or --model <model>\n"
    );
    let run = knightcode(&sb, &["auth", "print-api-key"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Error: Credential printing requires --provider <provider> or --model <model>\n"
    );
    let run = knightcode(
        &sb,
        &["auth", "print-api-key", "--provider", "openai", "--json"],
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Error: --json is only supported by auth check\n"
    );
    let run = knightcode(&sb, &["auth", "frobnicate"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("Error: Unknown auth command \"frobnicate\"")
    );
    std::fs::write(sb.agent.join("auth.json"), PI_LOGIN).unwrap();
    let run = knightcode(&sb, &["auth", "print-api-key", "--provider", "anthropic"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Error: Provider \"anthropic\" is configured with OAuth, not an API key\n"
    );
    let run = knightcode(
        &sb,
        &["auth", "print-bearer-token", "--provider", "anthropic"],
    );
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "a\n"),
        "{}",
        run.stderr
    );
    let run = knightcode(&sb, &["auth", "check", "--provider", "anthropic", "--json"]);
    assert_eq!(
        run.stdout,
        "{\"status\":\"ready\",\"provider\":\"anthropic\",\"authType\":\"oauth\"}\n"
    );
}

fn tokens() -> TokenAnswer {
    TokenAnswer::Tokens {
        access: "sk-ant-oat01-login".into(),
        refresh: "sk-ant-ort01-login".into(),
        expires_in: 3600,
    }
}

/// `auth login anthropic` against `service`, up to the printed authorize address.
fn start_login(sb: &Sandbox, service: &OAuthServer) -> (Dialogue, String) {
    let mut command = sb.command(&["auth", "login", "anthropic"]);
    command
        .env(
            "KNIGHTCODE_ANTHROPIC_OAUTH_AUTHORIZE_URL",
            service.authorize_url(),
        )
        .env(knightcode_ai::ANTHROPIC_TOKEN_URL_ENV, service.token_url())
        .env("KNIGHTCODE_OAUTH_CALLBACK_PORT", "0");
    let mut dialogue = Dialogue::spawn(&mut command, "knightcode auth login anthropic").unwrap();
    let authorize = service.authorize_url();
    let url = dialogue
        .wait_for_line(PROCESS_LIMIT, "the authorize address", |l| {
            l.starts_with(&authorize)
        })
        .unwrap();
    (dialogue, url)
}

fn query_param(url: &str, name: &str) -> String {
    let query = url.split_once('?').unwrap().1;
    query
        .split('&')
        .find_map(|p| p.strip_prefix(&format!("{name}=")))
        .unwrap()
        .to_owned()
}

#[test]
fn a_subscription_login_with_a_pasted_code_is_stored_and_used_for_requests() {
    let service = OAuthServer::start(tokens()).unwrap();
    let server = MockServer::start_blocking(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("hello")],
    )
    .unwrap();
    let sb = Sandbox::with_url(&server.base_url(), crate::common::Models::Single);
    let (mut dialogue, url) = start_login(&sb, &service);
    for (name, value) in [
        ("client_id", "9d1c250a-e61b-44d9-88ed-5944d1962f5e"),
        ("response_type", "code"),
        ("code_challenge_method", "S256"),
        ("code", "true"),
    ] {
        assert_eq!(query_param(&url, name), value, "{url}");
    }
    assert!(
        url.contains("scope=org%3Acreate_api_key+user%3Aprofile+user%3Ainference"),
        "{url}"
    );
    // The browser is elsewhere: the page shows `code#state`, which is pasted.
    let (status, _, shown) = browser_get(&url).unwrap();
    assert_eq!(status, 302);
    dialogue.write_line(&shown).unwrap();
    let (status, stdout, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    assert!(status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("Logged in to Anthropic (Claude Pro/Max). Credentials saved to"),
        "{stdout}"
    );

    let exchange = &service.exchanges()[0];
    assert_eq!(exchange["grant_type"], "authorization_code");
    assert_eq!(exchange["code"], "code-1");
    assert_eq!(exchange["state"], query_param(&url, "state"));
    let entry = &auth_json(&sb)["anthropic"];
    let keys: Vec<&String> = entry.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "refresh", "access", "expires"]);
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], "sk-ant-oat01-login");
    assert!(entry["expires"].as_i64().unwrap() > 0);

    // The login is what the next request sends.
    let models = json!({"providers": {"anthropic": {"baseUrl": server.base_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    let output =
        oneshot_common::command(&sb, &["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"])
            .output_within(PROCESS_LIMIT, "knightcode -p")
            .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-ant-oat01-login")
    );
}

#[test]
fn a_subscription_login_completes_through_the_loopback_callback() {
    let service = OAuthServer::start(tokens()).unwrap();
    let sb = sandbox();
    let (dialogue, url) = start_login(&sb, &service);
    let (_, location, _) = browser_get(&url).unwrap();
    let location = location.unwrap();
    assert!(location.starts_with("http://localhost:"), "{location}");
    let (status, _, page) = browser_get(&location).unwrap();
    assert_eq!(status, 200);
    assert!(
        page.contains("Anthropic authentication completed"),
        "{page}"
    );
    let (status, stdout, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    assert!(status.success(), "{stdout}\n{stderr}");
    assert_eq!(auth_json(&sb)["anthropic"]["refresh"], "sk-ant-ort01-login");
}

#[test]
fn a_refused_exchange_or_a_foreign_code_says_so_and_stores_nothing() {
    let refusal = TokenAnswer::Refuse {
        status: 400,
        body: r#"{"error":"invalid_grant"}"#.into(),
    };
    let service = OAuthServer::start(refusal).unwrap();
    let sb = sandbox();
    let (mut dialogue, url) = start_login(&sb, &service);
    let (_, _, shown) = browser_get(&url).unwrap();
    dialogue.write_line(&shown).unwrap();
    let (status, _, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.starts_with(
            "Error: Failed to login to Anthropic (Claude Pro/Max): The login service at"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("refused the code (400: {\"error\":\"invalid_grant\"})"),
        "{stderr}"
    );
    assert!(!sb.agent.join("auth.json").exists());

    // A code from another attempt (its state differs) is not sent at all.
    let service = OAuthServer::start(tokens()).unwrap();
    let (mut dialogue, _) = start_login(&sb, &service);
    dialogue.write_line("code-1#some-other-state").unwrap();
    let (status, _, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains("belongs to another login attempt"),
        "{stderr}"
    );
    assert!(service.exchanges().is_empty());
}

#[test]
fn a_bearer_token_about_to_lapse_is_refreshed_before_it_is_printed() {
    let service = OAuthServer::start(tokens()).unwrap();
    let sb = sandbox();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let soon = json!({"anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-old",
                                    "access": "sk-ant-oat01-old", "expires": now + 10 * 60_000}});
    std::fs::write(sb.agent.join("auth.json"), soon.to_string()).unwrap();
    let print = |args: &[&str]| {
        let mut all = vec!["auth", "print-bearer-token", "--provider", "anthropic"];
        all.extend_from_slice(args);
        let output = sb
            .command(&all)
            .env(knightcode_ai::ANTHROPIC_TOKEN_URL_ENV, service.token_url())
            .output_within(PROCESS_LIMIT, "knightcode auth print-bearer-token")
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    // Ten minutes left is enough for five.
    assert_eq!(print(&["--min-expiry", "5m"]), "sk-ant-oat01-old\n");
    assert!(service.exchanges().is_empty());
    // Not for the default thirty.
    assert_eq!(print(&[]), "sk-ant-oat01-login\n");
    assert_eq!(service.exchanges()[0]["grant_type"], "refresh_token");
    assert_eq!(auth_json(&sb)["anthropic"]["access"], "sk-ant-oat01-login");
}

/// Another process (ours or pi) writing `auth.json` while a login is stored holds the file's
/// lock: the login waits for it and writes on top of what that process wrote.
#[test]
fn a_login_waits_for_the_lock_and_keeps_what_another_process_wrote() {
    let sb = sandbox();
    let lock = sb.agent.join("auth.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let mut dialogue =
        Dialogue::spawn(&mut sb.command(&["auth", "login", "groq"]), "login").unwrap();
    dialogue.write_line("gsk-typed").unwrap();
    std::fs::write(sb.agent.join("auth.json"), PI_LOGIN).unwrap();
    std::fs::remove_dir(&lock).unwrap();
    let (status, stdout, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    assert!(status.success(), "{stdout}\n{stderr}");
    let stored = auth_json(&sb);
    assert_eq!(stored["groq"]["key"], "gsk-typed");
    assert_eq!(stored["anthropic"]["refresh"], "r");
    assert!(!lock.exists());
}
