//! Azure OpenAI's Responses API (`azure-openai-responses`) through the real binary against
//! the Responses mock, which also answers on Azure's `/openai/v1/responses`: the endpoint
//! from `AZURE_OPENAI_BASE_URL` or `models.json`, `api-version`, the key in `api-key`, the
//! deployment map, a tool call sent back, an error in the stream, and what a missing
//! endpoint says.
//!
//! Compared with pi 0.73.1 (its `AzureOpenAI` client) against the same mock
//! (`knightcode-mock-provider --format openai-responses`, `AZURE_OPENAI_BASE_URL=<mock>/openai/v1`,
//! `AZURE_OPENAI_API_KEY`, `AZURE_OPENAI_DEPLOYMENT_NAME_MAP=gpt-5-mini=team-mini`,
//! `AZURE_OPENAI_API_VERSION`): the same path and query, the same `api-key` header and no
//! `authorization`, and the same bodies for both requests of a tool call (keys in the same
//! order: `model` = the deployment, `input`, `stream`, `prompt_cache_key` = the session,
//! `max_output_tokens` 32000, `tools` with `strict: false`, `reasoning`, `include`; no
//! `store`), the replayed reasoning, message and function-call items included.

use crate::oneshot_common;

use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::Value;
use serde_json::json;

const MODEL: &str = "azure-openai-responses/gpt-5-mini";

fn setup(replies: Vec<ScriptedReply>) -> (MockServer, oneshot_common::Sandbox) {
    let server = MockServer::start_blocking(WireFormat::OpenAiResponses, replies).unwrap();
    let sb = oneshot_common::sandbox(&server);
    (server, sb)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(sb: &oneshot_common::Sandbox, env: &[(&str, &str)], args: &[&str]) -> Run {
    let output = oneshot_common::command(sb, args)
        .envs(env.iter().copied())
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn assistant_messages(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "message_end" && event["message"]["role"] == "assistant")
        .map(|event| event["message"].clone())
        .collect()
}

#[test]
fn the_endpoint_and_deployment_come_from_the_environment() {
    let (server, sb) = setup(vec![ScriptedReply::text("from azure")]);
    let base = format!("{}/openai/v1", server.root_url());
    let env = [
        ("AZURE_OPENAI_API_KEY", "azure-test-key"),
        ("AZURE_OPENAI_BASE_URL", base.as_str()),
        (
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
            "gpt-4o=prod-4o,gpt-5-mini=team-mini",
        ),
    ];
    let run = run(&sb, &env, &["-p", "--model", MODEL, "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "from azure");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/openai/v1/responses");
    assert_eq!(request.query, "api-version=v1");
    assert_eq!(request.header("api-key"), Some("azure-test-key"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body = &request.body;
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "input",
            "stream",
            "prompt_cache_key",
            "max_output_tokens",
            "tools",
            "reasoning",
            "include"
        ]
    );
    assert_eq!(body["model"], "team-mini");
    assert_eq!(body["max_output_tokens"], 32000);
    assert!(
        body["prompt_cache_key"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert_eq!(body["tools"][0]["strict"], false);
    assert_eq!(body["reasoning"]["summary"], "auto");
}

#[test]
fn a_tool_call_round_trip_through_a_models_json_endpoint() {
    let (server, sb) = setup(vec![
        ScriptedReply::default()
            .with_thinking("Read it first.", Some("enc-1"))
            .with_tool_call("call_az1", "read", r#"{"path":"notes.txt"}"#),
        ScriptedReply::text("alpha, beta, gamma"),
    ]);
    let models = json!({"providers": {"azure-openai-responses": {
        "baseUrl": format!("{}/openai/v1/", server.root_url())}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    let env = [
        ("AZURE_OPENAI_API_KEY", "azure-test-key"),
        ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
    ];
    let run = run(
        &sb,
        &env,
        &["--mode", "json", "--model", MODEL, "what is in notes.txt?"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 2, "{}", run.stdout);
    assert_eq!(messages[0]["api"], "azure-openai-responses");
    assert_eq!(messages[0]["stopReason"], "toolUse");
    assert_eq!(messages[1]["content"][0]["text"], "alpha, beta, gamma");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.path, "/openai/v1/responses");
        assert_eq!(request.query, "api-version=2025-04-01-preview");
        assert_eq!(request.body["model"], "gpt-5-mini");
    }
    let input = requests[1].body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(
        kinds,
        ["reasoning", "function_call", "function_call_output"],
        "{input:?}"
    );
    let reasoning = &input[2];
    assert_eq!(reasoning["encrypted_content"], "enc-1");
    let output = input.last().unwrap();
    assert_eq!(output["call_id"], "call_az1");
    assert_eq!(output["output"], "alpha\nbeta\ngamma\n");
}

#[test]
fn an_error_in_the_stream_ends_the_answer() {
    let (server, sb) = setup(vec![ScriptedReply::text("Partial answer").with_fault(
        Fault::MidStreamError {
            after_events: 4,
            message: "The response was filtered".into(),
            kind: MockErrorKind::InvalidRequest,
        },
    )]);
    let base = format!("{}/openai/v1", server.root_url());
    let env = [
        ("AZURE_OPENAI_API_KEY", "azure-test-key"),
        ("AZURE_OPENAI_BASE_URL", base.as_str()),
    ];
    let run = run(&sb, &env, &["--mode", "json", "--model", MODEL, "hi"]);
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 1, "{}", run.stdout);
    assert_eq!(messages[0]["stopReason"], "error");
    assert!(
        messages[0]["errorMessage"]
            .as_str()
            .unwrap()
            .contains("The response was filtered"),
        "{}",
        messages[0]
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn without_an_endpoint_it_says_what_to_set() {
    let (server, sb) = setup(vec![ScriptedReply::text("unused")]);
    let run = run(
        &sb,
        &[("AZURE_OPENAI_API_KEY", "azure-test-key")],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("AZURE_OPENAI_BASE_URL"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("AZURE_OPENAI_RESOURCE_NAME"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}
