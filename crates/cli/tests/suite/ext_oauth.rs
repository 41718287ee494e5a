//! The OAuth login of a provider an extension registers (`registerProvider({ oauth })`),
//! through the real binary against the mock: a stored login that has expired is refreshed
//! through `oauth.refreshToken` and written back to `auth.json` (other entries kept), the
//! request's key is what `oauth.getApiKey` makes of it, a login still valid is used as is,
//! and a refresh that fails stops the prompt with a message that says to log in again.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use serde_json::Value;
use serde_json::json;

fn extension(base_url: &str, refresh_fails: bool) -> String {
    let refresh = if refresh_fails {
        r#"throw new Error("refresh token revoked");"#
    } else {
        r#"return { refresh: "r2", access: `fresh-from-${credentials.refresh}`, expires: Date.now() + 3600000, account: "a1" };"#
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
      async login() {{ throw new Error("not in this test"); }},
      async refreshToken(credentials) {{ {refresh} }},
      getApiKey(credentials) {{ return `key-${{credentials.access}}`; }},
    }},
  }});
}}
"#
    )
}

fn authorization(server: &MockServer) -> Option<String> {
    let requests = server.requests();
    let request = requests.first()?;
    request
        .headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone())
}

fn setup(refresh_fails: bool, expires: i64) -> (MockServer, oneshot_common::Sandbox) {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(
        sb.project.join("acme.ts"),
        extension(&server.base_url(), refresh_fails),
    )
    .unwrap();
    let auth = json!({
        "other": { "type": "api_key", "key": "keep-me" },
        "acme": { "type": "oauth", "access": "old", "refresh": "r1", "expires": expires },
    });
    std::fs::write(sb.agent.join("auth.json"), auth.to_string()).unwrap();
    (server, sb)
}

fn stored(sb: &oneshot_common::Sandbox) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sb.agent.join("auth.json")).unwrap()).unwrap()
}

const ARGS: &[&str] = &["-p", "-e", "acme.ts", "--model", "acme/acme-1", "hello"];

#[test]
fn an_expired_login_is_refreshed_saved_and_turned_into_the_key() {
    let (server, sb) = setup(false, 1_000);
    let run = knightcode(&sb, ARGS);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "hi");
    assert_eq!(
        authorization(&server).as_deref(),
        Some("Bearer key-fresh-from-r1")
    );
    let auth = stored(&sb);
    assert_eq!(auth["acme"]["type"], "oauth", "{auth}");
    assert_eq!(auth["acme"]["access"], "fresh-from-r1", "{auth}");
    assert_eq!(auth["acme"]["refresh"], "r2", "{auth}");
    assert_eq!(auth["acme"]["account"], "a1", "{auth}");
    assert!(
        auth["acme"]["expires"].as_f64().unwrap() > 1_000.0,
        "{auth}"
    );
    assert_eq!(auth["other"]["key"], "keep-me", "{auth}");
}

#[test]
fn a_valid_login_is_used_without_a_refresh() {
    let (server, sb) = setup(true, 32_503_680_000_000);
    let before = stored(&sb);
    let run = knightcode(&sb, ARGS);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(authorization(&server).as_deref(), Some("Bearer key-old"));
    assert_eq!(stored(&sb), before);
}

#[test]
fn a_failed_refresh_says_to_log_in_again_and_keeps_the_file() {
    let (server, sb) = setup(true, 1_000);
    let before = stored(&sb);
    let run = knightcode(&sb, ARGS);
    assert_eq!(run.code, 1, "stdout: {}", run.stdout);
    assert!(
        run.stderr.contains(
            "Could not refresh the OAuth login of provider \"acme\": refresh token revoked. Log in again (`knightcode auth login acme`, or pi's /login: both write the same auth.json) or use an API key instead."
        ),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
    assert_eq!(stored(&sb), before);
}

/// A provider whose `oauth.modifyModels` moves its models to the URL the stored login
/// names (a Copilot-style enterprise endpoint); `fails` makes it throw instead.
fn modifying_extension(registered_url: &str, fails: bool) -> String {
    let body = if fails {
        r#"throw new Error("no enterprise domain");"#
    } else {
        // It is given the whole list, as pi gives it: the built-in providers' models too.
        r#"if (!models.some((m) => m.provider === "anthropic")) throw new Error("not the whole list");
      return models.map((m) => (m.provider === "acme" ? { ...m, baseUrl: credentials.enterpriseUrl } : m));"#
    };
    format!(
        r#"
export default function (pi) {{
  pi.registerProvider("acme", {{
    baseUrl: "{registered_url}", api: "openai-completions",
    models: [{{ id: "acme-1", name: "Acme", reasoning: false, input: ["text"],
               cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 8000, maxTokens: 100 }}],
    oauth: {{
      name: "Acme SSO",
      async login() {{ throw new Error("not in this test"); }},
      async refreshToken(credentials) {{ return credentials; }},
      getApiKey(credentials) {{ return credentials.access; }},
      modifyModels(models, credentials) {{
      {body}
      }},
    }},
  }});
}}
"#
    )
}

fn modifying_setup(
    registered_url: Option<&str>,
    fails: bool,
) -> (MockServer, oneshot_common::Sandbox) {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .unwrap();
    let sb = sandbox(&server);
    let registered = registered_url.map_or_else(|| server.base_url(), str::to_owned);
    std::fs::write(
        sb.project.join("acme.ts"),
        modifying_extension(&registered, fails),
    )
    .unwrap();
    let auth = json!({
        "acme": { "type": "oauth", "access": "tok", "refresh": "r1",
                  "expires": 32_503_680_000_000_i64, "enterpriseUrl": server.base_url() },
    });
    std::fs::write(sb.agent.join("auth.json"), auth.to_string()).unwrap();
    (server, sb)
}

#[test]
fn modify_models_of_a_stored_login_moves_the_providers_models() {
    // Registered at a port nothing listens on: only the moved URL answers.
    let (server, sb) = modifying_setup(Some("http://127.0.0.1:9/v1"), false);
    let run = knightcode(&sb, ARGS);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "hi");
    assert_eq!(authorization(&server).as_deref(), Some("Bearer tok"));
}

#[test]
fn a_throwing_modify_models_is_reported_and_the_models_stay() {
    let (server, sb) = modifying_setup(None, true);
    let run = knightcode(&sb, ARGS);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "hi");
    assert!(
        run.stderr
            .contains("Extension error (provider acme, oauth.modifyModels): no enterprise domain"),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn list_models_shows_the_models_as_modify_models_leaves_them() {
    let (server, sb) = modifying_setup(None, false);
    let renaming = r#"
export default function (pi) {
  pi.registerProvider("acme", {
    baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions",
    models: [{ id: "acme-1", name: "Acme", reasoning: false, input: ["text"],
               cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8000, maxTokens: 100 }],
    oauth: {
      name: "Acme SSO",
      async login() { throw new Error("not in this test"); },
      async refreshToken(credentials) { return credentials; },
      getApiKey(credentials) { return credentials.access; },
      modifyModels(models, credentials) {
        return models.map((m) => (m.provider === "acme" ? { ...m, id: "acme-enterprise", contextWindow: 64000 } : m));
      },
    },
  });
}
"#;
    std::fs::write(sb.project.join("acme.ts"), renaming).unwrap();
    let run = knightcode(&sb, &["-e", "acme.ts", "--list-models", "acme"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stdout.contains("acme-enterprise"), "{}", run.stdout);
    assert!(!run.stdout.contains("acme-1"), "{}", run.stdout);
    assert!(server.requests().is_empty());
    // Without the login the registered list is shown as it is (and needs a key).
    std::fs::remove_file(sb.agent.join("auth.json")).unwrap();
    let run = knightcode(&sb, &["-e", "acme.ts", "--list-models", "acme"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!run.stdout.contains("acme-enterprise"), "{}", run.stdout);
}
