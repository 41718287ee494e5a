//! `pi.sendMessage` through the real binary (JSON mode, scripted mock model): a message
//! that only joins the conversation, one that starts a turn, and one kept for the next
//! prompt; all stored as `custom_message` entries and sent to the model as user content.

use crate::oneshot_common;
use crate::rpc_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use rpc_common::user_texts;
use serde_json::Value;

const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("note", {
    handler: async (args) => {
      pi.sendMessage({ customType: "note", content: `note: ${args}`, display: true });
    },
  });
  pi.registerCommand("ask", {
    handler: async (args) => {
      pi.sendMessage({ customType: "ask", content: `asked: ${args}`, display: true }, { triggerTurn: true });
    },
  });
  pi.registerCommand("later", {
    handler: async (args) => {
      pi.sendMessage({ customType: "later", content: `later: ${args}`, display: false }, { deliverAs: "nextTurn" });
    },
  });
  pi.on("before_agent_start", (event) => {
    if (event.messageType === "custom") {
      return { message: { customType: "seen", content: `started by ${event.message.customType}`, display: false } };
    }
  });
}
"#;

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect()
}

#[test]
fn send_message_joins_the_conversation_starts_a_turn_or_waits_for_the_next_prompt() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("first"), ScriptedReply::text("second")],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("messages.ts"), EXTENSION).unwrap();
    let run = knightcode(
        &sb,
        &[
            "--mode",
            "json",
            "-e",
            "messages.ts",
            "/note alpha",
            "/ask beta",
            "/later gamma",
            "hello",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    // The plain message is shown to front ends as it joins (no run).
    let stream = events(&run.stdout);
    let custom_ends: Vec<&Value> = stream
        .iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "custom")
        .collect();
    assert!(
        custom_ends
            .iter()
            .any(|e| e["message"]["content"] == "note: alpha"),
        "{custom_ends:?}"
    );

    // `/ask` started a run from its message, with what `before_agent_start` added; the
    // plain note before it was part of the conversation.
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one run per turn-starting input");
    assert_eq!(
        user_texts(&requests[0].body),
        vec!["note: alpha", "asked: beta", "started by ask"]
    );
    // The `nextTurn` message came with the next prompt.
    let second = user_texts(&requests[1].body);
    assert_eq!(
        &second[second.len() - 2..],
        ["hello".to_owned(), "later: gamma".to_owned()]
    );

    // All are `custom_message` entries in the session file.
    let file = rpc_common::session_files(&sb.agent).pop().unwrap();
    let entries: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let custom: Vec<(&str, &str)> = entries
        .iter()
        .filter(|e| e["type"] == "custom_message")
        .map(|e| {
            (
                e["customType"].as_str().unwrap(),
                e["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        custom,
        vec![
            ("note", "note: alpha"),
            ("ask", "asked: beta"),
            ("seen", "started by ask"),
            ("later", "later: gamma"),
        ]
    );
    assert!(
        !entries
            .iter()
            .any(|e| e["type"] == "message" && e["message"]["role"] == "custom"),
        "custom messages are never plain message entries"
    );
}
