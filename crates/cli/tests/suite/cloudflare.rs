//! Cloudflare Workers AI (`cloudflare-workers-ai`) and AI Gateway (`cloudflare-ai-gateway`)
//! through the real binary against the mocks of the formats they relay: the account and
//! gateway filled into the base URL from `CLOUDFLARE_ACCOUNT_ID` / `CLOUDFLARE_GATEWAY_ID`
//! (the base URLs keep the catalog's `{…}` placeholders, under the mock's address), the key
//! as a bearer token for Workers AI and in `cf-aig-authorization` (no upstream credentials)
//! for the gateway, a tool call round trip, an error in the stream, and what a missing
//! account id says.
//!
//! Compared with pi 0.73.1 against the same mocks (`knightcode-mock-provider`, `models.json`
//! base URLs with the placeholders, `CLOUDFLARE_API_KEY`, `CLOUDFLARE_ACCOUNT_ID`,
//! `CLOUDFLARE_GATEWAY_ID`) for Workers AI (`@cf/moonshotai/kimi-k2.5`) and the gateway's
//! Anthropic (`claude-sonnet-4-5`), OpenAI Responses (`gpt-5.1`) and compat
//! (`workers-ai/@cf/moonshotai/kimi-k2.5`) routes: the same paths, the same authorization
//! headers (`authorization` for Workers AI; `cf-aig-authorization` and neither
//! `authorization` nor `x-api-key` for the gateway), the same session headers and the same
//! messages in both requests of a tool call. The output cap differs (pi sends at most 32000
//! when nothing sets one; KnightCode the model's limit, as for every provider), and our
//! Anthropic requests add `?beta=true`, as they do everywhere.

use crate::oneshot_common;

use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::RecordedRequest;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::Value;
use serde_json::json;

const ACCOUNT: &str = "acct123";
const GATEWAY: &str = "gw-main";
const KEY: &str = "cf-test-token";

/// A sandbox whose `provider` models go to a mock of `format` under `path` (placeholders
/// kept, as in the catalog).
fn setup(
    format: WireFormat,
    provider: &str,
    path: &str,
    replies: Vec<ScriptedReply>,
) -> (MockServer, oneshot_common::Sandbox) {
    let server = MockServer::start_blocking(format, replies).unwrap();
    let sb = oneshot_common::sandbox(&server);
    let models =
        json!({"providers": {provider: {"baseUrl": format!("{}{path}", server.root_url())}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    (server, sb)
}

const WORKERS_PATH: &str = "/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1";

fn gateway_path(route: &str) -> String {
    format!("/v1/{{CLOUDFLARE_ACCOUNT_ID}}/{{CLOUDFLARE_GATEWAY_ID}}/{route}")
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_with(sb: &oneshot_common::Sandbox, env: &[(&str, &str)], args: &[&str]) -> Run {
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

fn run(sb: &oneshot_common::Sandbox, args: &[&str]) -> Run {
    let env = [
        ("CLOUDFLARE_API_KEY", KEY),
        ("CLOUDFLARE_ACCOUNT_ID", ACCOUNT),
        ("CLOUDFLARE_GATEWAY_ID", GATEWAY),
    ];
    run_with(sb, &env, args)
}

fn assistant_messages(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "message_end" && event["message"]["role"] == "assistant")
        .map(|event| event["message"].clone())
        .collect()
}

fn assert_gateway_auth(request: &RecordedRequest) {
    assert_eq!(
        request.header("cf-aig-authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.header("x-api-key"), None);
}

fn tool_then_answer() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::tool_call("call_cf1", "read", r#"{"path":"notes.txt"}"#),
        ScriptedReply::text("It lists alpha, beta and gamma."),
    ]
}

#[test]
fn workers_ai_goes_to_the_accounts_endpoint_with_a_bearer_token() {
    let (server, sb) = setup(
        WireFormat::OpenAiCompletions,
        "cloudflare-workers-ai",
        WORKERS_PATH,
        tool_then_answer(),
    );
    let run = run(
        &sb,
        &[
            "--mode",
            "json",
            "--model",
            "cloudflare-workers-ai/@cf/moonshotai/kimi-k2.5",
            "what is in notes.txt?",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 2, "{}", run.stdout);
    assert_eq!(messages[0]["stopReason"], "toolUse");
    assert_eq!(
        messages[1]["content"][0]["text"],
        "It lists alpha, beta and gamma."
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(
            request.path,
            "/client/v4/accounts/acct123/ai/v1/chat/completions"
        );
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(request.header("cf-aig-authorization"), None);
        assert!(request.header("x-session-affinity").is_some());
        assert_eq!(request.body["model"], "@cf/moonshotai/kimi-k2.5");
        // Workers AI is not OpenAI: no `store`, the system prompt as `system`.
        assert!(request.body.get("store").is_none());
        assert_eq!(request.body["messages"][0]["role"], "system");
    }
    let sent = requests[1].body["messages"].as_array().unwrap();
    let result = sent.last().unwrap();
    assert_eq!(result["role"], "tool");
    assert_eq!(result["tool_call_id"], "call_cf1");
}

#[test]
fn the_gateway_signs_anthropic_requests_with_its_own_header() {
    let (server, sb) = setup(
        WireFormat::AnthropicMessages,
        "cloudflare-ai-gateway",
        &gateway_path("anthropic"),
        vec![ScriptedReply::text("via the gateway")],
    );
    let run = run(
        &sb,
        &[
            "-p",
            "--model",
            "cloudflare-ai-gateway/claude-sonnet-4-5",
            "hi",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "via the gateway");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/acct123/gw-main/anthropic/v1/messages");
    assert_gateway_auth(request);
    assert_eq!(request.body["model"], "claude-sonnet-4-5");
}

#[test]
fn the_gateway_relays_openai_responses_and_a_tool_call() {
    let (server, sb) = setup(
        WireFormat::OpenAiResponses,
        "cloudflare-ai-gateway",
        &gateway_path("openai"),
        tool_then_answer(),
    );
    let run = run(
        &sb,
        &[
            "--mode",
            "json",
            "--model",
            "cloudflare-ai-gateway/gpt-5.1",
            "what is in notes.txt?",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 2, "{}", run.stdout);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.path, "/v1/acct123/gw-main/openai/responses");
        assert_gateway_auth(request);
    }
    let input = requests[1].body["input"].as_array().unwrap();
    let output = input.last().unwrap();
    assert_eq!(output["type"], "function_call_output");
    assert_eq!(output["call_id"], "call_cf1");
}

#[test]
fn an_error_in_a_gateway_stream_ends_the_answer() {
    let (server, sb) = setup(
        WireFormat::OpenAiCompletions,
        "cloudflare-ai-gateway",
        &gateway_path("compat"),
        vec![
            ScriptedReply::text("Partial answer").with_fault(Fault::MidStreamError {
                after_events: 2,
                message: "Upstream refused the request".into(),
                kind: MockErrorKind::InvalidRequest,
            }),
        ],
    );
    let run = run(
        &sb,
        &[
            "--mode",
            "json",
            "--model",
            "cloudflare-ai-gateway/workers-ai/@cf/moonshotai/kimi-k2.5",
            "hi",
        ],
    );
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 1, "{}", run.stdout);
    assert_eq!(messages[0]["stopReason"], "error");
    assert_eq!(
        messages[0]["errorMessage"], "Upstream refused the request",
        "{}",
        messages[0]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].path,
        "/v1/acct123/gw-main/compat/chat/completions"
    );
    assert_gateway_auth(&requests[0]);
    // The gateway's compat route takes `max_tokens`, and no reasoning effort.
    assert!(requests[0].body["max_tokens"].is_u64());
    assert!(requests[0].body.get("reasoning_effort").is_none());
}

#[test]
fn a_missing_account_id_says_what_to_set() {
    let (server, sb) = setup(
        WireFormat::OpenAiCompletions,
        "cloudflare-workers-ai",
        WORKERS_PATH,
        vec![ScriptedReply::text("unused")],
    );
    let run = run_with(
        &sb,
        &[("CLOUDFLARE_API_KEY", KEY)],
        &[
            "-p",
            "--model",
            "cloudflare-workers-ai/@cf/moonshotai/kimi-k2.5",
            "hi",
        ],
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains(
            "CLOUDFLARE_ACCOUNT_ID is required for provider cloudflare-workers-ai but is not set."
        ),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}
