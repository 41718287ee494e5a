//! Turn markers (`session-format.md`, "Turn boundaries") written by the real binary: a
//! `knightcode.turn` entry before each run's prompt and a `knightcode.turnEnd` entry when it
//! settles (completed, failed with its kind, interrupted); a killed run reads as interrupted;
//! markers never reach the model. And compaction checkpoints: the `compaction` entry's
//! `systemMessage` is the next request's system prompt.

use crate::common;
use crate::oneshot_common;
use crate::rpc_common;

use common::session_files;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::TurnErrorKind;
use knightcode_protocol::TurnStatus;
use knightcode_session::LockOptions;
use knightcode_session::SessionStore;
use knightcode_session::SystemClock;
use knightcode_testkit::Fault;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::command;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use rpc_common::Rpc;
use rpc_common::read_jsonl;
use rpc_common::watchdog;
use serde_json::Value;

/// Each entry as `type` (a message as its role, a custom entry as its `customType`).
fn shapes(entries: &[Value]) -> Vec<String> {
    entries[1..]
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => e["message"]["role"].as_str().unwrap().to_owned(),
            "custom" => e["customType"].as_str().unwrap().to_owned(),
            other => other.to_owned(),
        })
        .collect()
}

/// The turns the session reader makes of a file.
fn turns(file: &std::path::Path) -> Vec<knightcode_session::Turn> {
    let store = SessionStore::new(
        std::sync::Arc::new(SystemClock::new()),
        LockOptions::default(),
    );
    let session = store.open_read_only(file).unwrap();
    session.turns()
}

fn ends(entries: &[Value]) -> Vec<&Value> {
    entries
        .iter()
        .filter(|e| e["customType"] == "knightcode.turnEnd")
        .collect()
}

#[test]
fn print_runs_frame_each_prompt_with_a_marker_and_an_end_that_never_reach_the_model() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_read", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("It has three lines."),
            ScriptedReply::text("Still three."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let first = knightcode(&sandbox, &["-p", "Read notes.txt"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let second = knightcode(&sandbox, &["--continue", "-p", "And now?"]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(second.stdout, "Still three.\n");

    let files = session_files(&sandbox.agent);
    let entries = read_jsonl(&files[0]);
    assert_eq!(
        shapes(&entries),
        [
            "model_change",
            "thinking_level_change",
            "system",
            "knightcode.turn",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "knightcode.turnEnd",
            "knightcode.turn",
            "user",
            "assistant",
            "knightcode.turnEnd",
        ]
    );
    // The marker's parent is what came before the run; the end's is the last reply.
    for (i, entry) in entries.iter().enumerate() {
        if entry["customType"] == "knightcode.turn" {
            assert_eq!(entry["parentId"], entries[i - 1]["id"]);
            assert!(entry.get("data").is_none(), "{entry}");
            assert_eq!(
                entries[i + 1]["parentId"],
                entry["id"],
                "the prompt follows"
            );
        }
        if entry["customType"] == "knightcode.turnEnd" {
            assert_eq!(entries[i - 1]["message"]["role"], "assistant");
            assert_eq!(entry["parentId"], entries[i - 1]["id"]);
            assert_eq!(entry["data"], serde_json::json!({"status": "completed"}));
        }
    }
    let read = turns(&files[0]);
    assert_eq!(
        read.iter().map(|t| t.status).collect::<Vec<_>>(),
        [TurnStatus::Completed, TurnStatus::Completed]
    );

    for request in server.requests() {
        let body = request.body.to_string();
        assert!(!body.contains("knightcode.turn"), "{body}");
    }
    let last = &server.requests()[2].body["messages"];
    let roles: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
}

#[test]
fn a_failed_run_ends_its_turn_failed_with_the_kind_of_its_error() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::http_error(401)],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let run = knightcode(&sandbox, &["-p", "hello"]);
    assert_eq!(run.code, 1);
    let entries = read_jsonl(&session_files(&sandbox.agent)[0]);
    let end = ends(&entries);
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["data"]["status"], "failed");
    assert_eq!(end[0]["data"]["error"]["kind"], "auth");
    let keys: Vec<&str> = end[0]["data"]["error"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["message", "kind"]);
    let message = end[0]["data"]["error"]["message"].as_str().unwrap();
    let stored = entries
        .iter()
        .rev()
        .find_map(|e| e["message"]["errorMessage"].as_str())
        .unwrap();
    assert_eq!(message, stored, "the failed reply's own message");
}

#[test]
fn retries_share_one_turn_that_fails_as_a_rate_limit() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        (0..4).map(|_| ScriptedReply::http_error(429)).collect(),
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"retry": {"maxRetries": 1, "baseDelayMs": 1, "provider": {"maxRetries": 0}}}"#,
    )
    .unwrap();
    let run = knightcode(&sandbox, &["-p", "hello"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(server.requests().len() >= 2, "the run retried");
    let entries = read_jsonl(&session_files(&sandbox.agent)[0]);
    let markers = entries
        .iter()
        .filter(|e| e["customType"] == "knightcode.turn")
        .count();
    assert_eq!(markers, 1, "retries share the boundary");
    let end = ends(&entries);
    assert_eq!(end.len(), 1);
    let read = turns(&session_files(&sandbox.agent)[0]);
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].status, TurnStatus::Failed);
    assert_eq!(
        read[0].error.as_ref().map(|e| e.kind),
        Some(TurnErrorKind::RateLimit)
    );
}

#[test]
fn a_killed_run_reads_as_interrupted_and_the_next_prompt_opens_a_new_turn() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::text("This reply never finishes").with_fault(Fault::StallAfterEvents(2)),
            ScriptedReply::text("Resumed fine."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let mut child = command(&sandbox, &["-p", "Start"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let reached = server.wait_until_blocking(|a| a.stalls >= 1, std::time::Duration::from_secs(60));
    assert!(reached.is_some(), "the run never reached its model request");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    server.release_stalls();

    let file = session_files(&sandbox.agent).pop().unwrap();
    let read = turns(&file);
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].status, TurnStatus::Interrupted);
    assert_eq!(read[0].completed_at, None);

    let resumed = knightcode(&sandbox, &["--continue", "-p", "Go on"]);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let read = turns(&file);
    assert_eq!(
        read.iter().map(|t| t.status).collect::<Vec<_>>(),
        [TurnStatus::Interrupted, TurnStatus::Completed]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_run_ends_its_turn_interrupted() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::text("Never finished.").with_fault(Fault::StallAfterEvents(2)),
        ])
        .await;
        rpc.client.prompt("Go").await.unwrap();
        rpc.server.wait_for_stalls(1).await;
        rpc.client.abort().await.unwrap();
        let events = rpc.settled().await;
        assert!(matches!(
            events.last(),
            Some(AgentEvent::AgentSettled { aborted: true })
        ));
        // Written before `agent_settled` went out.
        let entries = read_jsonl(&rpc.sandbox.session_files()[0]);
        let end = ends(&entries);
        assert_eq!(end.len(), 1);
        assert_eq!(end[0]["data"], serde_json::json!({"status": "interrupted"}));
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_checkpoint_is_the_next_requests_system_prompt() {
    watchdog(async {
        let replies = vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
            ScriptedReply::text("THE SUMMARY"),
            ScriptedReply::text("third answer"),
        ];
        let mut rpc = Rpc::start_prepared(replies, &[], |sandbox| {
            std::fs::write(
                sandbox.agent.join("settings.json"),
                r#"{"compaction": {"keepRecentTokens": 5}}"#,
            )
            .unwrap();
        })
        .await;
        for text in ["first question", "second question"] {
            rpc.client.prompt(text).await.unwrap();
            rpc.settled().await;
        }
        rpc.client.compact(None).await.unwrap();
        rpc.client.prompt("third question").await.unwrap();
        rpc.settled().await;

        let entries = read_jsonl(&rpc.sandbox.session_files()[0]);
        let compaction = entries.iter().find(|e| e["type"] == "compaction").unwrap();
        let checkpoint = &compaction["systemMessage"];
        assert_eq!(checkpoint["role"], "system");
        let sections = checkpoint["sections"].as_object().unwrap();
        assert!(!sections.is_empty(), "{checkpoint}");
        assert!(checkpoint["toolsAdded"].as_array().unwrap().len() >= 4);
        // The prompt did not change after the compaction, so no system message follows it.
        let after: Vec<String> = shapes(&entries)
            .into_iter()
            .skip_while(|shape| shape != "compaction")
            .collect();
        assert_eq!(
            after,
            [
                "compaction",
                "knightcode.turn",
                "user",
                "assistant",
                "knightcode.turnEnd"
            ]
        );
        let expected: Vec<&str> = sections
            .values()
            .filter_map(Value::as_str)
            .filter(|text| !text.is_empty())
            .collect();
        let requests = rpc.server.requests();
        let request = &requests[3].body;
        // The wire's system role (`developer` for this model), as before the compaction.
        assert_eq!(
            request["messages"][0]["role"],
            requests[0].body["messages"][0]["role"]
        );
        assert_eq!(request["messages"][0]["content"], expected.join("\n\n"));
        let tools: Vec<&str> = request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        let declared: Vec<&str> = checkpoint["toolsAdded"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(tools, declared);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}
