//! `message_end` results through the real binary (JSON mode, scripted mock model): a
//! returned `{message}` of the same role replaces the finished message in the event front
//! ends see, the session file and the conversation the next request carries; handlers
//! chain, and one of another role is reported and ignored.

use crate::oneshot_common;
use crate::rpc_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use serde_json::Value;

const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";

export default function (pi) {
  pi.registerTool({
    name: "lookup", label: "Lookup", description: "Looks up", parameters: Type.Object({}),
    execute: async () => ({ content: [{ type: "text", text: "token=hunter2" }], details: {} }),
  });
  const redact = (content) => content.map((c) => (c.type === "text" ? { ...c, text: c.text.replaceAll("hunter2", "[redacted]") } : c));
  pi.on("message_end", (event) => {
    const m = event.message;
    if (m.role === "assistant" || m.role === "toolResult") return { message: { ...m, content: redact(m.content) } };
  });
  // Chained: sees the first handler's message.
  pi.on("message_end", (event) => {
    const m = event.message;
    if (m.role === "toolResult") return { message: { ...m, content: [...m.content, { type: "text", text: "(checked)" }] } };
    if (m.role === "user") return { message: { role: "assistant", content: [] } };
  });
}
"#;

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect()
}

fn texts(message: &Value) -> String {
    message["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("|")
        })
        .unwrap_or_else(|| message["content"].as_str().unwrap_or("").to_owned())
}

#[test]
fn message_end_handlers_replace_finished_messages() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "lookup", "{}"),
            ScriptedReply::text("The token is hunter2."),
            ScriptedReply::text("ok"),
        ],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("redact.ts"), EXTENSION).unwrap();
    let run = knightcode(
        &sb,
        &["--mode", "json", "-e", "redact.ts", "look it up", "again"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    // The model's next requests carry the replaced messages.
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let tool = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool["content"], "token=[redacted]\n(checked)", "{tool}");
    let body = requests[2].body.to_string();
    assert!(body.contains("The token is [redacted]."), "{body}");
    assert!(!body.contains("hunter2"), "{body}");

    // Front ends see the replaced messages at message_end; a user message kept its role.
    let events = lines(&run.stdout);
    let ends: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["type"] == "message_end")
        .map(|e| {
            (
                e["message"]["role"].as_str().unwrap().to_owned(),
                texts(&e["message"]),
            )
        })
        .collect();
    assert!(
        ends.contains(&(
            "toolResult".to_owned(),
            "token=[redacted]|(checked)".to_owned()
        )),
        "{ends:?}"
    );
    assert!(
        ends.contains(&(
            "assistant".to_owned(),
            "The token is [redacted].".to_owned()
        )),
        "{ends:?}"
    );
    assert!(
        ends.contains(&("user".to_owned(), "look it up".to_owned())),
        "{ends:?}"
    );
    let errors: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "extension_error")
        .collect();
    assert!(
        errors.iter().any(|e| e["event"] == "message_end"
            && e["error"] == "message_end handlers must return a message with the same role"),
        "{errors:?}"
    );

    // The session file stores them so.
    let file = rpc_common::session_files(&sb.agent).pop().unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("token=[redacted]"), "{text}");
}
