//! The `models` global of codemode scripts through the real binary: the session's models,
//! with the ones whose provider has credentials available; `classify` answers an error
//! result.

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::json;

use crate::oneshot_common::knightcode;
use crate::oneshot_common::sandbox;

const SCRIPT: &str = "const verdict = await models.classify({ provider: 'mock', id: 'judge' }, { state: 's', questions: {} });\nreturn 'RESULT ' + JSON.stringify({\n  available: models.getAvailableOfType('chat').map((m) => m.provider + '/' + m.id),\n  listed: models.getModelsOfType('chat').length,\n  mock: models.getModelOfType('chat', 'mock', 'mock-model').name,\n  classifiers: models.getModelsOfType('classifier'),\n  verdict: verdict.stopReason,\n});";

#[test]
fn a_script_lists_the_sessions_models() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "codemode", json!({ "code": SCRIPT }).to_string()),
            ScriptedReply::text("Listed."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let run = knightcode(
        &sandbox,
        &["--tools", "read,codemode", "-p", "which models?"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Listed.\n");

    let body = &server.requests()[1].body;
    let result = body["messages"].as_array().unwrap().last().unwrap();
    let text = result["content"].as_str().unwrap_or_default().to_owned();
    let text = if text.is_empty() {
        result["content"].to_string()
    } else {
        text
    };
    let json = text
        .split_once("RESULT ")
        .map(|(_, rest)| rest.trim())
        .unwrap_or_else(|| panic!("{text}"));
    let listed: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    // Only the mock provider has a key in the sandbox; the built-in catalog is listed too.
    assert_eq!(listed["available"], json!(["mock/mock-model"]), "{listed}");
    assert!(listed["listed"].as_u64().unwrap() > 1, "{listed}");
    assert_eq!(listed["mock"], "Mock");
    assert_eq!(listed["classifiers"], json!([]));
    assert_eq!(listed["verdict"], "error");
}
