//! `before_provider_headers` and `provider_stream_event` through the real binary (JSON mode,
//! mock model): handlers edit the request headers in place, in load order, and see every
//! parsed stream event, stamped with the provider, API and model, before it is decoded.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use serde_json::Value;

const FIRST: &str = r#"
import * as fs from "node:fs";
export default function (pi) {
  pi.on("before_provider_headers", (event) => {
    event.headers["x-probe"] = "added";
    for (const name of Object.keys(event.headers)) {
      if (name.toLowerCase() === "authorization") event.headers[name] = null;
    }
  });
  pi.on("provider_stream_event", (event) => {
    const data = event.data;
    fs.appendFileSync("stream-events.jsonl", JSON.stringify({
      provider: event.provider, api: event.api, model: event.model,
      data: typeof data === "string" ? data : Object.keys(data).sort().join(","),
    }) + "\n");
  });
}
"#;

const SECOND: &str = r#"
export default function (pi) {
  pi.on("before_provider_headers", (event) => {
    event.headers["x-second"] = event.headers["x-probe"] === "added" ? "saw-first" : "alone";
  });
}
"#;

#[test]
fn header_handlers_edit_the_request_and_stream_handlers_see_every_raw_event() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hello back")],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("first.ts"), FIRST).unwrap();
    std::fs::write(sb.project.join("second.ts"), SECOND).unwrap();
    let run = knightcode(
        &sb,
        &[
            "--mode",
            "json",
            "-e",
            "first.ts",
            "-e",
            "second.ts",
            "hello",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!run.stdout.contains("extension_error"), "{}", run.stdout);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let header = |name: &str| {
        requests[0]
            .headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header("x-probe").as_deref(), Some("added"));
    assert_eq!(header("x-second").as_deref(), Some("saw-first"));
    assert_eq!(header("authorization"), None, "{:?}", requests[0].headers);
    assert!(
        header("content-type").is_some(),
        "{:?}",
        requests[0].headers
    );

    let text = std::fs::read_to_string(sb.project.join("stream-events.jsonl")).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.len() >= 3, "{text}");
    for event in &events {
        assert_eq!(event["provider"], "mock", "{event}");
        assert_eq!(event["api"], "openai-completions", "{event}");
        assert_eq!(event["model"], "mock-model", "{event}");
    }
    // The chunks as the wire had them (an OpenAI chunk object), then the closing `[DONE]`.
    assert!(
        events[0]["data"].as_str().unwrap().contains("choices"),
        "{text}"
    );
    assert_eq!(events.last().unwrap()["data"], "[DONE]", "{text}");
}
