//! The RPC process at the byte level: pipelined commands, garbage and half lines, the order
//! of responses and events, EOF during a run, SIGTERM and SIGHUP.

use crate::rpc_common;

use std::process::Stdio;

use knightcode_testkit::Fault;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use rpc_common::Raw;
use rpc_common::Sandbox;
use rpc_common::process_gone;
use rpc_common::read_jsonl;
use rpc_common::watchdog;
use serde_json::Value;

fn position(lines: &[Value], pred: impl Fn(&Value) -> bool) -> usize {
    lines
        .iter()
        .position(pred)
        .unwrap_or_else(|| panic!("not found in {lines:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_pipelined_commands_are_all_answered_in_order() {
    watchdog(async {
        let server = MockServer::start(WireFormat::OpenAiCompletions, vec![])
            .await
            .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut raw = Raw::spawn(&sandbox, &[]);
        let kinds = [
            "get_state",
            "get_messages",
            "get_session_stats",
            "get_available_thinking_levels",
            "get_commands",
            "get_fork_messages",
            "get_last_assistant_text",
            "get_entries",
            "get_tree",
            "get_available_models",
        ];
        let mut batch = String::new();
        for i in 0..100 {
            batch.push_str(&format!(
                "{{\"type\":\"{}\",\"id\":\"p{i}\"}}\n",
                kinds[i % kinds.len()]
            ));
        }
        // One write, then EOF: nothing waits for an answer before sending more.
        raw.write(batch.as_bytes()).await;
        let (lines, code) = raw.finish().await;
        assert_eq!(code, Some(0));
        let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
        let expected: Vec<String> = (0..100).map(|i| format!("p{i}")).collect();
        assert_eq!(ids, expected);
        for (i, line) in lines.iter().enumerate() {
            assert_eq!(line["success"], true, "{line}");
            assert_eq!(line["command"], kinds[i % kinds.len()]);
        }
        assert_eq!(lines[0]["data"]["isStreaming"], false);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_half_lines_get_errors_and_the_server_goes_on() {
    watchdog(async {
        let server = MockServer::start(WireFormat::OpenAiCompletions, vec![])
            .await
            .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut raw = Raw::spawn(&sandbox, &[]);
        raw.write(b"not json\n").await;
        raw.write(b"{\"type\":\"get_state\"\n").await;
        raw.write(b"[1,2,3]\n").await;
        raw.write(b"\n").await;
        raw.write(b"{\"id\":\"no-type\"}\n").await;
        raw.write(b"\xff\xfe{\"type\":\"get_state\"}\n").await;
        raw.write(b"{\"type\":\"set_model\",\"id\":\"bad-field\"}\n")
            .await;
        raw.write(b"{\"type\":\"no_such_command\",\"id\":\"unknown\"}\n")
            .await;
        raw.write(b"{\"type\":\"extension_ui_response\",\"id\":\"nobody\",\"value\":\"x\"}\n")
            .await;
        // A command split over two writes is one line; CRLF is accepted.
        raw.write(b"{\"type\":\"get_st").await;
        raw.write(b"ate\",\"id\":\"crlf\"}\r\n").await;
        let crlf = raw.response("crlf").await;
        assert_eq!(crlf["success"], true);
        // The last line has no LF: it still counts at EOF.
        raw.write(b"{\"type\":\"get_state\",\"id\":\"last\"}").await;
        let (rest, code) = raw.finish().await;
        assert_eq!(code, Some(0));
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0]["id"], "last");
        assert_eq!(rest[0]["success"], true);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_line_gets_one_error_response() {
    watchdog(async {
        let server = MockServer::start(WireFormat::OpenAiCompletions, vec![])
            .await
            .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut raw = Raw::spawn(&sandbox, &[]);
        raw.write(
            b"not json\n{\"type\":\"get_state\"\n[1,2,3]\n\n{\"id\":\"no-type\"}\n\xff{}\n\
              {\"type\":\"set_model\",\"id\":\"bad-field\"}\n{\"type\":\"nope\",\"id\":\"unknown\"}\n",
        )
        .await;
        let (lines, code) = raw.finish().await;
        assert_eq!(code, Some(0));
        let summary: Vec<String> = lines
            .iter()
            .map(|l| {
                assert_eq!(l["success"], false, "{l}");
                format!(
                    "{} {} {}",
                    l["id"].as_str().unwrap_or("-"),
                    l["command"].as_str().unwrap(),
                    l["error"].as_str().unwrap().split(':').next().unwrap()
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                "- parse Failed to parse command",
                "- parse Failed to parse command",
                "- parse Failed to parse command",
                "- parse Failed to parse command",
                "no-type parse Failed to parse command",
                "- parse Failed to parse command",
                "bad-field set_model Invalid set_model command",
                "unknown nope Unknown command",
            ]
        );
        assert_eq!(lines[7]["error"], "Unknown command: nope");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_and_events_come_in_a_useful_order() {
    watchdog(async {
        let server = MockServer::start(
            WireFormat::OpenAiCompletions,
            vec![
                ScriptedReply::text("Hello!"),
                ScriptedReply::text("Never finished.").with_fault(Fault::StallAfterEvents(2)),
            ],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut raw = Raw::spawn(&sandbox, &[]);

        raw.send(serde_json::json!({"type": "prompt", "message": "Hi", "id": "p1"}))
            .await;
        let run = raw.until(|l| l["type"] == "agent_settled").await;
        // The prompt is answered (accepted) before its run starts.
        assert_eq!(run[0]["id"], "p1");
        assert_eq!(run[0]["data"]["disposition"], "started");
        assert_eq!(run[1]["type"], "agent_start");

        raw.send(
            serde_json::json!({"type": "set_session_name", "name": "  My\nsession ", "id": "n"}),
        )
        .await;
        let named = raw.until(|l| l["id"] == "n").await;
        assert_eq!(named[0]["type"], "session_info_changed");
        assert_eq!(named[0]["name"], "My session");
        assert_eq!(named[1]["success"], true);
        raw.send(serde_json::json!({"type": "set_session_name", "name": " ", "id": "empty"}))
            .await;
        assert_eq!(
            raw.response("empty").await["error"],
            "Session name cannot be empty"
        );

        raw.send(serde_json::json!({"type": "prompt", "message": "Go on", "id": "p2"}))
            .await;
        server.wait_for_stalls(1).await;
        raw.send(serde_json::json!({"type": "steer", "message": "Faster", "id": "s"}))
            .await;
        raw.send(serde_json::json!({"type": "get_state", "id": "busy"}))
            .await;
        raw.send(serde_json::json!({"type": "abort", "id": "a"}))
            .await;
        raw.send(serde_json::json!({"type": "get_state", "id": "idle"}))
            .await;
        let lines = raw.until(|l| l["id"] == "idle").await;
        let steer = position(&lines, |l| l["id"] == "s");
        let queued = position(&lines, |l| l["type"] == "queue_update");
        assert!(queued < steer, "queue_update precedes the steer response");
        let busy = &lines[position(&lines, |l| l["id"] == "busy")];
        assert_eq!(busy["data"]["isStreaming"], true);
        assert_eq!(busy["data"]["pendingMessageCount"], 1);
        assert_eq!(busy["data"]["sessionName"], "My session");
        // abort is answered after the run's last event.
        let settled = position(&lines, |l| l["type"] == "agent_settled");
        let abort = position(&lines, |l| l["id"] == "a");
        assert!(settled < abort);
        assert_eq!(lines[settled]["aborted"], true);
        let idle = lines.last().unwrap();
        assert_eq!(idle["data"]["isStreaming"], false);
        // The steering message stays queued for the next prompt.
        assert_eq!(idle["data"]["pendingMessageCount"], 1);
        let (_, code) = raw.finish().await;
        assert_eq!(code, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eof_during_a_run_aborts_it_saves_it_and_exits_0() {
    watchdog(async {
        let server = MockServer::start(
            WireFormat::OpenAiCompletions,
            vec![
                ScriptedReply::text("Hello!"),
                ScriptedReply::text("Cut short by EOF.").with_fault(Fault::StallAfterEvents(2)),
            ],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut raw = Raw::spawn(&sandbox, &[]);
        raw.send(serde_json::json!({"type": "prompt", "message": "Hi", "id": "p1"}))
            .await;
        raw.until(|l| l["type"] == "agent_settled").await;
        raw.send(serde_json::json!({"type": "prompt", "message": "Go on", "id": "p2"}))
            .await;
        server.wait_for_stalls(1).await;
        // Pipelined right before EOF: still answered.
        raw.send(serde_json::json!({"type": "get_state", "id": "late"}))
            .await;
        let (rest, code) = raw.finish().await;
        assert_eq!(code, Some(0));
        let settled = position(&rest, |l| l["type"] == "agent_settled");
        assert_eq!(rest[settled]["aborted"], true);
        assert!(rest.iter().any(|l| l["id"] == "late"));
        let file = sandbox.session_files().pop().unwrap();
        let mut entries = read_jsonl(&file);
        let end = entries.pop().unwrap();
        assert_eq!(
            end["data"]["status"], "interrupted",
            "the turn's end: {end}"
        );
        let last = entries.pop().unwrap();
        assert_eq!(last["message"]["role"], "assistant");
        assert_eq!(last["message"]["stopReason"], "aborted");
    })
    .await;
}

async fn running_command(raw: &mut Raw) -> u32 {
    loop {
        let line = raw.line().await;
        if line["type"] != "tool_execution_update" {
            continue;
        }
        let text = line["partialResult"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if let Some(pid) = text.split_whitespace().nth(1) {
            return pid.parse().unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_kills_running_tools_and_exits_143() {
    watchdog(async {
        let server = MockServer::start(
            WireFormat::OpenAiCompletions,
            vec![ScriptedReply::tool_call(
                "call_sleep",
                "bash",
                r#"{"command":"echo started $$; sleep 100"}"#,
            )],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut raw = Raw::spawn(&sandbox, &[]);
        raw.send(serde_json::json!({"type": "prompt", "message": "Wait", "id": "p"}))
            .await;
        let shell = running_command(&mut raw).await;
        raw.signal("-TERM");
        let (rest, code) = raw.finish().await;
        assert_eq!(code, Some(143));
        assert!(process_gone(shell), "the command's shell {shell} survived");
        // Whatever was written is whole records.
        assert!(rest.iter().all(Value::is_object));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_kills_user_shell_commands_and_exits_129() {
    watchdog(async {
        let server = MockServer::start(WireFormat::OpenAiCompletions, vec![])
            .await
            .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut raw = Raw::spawn(&sandbox, &[]);
        raw.send(
            serde_json::json!({"type": "bash", "command": "echo started $$; sleep 100", "id": "b"}),
        )
        .await;
        let update = raw.until(|l| l["type"] == "bash_execution_update").await;
        let delta = update.last().unwrap()["delta"].as_str().unwrap().to_owned();
        let shell: u32 = delta.split_whitespace().nth(1).unwrap().parse().unwrap();
        raw.signal("-HUP");
        let (_, code) = raw.finish().await;
        assert_eq!(code, Some(129));
        assert!(
            process_gone(shell),
            "the user command's shell {shell} survived"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_failure_exits_1_with_the_reason_on_stderr() {
    watchdog(async {
        let server = MockServer::start(WireFormat::OpenAiCompletions, vec![])
            .await
            .unwrap();
        let sandbox = Sandbox::new(&server);
        // Without models.json there is no `mock` provider to use.
        std::fs::remove_file(sandbox.agent.join("models.json")).unwrap();
        let output = sandbox
            .rpc_command(&[])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .await
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        assert!(output.stdout.is_empty(), "stdout is for protocol only");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.starts_with("Error: "), "{stderr}");
    })
    .await;
}
