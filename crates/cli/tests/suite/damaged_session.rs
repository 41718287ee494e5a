//! A session file damaged in the middle (a crash, a disk error, a careless edit): every intact
//! entry stays in the context the model gets, the lost lines are named on stderr, and no
//! tool result whose call was lost reaches the provider.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;

const HEADER: &str = r#"{"type":"session","version":3,"id":"sid","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

#[test]
fn a_damaged_line_loses_only_itself() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let file = sandbox.project.join("damaged.jsonl");
    let lines = [
        HEADER,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"first question","timestamp":1}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"first answer"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}"#,
        // The user's second question, cut by a disk error.
        r#"{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-01-0"#,
        // The assistant message that called a tool, damaged too: its result is left alone.
        r#"{"type":"message","id":"a2","parentId":"u2","tim@@@@"#,
        r#"{"type":"message","id":"t1","parentId":"a2","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"file contents"}],"isError":false,"timestamp":5}}"#,
        r#"{"type":"message","id":"a3","parentId":"t1","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"assistant","content":[{"type":"text","text":"third answer"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":6}}"#,
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let run = knightcode(
        &sandbox,
        &["--session", file.to_str().unwrap(), "-p", "next question"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "ok\n");
    // Which lines were lost, and where the orphan went.
    assert!(
        run.stderr.contains("line 4 is not valid JSON"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("line 5 is not valid JSON"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "entry t1 points at missing parent a2 (a lost or damaged line); it is attached to a1"
        ),
        "{}",
        run.stderr
    );
    let request = &server.requests()[0].body;
    let said: Vec<(String, String)> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let text = match &m["content"] {
                serde_json::Value::String(text) => text.clone(),
                other => other[0]["text"].as_str().unwrap_or_default().to_owned(),
            };
            (m["role"].as_str().unwrap().to_owned(), text)
        })
        .collect();
    let said: Vec<(&str, &str)> = said.iter().map(|(r, t)| (r.as_str(), t.as_str())).collect();
    assert_eq!(
        said,
        [
            ("user", "first question"),
            ("assistant", "first answer"),
            ("assistant", "third answer"),
            ("user", "next question"),
        ]
    );
}
