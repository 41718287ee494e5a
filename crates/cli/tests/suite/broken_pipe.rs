//! A reader that goes away: when nobody reads the JSON events or the RPC records any more,
//! the run stops, stderr says why and the exit code is 1 (not a silent 0), and what was
//! stored stays in the session file.

use crate::rpc_common;

use std::process::Stdio;

use knightcode_testkit::Fault;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use rpc_common::Sandbox;
use rpc_common::read_jsonl;
use rpc_common::stderr_and_exit;
use rpc_common::watchdog;
use tokio::io::AsyncBufReadExt as _;
use tokio::io::AsyncWriteExt as _;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_stops_its_run_when_stdout_is_closed() {
    watchdog(async {
        let server = MockServer::start(
            WireFormat::OpenAiCompletions,
            vec![ScriptedReply::text("Nobody reads this.").with_fault(Fault::StallAfterEvents(2))],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::new(&server);
        // The reader is gone before the first event is written (`| head -0`).
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut child = sandbox
            .json_command("Go")
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (stderr, code) = stderr_and_exit(&mut child).await;
        assert_eq!(code, Some(1), "stderr: {stderr}");
        assert!(
            stderr.contains("Error: the JSON output (stdout) was closed (Broken pipe"),
            "{stderr}"
        );
        assert!(stderr.contains("so the run was stopped"), "{stderr}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_mode_ends_with_code_1_and_says_why_when_stdout_is_closed() {
    watchdog(async {
        let server = MockServer::start(
            WireFormat::OpenAiCompletions,
            vec![ScriptedReply::text("Cut short.").with_fault(Fault::StallAfterEvents(2))],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut child = sandbox
            .rpc_command(&[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        stdin
            .write_all(b"{\"type\":\"prompt\",\"message\":\"Go\",\"id\":\"p\"}\n")
            .await
            .unwrap();
        // The prompt is accepted, then the client stops reading.
        loop {
            let line = lines.next_line().await.unwrap().expect("output ended");
            if line.contains("\"id\":\"p\"") {
                break;
            }
        }
        server.wait_for_stalls(1).await;
        drop(lines);
        // The next record (this command's response) finds nobody reading.
        stdin
            .write_all(b"{\"type\":\"get_state\",\"id\":\"s\"}\n")
            .await
            .unwrap();
        let (stderr, code) = stderr_and_exit(&mut child).await;
        assert_eq!(code, Some(1), "stderr: {stderr}");
        assert!(
            stderr.contains("Error: the RPC output (stdout) was closed (Broken pipe"),
            "{stderr}"
        );
        // The prompt and what arrived of the answer are in the session, ended as aborted.
        let file = sandbox.session_files().pop().unwrap();
        let entries = read_jsonl(&file);
        // The run's turn ends interrupted after it.
        let (end, rest) = entries.split_last().unwrap();
        assert_eq!(end["customType"], "knightcode.turnEnd");
        assert_eq!(end["data"]["status"], "interrupted");
        let last = rest.last().unwrap();
        assert_eq!(last["message"]["role"], "assistant");
        assert_eq!(last["message"]["stopReason"], "aborted");
        assert!(entries.iter().any(|e| e["message"]["role"] == "user"));
    })
    .await;
}
