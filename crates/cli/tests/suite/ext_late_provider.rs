//! `pi.registerProvider` after loading (from a command) through the real binary (JSON mode,
//! mock model): the provider's models are in the registry at once (`ctx.modelRegistry`),
//! `pi.setModel` selects one, and the next prompt goes to it with its key; a bad config
//! throws to the caller. A provider written in JS (`streamSimple`) registered that way
//! answers the next prompt itself, and stops answering once unregistered.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use serde_json::Value;

const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("late", {
    handler: async (baseUrl, ctx) => {
      // Read first, so the registry's list is what the host has cached.
      const before = ctx.modelRegistry.find("late", "late-model");
      let refused = "";
      try { pi.registerProvider("broken", { models: [{ id: "x" }] }); } catch (e) { refused = e.message; }
      pi.registerProvider("late", {
        baseUrl, api: "openai-completions", apiKey: "late-key",
        models: [{ id: "late-model", name: "Late", reasoning: false, input: ["text"],
                   cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8000, maxTokens: 100 }],
      });
      const model = ctx.modelRegistry.find("late", "late-model");
      const selected = await pi.setModel(model);
      pi.sendMessage({ customType: "late", content: JSON.stringify({ before: !!before, found: !!model, selected, refused }), display: true });
    },
  });
}
"#;

#[test]
fn a_provider_registered_from_a_command_can_be_selected_and_answers() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("from late")],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("late.ts"), EXTENSION).unwrap();
    let late = format!("/late {}", server.base_url());
    let run = knightcode(&sb, &["--mode", "json", "-e", "late.ts", &late, "hello"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let report: Value = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "message_end" && e["message"]["customType"] == "late")
        .map(|e| serde_json::from_str(e["message"]["content"].as_str().unwrap()).unwrap())
        .unwrap();
    assert_eq!(report["before"], false, "{report}");
    assert_eq!(report["found"], true, "{report}");
    assert_eq!(report["selected"], true, "{report}");
    assert_eq!(
        report["refused"],
        "Provider broken: \"baseUrl\" is required when defining models."
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].body["model"], "late-model");
    let auth = requests[0]
        .headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone());
    assert_eq!(auth.as_deref(), Some("Bearer late-key"));
}

const LATE_STREAM: &str = r#"
import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";

const model = { id: "js-1", name: "JS", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8000, maxTokens: 100 };

export default function (pi) {
  pi.registerCommand("late-js", {
    handler: async (_args, ctx) => {
      pi.registerProvider("latejs", {
        baseUrl: "http://127.0.0.1:9", apiKey: "js-key", api: "late-js-api", models: [model],
        streamSimple(model, context, options) {
          const stream = createAssistantMessageEventStream();
          const last = context.messages[context.messages.length - 1];
          const text = typeof last.content === "string" ? last.content : last.content.map((c) => c.text).join("");
          const reply = `late js (${options.apiKey}): ${text}`;
          const output = { role: "assistant", content: [{ type: "text", text: reply }], api: model.api,
            provider: model.provider, model: model.id, stopReason: "stop", timestamp: Date.now(),
            usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
                     cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } };
          queueMicrotask(() => {
            stream.push({ type: "start", partial: output });
            stream.push({ type: "text_start", contentIndex: 0, partial: output });
            stream.push({ type: "text_delta", contentIndex: 0, delta: reply, partial: output });
            stream.push({ type: "text_end", contentIndex: 0, content: reply, partial: output });
            stream.push({ type: "done", reason: "stop", message: output });
            stream.end();
          });
          return stream;
        },
      });
      await pi.setModel(ctx.modelRegistry.find("latejs", "js-1"));
    },
  });
}
"#;

#[test]
fn a_js_provider_registered_from_a_command_streams_the_next_prompt() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("late-js.ts"), LATE_STREAM).unwrap();
    let run = knightcode(&sb, &["-p", "-e", "late-js.ts", "/late-js", "hello there"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "late js (js-key): hello there");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}
