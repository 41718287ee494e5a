//! `/undo` over RPC (`spec/sessions-extra.md` §10): the real binary asks which message and
//! whether to restore files through extension-UI `select` dialogs, puts the message text in
//! the client's editor, restores the files and says so, then answers the prompt `handled`.

use crate::rpc_common;

use knightcode_headless::rpc::RpcEvent;
use knightcode_headless::rpc::RpcEvents;
use knightcode_protocol::rpc::ExtensionUiRequest;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::read_jsonl;
use rpc_common::watchdog;

fn write_call(id: &str, path: &str, content: &str) -> ScriptedReply {
    let args = serde_json::json!({ "path": path, "content": content });
    ScriptedReply::tool_call(id, "write", args.to_string())
}

async fn next_ui(events: &mut RpcEvents) -> ExtensionUiRequest {
    loop {
        match events.recv().await.expect("the server's output ended") {
            RpcEvent::UiRequest(request) => return request,
            _ => continue,
        }
    }
}

/// Sends `/undo` and answers its dialogs with `answer` (given each request, returning the
/// reply, `None` for fire-and-forget ones) until the prompt is answered; returns the
/// disposition and every request seen.
async fn undo(
    rpc: &mut Rpc,
    answer: impl Fn(&ExtensionUiRequest) -> Option<UiReply>,
) -> (Option<PromptDisposition>, Vec<ExtensionUiRequest>) {
    let Rpc { client, events, .. } = rpc;
    let prompt = client.prompt("/undo");
    tokio::pin!(prompt);
    let mut seen = Vec::new();
    loop {
        tokio::select! {
            // What the server wrote before its response is read first.
            biased;
            request = next_ui(events) => {
                if let Some(reply) = answer(&request) {
                    client.reply_ui(&request.id, reply).await.unwrap();
                }
                seen.push(request);
            }
            disposition = &mut prompt => return (disposition.unwrap(), seen),
        }
    }
}

fn select(request: &ExtensionUiRequest) -> (String, Vec<String>) {
    match &request.kind {
        UiRequestKind::Select { title, options, .. } => (title.clone(), options.clone()),
        other => panic!("not a select: {other:?}"),
    }
}

const ORIGINAL: &[u8] = b"one\r\ntwo\r\n";

async fn two_turns(rpc: &mut Rpc) {
    std::fs::write(rpc.sandbox.project.join("a.txt"), ORIGINAL).unwrap();
    rpc.client.prompt("first turn").await.unwrap();
    rpc.settled().await;
    rpc.client.prompt("second turn").await.unwrap();
    rpc.settled().await;
}

fn replies() -> Vec<ScriptedReply> {
    vec![
        write_call("w1", "a.txt", "turn one\n"),
        ScriptedReply::text("one done"),
        write_call("w2", "a.txt", "turn two\n"),
        write_call("w3", "made/b.txt", "made\n"),
        ScriptedReply::text("two done"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_asks_through_select_dialogs_and_restores_files() {
    watchdog(async {
        let mut rpc = Rpc::start(replies()).await;
        two_turns(&mut rpc).await;

        let (disposition, seen) = undo(&mut rpc, |request| match &request.kind {
            UiRequestKind::Select { options, .. } => Some(UiReply::Value(options[1].clone())),
            _ => None,
        })
        .await;
        assert_eq!(disposition, Some(PromptDisposition::Handled));
        assert_eq!(seen.len(), 4, "{seen:?}");
        // Newest first, numbered, with what an undo to each restores.
        let (title, options) = select(&seen[0]);
        assert_eq!(title, "Undo to before which message?");
        assert_eq!(options.len(), 2);
        assert!(options[0].starts_with("1. second turn · "), "{options:?}");
        assert!(options[0].ends_with(" · 2 files"), "{options:?}");
        assert!(options[1].starts_with("2. first turn · "), "{options:?}");
        let (title, options) = select(&seen[1]);
        assert_eq!(title, "Restore files?");
        assert_eq!(options, ["Conversation only", "Conversation and 2 files"]);
        assert!(
            matches!(&seen[2].kind, UiRequestKind::SetEditorText { text } if text == "first turn"),
            "{seen:?}"
        );
        assert!(
            matches!(&seen[3].kind, UiRequestKind::Notify { message, .. } if message == "Restored 2 files"),
            "{seen:?}"
        );

        assert_eq!(
            std::fs::read(rpc.sandbox.project.join("a.txt")).unwrap(),
            ORIGINAL
        );
        assert!(!rpc.sandbox.project.join("made/b.txt").exists());
        // The conversation went back to before the first turn; the file keeps every turn.
        let state = rpc.client.get_state().await.unwrap();
        assert_eq!(state.message_count, 0);
        let file = read_jsonl(&rpc.sandbox.session_files()[0]);
        assert!(format!("{file:?}").contains("second turn"));
        rpc.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_restore_question_cancels_the_undo_and_conversation_only_keeps_files() {
    watchdog(async {
        let mut rpc = Rpc::start(replies()).await;
        two_turns(&mut rpc).await;
        let before = rpc.client.get_state().await.unwrap().message_count;

        // Escape at the restore question: nothing moves.
        let (_, seen) = undo(&mut rpc, |request| match &request.kind {
            UiRequestKind::Select { title, options, .. } if title != "Restore files?" => {
                Some(UiReply::Value(options[0].clone()))
            }
            UiRequestKind::Select { .. } => Some(UiReply::Cancelled),
            _ => None,
        })
        .await;
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(rpc.client.get_state().await.unwrap().message_count, before);

        // "Conversation only": the conversation goes back, the files stay.
        let (_, seen) = undo(&mut rpc, |request| match &request.kind {
            UiRequestKind::Select { title, options, .. } if title != "Restore files?" => {
                Some(UiReply::Value(options[0].clone()))
            }
            UiRequestKind::Select { .. } => Some(UiReply::Value("Conversation only".to_owned())),
            _ => None,
        })
        .await;
        assert!(
            matches!(&seen[2].kind, UiRequestKind::SetEditorText { text } if text == "second turn"),
            "{seen:?}"
        );
        assert_eq!(seen.len(), 3, "no notice without a restore: {seen:?}");
        assert!(rpc.client.get_state().await.unwrap().message_count < before);
        assert_eq!(
            std::fs::read_to_string(rpc.sandbox.project.join("a.txt")).unwrap(),
            "turn two\n"
        );
        assert!(rpc.sandbox.project.join("made/b.txt").exists());
        rpc.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_input_while_undo_asks_ends_the_server() {
    watchdog(async {
        let mut rpc = Rpc::start(replies()).await;
        two_turns(&mut rpc).await;
        {
            let Rpc { client, events, .. } = &mut rpc;
            let prompt = client.prompt("/undo");
            tokio::pin!(prompt);
            tokio::select! {
                request = next_ui(events) => {
                    assert_eq!(select(&request).0, "Undo to before which message?");
                }
                _ = &mut prompt => panic!("answered before asking"),
            }
        }
        // Nobody answers; EOF: the dialog gives up and the server exits normally.
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_cancels_a_waiting_undo_and_the_session_keeps_serving() {
    watchdog(async {
        let mut rpc = Rpc::start(replies()).await;
        two_turns(&mut rpc).await;
        let before = rpc.client.get_state().await.unwrap().message_count;
        {
            let Rpc { client, events, .. } = &mut rpc;
            let prompt = client.prompt("/undo");
            tokio::pin!(prompt);
            tokio::select! {
                request = next_ui(events) => {
                    assert_eq!(select(&request).0, "Undo to before which message?");
                }
                _ = &mut prompt => panic!("answered before asking"),
            }
            // Reads are answered and prompts refused while the dialog waits; abort ends it.
            assert_eq!(client.get_state().await.unwrap().message_count, before);
            let refused = client.prompt("hello").await.unwrap_err().to_string();
            assert!(
                refused.contains("/undo is waiting for an answer"),
                "{refused}"
            );
            client.abort().await.unwrap();
            assert_eq!(prompt.await.unwrap(), Some(PromptDisposition::Handled));
        }
        assert_eq!(rpc.client.get_state().await.unwrap().message_count, before);
        rpc.shutdown().await;
    })
    .await;
}
