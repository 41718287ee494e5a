//! The interactive login of a provider an extension registers with an `oauth` (issues 15
//! and 33): `knightcode auth login <provider>` and `/login` run its `oauth.login(callbacks)`
//! with pi's callbacks, store what it returns as `{"type": "oauth", ...credentials}` in
//! `auth.json`, and the provider's model then answers with the login's key. A login that
//! throws, or input that ends, writes nothing.

use crate::oneshot_common;
use crate::tui_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::Sandbox;
use oneshot_common::knightcode;
use oneshot_common::with_input;
use serde_json::Value;
use serde_json::json;

pub(crate) const URL: &str = "https://sso.acme.test/authorize?state=s1";

/// A provider whose login shows an address, says it waits, asks for a code and turns it
/// into credentials that name `base_url`, where `modifyModels` moves its models (registered
/// at an address nothing answers); `fails`: it throws once it has the code.
pub(crate) fn extension(base_url: &str, fails: bool) -> String {
    let finish = if fails {
        r#"throw new Error("the SSO refused the code");"#
    } else {
        r#"return { refresh: "r1", access: `tok-${code}`, expires: Date.now() + 3600000, account: "a1", url: BASE };"#
    };
    format!(
        r#"
import {{ writeFileSync }} from "node:fs";
const BASE = "{base_url}";
export default function (pi) {{
  pi.registerProvider("acme", {{
    baseUrl: "http://127.0.0.1:9/unreachable", api: "openai-completions",
    models: [{{ id: "acme-1", name: "Acme", reasoning: false, input: ["text"],
               cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 8000, maxTokens: 100 }}],
    oauth: {{
      name: "Acme SSO",
      async login(callbacks) {{
        callbacks.signal.addEventListener("abort", () => writeFileSync("aborted.txt", "login aborted"));
        callbacks.onAuth({{ url: "{URL}", instructions: "Sign in, then copy the code." }});
        callbacks.onProgress("Waiting for the code...");
        const code = await callbacks.onPrompt({{ message: "Paste the code:", placeholder: "abc123" }});
        {finish}
      }},
      async refreshToken(credentials) {{ return credentials; }},
      getApiKey(credentials) {{ return `key-${{credentials.access}}`; }},
      // The models move to the address the login names: the request reaching the mock
      // shows that the list was changed after the login.
      modifyModels(models, credentials) {{
        return models.map((m) => (m.provider === "acme" ? {{ ...m, baseUrl: credentials.url }} : m));
      }},
    }},
  }});
}}
"#
    )
}

fn setup(fails: bool) -> (MockServer, Sandbox) {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi from acme")],
    )
    .unwrap();
    let sb = oneshot_common::sandbox(&server);
    std::fs::write(
        sb.project.join("acme.ts"),
        extension(&server.base_url(), fails),
    )
    .unwrap();
    std::fs::write(
        sb.agent.join("auth.json"),
        json!({ "other": { "type": "api_key", "key": "keep-me" } }).to_string(),
    )
    .unwrap();
    (server, sb)
}

fn auth_json(sb: &Sandbox) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sb.agent.join("auth.json")).unwrap()).unwrap()
}

const LOGIN: &[&str] = &["auth", "login", "-e", "acme.ts", "acme"];

#[test]
fn auth_login_runs_the_extensions_login_and_its_model_uses_the_key() {
    let (server, sb) = setup(false);
    let (code, stdout, stderr) = with_input(&sb, LOGIN, "c0de");
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains(&format!("Log in to Acme SSO in your browser:\n\n{URL}\n")),
        "{stdout}"
    );
    assert!(stdout.contains("Sign in, then copy the code."), "{stdout}");
    assert!(stdout.contains("Waiting for the code..."), "{stdout}");
    assert!(
        stdout.contains("Paste the code: (e.g., abc123)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Logged in to Acme SSO. Credentials saved to"),
        "{stdout}"
    );
    let auth = auth_json(&sb);
    assert_eq!(auth["acme"]["type"], "oauth", "{auth}");
    assert_eq!(auth["acme"]["access"], "tok-c0de", "{auth}");
    assert_eq!(auth["acme"]["refresh"], "r1", "{auth}");
    assert_eq!(auth["acme"]["account"], "a1", "{auth}");
    assert_eq!(auth["acme"]["url"], server.base_url(), "{auth}");
    assert_eq!(auth["other"]["key"], "keep-me", "{auth}");

    let run = knightcode(
        &sb,
        &["-p", "-e", "acme.ts", "--model", "acme/acme-1", "hello"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "hi from acme");
    let requests = server.requests();
    let authorization = requests[0]
        .headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.as_str());
    assert_eq!(authorization, Some("Bearer key-tok-c0de"));
}

#[test]
fn a_login_that_throws_says_so_and_writes_nothing() {
    let (_server, sb) = setup(true);
    let before = auth_json(&sb);
    let (code, stdout, stderr) = with_input(&sb, LOGIN, "c0de");
    assert_eq!(code, 1, "stdout: {stdout}");
    assert_eq!(
        stderr,
        "Error: Failed to login to Acme SSO: the SSO refused the code\n"
    );
    assert_eq!(auth_json(&sb), before);
}

#[test]
fn the_end_of_input_cancels_the_question_and_writes_nothing() {
    let (_server, sb) = setup(false);
    let before = auth_json(&sb);
    let run = knightcode(&sb, LOGIN);
    assert_eq!(run.code, 1, "stdout: {}", run.stdout);
    assert_eq!(run.stderr, "Error: Login cancelled\n");
    assert_eq!(auth_json(&sb), before);
}

// ---- `/login` in the terminal ----

const ENTER: &str = "\r";
const ESCAPE: &str = "\x1b";

/// A terminal session with `acme.ts` loaded and no usable model (the mock's key is taken
/// out of `models.json`), so that the login's provider becomes the session's model.
fn terminal(fails: bool) -> (tui_common::Sandbox, tui_common::Tui) {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("hi from acme")]);
    tui_common::without_credentials(&sandbox);
    std::fs::write(
        sandbox.project.join("acme.ts"),
        extension(&sandbox.server().base_url(), fails),
    )
    .unwrap();
    let tui = sandbox.spawn_with_env(&["-e", "acme.ts"], &[("BROWSER", "true")], 110, 40);
    tui.wait_for_text("No model available.");
    (sandbox, tui)
}

#[test]
fn login_in_the_terminal_lists_the_extensions_login_and_its_model_answers() {
    let (sandbox, mut tui) = terminal(false);
    tui.submit("/login");
    tui.wait_for_text("Select authentication method:");
    tui.send(ENTER);
    tui.wait_for_text("Select provider to configure:");
    tui.send("Acme");
    tui.wait_for_text("→ Acme SSO • unconfigured");
    tui.send(ENTER);
    tui.wait_for_text("Login to Acme SSO");
    let screen = tui.wait_for_text("Paste the code:");
    assert!(screen.contains(URL), "{screen}");
    assert!(screen.contains("Sign in, then copy the code."), "{screen}");
    assert!(screen.contains("Waiting for the code..."), "{screen}");
    assert!(screen.contains("e.g., abc123"), "{screen}");
    tui.send("c0de");
    tui.send(ENTER);
    let screen = tui.wait_for_text("Logged in to Acme SSO. Selected acme-1.");
    assert!(screen.contains("Credentials saved to"), "{screen}");

    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.agent.join("auth.json")).unwrap())
            .unwrap();
    assert_eq!(auth["acme"]["type"], "oauth", "{auth}");
    assert_eq!(auth["acme"]["access"], "tok-c0de", "{auth}");
    assert_eq!(auth["acme"]["refresh"], "r1", "{auth}");

    tui.submit("hello");
    tui.wait_for_text("hi from acme");
    assert_eq!(
        sandbox.server().requests()[0].header("authorization"),
        Some("Bearer key-tok-c0de")
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn escape_cancels_the_extensions_login_and_a_throwing_login_is_reported() {
    let (sandbox, mut tui) = terminal(true);
    tui.submit("/login acme");
    tui.wait_for_text("Paste the code:");
    tui.send(ESCAPE);
    tui.wait_for_text("Login cancelled; nothing was saved.");

    tui.submit("/login acme");
    tui.wait_for_text("Paste the code:");
    tui.send("c0de");
    tui.send(ENTER);
    tui.wait_for_text("Failed to login to Acme SSO: the SSO refused the code");
    assert!(!sandbox.agent.join("auth.json").exists());
    // The escape aborted the first login's `signal` (its abort was sent to the JS thread
    // before the second login began there).
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("aborted.txt")).unwrap(),
        "login aborted"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn auth_login_on_a_terminal_lists_the_extensions_login() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::write(
        sandbox.project.join("acme.ts"),
        extension(&sandbox.server().base_url(), false),
    )
    .unwrap();
    let mut tui = sandbox.spawn_with_env(
        &["auth", "login", "-e", "acme.ts"],
        &[("BROWSER", "true")],
        110,
        60,
    );
    // The harness answers a full-screen app's terminal probes; here they would sit in the
    // line being typed, so the line is erased first (Ctrl+U).
    tui.send("\x15");
    let screen = tui.wait_for_text("Number or provider id:");
    assert!(screen.contains(". Acme SSO (subscription)"), "{screen}");
    tui.send("acme\r");
    tui.wait_for_text("Paste the code: (e.g., abc123)");
    tui.send("c0de\r");
    tui.wait_for_text("Logged in to Acme SSO. Credentials saved to");
    assert_eq!(tui.wait_exit(), 0);
    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.agent.join("auth.json")).unwrap())
            .unwrap();
    assert_eq!(auth["acme"]["access"], "tok-c0de", "{auth}");
}
