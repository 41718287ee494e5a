//! `knightcode --mode rpc` over pipes against a scripted model: prompts with tool calls,
//! steering, follow-ups, aborts mid-stream and mid-tool, clearing the queues, and the
//! framing edge cases that travel inside a prompt (U+2028, a 10 MB line).

use crate::rpc_common;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_protocol::rpc::PromptResult;
use knightcode_protocol::rpc::RpcCommandBody as Cmd;
use knightcode_protocol::rpc::StreamingBehavior;
use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::assistant_stop;
use rpc_common::kinds;
use rpc_common::message_ends;
use rpc_common::process_gone;
use rpc_common::read_jsonl;
use rpc_common::usage;
use rpc_common::user_texts;
use rpc_common::watchdog;

/// A reply that streams a few events and then waits for `release_stalls`.
fn stalling(text: &str) -> ScriptedReply {
    ScriptedReply::text(text).with_fault(Fault::StallAfterEvents(2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_with_tool_calls_runs_them_and_saves_the_session() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::default()
                .with_text("Reading it.")
                .with_tool_call("call_read", "read", r#"{"path":"notes.txt"}"#)
                .with_usage(usage(100, 10)),
            ScriptedReply::tool_call("call_bash", "bash", r#"{"command":"echo hi"}"#)
                .with_usage(usage(120, 8)),
            ScriptedReply::text("Done: three lines.").with_usage(usage(140, 5)),
        ])
        .await;
        let disposition = rpc.client.prompt("Inspect notes.txt").await.unwrap();
        assert_eq!(disposition, Some(PromptDisposition::Started));
        let events = rpc.settled().await;
        assert_eq!(events.first(), Some(&AgentEvent::AgentStart));
        assert_eq!(
            message_ends(&events),
            [
                "user: Inspect notes.txt",
                "assistant: Reading it.",
                "toolResult: ",
                "assistant: ",
                "toolResult: ",
                "assistant: Done: three lines.",
            ]
        );
        let tool_results: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolExecutionEnd {
                    tool_name,
                    result,
                    is_error,
                    ..
                } => {
                    assert!(!is_error);
                    Some(format!(
                        "{tool_name}: {}",
                        result.content[0].as_text().unwrap()
                    ))
                }
                _ => None,
            })
            .collect();
        assert_eq!(tool_results, ["read: alpha\nbeta\ngamma\n", "bash: hi\n"]);
        assert!(matches!(
            events.last(),
            Some(AgentEvent::AgentSettled { aborted: false })
        ));

        let state = rpc.client.get_state().await.unwrap();
        assert!(!state.is_streaming);
        assert_eq!(state.message_count, 6);
        let roles: Vec<String> = rpc
            .client
            .get_messages()
            .await
            .unwrap()
            .iter()
            .map(|m| m.role().to_owned())
            .collect();
        assert_eq!(
            roles,
            [
                "user",
                "assistant",
                "toolResult",
                "assistant",
                "toolResult",
                "assistant"
            ]
        );
        assert_eq!(
            rpc.client
                .get_last_assistant_text()
                .await
                .unwrap()
                .as_deref(),
            Some("Done: three lines.")
        );
        let stats = rpc.client.get_session_stats().await.unwrap();
        assert_eq!(
            (
                stats.user_messages,
                stats.assistant_messages,
                stats.tool_calls,
                stats.tool_results
            ),
            (1, 3, 2, 2)
        );
        assert_eq!(stats.tokens.input, 360);

        let requests = rpc.server.requests();
        assert_eq!(requests.len(), 3);
        let tool_messages: Vec<&str> = requests[2].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(tool_messages, ["alpha\nbeta\ngamma\n", "hi\n"]);

        let file = state.session_file.unwrap();
        let sandbox_files = rpc.sandbox.session_files();
        assert_eq!(sandbox_files.len(), 1);
        assert_eq!(sandbox_files[0].to_string_lossy(), file);
        let lines = read_jsonl(&sandbox_files[0]);
        assert_eq!(lines[0]["type"], "session");
        let stored: Vec<&str> = lines
            .iter()
            .filter(|l| l["type"] == "message")
            .map(|l| l["message"]["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            stored,
            [
                "system",
                "user",
                "assistant",
                "toolResult",
                "assistant",
                "toolResult",
                "assistant"
            ]
        );
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_during_a_run_is_delivered_before_the_next_request() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            stalling("Working on it."),
            ScriptedReply::text("Changed course."),
        ])
        .await;
        rpc.client.prompt("Start").await.unwrap();
        rpc.server.wait_for_stalls(1).await;

        // A plain prompt is refused while the agent works; with streamingBehavior it queues.
        let refused = rpc.client.prompt("Interrupting").await.unwrap_err();
        assert_eq!(
            refused.to_string(),
            "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
        );
        let steered = rpc.client.steer("Change direction").await.unwrap();
        assert_eq!(steered, Some(PromptDisposition::Queued));
        let state = rpc.client.get_state().await.unwrap();
        assert!(state.is_streaming);
        assert_eq!(state.pending_message_count, 1);

        rpc.server.release_stalls();
        let events = rpc.settled().await;
        assert_eq!(
            message_ends(&events),
            [
                "user: Start",
                "assistant: Working on it.",
                "user: Change direction",
                "assistant: Changed course.",
            ]
        );
        let queues: Vec<(Vec<String>, Vec<String>)> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::QueueUpdate {
                    steering,
                    follow_up,
                } => Some((steering.clone(), follow_up.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            queues.last(),
            Some(&(Vec::<String>::new(), Vec::<String>::new()))
        );
        let requests = rpc.server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(user_texts(&requests[1].body), ["Start", "Change direction"]);
        assert!(!rpc.client.get_state().await.unwrap().is_streaming);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_ups_wait_until_the_agent_would_stop() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            stalling("First answer."),
            ScriptedReply::text("Second answer."),
            ScriptedReply::text("Third answer."),
        ])
        .await;
        rpc.client.prompt("Start").await.unwrap();
        rpc.server.wait_for_stalls(1).await;
        assert_eq!(
            rpc.client.follow_up("And then?").await.unwrap(),
            Some(PromptDisposition::Queued)
        );
        let queued: Option<PromptResult> = rpc
            .client
            .call(Cmd::Prompt {
                message: "One more".to_owned(),
                images: None,
                streaming_behavior: Some(StreamingBehavior::FollowUp),
            })
            .await
            .unwrap();
        assert_eq!(
            queued.and_then(|r| r.disposition),
            Some(PromptDisposition::Queued)
        );
        rpc.server.release_stalls();
        let events = rpc.settled().await;
        // One at a time (the default mode): each follow-up gets its own answer.
        assert_eq!(
            message_ends(&events),
            [
                "user: Start",
                "assistant: First answer.",
                "user: And then?",
                "assistant: Second answer.",
                "user: One more",
                "assistant: Third answer.",
            ]
        );
        assert_eq!(rpc.server.requests().len(), 3);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_mid_stream_answers_once_the_run_is_over() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            stalling("This will never finish."),
            ScriptedReply::text("Fresh start."),
        ])
        .await;
        rpc.client.prompt("Go").await.unwrap();
        rpc.server.wait_for_stalls(1).await;
        rpc.client.abort().await.unwrap();
        // The abort response is written after the run's last event, so it is all here.
        let events = rpc.settled().await;
        assert!(matches!(
            events.last(),
            Some(AgentEvent::AgentSettled { aborted: true })
        ));
        let last_assistant = events.iter().rev().find_map(|e| match e {
            AgentEvent::MessageEnd { message } => assistant_stop(message),
            _ => None,
        });
        assert_eq!(last_assistant.as_deref(), Some("aborted"));
        rpc.server
            .wait_until(|activity| activity.client_disconnects >= 1)
            .await;
        assert!(!rpc.client.get_state().await.unwrap().is_streaming);

        // The session goes on.
        rpc.client.prompt("Again").await.unwrap();
        let events = rpc.settled().await;
        assert_eq!(
            message_ends(&events),
            ["user: Again", "assistant: Fresh start."]
        );
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_mid_tool_kills_the_command() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![ScriptedReply::tool_call(
            "call_sleep",
            "bash",
            r#"{"command":"echo started $$; sleep 100"}"#,
        )])
        .await;
        rpc.client.prompt("Wait a while").await.unwrap();
        let shell = loop {
            if let AgentEvent::ToolExecutionUpdate { partial_result, .. } = rpc.next_agent().await
                && let Some(text) = partial_result
                    .content
                    .first()
                    .and_then(ContentBlock::as_text)
                && let Some(pid) = text.split_whitespace().nth(1)
            {
                break pid.parse::<u32>().unwrap();
            }
        };
        rpc.client.abort().await.unwrap();
        let events = rpc.settled().await;
        let end = events
            .iter()
            .find_map(|e| match e {
                AgentEvent::ToolExecutionEnd {
                    result, is_error, ..
                } => Some((result.content[0].as_text().unwrap().to_owned(), *is_error)),
                _ => None,
            })
            .unwrap();
        assert!(end.1);
        assert!(end.0.ends_with("Command aborted"), "{}", end.0);
        assert!(matches!(
            events.last(),
            Some(AgentEvent::AgentSettled { aborted: true })
        ));
        assert!(process_gone(shell), "the command's shell {shell} survived");
        // No request follows an abort during tools.
        assert_eq!(rpc.server.requests().len(), 1);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_queue_returns_and_drops_the_queued_messages() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![stalling("Busy.")]).await;
        rpc.client.prompt("Start").await.unwrap();
        rpc.server.wait_for_stalls(1).await;
        rpc.client.steer("steer me").await.unwrap();
        rpc.client.follow_up("then this").await.unwrap();
        assert_eq!(
            rpc.client.get_state().await.unwrap().pending_message_count,
            2
        );
        let cleared = rpc.client.clear_queue().await.unwrap();
        assert_eq!(cleared.steering, ["steer me"]);
        assert_eq!(cleared.follow_up, ["then this"]);
        assert_eq!(
            rpc.client.get_state().await.unwrap().pending_message_count,
            0
        );
        rpc.server.release_stalls();
        let events = rpc.settled().await;
        assert_eq!(message_ends(&events), ["user: Start", "assistant: Busy."]);
        let last_queue = events.iter().rev().find_map(|e| match e {
            AgentEvent::QueueUpdate {
                steering,
                follow_up,
            } => Some(steering.len() + follow_up.len()),
            _ => None,
        });
        assert_eq!(last_queue, Some(0));
        assert_eq!(rpc.server.requests().len(), 1);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_and_paragraph_separators_stay_inside_the_message() {
    watchdog(async {
        let text = "first\u{2028}second\u{2029}third";
        let mut rpc = Rpc::start(vec![ScriptedReply::text("Noted\u{2028}twice.")]).await;
        rpc.client.prompt(text).await.unwrap();
        let events = rpc.settled().await;
        assert_eq!(
            message_ends(&events),
            [
                format!("user: {text}"),
                "assistant: Noted\u{2028}twice.".to_owned()
            ]
        );
        assert_eq!(user_texts(&rpc.server.requests()[0].body), [text]);
        let messages = rpc.client.get_messages().await.unwrap();
        assert_eq!(messages[0].display_text().as_deref(), Some(text));
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_prompt_line_reaches_the_model() {
    watchdog(async {
        let big = "0123456789abcdef".repeat(10 * 1024 * 1024 / 16);
        let mut rpc = Rpc::start(vec![ScriptedReply::text("That was long.")]).await;
        rpc.client.prompt(big.as_str()).await.unwrap();
        let events = rpc.settled().await;
        let user = events.iter().find_map(|e| match e {
            AgentEvent::MessageEnd {
                message: message @ AgentMessage::User(_),
            } => message.display_text(),
            _ => None,
        });
        assert_eq!(user.map(|t| t.len()), Some(big.len()));
        assert_eq!(
            user_texts(&rpc.server.requests()[0].body)[0].len(),
            big.len()
        );
        assert_eq!(
            rpc.client
                .get_last_assistant_text()
                .await
                .unwrap()
                .as_deref(),
            Some("That was long.")
        );
        assert_eq!(
            kinds(&events).last().map(String::as_str),
            Some("agent_settled")
        );
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

fn overloaded(after_events: usize) -> ScriptedReply {
    ScriptedReply::text("Half an answer").with_fault(Fault::MidStreamError {
        after_events,
        message: "server overloaded".to_owned(),
        kind: knightcode_testkit::MockErrorKind::Overloaded,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_retry_cancels_the_wait_before_a_retry() {
    watchdog(async {
        // A retry that would wait ten minutes: only abort_retry can end this run.
        let mut rpc = Rpc::start_prepared(vec![overloaded(2)], &[], |sandbox| {
            std::fs::write(
                sandbox.agent.join("settings.json"),
                r#"{"retry": {"baseDelayMs": 600000}}"#,
            )
            .unwrap();
        })
        .await;
        rpc.client.prompt("Try").await.unwrap();
        let before = rpc
            .agent_until(|e| matches!(e, AgentEvent::AutoRetryStart { .. }))
            .await;
        assert!(before.iter().any(|e| matches!(
            e,
            AgentEvent::AgentEnd {
                will_retry: true,
                ..
            }
        )));
        assert!(rpc.client.get_state().await.unwrap().is_streaming);
        rpc.client.abort_retry().await.unwrap();
        let after = rpc.settled().await;
        let end = after.iter().find_map(|e| match e {
            AgentEvent::AutoRetryEnd {
                success,
                final_error,
                ..
            } => Some((*success, final_error.clone())),
            _ => None,
        });
        assert_eq!(end, Some((false, Some("Retry cancelled".to_owned()))));
        // The failed attempt leaves the context through a context edit, which is reported
        // (between the turn's marker and its end).
        let appended: Vec<String> = before
            .iter()
            .chain(&after)
            .filter_map(|e| match e {
                AgentEvent::EntryAppended {
                    entry: SessionEntry::Custom(custom),
                } => Some(custom.custom_type.clone()),
                AgentEvent::EntryAppended { entry } => Some(entry.tag().to_owned()),
                _ => None,
            })
            .collect();
        assert_eq!(
            appended,
            ["knightcode.turn", "context_edit", "knightcode.turnEnd"]
        );
        assert_eq!(rpc.server.requests().len(), 1);
        assert!(!rpc.client.get_state().await.unwrap().is_streaming);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auto_retry_off_a_failure_ends_the_run() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![overloaded(2)]).await;
        rpc.client.set_auto_retry(false).await.unwrap();
        rpc.client.prompt("Try").await.unwrap();
        let events = rpc.settled().await;
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, AgentEvent::AutoRetryStart { .. }))
        );
        let stop = events.iter().rev().find_map(|e| match e {
            AgentEvent::MessageEnd { message } => assistant_stop(message),
            _ => None,
        });
        assert_eq!(stop.as_deref(), Some("error"));
        let settings: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(rpc.sandbox.agent.join("settings.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(settings["retry"]["enabled"], false);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

fn rate_limited(headers: &[(&str, &str)]) -> ScriptedReply {
    ScriptedReply::fault(Fault::HttpStatus {
        status: 429,
        retry_after: None,
        body: None,
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    })
}

/// The wait of the first retry the agent announces after `reply`, then the retry is
/// cancelled (nothing waits out the delay).
async fn first_retry_delay(reply: ScriptedReply) -> u64 {
    let mut rpc = Rpc::start(vec![reply]).await;
    rpc.client.prompt("Try").await.unwrap();
    let events = rpc
        .agent_until(|e| matches!(e, AgentEvent::AutoRetryStart { .. }))
        .await;
    let delay = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::AutoRetryStart { delay_ms, .. } => Some(*delay_ms),
            _ => None,
        })
        .unwrap();
    rpc.client.abort_retry().await.unwrap();
    rpc.settled().await;
    assert_eq!(rpc.shutdown().await, Some(0));
    delay
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_retry_waits_as_long_as_the_server_asks() {
    watchdog(async {
        // The agent's own first wait is 2 s; the server's longer waits win, in seconds,
        // in milliseconds, and not when shorter.
        assert_eq!(
            first_retry_delay(rate_limited(&[("retry-after", "5")])).await,
            5000
        );
        assert_eq!(
            first_retry_delay(rate_limited(&[("retry-after-ms", "7250")])).await,
            7250
        );
        assert_eq!(
            first_retry_delay(rate_limited(&[("retry-after", "1")])).await,
            2000
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_wait_beyond_the_retry_cap_is_not_retried_and_says_so() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![rate_limited(&[("retry-after", "3600")])]).await;
        rpc.client.prompt("Try").await.unwrap();
        let events = rpc.settled().await;
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, AgentEvent::AutoRetryStart { .. })),
            "a retry an hour away was scheduled"
        );
        let error = events.iter().rev().find_map(|e| match e {
            AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(message),
            } => message.error_message.clone(),
            _ => None,
        });
        let error = error.unwrap();
        assert!(
            error.starts_with("Server requested 3600s retry delay (max: 60s). 429"),
            "{error}"
        );
        assert_eq!(rpc.server.requests().len(), 1);
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}
