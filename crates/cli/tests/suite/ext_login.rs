//! The interactive login of a provider an extension registers with an `oauth` (issues 15
//! and 33): `knightcode auth login <provider>` and `/login` run its `oauth.login(callbacks)`
//! with pi's callbacks, store what it returns as `{"type": "oauth", ...credentials}` in
//! `auth.json`, and the provider's model then answers with the login's key. A login that
//! throws, or input that ends, writes nothing.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::Dialogue;
use knightcode_testkit::process::PROCESS_LIMIT;
use oneshot_common::Sandbox;
use oneshot_common::knightcode;
use serde_json::Value;
use serde_json::json;

pub(crate) const URL: &str = "https://sso.acme.test/authorize?state=s1";

/// A provider whose login shows an address, says it waits, asks for a code and turns it
/// into credentials; `fails`: it throws once it has the code.
pub(crate) fn extension(base_url: &str, fails: bool) -> String {
    let finish = if fails {
        r#"throw new Error("the SSO refused the code");"#
    } else {
        r#"return { refresh: "r1", access: `tok-${code}`, expires: Date.now() + 3600000, account: "a1" };"#
    };
    format!(
        r#"
export default function (pi) {{
  pi.registerProvider("acme", {{
    baseUrl: "{base_url}", api: "openai-completions",
    models: [{{ id: "acme-1", name: "Acme", reasoning: false, input: ["text"],
               cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 8000, maxTokens: 100 }}],
    oauth: {{
      name: "Acme SSO",
      async login(callbacks) {{
        if (!(callbacks.signal instanceof AbortSignal)) throw new Error("no signal");
        callbacks.onAuth({{ url: "{URL}", instructions: "Sign in, then copy the code." }});
        callbacks.onProgress("Waiting for the code...");
        const code = await callbacks.onPrompt({{ message: "Paste the code:", placeholder: "abc123" }});
        {finish}
      }},
      async refreshToken(credentials) {{ return credentials; }},
      getApiKey(credentials) {{ return `key-${{credentials.access}}`; }},
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

/// `knightcode ARGS` with `input` on stdin.
fn with_input(sb: &Sandbox, args: &[&str], input: &str) -> (i32, String, String) {
    let mut dialogue = Dialogue::spawn(&mut sb.command(args), "knightcode auth").unwrap();
    dialogue.write_line(input).unwrap();
    let (status, stdout, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    (status.code().unwrap_or(-1), stdout, stderr)
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
