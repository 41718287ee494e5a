//! Mistral's chat API (`mistral-conversations`) through the real binary against the Mistral
//! mock: a streamed answer with reasoning, a tool call and its result sent back, an error in
//! the stream and an error response, and the request as the reference sends it.
//!
//! Compared with pi 0.73.1 (its Mistral SDK client) against the same mock
//! (`knightcode-mock-provider --format mistral-conversations`, `mistral.baseUrl` in
//! models.json, `MISTRAL_API_KEY`): the same path, `authorization`, `accept` and
//! `x-affinity` headers, and the same body fields in the same order (`model`, `max_tokens`
//! 32000, `stream`, `messages` with the system prompt first and user text as a content
//! list, `tools` with `strict: false`, `prompt_mode` or `reasoning_effort`), and the same
//! second request (assistant `content` with the `thinking` chunk, `tool_calls` with `index:
//! 0`, `prefix: false`; the tool message's text content, trimmed). Two differences, both
//! deliberate: pi keeps the empty text blocks Mistral's `content: ""` chunks open (we skip
//! empty deltas), and an error object in the stream reaches pi as its SDK's schema
//! complaint where we say the error's message.

use crate::oneshot_common;

use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::MockUsage;
use knightcode_testkit::RecordedRequest;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::Value;
use serde_json::json;

/// A sandbox whose `mistral` models go to the Mistral mock.
fn setup(replies: Vec<ScriptedReply>) -> (MockServer, oneshot_common::Sandbox) {
    let server = MockServer::start_blocking(WireFormat::Mistral, replies).unwrap();
    let sb = oneshot_common::sandbox(&server);
    let models = json!({"providers": {"mistral": {"baseUrl": server.base_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    (server, sb)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(sb: &oneshot_common::Sandbox, args: &[&str]) -> Run {
    let output = oneshot_common::command(sb, args)
        .env("MISTRAL_API_KEY", "mistral-test-key")
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The assistant messages of a `--mode json` run, as `message_end` reports them.
fn assistant_messages(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "message_end" && event["message"]["role"] == "assistant")
        .map(|event| event["message"].clone())
        .collect()
}

fn assert_mistral_request(request: &RecordedRequest, model: &str) {
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some("Bearer mistral-test-key")
    );
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert!(request.header("x-affinity").is_some_and(|s| !s.is_empty()));
    let body = &request.body;
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(&keys[..4], ["model", "max_tokens", "stream", "messages"]);
    assert_eq!(body["model"], model);
    assert_eq!(body["max_tokens"], 32000);
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][0]["role"], "system");
    let read = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == "read")
        .unwrap();
    assert_eq!(read["type"], "function");
    assert_eq!(read["function"]["strict"], false);
    assert_eq!(read["function"]["parameters"]["type"], "object");
}

#[test]
fn a_streamed_answer_with_reasoning() {
    let (server, sb) = setup(vec![
        ScriptedReply::default()
            .with_thinking("Thinking it over.", None)
            .with_text("Hello from Mistral.")
            .with_usage(MockUsage {
                input: 12,
                output: 5,
                ..MockUsage::default()
            }),
    ]);
    let run = run(
        &sb,
        &["--mode", "json", "--model", "mistral/magistral-small", "hi"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 1, "{}", run.stdout);
    let message = &messages[0];
    assert_eq!(message["api"], "mistral-conversations");
    assert_eq!(
        message["content"],
        json!([{"type": "thinking", "thinking": "Thinking it over."},
               {"type": "text", "text": "Hello from Mistral."}])
    );
    assert_eq!(message["stopReason"], "stop");
    assert_eq!(message["responseId"], "mistral-mock-1");
    assert_eq!(message["usage"]["input"], 12);
    assert_eq!(message["usage"]["output"], 5);
    assert_eq!(message["usage"]["totalTokens"], 17);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_mistral_request(request, "magistral-small");
    assert_eq!(
        request.body["messages"][1],
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    );
    // Magistral reasons when asked through the prompt mode.
    assert_eq!(request.body["prompt_mode"], "reasoning");
    assert!(request.body.get("reasoning_effort").is_none());
}

#[test]
fn mistral_small_takes_a_reasoning_effort_and_none_when_thinking_is_off() {
    let (server, sb) = setup(vec![ScriptedReply::text("one"), ScriptedReply::text("two")]);
    let model = "mistral/mistral-small-latest";
    let first = run(&sb, &["-p", "--model", model, "--thinking", "low", "hi"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(first.stdout.trim(), "one");
    let second = run(&sb, &["-p", "--model", model, "--thinking", "off", "hi"]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    let requests = server.requests();
    // No thinking-level map in the catalog: every level asks for `high`, as the reference.
    assert_eq!(requests[0].body["reasoning_effort"], "high");
    assert!(requests[0].body.get("prompt_mode").is_none());
    assert!(requests[1].body.get("reasoning_effort").is_none());
    assert!(requests[1].body.get("prompt_mode").is_none());
}

#[test]
fn a_tool_call_round_trip() {
    let (server, sb) = setup(vec![
        ScriptedReply::default()
            .with_thinking("I should read it.", None)
            .with_text("Reading.")
            .with_tool_call("abcDEF123", "read", r#"{"path":"notes.txt"}"#),
        ScriptedReply::text("It lists alpha, beta and gamma."),
    ]);
    let run = run(
        &sb,
        &[
            "--mode",
            "json",
            "--model",
            "mistral/magistral-small",
            "what is in notes.txt?",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 2, "{}", run.stdout);
    assert_eq!(messages[0]["stopReason"], "toolUse");
    assert_eq!(
        messages[0]["content"][2],
        json!({"type": "toolCall", "id": "abcDEF123", "name": "read",
               "arguments": {"path": "notes.txt"}})
    );
    assert_eq!(
        messages[1]["content"][0]["text"],
        "It lists alpha, beta and gamma."
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_mistral_request(&requests[1], "magistral-small");
    let sent = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(
        sent[2],
        json!({
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "I should read it."}]},
                {"type": "text", "text": "Reading."},
            ],
            "tool_calls": [{"id": "abcDEF123", "type": "function",
                            "function": {"name": "read", "arguments": "{\"path\":\"notes.txt\"}"},
                            "index": 0}],
            "prefix": false,
        })
    );
    assert_eq!(
        sent[3],
        json!({"role": "tool", "content": [{"type": "text", "text": "alpha\nbeta\ngamma"}],
               "tool_call_id": "abcDEF123", "name": "read"})
    );
}

#[test]
fn an_error_in_the_stream_ends_the_answer_with_its_message() {
    let (server, sb) = setup(vec![ScriptedReply::text("Partial answer").with_fault(
        Fault::MidStreamError {
            after_events: 2,
            message: "Invalid model output".into(),
            kind: MockErrorKind::InvalidRequest,
        },
    )]);
    let run = run(
        &sb,
        &["--mode", "json", "--model", "mistral/devstral-2512", "hi"],
    );
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 1, "{}", run.stdout);
    let message = &messages[0];
    assert_eq!(message["stopReason"], "error");
    assert_eq!(
        message["errorMessage"],
        "Mistral API error: Invalid model output"
    );
    // What streamed before the error stays.
    assert_eq!(message["content"][0]["text"], "Part");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_error_response_says_mistral_and_the_body() {
    let (server, sb) = setup(vec![ScriptedReply::http_error(400)]);
    let run = run(&sb, &["-p", "--model", "mistral/devstral-2512", "hi"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains(
            r#"Mistral API error (400): {"object":"error","message":"Invalid request","type":"invalid_request_error","param":null,"code":"3000"}"#
        ),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn without_a_key_it_says_which_variable_to_set() {
    let (server, sb) = setup(vec![ScriptedReply::text("unused")]);
    let output = oneshot_common::command(&sb, &["-p", "--model", "mistral/devstral-2512", "hi"])
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("MISTRAL_API_KEY"), "{stderr}");
    assert!(server.requests().is_empty());
}
