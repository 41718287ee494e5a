//! Steering, follow-up, queue modes, clearing, and abort.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use common::*;
use knightcode_agent::ExecutionMode;
use knightcode_agent::QueueMode;
use knightcode_agent::ToolError;
use knightcode_agent::ToolOutput;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use serde_json::json;
use tokio::sync::Notify;

/// A tool that finishes when `gate` is notified.
fn gated(gate: Arc<Notify>) -> Arc<dyn knightcode_agent::Tool> {
    tool("gated", ExecutionMode::Parallel, move |_args, _ctx| {
        let gate = gate.clone();
        async move {
            gate.notified().await;
            Ok(ToolOutput::text("done"))
        }
    })
}

fn last_user_texts(context: &[AgentMessage]) -> Vec<String> {
    context
        .iter()
        .rev()
        .take_while(|m| matches!(m, AgentMessage::User(_)))
        .map(|m| m.display_text().unwrap())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_is_delivered_after_the_tool_calls() {
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![
        reply()
            .tool_call("c1", "gated", json!({"text": "x"}))
            .done(),
        text_reply("Changed course"),
    ]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![gated(gate.clone())]);
    let handle = agent.handle();
    let (_agent, result, seen) = run_with(agent, &mut events, vec![user("go")], |event| {
        if matches!(event, AgentEvent::ToolExecutionStart { .. }) {
            handle.steer(user("change of plan"));
            gate.notify_one();
        }
    })
    .await;
    result.unwrap();
    assert_eq!(
        without_updates(describe(&seen)),
        [
            "agent_start",
            "turn_start",
            "message_start user \"go\"",
            "message_end user \"go\"",
            "message_start assistant pending",
            "message_end assistant toolUse",
            "tool_start c1",
            "queue_update [\"change of plan\"] []",
            "tool_end c1",
            "message_start toolResult c1 \"done\"",
            "message_end toolResult c1 \"done\"",
            "turn_end 1",
            "queue_update [] []",
            "turn_start",
            "message_start user \"change of plan\"",
            "message_end user \"change of plan\"",
            "message_start assistant pending",
            "message_end assistant stop",
            "turn_end 0",
            "agent_end 5 willRetry=false",
            "agent_settled aborted=false",
        ]
    );
    let contexts = provider.contexts();
    assert_eq!(contexts[1].len(), 4);
    assert_eq!(last_user_texts(&contexts[1]), ["change of plan"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_modes_one_at_a_time_and_all() {
    for mode in [QueueMode::OneAtATime, QueueMode::All] {
        let gate = Arc::new(Notify::new());
        let mut replies = vec![
            reply()
                .tool_call("c1", "gated", json!({"text": "x"}))
                .done(),
            text_reply("first"),
        ];
        if mode == QueueMode::OneAtATime {
            replies.push(text_reply("second"));
        }
        let provider = ScriptedProvider::new(replies);
        let Setup {
            agent, mut events, ..
        } = setup(provider.clone(), vec![gated(gate.clone())]);
        let agent = agent.with_queue_modes(mode, QueueMode::OneAtATime);
        let handle = agent.handle();
        let (_agent, result, _seen) = run_with(agent, &mut events, vec![user("go")], |event| {
            if matches!(event, AgentEvent::ToolExecutionStart { .. }) {
                handle.steer(user("s1"));
                handle.steer(user("s2"));
                gate.notify_one();
            }
        })
        .await;
        result.unwrap();
        let contexts = provider.contexts();
        match mode {
            QueueMode::OneAtATime => {
                assert_eq!(contexts.len(), 3);
                assert_eq!(last_user_texts(&contexts[1]), ["s1"]);
                assert_eq!(last_user_texts(&contexts[2]), ["s2"]);
            }
            QueueMode::All => {
                assert_eq!(contexts.len(), 2);
                assert_eq!(last_user_texts(&contexts[1]), ["s1", "s2"]);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_ups_are_delivered_when_the_agent_would_stop() {
    for mode in [QueueMode::OneAtATime, QueueMode::All] {
        let mut replies = vec![text_reply("answer"), text_reply("follow-up answer")];
        if mode == QueueMode::OneAtATime {
            replies.push(text_reply("second follow-up answer"));
        }
        let provider = ScriptedProvider::new(replies);
        let Setup {
            agent, mut events, ..
        } = setup(provider.clone(), vec![]);
        let agent = agent.with_queue_modes(QueueMode::OneAtATime, mode);
        let handle = agent.handle();
        handle.follow_up(user("f1"));
        handle.follow_up(user("f2"));
        let (_agent, result, seen) = run(agent, &mut events, "go").await;
        result.unwrap();
        let contexts = provider.contexts();
        assert_eq!(last_user_texts(&contexts[0]), ["go"]);
        let lines = without_updates(describe(&seen));
        match mode {
            QueueMode::OneAtATime => {
                assert_eq!(contexts.len(), 3);
                assert_eq!(last_user_texts(&contexts[1]), ["f1"]);
                assert_eq!(last_user_texts(&contexts[2]), ["f2"]);
                assert_eq!(
                    lines[..2],
                    [
                        "queue_update [] [\"f1\"]",
                        "queue_update [] [\"f1\", \"f2\"]"
                    ]
                );
                assert!(lines.contains(&"queue_update [] [\"f2\"]".to_owned()));
            }
            QueueMode::All => {
                assert_eq!(contexts.len(), 2);
                assert_eq!(last_user_texts(&contexts[1]), ["f1", "f2"]);
            }
        }
        // Each follow-up opens a turn of its own run, not a new agent run.
        assert_eq!(lines.iter().filter(|l| *l == "agent_start").count(), 1);
        assert_eq!(
            lines.iter().filter(|l| *l == "turn_start").count(),
            contexts.len()
        );
        assert_eq!(lines.last().unwrap(), "agent_settled aborted=false");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_queued_before_the_prompt_goes_with_it() {
    let provider = ScriptedProvider::new(vec![text_reply("ok")]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![]);
    agent.handle().steer(user("also this"));
    let (_agent, result, _seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    assert_eq!(
        last_user_texts(&provider.contexts()[0]),
        ["go", "also this"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_queue_returns_the_removed_messages() {
    let provider = ScriptedProvider::new(vec![text_reply("ok")]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![]);
    let handle = agent.handle();
    handle.follow_up(user("f1"));
    handle.steer(user("s1"));
    let cleared = handle.clear_queue();
    assert_eq!(cleared.steering_texts(), ["s1"]);
    assert_eq!(cleared.follow_up_texts(), ["f1"]);
    assert_eq!(handle.queued(), (vec![], vec![]));
    let (_agent, result, seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    assert_eq!(
        describe(&seen)[..3],
        [
            "queue_update [] [\"f1\"]",
            "queue_update [\"s1\"] [\"f1\"]",
            "queue_update [] []",
        ]
    );
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_mid_stream_keeps_the_partial_message() {
    let provider = ScriptedProvider::new(vec![reply().text("partial answer").hang()]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![]);
    let handle = agent.handle();
    handle.follow_up(user("later"));
    let (agent, result, seen) = run_with(agent, &mut events, vec![user("go")], |event| {
        if let AgentEvent::MessageUpdate {
            assistant_message_event,
            ..
        } = event
            && matches!(
                assistant_message_event,
                knightcode_protocol::AssistantMessageEvent::TextEnd { .. }
            )
        {
            handle.abort();
        }
    })
    .await;
    let outcome = result.unwrap();
    assert!(outcome.aborted);
    let lines = without_updates(describe(&seen));
    assert_eq!(
        lines[lines.len() - 4..],
        [
            "message_end assistant aborted \"Request was aborted\"",
            "turn_end 0",
            "agent_end 2 willRetry=false",
            "agent_settled aborted=true",
        ]
    );
    let AgentMessage::Assistant(last) = &**agent.messages().last().unwrap() else {
        panic!("expected the aborted assistant message last");
    };
    assert_eq!(last.text(), "partial answer");
    assert!(provider.cancels.lock().unwrap()[0].is_cancelled());
    // The queued follow-up is left for the user, not sent.
    assert_eq!(agent.handle().queued().1, ["later"]);
    assert!(!agent.handle().is_running());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_mid_tool_cancels_running_and_pending_calls() {
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let later_ran = Arc::new(AtomicBool::new(false));
    let flag = saw_cancel.clone();
    let waiting = tool("wait", ExecutionMode::Parallel, move |_args, ctx| {
        let flag = flag.clone();
        async move {
            ctx.update(ToolOutput::text("running"));
            ctx.cancel.cancelled().await;
            flag.store(true, Ordering::SeqCst);
            Err(ToolError::Aborted("Operation aborted".into()))
        }
    });
    let ran = later_ran.clone();
    let later = tool("later", ExecutionMode::Sequential, move |_args, _ctx| {
        let ran = ran.clone();
        async move {
            ran.store(true, Ordering::SeqCst);
            Ok(ToolOutput::text("should not run"))
        }
    });
    let provider = ScriptedProvider::new(vec![
        reply()
            .tool_call("c1", "wait", json!({"text": "x"}))
            .tool_call("c2", "later", json!({"text": "y"}))
            .done(),
        text_reply("never requested"),
    ]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![waiting, later]);
    let handle = agent.handle();
    let (_agent, result, seen) = run_with(agent, &mut events, vec![user("go")], |event| {
        if matches!(event, AgentEvent::ToolExecutionUpdate { .. }) {
            handle.abort();
        }
    })
    .await;
    assert!(result.unwrap().aborted);
    assert!(
        saw_cancel.load(Ordering::SeqCst),
        "the tool's cancel token did not fire"
    );
    assert!(!later_ran.load(Ordering::SeqCst));
    let lines = without_updates(describe(&seen));
    assert_eq!(
        lines[lines.len() - 11..],
        [
            "tool_update c1 \"running\"",
            "tool_end c1 error",
            "message_start toolResult c1 error \"Operation aborted\"",
            "message_end toolResult c1 error \"Operation aborted\"",
            "tool_start c2",
            "tool_end c2 error (not run)",
            "message_start toolResult c2 error \"Operation aborted\"",
            "message_end toolResult c2 error \"Operation aborted\"",
            "turn_end 2",
            "agent_end 4 willRetry=false",
            "agent_settled aborted=true",
        ]
    );
    assert_eq!(provider.requests().len(), 1);
}
