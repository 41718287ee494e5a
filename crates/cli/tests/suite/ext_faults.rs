//! The real binary survives a runaway extension: an `input` handler stuck in a synchronous
//! loop holds the JS thread (and the prompt), an RPC `abort` interrupts it, the failure is
//! reported as an `extension_error`, and the session answers and runs prompts afterwards.

use crate::common::mkfifo;
use crate::rpc_common;

use knightcode_protocol::AgentEvent;
use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::watchdog;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rpc_abort_interrupts_an_extension_stuck_in_a_loop() {
    watchdog(async {
        let dir = tempfile::tempdir().unwrap();
        // The handler tells the test it is about to spin through a FIFO: the write blocks
        // until the test reads, so the test knows (without waiting for time) that the loop
        // is running when it sends `abort`.
        let fifo = dir.path().join("looping");
        mkfifo(&fifo);
        let extension = dir.path().join("spin.ts");
        std::fs::write(
            &extension,
            format!(
                r#"import {{ writeFileSync }} from "node:fs";
export default function (pi) {{
  pi.on("input", (event) => {{
    if (event.text !== "spin") return;
    writeFileSync({fifo:?}, "looping");
    while (true) {{}}
  }});
}}
"#,
                fifo = fifo.display().to_string()
            ),
        )
        .unwrap();
        let extension = extension.display().to_string();
        let mut rpc = Rpc::start_with(
            vec![ScriptedReply::text("first"), ScriptedReply::text("second")],
            &["-e", &extension],
        )
        .await;
        let fifo_read = fifo.clone();
        let (accepted, aborted) = tokio::join!(rpc.client.prompt("spin"), async {
            let signal =
                tokio::task::spawn_blocking(move || std::fs::read_to_string(&fifo_read).unwrap());
            assert_eq!(signal.await.unwrap(), "looping");
            rpc.client.abort().await
        });
        accepted.unwrap();
        aborted.unwrap();
        let seen = rpc
            .agent_until(|e| matches!(e, AgentEvent::ExtensionError { .. }))
            .await;
        let Some(AgentEvent::ExtensionError { event, error, .. }) = seen.last() else {
            unreachable!()
        };
        assert_eq!(event, "input");
        assert!(error.contains("interrupted by an abort"), "{error}");
        rpc.settled().await;
        // The session and its extensions keep working.
        rpc.client.get_state().await.unwrap();
        rpc.client.prompt("again").await.unwrap();
        let events = rpc.settled().await;
        let texts = rpc_common::message_ends(&events);
        assert!(
            texts.iter().any(|t| t.starts_with("assistant:")),
            "{texts:?}"
        );
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}
