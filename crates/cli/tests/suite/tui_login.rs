//! `/login` and `/logout` in the terminal interface (issue 33 item 1): the reference's steps
//! (the kind of login, the provider, then a key typed unseen or the browser login), the
//! result in `auth.json` in the reference's shape, the provider's models usable at once, and
//! escape writing nothing.

use crate::tui_common;

use knightcode_testkit::ScriptedReply;
use knightcode_testkit::oauth::OAuthServer;
use knightcode_testkit::oauth::TokenAnswer;
use knightcode_testkit::oauth::browser_get;
use serde_json::Value;
use serde_json::json;

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";
const ESCAPE: &str = "\x1b";

fn auth_json(sandbox: &tui_common::Sandbox) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sandbox.agent.join("auth.json")).unwrap())
        .unwrap()
}

/// Escape is ambiguous until more bytes come or the terminal layer's short wait ends; a
/// test that sends one waits for what it does on screen before sending more.
fn escape(tui: &mut tui_common::Tui, then: &str) {
    tui.send(ESCAPE);
    tui.wait_for_text(then);
}

#[test]
fn a_key_typed_into_login_is_saved_unseen_and_the_next_prompt_uses_it() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("answered with the new key")]);
    tui_common::without_credentials(&sandbox);
    let mut tui = sandbox.spawn(&[], 110, 40);
    let screen = tui.wait_for_text("No model available.");
    assert!(screen.contains("type /login"), "{screen}");

    tui.submit("/login");
    let screen = tui.wait_for_text("Select authentication method:");
    assert!(screen.contains("→ Use a subscription"), "{screen}");
    tui.send(DOWN);
    tui.wait_for_text("→ Use an API key");
    tui.send(ENTER);
    let screen = tui.wait_for_text("Select provider to configure:");
    assert!(screen.contains("  Anthropic • unconfigured"), "{screen}");
    assert!(
        !screen.contains("Anthropic (Claude Pro/Max)"),
        "subscriptions are the other kind: {screen}"
    );
    tui.send("mock");
    tui.wait_for_text("→ mock • unconfigured");
    tui.send(ENTER);
    tui.wait_for_text("Login to mock");
    tui.wait_for_text("Enter API key:");
    tui.send("sk-typed-key");
    let screen = tui.wait_for_text("> ••••••••••••");
    assert!(!screen.contains("sk-typed-key"), "{screen}");
    tui.send(ENTER);
    let screen = tui.wait_for_text("Saved API key for mock. Selected");
    assert!(screen.contains("Credentials saved to"), "{screen}");
    tui.wait_for("the footer to name the model", |s| s.contains("mock-model"));

    assert_eq!(
        auth_json(&sandbox),
        json!({ "mock": { "type": "api_key", "key": "sk-typed-key" } })
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(sandbox.agent.join("auth.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    tui.submit("hello");
    tui.wait_for_text("answered with the new key");
    assert_eq!(
        sandbox.server().requests()[0].header("authorization"),
        Some("Bearer sk-typed-key")
    );

    // `/logout` lists what is stored and removes it.
    tui.submit("/logout");
    tui.wait_for_text("Select provider to logout:");
    tui.wait_for_text("→ mock ✓ configured");
    tui.send(ENTER);
    tui.wait_for_text("Removed stored API key for mock.");
    assert_eq!(auth_json(&sandbox), json!({}));
    tui.submit("/logout");
    tui.wait_for_text("No stored credentials to remove.");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn escape_at_every_step_of_login_writes_nothing() {
    let sandbox = tui_common::sandbox(vec![]);
    tui_common::without_credentials(&sandbox);
    let mut tui = sandbox.spawn(&[], 110, 40);
    tui.wait_for_text("No model available.");

    tui.submit("/login");
    tui.wait_for_text("Select authentication method:");
    tui.send(ENTER);
    tui.wait_for_text("→ Anthropic (Claude Pro/Max) • unconfigured");
    // Escape in the providers goes back to the kinds, then closes.
    escape(&mut tui, "Select authentication method:");
    tui.send(ESCAPE);
    tui.wait_for("the picker to close", |s| {
        !s.contains("Select authentication method:")
    });

    tui.submit("/login mock");
    tui.wait_for_text("Enter API key:");
    tui.send("sk-never-saved");
    tui.wait_for_text("> ••••");
    escape(&mut tui, "Login cancelled; nothing was saved.");
    assert!(!sandbox.agent.join("auth.json").exists());

    // An empty key is refused.
    tui.submit("/login mock");
    tui.wait_for_text("Enter API key:");
    tui.send(ENTER);
    tui.wait_for_text("Failed to save API key for mock: API key cannot be empty.");
    assert!(!sandbox.agent.join("auth.json").exists());

    tui.submit("/login nowhere");
    tui.wait_for_text("Unknown provider \"nowhere\"");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

fn tokens() -> TokenAnswer {
    TokenAnswer::Tokens {
        access: "sk-ant-oat01-tui".into(),
        refresh: "sk-ant-ort01-tui".into(),
        expires_in: 3600,
    }
}

/// The authorize address on screen: it is broken over lines at the width, never cut.
fn shown_url(screen: &str, authorize: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(authorize))
        .unwrap_or_else(|| panic!("no address on screen:\n{screen}"));
    lines[start..]
        .iter()
        .take_while(|l| !l.trim().is_empty() && !l.contains("click to open"))
        .map(|l| l.trim_end())
        .collect()
}

fn oauth_env(service: &OAuthServer) -> [(&'static str, String); 4] {
    [
        (
            "KNIGHTCODE_ANTHROPIC_OAUTH_AUTHORIZE_URL",
            service.authorize_url(),
        ),
        (knightcode_ai::ANTHROPIC_TOKEN_URL_ENV, service.token_url()),
        ("KNIGHTCODE_OAUTH_CALLBACK_PORT", "0".to_owned()),
        // Nothing is opened: the test is the browser.
        ("BROWSER", "true".to_owned()),
    ]
}

#[test]
fn a_subscription_login_completes_by_callback_or_pasted_code() {
    let service = OAuthServer::start(tokens()).unwrap();
    let sandbox = tui_common::sandbox(vec![]);
    let env = oauth_env(&service);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut tui = sandbox.spawn_with_env(&[], &env, 110, 40);
    tui.wait_for_text("mock-model");

    // The browser comes back to the loopback callback.
    tui.submit("/login");
    tui.wait_for_text("Select authentication method:");
    tui.send(ENTER);
    tui.wait_for_text("→ Anthropic (Claude Pro/Max)");
    tui.send(ENTER);
    let screen = tui.wait_for_text("Paste redirect URL below, or complete login in browser:");
    assert!(
        screen.contains("Login to Anthropic (Claude Pro/Max)"),
        "{screen}"
    );
    let url = shown_url(&screen, &service.authorize_url());
    let (_, location, _) = browser_get(&url).unwrap();
    let (status, _, page) = browser_get(&location.unwrap()).unwrap();
    assert_eq!(status, 200, "{page}");
    let screen = tui.wait_for_text("Logged in to Anthropic (Claude Pro/Max).");
    assert!(screen.contains("Credentials saved to"), "{screen}");
    let entry = &auth_json(&sandbox)["anthropic"];
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], "sk-ant-oat01-tui");
    // The session kept its model; the subscription's models are offered at once.
    tui.submit("/model claude-sonnet-4-5");
    tui.wait_for_text("Model: anthropic/claude-sonnet-4-5");

    // Logged out, then in again with the code the browser showed elsewhere.
    tui.submit("/logout anthropic");
    tui.wait_for_text("Logged out of Anthropic");
    assert!(auth_json(&sandbox).get("anthropic").is_none());
    tui.submit("/login anthropic");
    let screen = tui.wait_for_text("Paste redirect URL below");
    let url = shown_url(&screen, &service.authorize_url());
    let (_, _, shown) = browser_get(&url).unwrap();
    tui.paste(&shown);
    tui.send(ENTER);
    tui.wait_for_text("Logged in to Anthropic (Claude Pro/Max).");
    assert_eq!(service.exchanges().len(), 2);
    assert_eq!(
        auth_json(&sandbox)["anthropic"]["refresh"],
        "sk-ant-ort01-tui"
    );

    // A code of another attempt is refused and nothing is sent or written.
    tui.submit("/logout anthropic");
    tui.wait_for_text("Logged out of Anthropic");
    tui.submit("/login anthropic");
    tui.wait_for_text("Paste redirect URL below");
    tui.paste("code-1#some-other-state");
    tui.send(ENTER);
    tui.wait_for_text("Failed to login to Anthropic (Claude Pro/Max):");
    assert_eq!(service.exchanges().len(), 2);
    assert!(auth_json(&sandbox).get("anthropic").is_none());

    // Escape while waiting for the browser lets the login go and writes nothing.
    tui.submit("/login anthropic");
    tui.wait_for_text("Paste redirect URL below");
    escape(&mut tui, "Login cancelled; nothing was saved.");
    assert_eq!(service.exchanges().len(), 2);
    assert!(auth_json(&sandbox).get("anthropic").is_none());
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_first_run_subscription_login_selects_the_providers_model_and_a_refusal_says_why() {
    let refusal = TokenAnswer::Refuse {
        status: 400,
        body: r#"{"error":"invalid_grant"}"#.into(),
    };
    let refusing = OAuthServer::start(refusal).unwrap();
    let service = OAuthServer::start(tokens()).unwrap();
    let sandbox = tui_common::sandbox(vec![]);
    tui_common::without_credentials(&sandbox);

    // The service refuses the code: said with its answer, nothing written.
    let env = oauth_env(&refusing);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut tui = sandbox.spawn_with_env(&[], &env, 110, 40);
    tui.wait_for_text("No model available.");
    tui.submit("/login anthropic");
    let screen = tui.wait_for_text("Paste redirect URL below");
    let (_, _, shown) = browser_get(&shown_url(&screen, &refusing.authorize_url())).unwrap();
    tui.paste(&shown);
    tui.send(ENTER);
    let screen = tui.wait_for_text("Failed to login to Anthropic (Claude Pro/Max):");
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("invalid_grant"), "{screen}");
    assert!(!sandbox.agent.join("auth.json").exists());
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    // A session without a model takes the subscription's preferred model.
    let env = oauth_env(&service);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut tui = sandbox.spawn_with_env(&[], &env, 110, 40);
    tui.wait_for_text("No model available.");
    tui.submit("/login anthropic");
    let screen = tui.wait_for_text("Paste redirect URL below");
    let (_, _, shown) = browser_get(&shown_url(&screen, &service.authorize_url())).unwrap();
    tui.paste(&shown);
    tui.send(ENTER);
    tui.wait_for_text("Logged in to Anthropic (Claude Pro/Max). Selected claude-opus-4-7.");
    tui.wait_for("the footer to name the model", |s| {
        s.contains("claude-opus-4-7")
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_copilot_login_shows_the_device_code_and_selects_a_copilot_model() {
    use knightcode_testkit::oauth::GithubServer;
    use knightcode_testkit::oauth::github::Poll;
    let github = GithubServer::start(vec![Poll::Pending, Poll::Approved], 60).unwrap();
    let sandbox = tui_common::sandbox(vec![]);
    tui_common::without_credentials(&sandbox);
    let (url, token_url) = (github.url(), github.copilot_token_url());
    let env = [
        (knightcode_ai::copilot::GITHUB_URL_ENV, url.as_str()),
        (
            knightcode_ai::copilot::COPILOT_TOKEN_URL_ENV,
            token_url.as_str(),
        ),
        (knightcode_ai::copilot::COPILOT_API_URL_ENV, url.as_str()),
        ("BROWSER", "true"),
    ];
    let mut tui = sandbox.spawn_with_env(&[], &env, 110, 40);
    tui.wait_for_text("No model available.");
    tui.submit("/login");
    tui.wait_for_text("Select authentication method:");
    tui.send(ENTER);
    tui.wait_for_text("→ Anthropic (Claude Pro/Max)");
    tui.send(DOWN);
    tui.wait_for_text("→ ChatGPT Plus/Pro (Codex Subscription)");
    tui.send(DOWN);
    tui.wait_for_text("→ GitHub Copilot");
    tui.send(ENTER);
    let screen = tui.wait_for_text("GitHub Enterprise URL/domain (blank for github.com)");
    assert!(screen.contains("e.g., company.ghe.com"), "{screen}");
    // Blank: github.com.
    tui.send(ENTER);
    tui.wait_for_text("Enter code: ABCD-1234");
    let screen = tui.wait_for_text("Logged in to GitHub Copilot. Selected gpt-5.4.");
    assert!(screen.contains("Credentials saved to"), "{screen}");
    let entry = &auth_json(&sandbox)["github-copilot"];
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], GithubServer::copilot_token(1));
    assert!(entry.get("enterpriseUrl").is_none());
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
