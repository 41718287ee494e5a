//! The grammar-tool form of `codemode` through the real binary: against an OpenAI Responses
//! model with `supportsOpenAIGrammarTools`, codemode is declared as a custom tool, the
//! model's `custom_tool_call` runs as a script, its result goes back as a
//! `custom_tool_call_output`, and the session stores the call as `arguments: {code}`.

use knightcode_testkit::Chunking;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::Value;
use serde_json::json;

use crate::common::read_jsonl;
use crate::oneshot_common::knightcode;
use crate::oneshot_common::sandbox;

const SCRIPT: &str = "// @options: {\"timeout_ms\": 5000}\nconst text = await tools.read({ path: \"notes.txt\" });\nreturn \"lines: \" + text.split(\"\\n\").filter(Boolean).length;";

fn models(base_url: &str, grammar: bool) -> Value {
    json!({"providers": {"mock": {
        "baseUrl": base_url, "api": "openai-responses", "apiKey": "test-key",
        "models": [{"id": "mock-model", "name": "Mock", "reasoning": false,
                    "contextWindow": 128000, "maxTokens": 4096,
                    "compat": {"supportsOpenAIGrammarTools": grammar}}]}}})
}

#[test]
fn a_custom_tool_call_runs_a_script_and_its_result_goes_back_as_custom_output() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiResponses,
        vec![
            ScriptedReply::default()
                .with_custom_tool_call("call_1", "codemode", SCRIPT)
                .with_chunking(Chunking::chars(9)),
            ScriptedReply::text("Counted."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.agent.join("models.json"),
        models(&server.base_url(), true).to_string(),
    )
    .unwrap();
    let run = knightcode(
        &sandbox,
        &["--tools", "read,codemode", "-p", "count the lines"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Counted.\n");

    let requests = server.requests();
    let tools = requests[0].body["tools"].as_array().unwrap();
    let codemode = tools.iter().find(|t| t["name"] == "codemode").unwrap();
    assert_eq!(codemode["type"], "custom");
    assert_eq!(codemode["format"]["syntax"], "lark");
    let grammar = codemode["format"]["definition"].as_str().unwrap();
    assert!(grammar.contains("@options:"), "{grammar}");
    let read = tools.iter().find(|t| t["name"] == "read").unwrap();
    assert_eq!(read["type"], "function");

    let input = requests[1].body["input"].as_array().unwrap();
    let call = input
        .iter()
        .find(|i| i["type"] == "custom_tool_call")
        .unwrap_or_else(|| panic!("{input:#?}"));
    assert_eq!(call["input"], SCRIPT);
    assert_eq!(call["call_id"], "call_1");
    let output = input
        .iter()
        .find(|i| i["type"] == "custom_tool_call_output")
        .unwrap_or_else(|| panic!("{input:#?}"));
    assert_eq!(output["call_id"], "call_1");
    assert!(
        output["output"].to_string().contains("lines: 3"),
        "{output}"
    );
    assert!(!input.iter().any(|i| i["type"] == "function_call_output"));

    // The session keeps the call as the reference writes it: arguments {code}.
    let files = sandbox.session_files();
    let entries = read_jsonl(files.last().unwrap());
    let stored = entries
        .iter()
        .filter_map(|e| e["message"]["content"].as_array())
        .flatten()
        .find(|b| b["type"] == "toolCall")
        .unwrap();
    assert_eq!(stored["name"], "codemode");
    assert_eq!(stored["arguments"], json!({"code": SCRIPT}));
    assert!(
        stored["id"].as_str().unwrap().starts_with("call_1|ctc_"),
        "{stored}"
    );
}

#[test]
fn without_the_flag_codemode_stays_a_function_tool() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiResponses,
        vec![ScriptedReply::text("Hi.")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.agent.join("models.json"),
        models(&server.base_url(), false).to_string(),
    )
    .unwrap();
    let run = knightcode(&sandbox, &["--tools", "read,codemode", "-p", "hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let tools = server.requests()[0].body["tools"].clone();
    let codemode = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "codemode")
        .unwrap()
        .clone();
    assert_eq!(codemode["type"], "function");
    assert_eq!(codemode["parameters"]["required"], json!(["code"]));
}

/// A built-in catalog model the reference marks (`openai/gpt-5`) gets the grammar form with
/// no compat of its own in `models.json`, which only points the provider at the mock.
#[test]
fn a_catalog_gpt_5_gets_the_grammar_form() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiResponses,
        vec![ScriptedReply::text("Hi.")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.agent.join("models.json"),
        json!({"providers": {"openai": {"baseUrl": server.base_url()}}}).to_string(),
    )
    .unwrap();
    let output = crate::oneshot_common::command(
        &sandbox,
        &[
            "--provider",
            "openai",
            "--model",
            "gpt-5",
            "--tools",
            "read,codemode",
            "-p",
            "hi",
        ],
    )
    .env("OPENAI_API_KEY", "test-key")
    .output_within(PROCESS_LIMIT, "knightcode")
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "gpt-5");
    let tools = requests[0].body["tools"].as_array().unwrap();
    let codemode = tools.iter().find(|t| t["name"] == "codemode").unwrap();
    assert_eq!(codemode["type"], "custom");
    assert_eq!(codemode["format"]["syntax"], "lark");
}
