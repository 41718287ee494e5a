//! A Claude Pro/Max login in `auth.json`, as the reference's `/login` writes it: an expired
//! login is refreshed at a stand-in token endpoint, written back, and its access token sent
//! the way the service accepts subscription tokens.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WebResponse;
use knightcode_testkit::WebServer;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use oneshot_common::command;
use oneshot_common::sandbox;
use serde_json::Value;
use serde_json::json;

#[test]
fn an_expired_subscription_login_is_refreshed_and_sent_as_a_bearer_token() {
    let server = MockServer::start_blocking(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("hello")],
    )
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let tokens = WebResponse::ok(
        "application/json",
        json!({"access_token": "sk-ant-oat01-new", "refresh_token": "sk-ant-ort01-new",
               "expires_in": 3600})
        .to_string(),
    );
    let token_server = runtime
        .block_on(WebServer::start(vec![("/v1/oauth/token", tokens)]))
        .unwrap();
    let sb = sandbox(&server);
    let models = json!({"providers": {"anthropic": {"baseUrl": server.base_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    let auth = json!({"anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-old",
                                    "access": "sk-ant-oat01-old", "expires": 1}});
    std::fs::write(sb.agent.join("auth.json"), auth.to_string()).unwrap();

    let output = command(
        &sb,
        &["-p", "--model", "anthropic/claude-sonnet-4-5", "say hello"],
    )
    .env(
        knightcode_ai::ANTHROPIC_TOKEN_URL_ENV,
        format!("{}/v1/oauth/token", token_server.url()),
    )
    .output_within(PROCESS_LIMIT, "knightcode")
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "hello");

    assert_eq!(token_server.requests().len(), 1);
    let sent = &server.requests()[0];
    assert_eq!(
        sent.header("authorization"),
        Some("Bearer sk-ant-oat01-new")
    );
    assert_eq!(sent.header("x-api-key"), None);
    assert!(
        sent.header("anthropic-beta")
            .unwrap()
            .starts_with("claude-code-20250219,oauth-2025-04-20")
    );
    assert_eq!(
        sent.body["system"][0]["text"],
        "You are Claude Code, Anthropic's official CLI for Claude."
    );
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(sb.agent.join("auth.json")).unwrap())
            .unwrap();
    assert_eq!(stored["anthropic"]["access"], "sk-ant-oat01-new");
}

/// The headers, system blocks and tool names of a request, as the recording keeps them.
fn shape(request: &knightcode_testkit::RecordedRequest) -> Value {
    const KEPT: [&str; 9] = [
        "accept",
        "anthropic-beta",
        "anthropic-dangerous-direct-browser-access",
        "anthropic-version",
        "authorization",
        "content-type",
        "user-agent",
        "x-app",
        "x-api-key",
    ];
    let headers: serde_json::Map<String, Value> = KEPT
        .iter()
        .map(|name| ((*name).to_owned(), json!(request.header(name))))
        .collect();
    let body = &request.body;
    let system = body["system"].as_array().cloned().unwrap_or_default();
    let mut tools: Vec<&str> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    tools.sort_unstable();
    let tool_use_names: Vec<&str> = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| b["name"].as_str())
        .collect();
    json!({
        "path": request.path,
        "headers": headers,
        "system": system.iter().take(1)
            .map(|b| b["text"].as_str().unwrap_or_default().lines().next().unwrap_or_default())
            .collect::<Vec<_>>(),
        "system_blocks": system.len(),
        "tools": tools,
        "tool_use_names": tool_use_names,
    })
}

/// The same conversation as the reference's recording (`scripts/pi/record-anthropic-oauth.sh`):
/// a tool call and an answer, with a subscription login in `auth.json`.
#[test]
fn the_requests_match_the_references() {
    let server = MockServer::start_blocking(
        WireFormat::AnthropicMessages,
        vec![
            ScriptedReply::tool_call("toolu_1", "Read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("The file says hello."),
        ],
    )
    .unwrap();
    let sb = sandbox(&server);
    let models = json!({"providers": {"anthropic": {"baseUrl": server.base_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    let auth = json!({"anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-fixture",
                                    "access": "sk-ant-oat01-fixture", "expires": 99_999_999_999_999_i64}});
    std::fs::write(sb.agent.join("auth.json"), auth.to_string()).unwrap();
    let output = command(
        &sb,
        &[
            "-p",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "What does notes.txt say?",
        ],
    )
    .output_within(PROCESS_LIMIT, "knightcode")
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ours: Vec<Value> = server.requests().iter().map(shape).collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi/anthropic-oauth/requests.json");
    let theirs: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(Value::Array(ours), theirs);
}
