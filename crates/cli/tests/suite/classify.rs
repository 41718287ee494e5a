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
    let path = sandbox.agent.join("models.json");
    let mut models: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    models["providers"]["llama"] = serde_json::json!({
        "baseUrl": format!("{}/v1", llama.url()), "apiKey": "llama-key",
        "models": [{"id": "qwen3-4b", "type": "classifier", "api": "llama-cpp-classify"}],
    });
    std::fs::write(&path, models.to_string()).unwrap();
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
