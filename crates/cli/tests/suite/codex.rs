//! ChatGPT Plus/Pro (`openai-codex`): the browser login against a stand-in of OpenAI's login
//! service (loopback callback, pasted address), stored as the reference stores it; the login
//! refreshed (or refused) at its token endpoint; and requests to the plan's Responses
//! backend (the mock Responses server under `/codex/responses`): headers, body, a tool call,
//! an error mid-stream and the plan's usage limit.

use crate::oneshot_common;

use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::oauth::OAuthServer;
use knightcode_testkit::oauth::TokenAnswer;
use knightcode_testkit::oauth::browser_get;
use knightcode_testkit::oauth::chatgpt_access_token;
use knightcode_testkit::process::Dialogue;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use oneshot_common::Sandbox;
use serde_json::Value;
use serde_json::json;

const ACCOUNT: &str = "acct-stand-in-1";

fn tokens() -> TokenAnswer {
    TokenAnswer::Tokens {
        access: chatgpt_access_token(ACCOUNT, "fresh"),
        refresh: "rt-fresh".into(),
        expires_in: 3600,
    }
}

fn auth_json(sb: &Sandbox) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sb.agent.join("auth.json")).unwrap()).unwrap()
}

/// A query parameter of `url`, decoded (`+` is a space).
fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let raw = query
        .split('&')
        .find_map(|p| p.strip_prefix(&format!("{name}=")))?;
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    Some(String::from_utf8(out).unwrap())
}

/// `auth login openai-codex` against `service`, up to the printed authorize address.
fn start_login(sb: &Sandbox, service: &OAuthServer) -> (Dialogue, String) {
    let mut command = sb.command(&["auth", "login", "openai-codex"]);
    command
        .env(
            knightcode_ai::login::CODEX_AUTHORIZE_URL_ENV,
            service.authorize_url(),
        )
        .env(
            knightcode_ai::CODEX_TOKEN_URL_ENV,
            service.openai_token_url(),
        )
        .env("KNIGHTCODE_OAUTH_CALLBACK_PORT", "0");
    let mut dialogue = Dialogue::spawn(&mut command, "knightcode auth login openai-codex").unwrap();
    let authorize = service.authorize_url();
    let url = dialogue
        .wait_for_line(PROCESS_LIMIT, "the authorize address", |l| {
            l.starts_with(&authorize)
        })
        .unwrap();
    (dialogue, url)
}

#[test]
fn a_chatgpt_login_completes_through_the_loopback_callback_and_is_stored_as_pi_stores_it() {
    let service = OAuthServer::start(tokens()).unwrap();
    let sb = Sandbox::with_url("http://127.0.0.1:9", crate::common::Models::Single);
    let (dialogue, url) = start_login(&sb, &service);
    for (name, value) in [
        ("response_type", "code"),
        ("client_id", "app_EMoamEEZ73f0CkXaXp7hrann"),
        ("scope", "openid profile email offline_access"),
        ("code_challenge_method", "S256"),
        ("id_token_add_organizations", "true"),
        ("codex_cli_simplified_flow", "true"),
        ("originator", "pi"),
    ] {
        assert_eq!(query_param(&url, name).as_deref(), Some(value), "{url}");
    }
    let redirect = query_param(&url, "redirect_uri").unwrap();
    assert!(
        redirect.starts_with("http://localhost:") && redirect.ends_with("/auth/callback"),
        "{redirect}"
    );
    let state = query_param(&url, "state").unwrap();
    assert_eq!(state.len(), 32, "16 random bytes in hex: {state}");

    // A request with another state is turned away and the login keeps waiting.
    let (status, _, page) = browser_get(&format!("{redirect}?code=x&state=other")).unwrap();
    assert_eq!((status, page.contains("State mismatch.")), (400, true));
    let (_, location, _) = browser_get(&url).unwrap();
    let (status, _, page) = browser_get(&location.unwrap()).unwrap();
    assert_eq!(status, 200);
    assert!(page.contains("OpenAI authentication completed"), "{page}");
    let (status, stdout, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    assert!(status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("Logged in to ChatGPT Plus/Pro (Codex Subscription). Credentials saved to"),
        "{stdout}"
    );

    let exchange = &service.exchanges()[0];
    assert_eq!(exchange["grant_type"], "authorization_code");
    assert_eq!(exchange["client_id"], "app_EMoamEEZ73f0CkXaXp7hrann");
    assert_eq!(exchange["code"], "code-1");
    assert_eq!(exchange["redirect_uri"], redirect.as_str());
    let entry = &auth_json(&sb)["openai-codex"];
    let keys: Vec<&String> = entry.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "access", "refresh", "expires", "accountId"]);
    assert_eq!(entry["type"], "oauth");
    assert_eq!(
        entry["access"].as_str(),
        Some(chatgpt_access_token(ACCOUNT, "fresh").as_str())
    );
    assert_eq!(entry["refresh"], "rt-fresh");
    assert_eq!(entry["accountId"], ACCOUNT);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let expires = entry["expires"].as_i64().unwrap();
    // An hour from now, without the margin the Anthropic login keeps.
    assert!(
        (now_ms + 3_590_000..=now_ms + 3_600_000).contains(&expires),
        "{expires} vs {now_ms}"
    );
}

#[test]
fn a_pasted_redirect_address_completes_the_login_and_a_foreign_one_is_refused() {
    let service = OAuthServer::start(tokens()).unwrap();
    let sb = Sandbox::with_url("http://127.0.0.1:9", crate::common::Models::Single);
    let (mut dialogue, url) = start_login(&sb, &service);
    let (_, location, _) = browser_get(&url).unwrap();
    // The browser is on another machine: the address it ended on is pasted.
    dialogue.write_line(&location.unwrap()).unwrap();
    let (status, stdout, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    assert!(status.success(), "{stdout}\n{stderr}");
    assert_eq!(auth_json(&sb)["openai-codex"]["accountId"], ACCOUNT);

    let other = Sandbox::with_url("http://127.0.0.1:9", crate::common::Models::Single);
    let (mut dialogue, _) = start_login(&other, &service);
    dialogue
        .write_line("http://localhost:1455/auth/callback?code=code-1&state=not-this-login")
        .unwrap();
    let (status, _, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    assert!(!status.success());
    assert!(stderr.contains("state does not match"), "{stderr}");
    assert!(!other.agent.join("auth.json").exists());
}

/// A sandbox whose `openai-codex` models go to `server`, with `login` in `auth.json`.
fn codex_sandbox(server: &MockServer, login: &Value) -> Sandbox {
    let sb = oneshot_common::sandbox(server);
    let models = json!({"providers": {"openai-codex": {"baseUrl": server.root_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(
        sb.agent.join("auth.json"),
        json!({"openai-codex": login}).to_string(),
    )
    .unwrap();
    sb
}

fn run_codex(sb: &Sandbox, service: Option<&OAuthServer>, prompt: &str) -> (bool, String, String) {
    let mut command = oneshot_common::command(
        sb,
        &[
            "-p",
            "--model",
            "openai-codex/gpt-5.1",
            "--thinking",
            "off",
            prompt,
        ],
    );
    if let Some(service) = service {
        command.env(
            knightcode_ai::CODEX_TOKEN_URL_ENV,
            service.openai_token_url(),
        );
    }
    let output = command
        .output_within(PROCESS_LIMIT, "knightcode -p")
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn an_expired_login_is_refreshed_and_the_backend_gets_a_tool_call_turn() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiResponses,
        vec![
            ScriptedReply::tool_call("call_1", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("The file says hello."),
        ],
    )
    .unwrap();
    let service = OAuthServer::start(tokens()).unwrap();
    let stale = json!({"type": "oauth", "access": chatgpt_access_token(ACCOUNT, "stale"),
                       "refresh": "rt-stale", "expires": 1, "accountId": ACCOUNT});
    let sb = codex_sandbox(&server, &stale);
    std::fs::write(sb.project.join("notes.txt"), "hello from the notes\n").unwrap();
    let (ok, stdout, stderr) = run_codex(&sb, Some(&service), "What does notes.txt say?");
    assert!(ok, "{stderr}");
    assert_eq!(stdout.trim(), "The file says hello.");

    let refresh = &service.exchanges()[0];
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(refresh["refresh_token"], "rt-stale");
    assert_eq!(refresh["client_id"], "app_EMoamEEZ73f0CkXaXp7hrann");
    let stored = &auth_json(&sb)["openai-codex"];
    assert_eq!(stored["refresh"], "rt-fresh");
    assert_eq!(stored["accountId"], ACCOUNT);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.path, "/codex/responses");
    let fresh = chatgpt_access_token(ACCOUNT, "fresh");
    assert_eq!(
        first.header("authorization"),
        Some(format!("Bearer {fresh}").as_str())
    );
    assert_eq!(first.header("chatgpt-account-id"), Some(ACCOUNT));
    assert_eq!(first.header("originator"), Some("pi"));
    assert_eq!(first.header("openai-beta"), Some("responses=experimental"));
    assert_eq!(first.header("accept"), Some("text/event-stream"));
    let session = first.header("session_id").unwrap();
    assert_eq!(first.header("x-client-request-id"), Some(session));
    let body = &first.body;
    assert_eq!(body["model"], "gpt-5.1");
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert!(body["instructions"].as_str().unwrap().len() > 100);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["prompt_cache_key"], session);
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["parallel_tool_calls"], true);
    assert!(body.get("reasoning").is_none(), "thinking off: {body}");
    assert!(body.get("max_output_tokens").is_none());
    let read = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read")
        .unwrap();
    assert_eq!(read["type"], "function");
    assert!(read.get("strict").is_some_and(Value::is_null), "{read}");
    // No system message in the input: the prompt went to `instructions`.
    assert_eq!(body["input"][0]["role"], "user");

    let second = &requests[1].body;
    let output = second["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["call_id"], "call_1");
    assert!(
        output["output"]
            .as_str()
            .unwrap()
            .contains("hello from the notes")
    );
}

#[test]
fn a_refused_refresh_says_to_log_in_again() {
    let server = MockServer::start_blocking(WireFormat::OpenAiResponses, vec![]).unwrap();
    let service = OAuthServer::start(TokenAnswer::Refuse {
        status: 401,
        body: r#"{"error":"invalid_grant","error_description":"refresh token revoked"}"#.into(),
    })
    .unwrap();
    let stale = json!({"type": "oauth", "access": chatgpt_access_token(ACCOUNT, "stale"),
                       "refresh": "rt-revoked", "expires": 1, "accountId": ACCOUNT});
    let sb = codex_sandbox(&server, &stale);
    let (ok, _, stderr) = run_codex(&sb, Some(&service), "hi");
    assert!(!ok);
    assert!(
        stderr.contains("Could not refresh the OAuth login of provider \"openai-codex\""),
        "{stderr}"
    );
    assert!(stderr.contains("refresh token revoked"), "{stderr}");
    assert!(stderr.contains("/login"), "{stderr}");
    assert!(server.requests().is_empty());
    assert_eq!(auth_json(&sb)["openai-codex"]["refresh"], "rt-revoked");
}

fn valid_login() -> Value {
    json!({"type": "oauth", "access": chatgpt_access_token(ACCOUNT, "valid"),
           "refresh": "rt", "expires": 99_999_999_999_999_i64, "accountId": ACCOUNT})
}

#[test]
fn an_error_mid_stream_is_the_backends_words() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiResponses,
        vec![
            ScriptedReply::text("partial answer").with_fault(Fault::MidStreamError {
                after_events: 4,
                message: "the model went away".into(),
                kind: MockErrorKind::InvalidRequest,
            }),
        ],
    )
    .unwrap();
    let sb = codex_sandbox(&server, &valid_login());
    let (ok, _, stderr) = run_codex(&sb, None, "hi");
    assert!(!ok);
    assert!(
        stderr.contains("Codex error: the model went away"),
        "{stderr}"
    );
}

#[test]
fn the_plans_usage_limit_says_which_plan_and_when_it_resets() {
    let resets_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 90 * 60;
    let body = json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                                "plan_type": "plus", "resets_at": resets_at}});
    let server = MockServer::start_blocking(
        WireFormat::OpenAiResponses,
        vec![ScriptedReply::fault(Fault::HttpStatus {
            status: 429,
            retry_after: None,
            body: Some(body.to_string()),
            headers: Vec::new(),
        })],
    )
    .unwrap();
    let sb = codex_sandbox(&server, &valid_login());
    let (ok, _, stderr) = run_codex(&sb, None, "hi");
    assert!(!ok);
    assert!(
        stderr.contains("You have hit your ChatGPT usage limit (plus plan). Try again in ~9"),
        "{stderr}"
    );
    // Not retried: the limit lasts longer than any retry waits.
    assert_eq!(server.requests().len(), 1);
}

/// `/login` in the terminal: the ChatGPT subscription is the picker's second entry; the
/// browser comes back to the loopback callback, and a session without a model takes the
/// plan's preferred one.
#[test]
fn the_login_picker_offers_chatgpt_and_completes_through_the_callback() {
    use crate::tui_common;
    let service = OAuthServer::start(tokens()).unwrap();
    let sandbox = tui_common::sandbox(vec![]);
    let path = sandbox.agent.join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    models["providers"]["mock"]
        .as_object_mut()
        .unwrap()
        .remove("apiKey");
    std::fs::write(&path, models.to_string()).unwrap();
    let env = [
        (
            knightcode_ai::login::CODEX_AUTHORIZE_URL_ENV,
            service.authorize_url(),
        ),
        (
            knightcode_ai::CODEX_TOKEN_URL_ENV,
            service.openai_token_url(),
        ),
        ("KNIGHTCODE_OAUTH_CALLBACK_PORT", "0".to_owned()),
        ("BROWSER", "true".to_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut tui = sandbox.spawn_with_env(&[], &env, 110, 40);
    tui.wait_for_text("No model available.");
    tui.submit("/login");
    tui.wait_for_text("Select authentication method:");
    tui.send("\r");
    let screen = tui.wait_for_text("→ Anthropic (Claude Pro/Max)");
    assert!(
        screen.contains("ChatGPT Plus/Pro (Codex Subscription) • unconfigured"),
        "{screen}"
    );
    tui.send("\x1b[B");
    tui.wait_for_text("→ ChatGPT Plus/Pro (Codex Subscription)");
    tui.send("\r");
    let screen = tui.wait_for_text("Paste redirect URL below, or complete login in browser:");
    let authorize = service.authorize_url();
    let lines: Vec<&str> = screen.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(&authorize))
        .unwrap_or_else(|| panic!("no address on screen:\n{screen}"));
    let url: String = lines[start..]
        .iter()
        .take_while(|l| !l.trim().is_empty() && !l.contains("click to open"))
        .map(|l| l.trim_end())
        .collect();
    let (_, location, _) = browser_get(&url).unwrap();
    let (status, _, page) = browser_get(&location.unwrap()).unwrap();
    assert_eq!(status, 200, "{page}");
    tui.wait_for_text("Logged in to ChatGPT Plus/Pro (Codex Subscription). Selected gpt-5.5.");
    let entry = &auth_json_at(&sandbox.agent)["openai-codex"];
    assert_eq!(entry["accountId"], ACCOUNT);
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

fn auth_json_at(agent: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(agent.join("auth.json")).unwrap()).unwrap()
}
