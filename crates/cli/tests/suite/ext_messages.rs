//! `pi.sendMessage` through the real binary (JSON mode, scripted mock model): a message
//! that only joins the conversation, one that starts a turn, and one kept for the next
//! prompt; all stored as `custom_message` entries and sent to the model as user content.
//! And `pi.sendUserMessage`, sent as written or, with `expandPromptTemplates`, as if typed.

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

const TYPED: &str = r#"
export default function (pi) {
  pi.registerCommand("typed", {
    handler: async (args) => { pi.sendUserMessage(args, { expandPromptTemplates: true }); },
  });
  pi.registerCommand("raw", {
    handler: async (args) => { pi.sendUserMessage(args); },
  });
  pi.registerCommand("shout", {
    handler: async (args) => { pi.sendUserMessage(`SHOUTED ${args}`); },
  });
}
"#;

#[test]
fn send_user_message_expands_templates_skills_and_commands_only_when_asked() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        (0..5)
            .map(|i| ScriptedReply::text(format!("answer {i}")))
            .collect(),
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("typed.ts"), TYPED).unwrap();
    std::fs::create_dir_all(sb.agent.join("prompts")).unwrap();
    std::fs::write(
        sb.agent.join("prompts/greet.md"),
        "---\ndescription: Greets\n---\nGreet $1 warmly.\n",
    )
    .unwrap();
    std::fs::create_dir_all(sb.agent.join("skills/helper")).unwrap();
    std::fs::write(
        sb.agent.join("skills/helper/SKILL.md"),
        "---\nname: helper\ndescription: Helps\n---\nHELPER-SKILL-BODY\n",
    )
    .unwrap();
    let run = knightcode(
        &sb,
        &[
            "--mode",
            "json",
            "-e",
            "typed.ts",
            "/typed /greet Bob",
            "/raw /greet Ann",
            "/typed /skill:helper now",
            "/typed /shout loud",
            "/raw /shout quiet",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let last_user = |i: usize| {
        user_texts(&server.requests()[i].body)
            .pop()
            .unwrap_or_default()
    };
    assert_eq!(server.requests().len(), 5);
    assert_eq!(last_user(0), "Greet Bob warmly.");
    assert_eq!(last_user(1), "/greet Ann");
    let skill = last_user(2);
    assert!(
        skill.contains("HELPER-SKILL-BODY") && skill.ends_with("now"),
        "{skill}"
    );
    // An extension command runs as if typed; without the option it is only text.
    assert_eq!(last_user(3), "SHOUTED loud");
    assert_eq!(last_user(4), "/shout quiet");
}

const AT_AGENT_END: &str = r#"
export default function (pi) {
  pi.on("agent_end", () => {
    pi.sendMessage({ customType: "summary", content: "the run ended", display: true });
  });
}
"#;

/// A message sent from an `agent_end` handler without `triggerTurn` joins the conversation
/// (as in pi, where the run is over by then); it does not start another model turn. The
/// next prompt carries it.
#[test]
fn a_message_sent_at_agent_end_joins_the_conversation_without_another_turn() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
            ScriptedReply::text("never asked"),
        ],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("end.ts"), AT_AGENT_END).unwrap();
    let run = knightcode(&sb, &["--mode", "json", "-e", "end.ts", "hello", "again"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one request per prompt: {requests:#?}");
    let second = user_texts(&requests[1].body);
    assert!(
        second.iter().any(|t| t.contains("the run ended")),
        "{second:?}"
    );
    let file = rpc_common::session_files(&sb.agent).pop().unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.lines()
            .filter(|l| l.contains("\"custom_message\"") && l.contains("the run ended"))
            .count()
            >= 1,
        "{text}"
    );
}
