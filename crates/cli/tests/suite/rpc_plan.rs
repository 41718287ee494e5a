//! Plan mode over RPC: `/plan <task>` through `prompt` as pi's RPC runs extension commands,
//! `ask_user` as `select` (and `input` for an own answer), `/plan` opening the review
//! `select` whose Implement approves and runs the plan in the same session.

use crate::rpc_common;

use knightcode_headless::rpc::RpcEvent;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::rpc::ExtensionUiRequest;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_protocol::rpc::PromptResult;
use knightcode_protocol::rpc::RpcCommandBody as Cmd;
use knightcode_protocol::rpc::StreamingBehavior;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::read_jsonl;
use rpc_common::watchdog;
use serde_json::Value;
use serde_json::json;

const PLAN: &str = "# Store\n\nUse Postgres.\n";

/// Sends `text` as a prompt and answers dialogs with `answer` until the prompt is answered
/// and, when it started a run, that run settled; returns the disposition and the requests.
async fn prompt_answering(
    rpc: &mut Rpc,
    text: &str,
    answer: impl Fn(&ExtensionUiRequest) -> Option<UiReply>,
) -> (Option<PromptDisposition>, Vec<ExtensionUiRequest>) {
    let Rpc { client, events, .. } = rpc;
    let mut seen = Vec::new();
    // On a busy machine the run a command started may settle before the command's answer
    // ("started") is written: then its `agent_settled` is already here.
    let mut settled = false;
    let disposition = {
        let prompt = client.prompt(text);
        tokio::pin!(prompt);
        loop {
            tokio::select! {
                biased;
                event = events.recv() => {
                    match event.expect("the server's output ended") {
                        RpcEvent::UiRequest(request) => {
                            if let Some(reply) = answer(&request) {
                                client.reply_ui(&request.id, reply).await.unwrap();
                            }
                            seen.push(request);
                        }
                        RpcEvent::Agent(AgentEvent::AgentSettled { .. }) => settled = true,
                        _ => {}
                    }
                }
                disposition = &mut prompt => break disposition.unwrap(),
            }
        }
    };
    if disposition == Some(PromptDisposition::Started) && !settled {
        loop {
            match events.recv().await.expect("the server's output ended") {
                RpcEvent::UiRequest(request) => {
                    if let Some(reply) = answer(&request) {
                        client.reply_ui(&request.id, reply).await.unwrap();
                    }
                    seen.push(request);
                }
                RpcEvent::Agent(AgentEvent::AgentSettled { .. }) => break,
                _ => {}
            }
        }
    }
    (disposition, seen)
}

fn choose(request: &ExtensionUiRequest, pick: impl Fn(&[String]) -> String) -> Option<UiReply> {
    match &request.kind {
        UiRequestKind::Select { options, .. } => Some(UiReply::Value(pick(options))),
        UiRequestKind::Input { .. } => Some(UiReply::Value("MySQL, please".to_owned())),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_over_rpc_asks_submits_reviews_and_implements() {
    watchdog(async {
        let question = json!({
            "question": "Which store?",
            "options": [{"label": "SQLite", "description": "one file"}, {"label": "Postgres"}]
        });
        let mut rpc = Rpc::start(vec![
            ScriptedReply::tool_call("q1", "ask_user", question.to_string()),
            ScriptedReply::tool_call("q2", "ask_user", question.to_string()),
            ScriptedReply::tool_call("s1", "submit_plan", json!({"markdown": PLAN}).to_string()),
            ScriptedReply::text("Implemented."),
        ])
        .await;
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let (disposition, seen) = prompt_answering(&mut rpc, "/plan Pick a store", |request| {
            choose(request, |options| {
                // The first question takes Postgres, the second an own answer.
                match asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
                    0 => options[1].clone(),
                    _ => options.last().unwrap().clone(),
                }
            })
        })
        .await;
        assert_eq!(disposition, Some(PromptDisposition::Started));
        assert!(
            matches!(&seen[0].kind, UiRequestKind::Notify { message, .. } if message.starts_with("Plan mode on")),
            "{seen:?}"
        );
        let UiRequestKind::Select { title, options, .. } = &seen[1].kind else {
            panic!("{seen:?}");
        };
        assert_eq!(title, "Which store?");
        assert_eq!(
            options,
            &["SQLite (recommended) — one file", "Postgres", "Type your own answer"]
        );
        let requests = rpc.server.requests();
        assert_eq!(requests.len(), 3, "the submission ended the run");
        let tool_text = |index: usize| {
            let messages = requests[index].body["messages"].as_array().unwrap().clone();
            messages.last().unwrap()["content"].as_str().unwrap().to_owned()
        };
        assert_eq!(tool_text(1), "The user answered: Postgres");
        assert_eq!(tool_text(2), "The user answered: MySQL, please");
        assert!(
            matches!(&seen[3].kind, UiRequestKind::Input { title, .. } if title == "Which store?"),
            "{seen:?}"
        );

        // `/plan` while planning opens the review; Implement approves and runs the plan.
        let (disposition, seen) = prompt_answering(&mut rpc, "/plan", |request| {
            choose(request, |options| options[0].clone())
        })
        .await;
        assert_eq!(disposition, Some(PromptDisposition::Started));
        let UiRequestKind::Select { title, options, .. } = &seen[0].kind else {
            panic!("{seen:?}");
        };
        assert_eq!(title, "Plan revision 1");
        assert_eq!(
            options,
            &[
                "Implement",
                "Implement in a fresh session",
                "Implement, with a note…",
                "Revise the plan…",
                "Keep planning",
                "Exit planning"
            ]
        );
        let requests = rpc.server.requests();
        assert_eq!(requests.len(), 4);
        let last = requests[3].body["messages"].as_array().unwrap().last().unwrap().clone();
        assert!(
            last["content"].to_string().contains("Implement the approved plan (revision 1)"),
            "{last}"
        );
        let file = rpc.sandbox.session_files()[0].clone();
        let snapshots: Vec<_> = read_jsonl(&file)
            .into_iter()
            .filter(|e| e["type"] == "custom" && e["customType"] == "plan-mode")
            .map(|e| e["data"].clone())
            .collect();
        assert_eq!(
            snapshots.last().unwrap(),
            &json!({"mode": "off", "draft": {"revision": 1, "markdown": PLAN}, "approved": 1})
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_revises_the_plan_with_feedback_and_implements_with_a_note() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::tool_call("s1", "submit_plan", json!({"markdown": PLAN}).to_string()),
            ScriptedReply::tool_call("s2", "submit_plan", json!({"markdown": "Use MySQL."}).to_string()),
            ScriptedReply::text("Implemented."),
        ])
        .await;
        let (disposition, _) = prompt_answering(&mut rpc, "/plan Pick a store", |_| None).await;
        assert_eq!(disposition, Some(PromptDisposition::Started));

        // Revise: the feedback asked for goes to the model, still planning.
        let (disposition, seen) = prompt_answering(&mut rpc, "/plan", |request| {
            choose(request, |_| "Revise the plan…".to_owned())
        })
        .await;
        assert_eq!(disposition, Some(PromptDisposition::Started));
        assert!(
            matches!(&seen[1].kind, UiRequestKind::Input { title, .. } if title == "What should change in the plan?"),
            "{seen:?}"
        );
        let requests = rpc.server.requests();
        assert_eq!(requests.len(), 2);
        let body = requests[1].body.to_string();
        assert!(body.contains("MySQL, please"), "{body}");
        assert!(body.contains("Still planning (draft revision 1 submitted)"), "{body}");

        // Implement with a note: the note follows the approved plan.
        let (disposition, _) = prompt_answering(&mut rpc, "/plan", |request| {
            choose(request, |_| "Implement, with a note…".to_owned())
        })
        .await;
        assert_eq!(disposition, Some(PromptDisposition::Started));
        let requests = rpc.server.requests();
        assert_eq!(requests.len(), 3);
        let last = requests[2].body["messages"].as_array().unwrap().last().unwrap().clone();
        let text = last["content"].to_string();
        assert!(text.contains("Implement the approved plan (revision 2)"), "{text}");
        assert!(text.contains("Use MySQL."), "{text}");
        assert!(text.contains("Note from the user: MySQL, please"), "{text}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_fresh_implements_in_a_new_session_linked_to_the_planning_one() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::tool_call("s1", "submit_plan", json!({"markdown": PLAN}).to_string()),
            ScriptedReply::text("Implemented."),
        ])
        .await;
        let (disposition, _) = prompt_answering(&mut rpc, "/plan Pick a store", |_| None).await;
        assert_eq!(disposition, Some(PromptDisposition::Started));
        let planning = rpc.sandbox.session_files()[0].clone();

        let (disposition, mut seen) =
            prompt_answering(&mut rpc, "/plan approve fresh 1", |_| None).await;
        assert_eq!(disposition, Some(PromptDisposition::Handled));
        // The new session's run: the plan as its first prompt. The notice is written by
        // another task than the command's reply, so it may come after the reply.
        loop {
            match rpc.events.recv().await.expect("the server's output ended") {
                RpcEvent::Agent(AgentEvent::AgentSettled { .. }) => break,
                RpcEvent::UiRequest(request) => seen.push(request),
                _ => {}
            }
        }
        assert!(
            seen.iter()
                .any(|r| matches!(&r.kind, UiRequestKind::Notify { message, .. }
                if message.starts_with("Implementing plan revision 1 in a new session"))),
            "{seen:?}"
        );
        let requests = rpc.server.requests();
        assert_eq!(requests.len(), 2);
        let messages = requests[1].body["messages"].as_array().unwrap().clone();
        let users: Vec<String> = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].to_string())
            .collect();
        assert_eq!(
            users.len(),
            1,
            "nothing of the planning conversation: {users:?}"
        );
        assert!(
            users[0].contains("Implement the approved plan (revision 1)"),
            "{users:?}"
        );
        assert!(users[0].contains("Use Postgres."), "{users:?}");

        let files = rpc.sandbox.session_files();
        assert_eq!(files.len(), 2, "{files:?}");
        let fresh = files.iter().find(|f| **f != planning).unwrap();
        let header = &read_jsonl(fresh)[0];
        assert_eq!(
            header["parentSession"],
            planning.display().to_string(),
            "{header}"
        );
        // The planning session records the approval.
        let snapshots: Vec<_> = read_jsonl(&planning)
            .into_iter()
            .filter(|e| e["type"] == "custom" && e["customType"] == "plan-mode")
            .map(|e| e["data"].clone())
            .collect();
        assert_eq!(snapshots.last().unwrap()["approved"], 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planning_survives_a_compaction_with_a_frozen_recovery_message() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::tool_call("s1", "submit_plan", json!({"markdown": PLAN}).to_string()),
            ScriptedReply::text("The summary."),
            ScriptedReply::tool_call("w1", "write", r#"{"path":"x.txt","content":"x"}"#),
            ScriptedReply::text("Still planning."),
        ])
        .await;
        let (disposition, _) = prompt_answering(&mut rpc, "/plan Pick a store", |_| None).await;
        assert_eq!(disposition, Some(PromptDisposition::Started));
        rpc.client.compact(None).await.unwrap();
        let file = rpc.sandbox.session_files()[0].clone();
        let entries = read_jsonl(&file);
        let compaction = entries.iter().rposition(|e| e["type"] == "compaction").unwrap();
        let recovery = &entries[compaction + 1];
        assert_eq!(recovery["type"], "custom_message");
        assert_eq!(recovery["customType"], "plan-mode");
        assert_eq!(recovery["display"], false);
        assert_eq!(
            recovery["details"],
            json!({"kind": "recovery", "id": entries[compaction]["id"], "revision": 1, "status": "planning"})
        );
        let content = recovery["content"].as_str().unwrap();
        assert!(content.contains("<plan_mode>") && content.contains("Use Postgres."), "{content}");

        // Still planning after the compaction: the next run is reminded, and edits blocked.
        let (disposition, _) = prompt_answering(&mut rpc, "revise it", |_| None).await;
        assert_eq!(disposition, Some(PromptDisposition::Started));
        let requests = rpc.server.requests();
        let body = requests[2].body.to_string();
        assert!(body.contains("Use Postgres."), "the recovery message is context");
        assert!(body.contains("Still planning (draft revision 1 submitted)"), "{body}");
        let last = requests[3].body["messages"].as_array().unwrap().last().unwrap().clone();
        assert!(
            last["content"].as_str().unwrap().starts_with("Blocked by plan mode: write"),
            "{last}"
        );
        assert!(!rpc.sandbox.project.join("x.txt").exists());
    })
    .await;
}

const BUSY: &str = "Finish or interrupt the current turn first.";

/// Waits for a `notify` saying that the `/plan` command must wait (the watchdog ends the
/// test when none comes).
async fn busy_notice(rpc: &mut Rpc) {
    loop {
        if let RpcEvent::UiRequest(request) = rpc.next().await
            && let UiRequestKind::Notify { message, .. } = request.kind
            && message == BUSY
        {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_commands_wait_for_an_idle_session_with_nothing_queued() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::text("Looking.").with_fault(Fault::StallAfterEvents(2)),
        ])
        .await;
        let started = rpc.client.prompt("/plan Pick a store").await.unwrap();
        assert_eq!(started, Some(PromptDisposition::Started));
        rpc.server.wait_for_stalls(1).await;

        // During a run (a prompt that may queue): answered at once, never queued as text
        // for the model.
        let steered: Option<PromptResult> = rpc
            .client
            .call(Cmd::Prompt {
                message: "/plan off".to_owned(),
                images: None,
                streaming_behavior: Some(StreamingBehavior::Steer),
            })
            .await
            .unwrap();
        assert_eq!(
            steered.and_then(|r| r.disposition),
            Some(PromptDisposition::Handled)
        );
        busy_notice(&mut rpc).await;
        // `steer` and `follow_up` refuse a command, as the reference refuses an extension
        // command there (its plan mode is one), instead of queueing it as text.
        for refused in [
            rpc.client.steer("/plan off").await.unwrap_err(),
            rpc.client.follow_up("/plan").await.unwrap_err(),
        ] {
            assert!(
                refused.to_string().starts_with(
                    "Extension command \"/plan\" cannot be queued. Use prompt() or execute the command"
                ),
                "{refused}"
            );
        }
        assert_eq!(
            rpc.client.get_state().await.unwrap().pending_message_count,
            0
        );
        let queued = rpc.client.follow_up("Use MySQL").await.unwrap();
        assert_eq!(queued, Some(PromptDisposition::Queued));
        assert_eq!(
            rpc.client.get_state().await.unwrap().pending_message_count,
            1
        );

        // Aborted with a message still queued: idle, but the commands still wait.
        rpc.client.abort().await.unwrap();
        rpc.settled().await;
        assert_eq!(
            rpc.client.get_state().await.unwrap().pending_message_count,
            1
        );
        let answer = rpc.client.prompt("/plan off").await.unwrap();
        assert_eq!(answer, Some(PromptDisposition::Handled));
        busy_notice(&mut rpc).await;
        let file = rpc.sandbox.session_files()[0].clone();
        let modes: Vec<Value> = read_jsonl(&file)
            .into_iter()
            .filter(|e| e["type"] == "custom" && e["customType"] == "plan-mode")
            .map(|e| e["data"]["mode"].clone())
            .collect();
        assert_eq!(modes, [json!("planning")], "still planning");
        assert_eq!(rpc.server.requests().len(), 1);
    })
    .await;
}
