//! Leaving a branch with a summary (`spec/compaction.md` §8) through the actor: what the
//! summary request sees, the entry it writes and where, the text that returns to the
//! editor, the label, and an abort that leaves everything as it was.

use crate::common;
use knightcode_runtime::actor::CommandError;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::SessionEntry;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::actor::SummaryRequest;
use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use common::Running;
use common::TestSession;

fn user_entry_id(entries: &[SessionEntry], text: &str) -> String {
    entries
        .iter()
        .find(|e| {
            matches!(e.message(), Some(knightcode_protocol::AgentMessage::User(u))
                if u.content.text() == text)
        })
        .map(|e| e.id().to_string())
        .unwrap()
}

/// Two turns: a question, then an exploration that read a file.
async fn explored(replies: Vec<ScriptedReply>) -> Running {
    let mut all = vec![
        ScriptedReply::text("first answer"),
        ScriptedReply::tool_call("c1", "read", r#"{"path": "notes.txt"}"#),
        ScriptedReply::text("explored the notes"),
    ];
    all.extend(replies);
    let test = TestSession::new(WireFormat::OpenAiCompletions, all).await;
    std::fs::write(test.project.join("notes.txt"), "alpha\n").unwrap();
    let mut run = Running::spawn(test).await;
    run.prompt("first question").await;
    run.prompt("explore the notes").await;
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_a_branch_attaches_its_summary_where_the_conversation_continues() {
    let mut run = explored(vec![
        ScriptedReply::text("BRANCH-SUMMARY"),
        ScriptedReply::text("after the summary"),
    ])
    .await;
    let before = run.entries().await;
    let old_leaf = before.last().unwrap().id().to_string();
    let target = user_entry_id(&before, "explore the notes");

    let tag = run.send(Command::NavigateTree {
        entry_id: Some(target.clone()),
        summary: Some(SummaryRequest {
            custom_instructions: Some("what the notes say".to_owned()),
            replace_instructions: false,
        }),
        label: Some("explored".to_owned()),
        restore_files: false,
    });
    let (_, reply) = run.reply_with_events(tag).await;
    // A user message goes back to the editor; the conversation continues before it.
    assert_eq!(
        reply,
        Reply::Navigated {
            text: Some("explore the notes".to_owned()),
            restored: None,
        }
    );

    let request = run.request_texts_at(3).join("\n");
    // The user message gone back to the editor is part of what was left.
    assert!(request.contains("[User]: explore the notes"), "{request}");
    assert!(request.contains("[Assistant tool calls]: read(path=\"notes.txt\")"));
    assert!(
        !request.contains("[Tool result]"),
        "tool results are left out"
    );
    assert!(
        !request.contains("first question"),
        "the shared part is not summarised"
    );
    assert!(request.contains("Additional focus: what the notes say"));
    assert!(!request.contains("## Critical Context"));

    let after = run.entries().await;
    let summary = after
        .iter()
        .find_map(|e| match e {
            SessionEntry::BranchSummary(s) => Some(s),
            _ => None,
        })
        .unwrap();
    assert_eq!(summary.from_id, old_leaf);
    assert!(summary.summary.contains("BRANCH-SUMMARY"));
    assert!(
        summary
            .summary
            .contains("<read-files>\nnotes.txt\n</read-files>")
    );
    assert_eq!(
        summary.details.as_ref().unwrap()["readFiles"][0],
        "notes.txt"
    );
    assert!(summary.usage.is_some());
    // Its parent is where the branch started: the first answer's turn end (the left
    // prompt's turn marker is left behind with it).
    let first_answer = after
        .iter()
        .position(|e| {
            matches!(e.message(), Some(knightcode_protocol::AgentMessage::Assistant(a))
                if a.content.iter().any(|b| matches!(b,
                    knightcode_protocol::ContentBlock::Text(t) if t.text == "first answer")))
        })
        .unwrap();
    let turn_end = &after[first_answer + 1];
    assert!(matches!(turn_end, SessionEntry::Custom(c) if c.custom_type == "knightcode.turnEnd"));
    assert_eq!(turn_end.parent_id(), Some(after[first_answer].id()));
    assert_eq!(summary.parent_id.as_deref(), Some(turn_end.id()));
    let label = after.iter().find_map(|e| match e {
        SessionEntry::Label(l) => Some(l),
        _ => None,
    });
    assert_eq!(label.unwrap().target_id, summary.id);

    run.prompt("a new direction").await;
    let next = run.request_texts_at(4).join("\n");
    assert!(next.contains("BRANCH-SUMMARY"), "{next}");
    assert!(next.contains("first question"));
    assert!(!next.contains("explored the notes"), "{next}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_during_the_summary_leaves_the_branch_as_it_was() {
    let mut run = explored(vec![
        ScriptedReply::text("NEVER").with_fault(Fault::StallAfterEvents(1)),
    ])
    .await;
    let before = run.entries().await;
    let target = user_entry_id(&before, "explore the notes");
    let tag = run.send(Command::NavigateTree {
        entry_id: Some(target),
        summary: Some(SummaryRequest::default()),
        label: None,
        restore_files: false,
    });
    run.test.server.wait_for_stalls(1).await;
    // A prompt meanwhile is refused with words about the summary, not a compaction.
    let prompt = run.send(Command::Prompt {
        text: "too early".to_owned(),
        images: Vec::new(),
        queueing: None,
        source: knightcode_runtime::hooks::InputSource::Rpc,
    });
    assert_eq!(
        run.reply(prompt).await,
        Reply::Failed(CommandError::BranchSummaryBusy)
    );
    let abort = run.send(Command::Abort);
    let (_, reply) = run.reply_with_events(tag).await;
    assert_eq!(reply, Reply::Failed(CommandError::NavigationCancelled));
    assert_eq!(run.reply(abort).await, Reply::Done);
    let after = run.entries().await;
    assert_eq!(after.len(), before.len(), "nothing was written");
    let Reply::State(state) = run.handle.request(Command::GetState).await else {
        panic!()
    };
    assert_eq!(state.message_count, 6, "still on the explored branch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_summary_says_so_and_retries_are_reported_as_branch_summaries() {
    // Retries wait 1 ms here; the fourth failure ends them.
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
            ScriptedReply::http_error(503),
            ScriptedReply::http_error(503),
            ScriptedReply::http_error(503),
            ScriptedReply::http_error(503),
        ],
    )
    .await
    .with_settings(r#"{"retry": {"baseDelayMs": 1}}"#);
    let mut run = Running::spawn(test).await;
    run.prompt("first question").await;
    run.prompt("second question").await;
    let target = user_entry_id(&run.entries().await, "second question");
    let tag = run.send(Command::NavigateTree {
        entry_id: Some(target),
        summary: Some(SummaryRequest::default()),
        label: None,
        restore_files: false,
    });
    let (seen, reply) = run.reply_with_events(tag).await;
    let Reply::Failed(CommandError::Failed(message)) = reply else {
        panic!("{reply:?}")
    };
    assert!(
        message.starts_with("Branch summarization failed:"),
        "{message}"
    );
    let attempts: Vec<&AgentEvent> = seen
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Agent(event @ AgentEvent::SummarizationRetryAttemptStart { .. }) => {
                Some(event)
            }
            _ => None,
        })
        .collect();
    assert_eq!(attempts.len(), 3);
    assert!(attempts.iter().all(|e| matches!(e,
        AgentEvent::SummarizationRetryAttemptStart { source, reason: None } if source == "branchSummary")));
    assert!(
        !run.entries()
            .await
            .iter()
            .any(|e| matches!(e, SessionEntry::BranchSummary(_)))
    );
}
