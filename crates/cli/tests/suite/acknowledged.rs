//! Acknowledged means stored: once an event has reported a message, a crash (`kill -9`)
//! cannot lose it, even before the first answer (the reference writes the session file only
//! at the first reply, so an accepted prompt was lost with the process).

use crate::rpc_common;

use std::process::Stdio;

use knightcode_testkit::Fault;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use rpc_common::Sandbox;
use rpc_common::read_jsonl;
use rpc_common::watchdog;
use tokio::io::AsyncBufReadExt as _;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_reported_in_json_mode_survives_kill_9_before_any_answer() {
    watchdog(async {
        let server = MockServer::start(
            WireFormat::OpenAiCompletions,
            vec![ScriptedReply::text("Never finished.").with_fault(Fault::StallAfterEvents(1))],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::new(&server);
        let mut child = sandbox
            .json_command("Remember this prompt")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let line = lines.next_line().await.unwrap().expect("output ended");
            let event: serde_json::Value = serde_json::from_str(&line).unwrap();
            if event["type"] == "message_end" && event["message"]["role"] == "user" {
                break;
            }
        }
        child.start_kill().unwrap();
        child.wait().await.unwrap();
        let file = sandbox
            .session_files()
            .pop()
            .expect("no session file after an acknowledged prompt");
        let stored: Vec<serde_json::Value> = read_jsonl(&file);
        assert_eq!(stored[0]["type"], "session");
        assert!(
            stored.iter().any(|e| e["message"]["role"] == "user"
                && e["message"]["content"][0]["text"] == "Remember this prompt"),
            "{stored:#?}"
        );
    })
    .await;
}
