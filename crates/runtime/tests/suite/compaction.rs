//! Compaction against the mock model: manual `compact` through the actor, and overflow
//! recovery inside a run. What the summary requests and the following requests carry, what
//! the session file holds and the events in the stream show what happened.

use crate::common;
use knightcode_runtime::actor::CommandError;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::SessionEntry;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::compaction::OVERFLOW_RECOVERY_EXHAUSTED;
use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use common::KEEP_5_TOKENS;
use common::Running;
use common::TestSession;
use common::compaction_events;
use common::overflow;

/// A session that keeps only ~5 tokens verbatim, so every earlier turn is compacted.
async fn start(replies: Vec<ScriptedReply>) -> Running {
    let test = TestSession::new(WireFormat::OpenAiCompletions, replies)
        .await
        .with_settings(KEEP_5_TOKENS);
    Running::spawn(test).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_compaction_replaces_the_older_turns_with_the_summary() {
    let mut run = start(vec![
        ScriptedReply::text("first answer"),
        ScriptedReply::text("second answer"),
        ScriptedReply::text("SUMMARY-ONE"),
        ScriptedReply::text("third answer"),
    ])
    .await;
    run.prompt("first question").await;
    run.prompt("second question").await;
    let (seen, reply) = run.compact(Some("FOCUS ON THE PARSER")).await;

    let Reply::Compacted(result) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(result.summary, "SUMMARY-ONE");
    assert!(result.tokens_before > 0);
    let events = compaction_events(&seen);
    assert_eq!(
        events[0],
        AgentEvent::CompactionStart {
            reason: CompactionReason::Manual
        }
    );
    let AgentEvent::CompactionEnd {
        reason,
        result: Some(end_result),
        aborted: false,
        will_retry: false,
        error_message: None,
    } = &events[1]
    else {
        panic!("{events:?}")
    };
    assert_eq!(*reason, CompactionReason::Manual);
    assert_eq!(end_result["summary"], "SUMMARY-ONE");

    let summary_request = run.request_texts_at(2).join("\n");
    assert!(
        summary_request.contains(
            "<conversation>\n[User]: first question\n\n[Assistant]: first answer\n</conversation>"
        ),
        "{summary_request}"
    );
    assert!(
        !summary_request.contains("second question"),
        "the kept turn is not summarised"
    );
    assert!(summary_request.contains("## Goal"));
    assert!(summary_request.contains("Additional focus: FOCUS ON THE PARSER"));

    let compactions = run.compactions().await;
    let [SessionEntry::Compaction(entry)] = compactions.as_slice() else {
        panic!("{compactions:?}")
    };
    assert_eq!(entry.summary, "SUMMARY-ONE");
    assert_eq!(entry.first_kept_entry_id, result.first_kept_entry_id);
    assert!(entry.usage.is_some());

    run.prompt("third question").await;
    let next = run.request_texts_at(3);
    assert!(
        next.iter()
            .any(|t| t.contains("<summary>\nSUMMARY-ONE\n</summary>")),
        "{next:?}"
    );
    assert!(next.iter().any(|t| t == "second question"));
    assert!(!next.iter().any(|t| t == "first question"), "{next:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_compaction_updates_the_previous_summary() {
    let mut run = start(vec![
        ScriptedReply::text("first answer"),
        ScriptedReply::text("second answer"),
        ScriptedReply::text("SUMMARY-ONE"),
        ScriptedReply::text("third answer"),
        ScriptedReply::text("SUMMARY-TWO"),
    ])
    .await;
    run.prompt("first question").await;
    run.prompt("second question").await;
    assert!(matches!(run.compact(None).await.1, Reply::Compacted(_)));
    let (_, again) = run.compact(None).await;
    assert_eq!(
        again,
        Reply::Failed(CommandError::Failed("Already compacted".to_owned()))
    );
    run.prompt("third question").await;
    let (_, reply) = run.compact(None).await;
    let Reply::Compacted(result) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(result.summary, "SUMMARY-TWO");
    let update = run.request_texts_at(4).join("\n");
    assert!(
        update.contains("<previous-summary>\nSUMMARY-ONE\n</previous-summary>"),
        "{update}"
    );
    assert!(
        update.contains("[User]: second question"),
        "the kept tail is summarised now"
    );
    assert!(!update.contains("first question"));
    assert_eq!(run.compactions().await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_too_small_has_nothing_to_compact() {
    let mut run = start(vec![]).await;
    let (seen, reply) = run.compact(None).await;
    assert_eq!(
        reply,
        Reply::Failed(CommandError::Failed(
            "Nothing to compact (session too small)".to_owned()
        ))
    );
    let events = compaction_events(&seen);
    assert!(matches!(
        &events[1],
        AgentEvent::CompactionEnd { result: None, aborted: false, error_message: Some(m), .. }
            if m == "Nothing to compact (session too small)"
    ));
    assert!(run.test.server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_compaction_leaves_the_session_unchanged() {
    let mut run = start(vec![
        ScriptedReply::text("first answer"),
        ScriptedReply::text("second answer"),
        ScriptedReply::text("SUMMARY-NEVER").with_fault(Fault::StallAfterEvents(1)),
    ])
    .await;
    let tag = run.two_turns_then_stalled_compact().await;
    let abort = run.send(Command::Abort);
    let (seen, reply) = run.reply_with_events(tag).await;
    assert_eq!(reply, Reply::Failed(CommandError::CompactionCancelled));
    assert!(matches!(
        compaction_events(&seen).last(),
        Some(AgentEvent::CompactionEnd {
            aborted: true,
            result: None,
            error_message: None,
            ..
        })
    ));
    assert_eq!(run.reply(abort).await, Reply::Done);
    assert!(run.compactions().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_is_compacted_and_the_request_retried_with_the_summary() {
    let mut run = start(vec![
        ScriptedReply::text("first answer"),
        overflow(),
        ScriptedReply::text("SUMMARY-OVERFLOW"),
        ScriptedReply::text("recovered"),
    ])
    .await;
    run.prompt("first question").await;
    let seen = run.prompt("a huge prompt").await;
    let events = compaction_events(&seen);
    assert_eq!(
        events[0],
        AgentEvent::CompactionStart {
            reason: CompactionReason::Overflow
        }
    );
    assert!(
        matches!(
            &events[1],
            AgentEvent::CompactionEnd {
                reason: CompactionReason::Overflow,
                result: Some(_),
                will_retry: true,
                ..
            }
        ),
        "{events:?}"
    );
    let summary_request = run.request_texts_at(2).join("\n");
    assert!(
        summary_request.contains("[User]: first question"),
        "{summary_request}"
    );
    let retried = run.request_texts_at(3);
    assert!(
        retried.iter().any(|t| t.contains("SUMMARY-OVERFLOW")),
        "{retried:?}"
    );
    assert!(retried.iter().any(|t| t == "a huge prompt"));
    assert!(!retried.iter().any(|t| t == "first question"));
    assert_eq!(run.test.server.requests().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_overflow_reports_that_recovery_failed() {
    let mut run = start(vec![
        ScriptedReply::text("first answer"),
        overflow(),
        ScriptedReply::text("SUMMARY-OVERFLOW"),
        overflow(),
    ])
    .await;
    run.prompt("first question").await;
    let seen = run.prompt("a huge prompt").await;
    let events = compaction_events(&seen);
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(
        events[2],
        AgentEvent::CompactionEnd {
            reason: CompactionReason::Overflow,
            result: None,
            aborted: false,
            will_retry: false,
            error_message: Some(OVERFLOW_RECOVERY_EXHAUSTED.to_owned()),
        }
    );
    assert_eq!(run.test.server.requests().len(), 4, "no further attempt");
}
