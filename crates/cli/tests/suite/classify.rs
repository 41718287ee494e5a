//! Classifier models through the real binary: a `"type": "classifier"` model in
//! `models.json` served by the stand-in llama.cpp server, asked by an extension
//! (`ctx.modelRegistry.classify`), listed by `getAvailableClassifiers` and `findOfType`.

use knightcode_testkit::LlamaScript;
use knightcode_testkit::LlamaServer;
use knightcode_testkit::MockServer;
use knightcode_testkit::WireFormat;

use crate::oneshot_common::knightcode;
use crate::oneshot_common::sandbox;

const EXTENSION: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.registerCommand("judge", {
    handler: async (_args, ctx) => {
      const registry = ctx.modelRegistry;
      const judge = registry.findOfType("classifier", "llama", "qwen3-4b");
      const result = await registry.classify(judge, {
        state: { message: "The change works, thanks." },
        questions: { approved: { type: "bool", instructions: "Does the user approve?",
                                 criteria: { true: "Approval", false: "No approval" } } },
      });
      writeFileSync("judge.json", JSON.stringify({
        classifiers: registry.getAvailableClassifiers().map((m) => m.provider + "/" + m.id),
        chat: registry.getAll().filter((m) => m.provider === "llama").map((m) => m.id),
        judge,
        result,
      }));
    },
  });
}
"#;

#[test]
fn an_extension_classifies_with_a_models_json_classifier_on_llama_cpp() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap();
    let llama = LlamaServer::start(LlamaScript {
        vocab: vec![("\n".into(), 10), ("Yes".into(), 500), ("No".into(), 501)],
        opens_think: false,
        logprobs: vec![(
            "Answer Yes or No.".into(),
            vec![(500, 0.8f64.ln()), (501, 0.2f64.ln())],
        )],
    })
    .unwrap();
    let sandbox = sandbox(&server);
    with_classifier(&sandbox, &llama);
    std::fs::write(sandbox.project.join("judge.ts"), EXTENSION).unwrap();
    let run = knightcode(
        &sandbox,
        &[
            "-e",
            "judge.ts",
            "-p",
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "/judge",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let text = std::fs::read_to_string(sandbox.project.join("judge.json")).unwrap();
    let out: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        out["classifiers"],
        serde_json::json!(["llama/qwen3-4b"]),
        "{out}"
    );
    assert_eq!(out["chat"], serde_json::json!([]), "{out}");
    assert_eq!(out["judge"]["type"], "classifier");
    assert_eq!(out["result"]["stopReason"], "stop", "{out}");
    assert_eq!(out["result"]["api"], "llama-cpp-classify");
    let probability = out["result"]["answers"]["approved"]["probability"]
        .as_f64()
        .unwrap();
    assert!((probability - 0.8).abs() < 1e-12, "{out}");
    let requests = llama.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer llama-key"))
    );
    assert_eq!(llama.requests_to("/completion").len(), 1);
}

/// A models.json with the mock provider and a llama.cpp classifier served by `llama`.
fn with_classifier(sandbox: &crate::common::Sandbox, llama: &LlamaServer) {
    let path = sandbox.agent.join("models.json");
    let mut models: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    models["providers"]["llama"] = serde_json::json!({
        "baseUrl": format!("{}/v1", llama.url()), "apiKey": "llama-key",
        "models": [{"id": "qwen3-4b", "type": "classifier", "api": "llama-cpp-classify"}],
    });
    std::fs::write(&path, models.to_string()).unwrap();
}

const SCRIPT: &str = "const judge = models.getModelOfType('classifier', 'llama', 'qwen3-4b');\nconst result = await models.classify(judge, { state: { n: 2 }, questions: { size: { type: 'score', instructions: 'How big?', criteria: ['small', 'large'] } } });\nreturn 'RESULT ' + JSON.stringify({ available: models.getAvailableOfType('classifier').map((m) => m.id), result });";

#[test]
fn a_codemode_script_classifies_with_models_classify() {
    use knightcode_testkit::ScriptedReply;
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call(
                "call_1",
                "codemode",
                serde_json::json!({ "code": SCRIPT }).to_string(),
            ),
            ScriptedReply::text("Judged."),
        ],
    )
    .unwrap();
    let llama = LlamaServer::start(LlamaScript {
        vocab: vec![("\n".into(), 10), ("0".into(), 48), ("1".into(), 49)],
        opens_think: false,
        logprobs: vec![(
            "Answer with one level number.".into(),
            vec![(49, 0.75f64.ln()), (48, 0.25f64.ln())],
        )],
    })
    .unwrap();
    let sandbox = sandbox(&server);
    with_classifier(&sandbox, &llama);
    let run = knightcode(&sandbox, &["--tools", "read,codemode", "-p", "judge"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let body = &server.requests()[1].body;
    let content = &body["messages"].as_array().unwrap().last().unwrap()["content"];
    let text = content
        .as_str()
        .or_else(|| content[0]["text"].as_str())
        .unwrap_or_default();
    let json = text
        .split_once("RESULT ")
        .map(|(_, rest)| rest.trim())
        .unwrap_or_else(|| panic!("{content}"));
    let out: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(out["available"], serde_json::json!(["qwen3-4b"]), "{out}");
    assert_eq!(out["result"]["stopReason"], "stop", "{out}");
    let score = out["result"]["answers"]["size"]["score"].as_f64().unwrap();
    assert!((score - 0.75).abs() < 1e-12, "{out}");
    assert_eq!(llama.requests_to("/completion").len(), 1);
}
