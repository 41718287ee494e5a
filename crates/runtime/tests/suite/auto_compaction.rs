//! Automatic compaction against the mock model (`spec/compaction.md` §3, §4, §6): at the
//! threshold between turns, when a run settles and before a prompt; overflow recovery on
//! each wire format's real error; the summary request's retries; the settings that steer it.

use crate::common;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::CompactionReason;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::SessionEvent;
use knightcode_testkit::Fault;
use knightcode_testkit::MockUsage;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use common::Running;
use common::TestSession;
use common::compaction_events;

/// The test models have a 100,000-token window; with the default 16,384 reserve, a response
/// reporting this much input leaves too little room.
const OVER_THRESHOLD: u64 = 90_000;

fn big(reply: ScriptedReply) -> ScriptedReply {
    reply.with_usage(MockUsage {
        input: OVER_THRESHOLD,
        output: 10,
        ..MockUsage::default()
    })
}

async fn start(format: WireFormat, settings: &str, replies: Vec<ScriptedReply>) -> Running {
    let test = TestSession::new(format, replies)
        .await
        .with_settings(settings);
    Running::spawn(test).await
}

/// Keeps ~5 tokens verbatim, so every earlier turn is compacted; retries wait 1 ms.
const SMALL_KEEP: &str = r#"{"compaction": {"keepRecentTokens": 5}, "retry": {"baseDelayMs": 1}}"#;

fn threshold_start() -> AgentEvent {
    AgentEvent::CompactionStart {
        reason: CompactionReason::Threshold,
    }
}

fn succeeded(event: &AgentEvent, expected: CompactionReason, retry: bool) -> bool {
    matches!(event, AgentEvent::CompactionEnd { reason, result: Some(_), aborted: false,
        will_retry, error_message: None } if *reason == expected && *will_retry == retry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn between_turns_the_next_request_carries_the_summary() {
    let mut run = start(
        WireFormat::OpenAiCompletions,
        SMALL_KEEP,
        vec![
            ScriptedReply::text("first answer"),
            big(ScriptedReply::tool_call("c1", "ls", r#"{"path": "."}"#)),
            ScriptedReply::text("SUMMARY-OF-HISTORY"),
            ScriptedReply::text("SUMMARY-OF-PREFIX"),
            ScriptedReply::text("done"),
        ],
    )
    .await;
    run.prompt("first question").await;
    let seen = run.prompt("list the files").await;

    let events = compaction_events(&seen);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], threshold_start());
    assert!(
        succeeded(&events[1], CompactionReason::Threshold, false),
        "{events:?}"
    );
    // The compaction came between the tool result and the next request.
    let position = |pred: &dyn Fn(&SessionEvent) -> bool| seen.iter().position(pred).unwrap();
    let result_at =
        position(&|e| matches!(e, SessionEvent::Agent(AgentEvent::ToolExecutionEnd { .. })));
    let start_at =
        position(&|e| matches!(e, SessionEvent::Agent(AgentEvent::CompactionStart { .. })));
    assert!(result_at < start_at);

    // The older turn is summarised, the current turn's beginning gets a prefix summary
    // (the tool call and its result are what is kept).
    let history = run.request_texts_at(2).join("\n");
    assert!(history.contains("[User]: first question"), "{history}");
    let prefix = run.request_texts_at(3).join("\n");
    assert!(prefix.contains("[User]: list the files"), "{prefix}");
    assert!(prefix.contains("## Original Request"));

    let next = run.request_texts_at(4).join("\n");
    assert!(next.contains("SUMMARY-OF-HISTORY"), "{next}");
    assert!(next.contains("**Turn Context (split turn):**"));
    assert!(next.contains("SUMMARY-OF-PREFIX"));
    assert!(!next.contains("first question"), "{next}");
    assert_eq!(run.test.server.requests().len(), 5);
    assert_eq!(run.compactions().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_ends_over_the_threshold_is_compacted_before_it_settles() {
    let mut run = start(
        WireFormat::AnthropicMessages,
        SMALL_KEEP,
        vec![
            ScriptedReply::text("first answer"),
            big(ScriptedReply::text("second answer")),
            ScriptedReply::text("SUMMARY-AFTER-RUN"),
            ScriptedReply::text("third answer"),
        ],
    )
    .await;
    run.prompt("first question").await;
    let seen = run.prompt("second question").await;
    let events = compaction_events(&seen);
    assert_eq!(events[0], threshold_start());
    assert!(succeeded(&events[1], CompactionReason::Threshold, false));

    // The footer's context is unknown until a newer response.
    let Reply::Stats(stats) = run.handle.request(Command::GetSessionStats).await else {
        panic!()
    };
    let usage = stats.context_usage.unwrap();
    assert_eq!(usage.tokens, None);

    run.prompt("third question").await;
    let next = run.request_texts_at(3).join("\n");
    assert!(next.contains("SUMMARY-AFTER-RUN"), "{next}");
    assert!(next.contains("second question"), "the recent turn is kept");
    assert!(!next.contains("first question"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auto_compaction_off_nothing_happens_until_it_is_turned_on_before_a_prompt() {
    let mut run = start(
        WireFormat::OpenAiResponses,
        r#"{"compaction": {"enabled": false, "keepRecentTokens": 5}}"#,
        vec![
            ScriptedReply::text("first answer"),
            big(ScriptedReply::text("second answer")),
            ScriptedReply::text("SUMMARY-BEFORE-PROMPT"),
            ScriptedReply::text("third answer"),
        ],
    )
    .await;
    run.prompt("first question").await;
    let seen = run.prompt("second question").await;
    assert!(compaction_events(&seen).is_empty());
    assert_eq!(run.test.server.requests().len(), 2);

    let tag = run.send(Command::SetAutoCompaction(true));
    assert_eq!(run.reply(tag).await, Reply::Done);
    let seen = run.prompt("third question").await;
    let events = compaction_events(&seen);
    assert_eq!(events[0], threshold_start(), "{events:?}");
    // Compacted before the prompt's run started.
    let end_at = seen
        .iter()
        .position(|e| matches!(e, SessionEvent::Agent(AgentEvent::CompactionEnd { .. })))
        .unwrap();
    let run_at = seen
        .iter()
        .position(|e| matches!(e, SessionEvent::Agent(AgentEvent::AgentStart)))
        .unwrap();
    assert!(end_at < run_at);
    let next = run.request_texts_at(3).join("\n");
    assert!(next.contains("SUMMARY-BEFORE-PROMPT"), "{next}");
    assert!(next.contains("third question"));
    assert!(!next.contains("first question"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_override_moves_the_threshold() {
    let settings = r#"{"compaction": {"keepRecentTokens": 5,
        "modelOverrides": {"mock/mock-model": {"reserveTokens": 95000}}}}"#;
    let modest = |reply: ScriptedReply| {
        reply.with_usage(MockUsage {
            input: 6_000,
            ..MockUsage::default()
        })
    };
    let mut run = start(
        WireFormat::Google,
        settings,
        vec![
            ScriptedReply::text("first answer"),
            modest(ScriptedReply::text("second answer")),
            ScriptedReply::text("SUMMARY"),
        ],
    )
    .await;
    run.prompt("first question").await;
    let seen = run.prompt("second question").await;
    let events = compaction_events(&seen);
    assert_eq!(events.first(), Some(&threshold_start()), "{events:?}");
    // The override's reserve is also the summary's budget: 80 % of it, capped by the
    // model's own maximum (1,000).
    let body = &run.test.server.requests()[2].body;
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 1000, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_token_setting_refuses_with_the_reference_error() {
    let mut run = start(
        WireFormat::OpenAiCompletions,
        r#"{"compaction": {"reserveTokens": -1}}"#,
        vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
        ],
    )
    .await;
    run.prompt("first question").await;
    run.prompt("second question").await;
    let (_, reply) = run.compact(None).await;
    assert_eq!(
        reply,
        Reply::Failed(knightcode_runtime::actor::CommandError::Failed(
            "Compaction failed: Invalid compaction.reserveTokens setting: -1. Expected a \
             non-negative safe integer."
                .to_owned()
        ))
    );
    assert!(run.compactions().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_summary_request_is_retried_with_its_events() {
    let mut run = start(
        WireFormat::AnthropicMessages,
        SMALL_KEEP,
        vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
            ScriptedReply::http_error(529),
            ScriptedReply::text("SUMMARY-AFTER-RETRY"),
        ],
    )
    .await;
    run.prompt("first question").await;
    run.prompt("second question").await;
    let (seen, reply) = run.compact(None).await;
    let Reply::Compacted(result) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(result.summary, "SUMMARY-AFTER-RETRY");
    let retries: Vec<&AgentEvent> = seen
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Agent(
                event @ (AgentEvent::SummarizationRetryScheduled { .. }
                | AgentEvent::SummarizationRetryAttemptStart { .. }
                | AgentEvent::SummarizationRetryFinished),
            ) => Some(event),
            _ => None,
        })
        .collect();
    assert!(
        matches!(
            retries.as_slice(),
            [
                AgentEvent::SummarizationRetryScheduled { attempt: 1, max_attempts: 3, delay_ms: 1, .. },
                AgentEvent::SummarizationRetryAttemptStart { source, reason: Some(CompactionReason::Manual) },
                AgentEvent::SummarizationRetryFinished,
            ] if source == "compaction"
        ),
        "{retries:?}"
    );
    assert_eq!(run.test.server.requests().len(), 4);
}

/// A context overflow as each wire format's server reports it.
fn overflow_of(format: WireFormat) -> ScriptedReply {
    let body = match format {
        WireFormat::AnthropicMessages => {
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}"#
        }
        WireFormat::OpenAiCompletions => {
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#
        }
        WireFormat::OpenAiResponses => {
            r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#
        }
        WireFormat::Google => {
            r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#
        }
        WireFormat::Mistral | WireFormat::Bedrock => unreachable!("not in WireFormat::ALL"),
    };
    ScriptedReply::fault(Fault::HttpStatus {
        status: 400,
        retry_after: None,
        body: Some(body.into()),
        headers: Vec::new(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_wire_formats_overflow_error_is_compacted_and_retried() {
    for format in [
        WireFormat::AnthropicMessages,
        WireFormat::OpenAiCompletions,
        WireFormat::OpenAiResponses,
        WireFormat::Google,
    ] {
        let mut run = start(
            format,
            SMALL_KEEP,
            vec![
                ScriptedReply::text("first answer"),
                overflow_of(format),
                ScriptedReply::text("SUMMARY-OVERFLOW"),
                ScriptedReply::text("recovered"),
            ],
        )
        .await;
        run.prompt("first question").await;
        let seen = run.prompt("a huge prompt").await;
        let events = compaction_events(&seen);
        assert!(
            succeeded(&events[1], CompactionReason::Overflow, true),
            "{format:?}: {events:?}"
        );
        // Not retried by the transient-error loop: exactly one failed request.
        assert!(
            !seen
                .iter()
                .any(|e| matches!(e, SessionEvent::Agent(AgentEvent::AutoRetryStart { .. }))),
            "{format:?}"
        );
        let retried = run.request_texts_at(3).join("\n");
        assert!(
            retried.contains("SUMMARY-OVERFLOW"),
            "{format:?}: {retried}"
        );
        assert!(retried.contains("a huge prompt"));
        assert!(!retried.contains("first question"), "{format:?}: {retried}");
        assert_eq!(run.test.server.requests().len(), 4, "{format:?}");
    }
}

/// An overflow the server names only by its error code: the message says nothing the
/// reference's wording rules know, so only the kind the provider layer decided from the code
/// tells overflow handling what happened.
fn overflow_by_code_only() -> ScriptedReply {
    ScriptedReply::fault(Fault::HttpStatus {
        status: 400,
        retry_after: None,
        body: Some(
            r#"{"error":{"message":"Request refused","type":"invalid_request_error","code":"context_length_exceeded"}}"#
                .into(),
        ),
        headers: Vec::new(),
    })
}

/// A young session with default settings (everything within `keepRecentTokens`) that
/// overflows on its first prompt is compacted and retried, as the reference does, on every
/// wire format; before, recovery failed with "Nothing to compact (session too small)".
/// Not retried as a transient error either: that would take the summary as its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_in_a_short_session_is_compacted_and_retried_on_every_wire_format() {
    for (format, overflow) in [
        (
            WireFormat::AnthropicMessages,
            overflow_of(WireFormat::AnthropicMessages),
        ),
        (
            WireFormat::OpenAiCompletions,
            overflow_of(WireFormat::OpenAiCompletions),
        ),
        (
            WireFormat::OpenAiResponses,
            overflow_of(WireFormat::OpenAiResponses),
        ),
        (WireFormat::Google, overflow_of(WireFormat::Google)),
        (WireFormat::OpenAiCompletions, overflow_by_code_only()),
    ] {
        let mut run = start(
            format,
            r#"{"retry": {"baseDelayMs": 1}}"#,
            vec![
                overflow,
                ScriptedReply::text("SUMMARY-OF-A-SHORT-SESSION"),
                ScriptedReply::text("recovered"),
            ],
        )
        .await;
        let seen = run.prompt("one huge first prompt").await;
        let events = compaction_events(&seen);
        assert!(
            succeeded(&events[1], CompactionReason::Overflow, true),
            "{format:?}: {events:?}"
        );
        let retried = run.request_texts_at(2).join("\n");
        assert!(
            retried.contains("SUMMARY-OF-A-SHORT-SESSION"),
            "{format:?}: {retried}"
        );
        assert!(retried.contains("one huge first prompt"), "{format:?}");
        assert_eq!(run.test.server.requests().len(), 3, "{format:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_state_says_when_a_compaction_runs() {
    let mut run = start(
        WireFormat::OpenAiCompletions,
        SMALL_KEEP,
        vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
            ScriptedReply::text("SUMMARY").with_fault(Fault::StallAfterEvents(1)),
        ],
    )
    .await;
    let tag = run.two_turns_then_stalled_compact().await;
    let Reply::State(state) = run.handle.request(Command::GetState).await else {
        panic!()
    };
    assert!(state.is_compacting);
    run.test.server.release_stalls();
    assert!(matches!(run.reply(tag).await, Reply::Compacted(_)));
    let Reply::State(state) = run.handle.request(Command::GetState).await else {
        panic!()
    };
    assert!(!state.is_compacting);
}
