//! The ChatGPT-plan (Codex) requests against the reference's: the same conversation (a tool
//! call and its answer, then a turn with thinking on) with the same login, sent to the same
//! mock, shaped as `scripts/pi/codex_shape.py` shapes the reference's recording
//! (`scripts/pi/record-openai-codex.sh` → `fixtures/pi/openai-codex/requests.json`).

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::RecordedRequest;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::oauth::chatgpt_access_token;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

const HEADERS: [&str; 8] = [
    "accept",
    "authorization",
    "chatgpt-account-id",
    "content-type",
    "openai-beta",
    "originator",
    "session_id",
    "x-client-request-id",
];

/// What `codex_shape.py` keeps of a request: the headers the backend reads (the session as
/// `<session>`), the body's keys in order, and the body with each agent's own words (system
/// prompt, tool descriptions and schemas) as placeholders.
fn shape(request: &RecordedRequest) -> Value {
    let session = request.header("session_id");
    let placeholder = |value: Option<&str>| match value {
        Some(v) if Some(v) == session => json!("<session>"),
        other => json!(other),
    };
    let headers: Map<String, Value> = HEADERS
        .iter()
        .map(|name| ((*name).to_owned(), placeholder(request.header(name))))
        .collect();
    let original = request.body.as_object().cloned().unwrap_or_default();
    let keys: Vec<&String> = original.keys().collect();
    let mut body = original.clone();
    if body.get("prompt_cache_key").and_then(Value::as_str) == session {
        body.insert("prompt_cache_key".into(), json!("<session>"));
    }
    let instructions = body
        .get("instructions")
        .and_then(Value::as_str)
        .is_some_and(|text| !text.is_empty());
    body.insert(
        "instructions".into(),
        if instructions {
            json!("<system prompt>")
        } else {
            Value::Null
        },
    );
    let mut tools: Vec<Value> = body
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut tool| {
            tool["description"] = json!("<description>");
            tool["parameters"] = json!("<schema>");
            tool
        })
        .collect();
    tools.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    body.insert("tools".into(), Value::Array(tools));
    json!({
        "method": request.method,
        "path": request.path,
        "headers": headers,
        "body_keys": keys,
        "body": body,
    })
}

#[test]
fn the_requests_match_the_references() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiResponses,
        vec![
            ScriptedReply::tool_call("call_1", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("The file says hello."),
            ScriptedReply::text("Hi."),
        ],
    )
    .unwrap();
    let sb = oneshot_common::sandbox(&server);
    let models = json!({"providers": {"openai-codex": {"baseUrl": server.root_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    let login = json!({"openai-codex": {"type": "oauth",
        "access": chatgpt_access_token("acct-fixture", "fixture"), "refresh": "rt-fixture",
        "expires": 99_999_999_999_999_i64, "accountId": "acct-fixture"}});
    std::fs::write(sb.agent.join("auth.json"), login.to_string()).unwrap();
    std::fs::write(sb.project.join("notes.txt"), "hello from the fixture\n").unwrap();
    for (thinking, prompt) in [("off", "What does notes.txt say?"), ("high", "hi")] {
        let output = oneshot_common::command(
            &sb,
            &[
                "-p",
                "--model",
                "openai-codex/gpt-5.1",
                "--thinking",
                thinking,
                prompt,
            ],
        )
        .output_within(PROCESS_LIMIT, "knightcode -p")
        .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let ours: Vec<Value> = server.requests().iter().map(shape).collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi/openai-codex/requests.json");
    let theirs: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let ours = Value::Array(ours);
    assert!(
        ours == theirs,
        "ours:\n{}\ntheirs:\n{}",
        serde_json::to_string_pretty(&ours).unwrap(),
        serde_json::to_string_pretty(&theirs).unwrap()
    );
}
