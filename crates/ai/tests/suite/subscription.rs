//! Anthropic subscription logins (Claude Pro/Max OAuth tokens): the request shape the
//! service accepts for them, as the reference sends it (checked against its recorded request
//! to the same mock), and the refresh of an expired login under `auth.json`'s lock.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use common::FixedClock;
use common::client;
use common::model_for;
use knightcode_ai::ANTHROPIC_TOKEN_URL_ENV;
use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::CancellationToken;
use knightcode_ai::Context;
use knightcode_ai::MapEnv;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::Millis;
use knightcode_protocol::ToolDeclaration;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WebResponse;
use knightcode_testkit::WebServer;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

const TOKEN: &str = "sk-ant-oat01-access";

fn tool(name: &str) -> ToolDeclaration {
    ToolDeclaration {
        name: name.into(),
        description: format!("the {name} tool"),
        parameters: json!({"type": "object", "properties": {}}),
        ..ToolDeclaration::default()
    }
}

fn request(server: &MockServer, key: &str) -> StreamRequest {
    StreamRequest {
        model: model_for(server, "claude-sonnet-4-5"),
        context: Context {
            system_prompt: Some("You are a test.".into()),
            messages: vec![AgentMessage::user("Read a.txt", Millis(1)).into()],
            tools: vec![tool("read"), tool("find")],
        },
        options: StreamOptions {
            api_key: Some(key.into()),
            thinking: ThinkingLevel::Medium,
            ..StreamOptions::default()
        },
    }
}

#[tokio::test]
async fn a_subscription_token_is_sent_as_claude_code_sends_it() {
    let reply = ScriptedReply::tool_call("toolu_1", "Read", r#"{"path":"a.txt"}"#);
    let server = MockServer::start(WireFormat::AnthropicMessages, vec![reply])
        .await
        .unwrap();
    let client = client(Arc::new(FixedClock::default()));
    let message = client
        .complete(&request(&server, TOKEN), CancellationToken::new())
        .await;
    // The answer names the tool as Claude Code does; the session gets its own name back.
    let call = message.tool_calls().next().unwrap();
    assert_eq!(call.name, "read");

    let sent = &server.requests()[0];
    assert_eq!(
        sent.header("authorization"),
        Some("Bearer sk-ant-oat01-access")
    );
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14")
    );
    assert_eq!(sent.header("user-agent"), Some("claude-cli/2.1.75"));
    assert_eq!(sent.header("x-app"), Some("cli"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    let system: Vec<&str> = sent.body["system"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        system,
        [
            "You are Claude Code, Anthropic's official CLI for Claude.",
            "You are a test."
        ]
    );
    let tools: Vec<&str> = sent.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["Read", "find"]);
}

#[tokio::test]
async fn an_api_key_keeps_the_plain_shape() {
    let server = MockServer::start(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("hi")],
    )
    .await
    .unwrap();
    let client = client(Arc::new(FixedClock::default()));
    client
        .complete(
            &request(&server, "sk-ant-api03-key"),
            CancellationToken::new(),
        )
        .await;
    let sent = &server.requests()[0];
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-api03-key"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.header("x-app"), None);
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14")
    );
    assert_eq!(sent.body["system"].as_array().unwrap().len(), 1);
    assert_eq!(sent.body["tools"][0]["name"], "read");
}

/// An agent folder whose `auth.json` holds an Anthropic login expiring at `expires`, and a
/// stand-in token endpoint answering `answer`.
async fn login(expires: i64, answer: WebResponse) -> (tempfile::TempDir, WebServer, MapEnv) {
    let dir = tempfile::tempdir().unwrap();
    let auth = json!({
        "openai": {"type": "api_key", "key": "sk-other"},
        "anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-old", "access": "sk-ant-oat01-old",
                      "expires": expires}
    });
    std::fs::write(dir.path().join("auth.json"), auth.to_string()).unwrap();
    let server = WebServer::start(vec![("/v1/oauth/token", answer)])
        .await
        .unwrap();
    let env = MapEnv::new([(
        ANTHROPIC_TOKEN_URL_ENV,
        format!("{}/v1/oauth/token", server.url()).as_str(),
    )]);
    (dir, server, env)
}

fn fresh_tokens() -> WebResponse {
    WebResponse::ok(
        "application/json",
        json!({"access_token": "sk-ant-oat01-new", "refresh_token": "sk-ant-ort01-new",
               "expires_in": 3600})
        .to_string(),
    )
}

async fn key(storage: &AuthStorage, env: &MapEnv) -> Result<String, knightcode_ai::AiError> {
    let runtime = HashMap::new();
    let context = AuthContext {
        storage,
        env,
        runtime_keys: &runtime,
    };
    Ok(context.resolve_key("anthropic", None).await?.unwrap().0)
}

fn stored(dir: &tempfile::TempDir) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.path().join("auth.json")).unwrap()).unwrap()
}

#[tokio::test]
async fn a_login_still_valid_is_used_as_it_is() {
    let (dir, server, env) = login(i64::MAX / 2, fresh_tokens()).await;
    let storage = AuthStorage::load(dir.path()).unwrap();
    assert_eq!(key(&storage, &env).await.unwrap(), "sk-ant-oat01-old");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn an_expired_login_is_refreshed_and_written_back() {
    let (dir, server, env) = login(1, fresh_tokens()).await;
    let storage = AuthStorage::load(dir.path()).unwrap();
    assert_eq!(key(&storage, &env).await.unwrap(), "sk-ant-oat01-new");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "POST");
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["grant_type"], "refresh_token");
    assert_eq!(body["refresh_token"], "sk-ant-ort01-old");
    assert_eq!(body["client_id"], "9d1c250a-e61b-44d9-88ed-5944d1962f5e");

    let file = stored(&dir);
    assert_eq!(file["openai"]["key"], "sk-other", "other logins are kept");
    assert_eq!(file["anthropic"]["type"], "oauth");
    assert_eq!(file["anthropic"]["access"], "sk-ant-oat01-new");
    assert_eq!(file["anthropic"]["refresh"], "sk-ant-ort01-new");
    // Expires an hour on, less the five minutes' margin the reference keeps.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let expires = file["anthropic"]["expires"].as_i64().unwrap();
    assert!(expires > now + 50 * 60 * 1000 && expires <= now + 55 * 60 * 1000);
    assert!(!dir.path().join("auth.json.lock").exists());
    // The same storage uses the refreshed login from now on.
    assert_eq!(key(&storage, &env).await.unwrap(), "sk-ant-oat01-new");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_refused_refresh_says_what_to_do_and_keeps_the_file() {
    let refused = WebResponse::status(400, r#"{"error":"invalid_grant"}"#);
    let (dir, _server, env) = login(1, refused).await;
    let before = stored(&dir);
    let storage = AuthStorage::load(dir.path()).unwrap();
    let error = key(&storage, &env).await.unwrap_err().to_string();
    assert!(
        error.starts_with("Could not refresh the OAuth login of provider \"anthropic\": "),
        "{error}"
    );
    assert!(
        error.contains("400") && error.contains("invalid_grant"),
        "{error}"
    );
    assert!(error.ends_with("or use an API key instead."), "{error}");
    assert_eq!(stored(&dir), before);
}

#[tokio::test]
async fn two_processes_refreshing_at_once_spend_the_refresh_token_once() {
    let (dir, server, env) = login(1, fresh_tokens()).await;
    // Two storages on one file stand for two processes: they share nothing but the file.
    let first = AuthStorage::load(dir.path()).unwrap();
    let second = AuthStorage::load(dir.path()).unwrap();
    let (a, b) = tokio::join!(key(&first, &env), key(&second, &env));
    assert_eq!(a.unwrap(), "sk-ant-oat01-new");
    assert_eq!(b.unwrap(), "sk-ant-oat01-new");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_lock_left_by_a_dead_process_is_taken_over() {
    let (dir, server, env) = login(1, fresh_tokens()).await;
    let lock = dir.path().join("auth.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    std::fs::File::open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let storage = AuthStorage::load(dir.path()).unwrap();
    assert_eq!(key(&storage, &env).await.unwrap(), "sk-ant-oat01-new");
    assert_eq!(server.requests().len(), 1);
    assert!(!lock.exists());
}
