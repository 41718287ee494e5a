//! RPC `bash`: output streams as `bash_execution_update` before the response, the result
//! becomes a `bashExecution` message (left out of the model's context with
//! `excludeFromContext`, held back while a run streams), `abort_bash` kills the command.

use crate::common::mkfifo;
use crate::rpc_common;

use knightcode_headless::rpc::RpcEvent;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::rpc::BashResult;
use knightcode_protocol::rpc::RpcCommandBody as Cmd;
use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::read_jsonl;
use rpc_common::user_texts;
use rpc_common::watchdog;

/// Waits for a `bash_execution_update` and returns its id and delta.
async fn next_update(events: &mut knightcode_headless::rpc::RpcEvents) -> (Option<String>, String) {
    loop {
        match events.recv().await.expect("output ended") {
            RpcEvent::Agent(AgentEvent::BashExecutionUpdate { id, delta }) => return (id, delta),
            _ => continue,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_streams_before_the_response() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![]).await;
        let gate = rpc.sandbox.project.join("gate");
        mkfifo(&gate);
        let Rpc { client, events, .. } = &mut rpc;
        let command = "printf 'first\\n'; read word < gate; printf '\\033[32msecond %s\\033[0m\\r\\n' \"$word\"";
        let run = client.bash(command);
        let drive = async {
            // The command blocks on the fifo until the first line has arrived here: the
            // output really streams.
            let (id, delta) = next_update(events).await;
            assert_eq!(delta, "first\n");
            tokio::fs::write(&gate, b"go\n").await.unwrap();
            let mut rest = String::new();
            loop {
                let (next_id, delta) = next_update(events).await;
                assert_eq!(next_id, id);
                rest.push_str(&delta);
                if rest.ends_with('\n') {
                    break;
                }
            }
            (id, rest)
        };
        let (result, (id, rest)) = tokio::join!(run, drive);
        let result = result.unwrap();
        assert!(id.is_some());
        // Colours and the CR are gone.
        assert_eq!(rest, "second go\n");
        assert_eq!(result.output, "first\nsecond go\n");
        assert_eq!(result.exit_code, Some(0));
        assert!(!result.cancelled && !result.truncated);
        assert_eq!(result.full_output_path, None);

        let failing = rpc.client.bash("echo oops >&2; exit 3").await.unwrap();
        assert_eq!(failing.output, "oops\n");
        assert_eq!(failing.exit_code, Some(3));
        let messages = rpc.client.get_messages().await.unwrap();
        let stored: Vec<(String, Option<i64>)> = messages
            .iter()
            .filter_map(|m| match m {
                AgentMessage::BashExecution(b) => Some((b.command.clone(), b.exit_code)),
                _ => None,
            })
            .collect();
        assert_eq!(
            stored,
            [
                (command.to_owned(), Some(0)),
                ("echo oops >&2; exit 3".to_owned(), Some(3))
            ]
        );
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excluded_commands_stay_out_of_the_model_context() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![ScriptedReply::text("I saw one command.")]).await;
        let visible = rpc.client.bash("echo visible").await.unwrap();
        assert_eq!(visible.output, "visible\n");
        let hidden: BashResult = rpc
            .client
            .call(Cmd::Bash {
                command: "echo secret".to_owned(),
                exclude_from_context: Some(true),
            })
            .await
            .unwrap();
        assert_eq!(hidden.output, "secret\n");
        rpc.client.prompt("What ran?").await.unwrap();
        rpc.settled().await;
        let texts = user_texts(&rpc.server.requests()[0].body);
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[0].starts_with("Ran `echo visible`"), "{}", texts[0]);
        assert!(texts[0].contains("visible\n"));
        assert_eq!(texts[1], "What ran?");
        assert!(!texts.iter().any(|t| t.contains("secret")));

        let file = rpc.sandbox.session_files().pop().unwrap();
        let bash: Vec<serde_json::Value> = read_jsonl(&file)
            .into_iter()
            .filter(|l| l["message"]["role"] == "bashExecution")
            .map(|l| l["message"].clone())
            .collect();
        assert_eq!(bash.len(), 2);
        assert_eq!(bash[0].get("excludeFromContext"), None);
        assert_eq!(bash[1]["excludeFromContext"], true);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_bash_kills_the_command() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![]).await;
        let gate = rpc.sandbox.project.join("never");
        mkfifo(&gate);
        let Rpc { client, events, .. } = &mut rpc;
        let run = client.bash("echo waiting; read x < never; echo unreachable");
        let drive = async {
            let (_, delta) = next_update(events).await;
            assert_eq!(delta, "waiting\n");
            client.abort_bash().await.unwrap();
        };
        let (result, ()) = tokio::join!(run, drive);
        let result = result.unwrap();
        assert!(result.cancelled);
        assert_eq!(result.exit_code, None);
        assert_eq!(result.output, "waiting\n");
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(json.get("exitCode"), None);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_finishing_during_a_run_is_stored_after_it() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::text("Still talking.").with_fault(Fault::StallAfterEvents(2)),
            ScriptedReply::text("Now I see it."),
        ])
        .await;
        rpc.client.prompt("Talk").await.unwrap();
        rpc.server.wait_for_stalls(1).await;
        let during = rpc.client.bash("echo during").await.unwrap();
        assert_eq!(during.output, "during\n");
        // Answered at once, but not part of the conversation while the run streams.
        let roles: Vec<String> = rpc
            .client
            .get_messages()
            .await
            .unwrap()
            .iter()
            .map(|m| m.role().to_owned())
            .collect();
        assert_eq!(roles, ["user"]);
        rpc.server.release_stalls();
        rpc.settled().await;
        let roles: Vec<String> = rpc
            .client
            .get_messages()
            .await
            .unwrap()
            .iter()
            .map(|m| m.role().to_owned())
            .collect();
        assert_eq!(roles, ["user", "assistant", "bashExecution"]);
        rpc.client.prompt("And now?").await.unwrap();
        rpc.settled().await;
        let texts = user_texts(&rpc.server.requests()[1].body);
        assert_eq!(texts.len(), 3);
        assert!(texts[1].starts_with("Ran `echo during`"));
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_output_is_truncated_with_the_full_text_in_a_file() {
    watchdog(async {
        let rpc = Rpc::start(vec![]).await;
        let result = rpc.client.bash("seq 1 30000").await.unwrap();
        assert!(result.truncated);
        assert!(result.output.ends_with("29999\n30000") || result.output.ends_with("30000\n"));
        assert!(result.output.lines().count() <= 2000);
        let path = result.full_output_path.unwrap();
        assert!(path.contains("knightcode-bash-"), "{path}");
        let full = std::fs::read_to_string(&path).unwrap();
        assert_eq!(full.lines().count(), 30000);
        assert!(full.starts_with("1\n2\n3\n"));
        std::fs::remove_file(path).unwrap();
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

const USER_BASH: &str = r#"
export default function (pi) {
  pi.on("user_bash", (event) => {
    if (event.command.startsWith("remote ")) {
      return { result: { output: `ran ${event.command.slice(7)} elsewhere in ${event.cwd}`, exitCode: 0, cancelled: false, truncated: false } };
    }
    if (event.command === "forbidden") throw new Error("not on my watch");
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_bash_handler_may_take_the_command_and_a_failing_one_blocks_it() {
    watchdog(async {
        let rpc = Rpc::start_prepared(vec![], &["-e", "user-bash.ts"], |sandbox| {
            std::fs::write(sandbox.project.join("user-bash.ts"), USER_BASH).unwrap();
        })
        .await;
        // Taken: its result is the command's, and nothing ran here.
        let taken = rpc.client.bash("remote touch here.txt").await.unwrap();
        assert!(
            taken.output.starts_with("ran touch here.txt elsewhere in "),
            "{taken:?}"
        );
        assert_eq!(taken.exit_code, Some(0));
        assert!(!rpc.sandbox.project.join("here.txt").exists());
        // A handler that throws blocks the command (fail-safe), saying why.
        let blocked = rpc.client.bash("forbidden").await.unwrap_err().to_string();
        assert!(blocked.contains("not on my watch"), "{blocked}");
        // Others run as usual.
        let plain = rpc.client.bash("echo plain").await.unwrap();
        assert_eq!(plain.output, "plain\n");
        // The taken command is in the conversation like one run here; the blocked one not.
        let state = rpc.client.get_messages().await.unwrap();
        let commands: Vec<String> = state
            .iter()
            .filter_map(|m| match m {
                AgentMessage::BashExecution(b) => Some(b.command.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(commands, ["remote touch here.txt", "echo plain"]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_commands_run_in_the_sandbox_only_when_the_setting_says_so() {
    if !crate::suite::sandbox::enforced() {
        return;
    }
    watchdog(async {
        for (settings, sandboxed) in [
            (
                r#"{"sandbox": {"mode": "read-only", "userCommands": true}}"#,
                true,
            ),
            (r#"{"sandbox": "read-only"}"#, false),
        ] {
            let rpc = Rpc::start_prepared(vec![], &[], |sandbox| {
                std::fs::write(sandbox.agent.join("settings.json"), settings).unwrap();
            })
            .await;
            let result = rpc.client.bash("touch made.txt").await.unwrap();
            let made = rpc.sandbox.project.join("made.txt").exists();
            assert_eq!(made, !sandboxed, "{settings}: {}", result.output);
            if sandboxed {
                assert_ne!(result.exit_code, Some(0));
                assert!(
                    result.output.contains("Permission denied"),
                    "{}",
                    result.output
                );
            }
            rpc.shutdown().await;
        }
    })
    .await;
}
