//! The loop against a scripted provider: event sequences, tool execution, validation.

use crate::common;

use std::sync::Arc;
use std::sync::Mutex;

use common::*;
use knightcode_agent::AgentError;
use knightcode_agent::ExecutionMode;
use knightcode_agent::ToolError;
use knightcode_agent::ToolOutput;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::StopReason;
use serde_json::json;
use tokio::sync::Notify;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_reply_event_sequence() {
    let provider = ScriptedProvider::new(vec![text_reply("Hello there")]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![]);
    let (agent, result, seen) = run(agent, &mut events, "Hi").await;
    assert_eq!(
        describe(&seen),
        [
            "agent_start",
            "turn_start",
            "message_start user \"Hi\"",
            "message_end user \"Hi\"",
            "message_start assistant pending",
            "update text_start",
            "update text_delta \"Hello\"",
            "update text_delta \" there\"",
            "update text_end",
            "message_end assistant stop",
            "turn_end 0",
            "agent_end 2 willRetry=false",
            "agent_settled aborted=false",
        ]
    );
    // Updates carry the usage known so far (none yet: the usage event comes last here).
    let AgentEvent::MessageEnd {
        message: AgentMessage::Assistant(last),
    } = &seen[9]
    else {
        panic!("expected the assistant's message_end");
    };
    assert_eq!(last.thinking_level.as_deref(), Some("off"));
    let outcome = result.unwrap();
    assert!(!outcome.aborted);
    assert_eq!(outcome.messages.len(), 2);
    assert_eq!(agent.messages().len(), 2);
    // The request carried the system prompt and the user message.
    let request = &provider.requests()[0];
    assert_eq!(
        request.context.system_prompt.as_deref(),
        Some("You are a test.")
    );
    assert_eq!(
        request.context.messages,
        vec![std::sync::Arc::new(user("Hi"))]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_are_recorded_in_call_order() {
    // `slow` finishes only after `fast` has ended: proof that they overlap, and the results
    // must still follow the call order.
    let fast_done = Arc::new(Notify::new());
    let gate = fast_done.clone();
    let slow = tool("slow", ExecutionMode::Parallel, move |_args, ctx| {
        let gate = gate.clone();
        async move {
            ctx.update(ToolOutput::text("waiting"));
            gate.notified().await;
            Ok(ToolOutput::text("slow result"))
        }
    });
    let provider = ScriptedProvider::new(vec![
        reply()
            .tool_call("c1", "slow", json!({"text": "a"}))
            .tool_call("c2", "echo", json!({"text": "fast result"}))
            .done(),
        text_reply("Both done"),
    ]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![slow, echo()]);
    let (_agent, result, seen) = run_with(agent, &mut events, vec![user("go")], |event| {
        if let AgentEvent::ToolExecutionEnd { tool_call_id, .. } = event
            && tool_call_id == "c2"
        {
            fast_done.notify_one();
        }
    })
    .await;
    result.unwrap();
    let lines = without_updates(describe(&seen));
    let tools: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| {
            (l.starts_with("tool_") && !l.starts_with("tool_update"))
                || l.starts_with("message_start toolResult")
        })
        .collect();
    assert_eq!(
        tools,
        [
            "tool_start c1",
            "tool_start c2",
            "tool_end c2",
            "tool_end c1",
            "message_start toolResult c1 \"slow result\"",
            "message_start toolResult c2 \"fast result\"",
        ]
    );
    // The partial result arrives before its call ends.
    let position = |line: &str| lines.iter().position(|l| l == line).unwrap();
    assert!(position("tool_update c1 \"waiting\"") < position("tool_end c1"));
    let contexts = provider.contexts();
    let results: Vec<String> = contexts[1]
        .iter()
        .filter_map(|m| match m {
            AgentMessage::ToolResult(r) => Some(r.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["c1", "c2"]);
    // turn_end lists the results in call order too.
    let turn_end = seen
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnEnd { tool_results, .. } if !tool_results.is_empty() => {
                Some(tool_results.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(turn_end.len(), 2);
    // Durations come from the injected monotonic clock (7 ms per reading).
    for event in &seen {
        if let AgentEvent::ToolExecutionEnd { duration_ms, .. } = event {
            assert!(
                duration_ms.is_some_and(|ms| ms > 0 && ms % 7 == 0),
                "{event:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sequential_tool_makes_the_whole_batch_run_one_call_at_a_time() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let make = |name: &'static str, mode| {
        let log = log.clone();
        tool(name, mode, move |args, _ctx| {
            let log = log.clone();
            async move {
                let id = args["text"].as_str().unwrap().to_owned();
                log.lock().unwrap().push(format!("start {id}"));
                // Give any call that could run alongside a chance to start.
                for _ in 0..20 {
                    tokio::task::yield_now().await;
                }
                log.lock().unwrap().push(format!("end {id}"));
                Ok(ToolOutput::text(id))
            }
        })
    };
    let provider = ScriptedProvider::new(vec![
        reply()
            .tool_call("c1", "par", json!({"text": "p1"}))
            .tool_call("c2", "seq", json!({"text": "s1"}))
            .tool_call("c3", "par", json!({"text": "p2"}))
            .tool_call("c4", "par", json!({"text": "p3"}))
            .done(),
        text_reply("ok"),
    ]);
    let tools = vec![
        make("par", ExecutionMode::Parallel),
        make("seq", ExecutionMode::Sequential),
    ];
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), tools);
    let (_agent, result, _seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    let log = log.lock().unwrap().clone();
    let position = |entry: &str| log.iter().position(|l| l == entry).unwrap();
    assert!(position("end p1") < position("start s1"), "{log:?}");
    assert!(position("end s1") < position("start p2"), "{log:?}");
    // As in the reference agent, the parallel calls after it run one at a time too.
    assert!(position("end p2") < position("start p3"), "{log:?}");
    let ids: Vec<String> = provider.contexts()[1]
        .iter()
        .filter_map(|m| match m {
            AgentMessage::ToolResult(r) => Some(r.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_start_in_the_models_order_and_run_together() {
    // What a call does before its first suspension happens in the order the model wrote
    // the calls (an extension tool queues its body on the JS thread there), and every call
    // starts before any finishes.
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let calls = 8;
    let (started, _) = tokio::sync::watch::channel(0usize);
    let shared = {
        let log = log.clone();
        tool("shared", ExecutionMode::Parallel, move |args, _ctx| {
            let log = log.clone();
            let started = started.clone();
            async move {
                let id = args["text"].as_str().unwrap().to_owned();
                log.lock().unwrap().push(format!("start {id}"));
                started.send_modify(|n| *n += 1);
                // None finishes before all started: they run together.
                let mut all = started.subscribe();
                let waited = tokio::time::timeout(
                    std::time::Duration::from_secs(30),
                    all.wait_for(|n| *n == calls),
                )
                .await;
                let note = if waited.is_ok() {
                    ""
                } else {
                    " (timed out waiting for all 8 calls to start)"
                };
                log.lock().unwrap().push(format!("end {id}{note}"));
                Ok(ToolOutput::text(id))
            }
        })
    };
    let mut batch = reply();
    for n in 1..=calls {
        batch = batch.tool_call(&format!("c{n}"), "shared", json!({"text": format!("p{n}")}));
    }
    let provider = ScriptedProvider::new(vec![batch.done(), text_reply("ok")]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![shared]);
    let (_agent, result, _seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    let log = log.lock().unwrap().clone();
    let starts: Vec<&String> = log.iter().filter(|l| l.starts_with("start")).collect();
    let expected: Vec<String> = (1..=calls).map(|n| format!("start p{n}")).collect();
    assert_eq!(starts, expected.iter().collect::<Vec<_>>(), "{log:?}");
    assert!(
        log[..calls].iter().all(|l| l.starts_with("start")),
        "{log:?}"
    );
    assert!(log.iter().all(|l| !l.contains("timed out")), "{log:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_panics_on_its_first_step_fails_its_call_and_the_run_goes_on() {
    // The first poll of a call happens in the loop's own task (in the model's order): a
    // panic there must end only that call, as a panic later in the call does.
    let crashing = tool("crashing", ExecutionMode::Parallel, |_args, _ctx| async {
        panic!("the tool's own bug");
    });
    let fine = tool("fine", ExecutionMode::Parallel, |_args, _ctx| async {
        Ok(ToolOutput::text("fine result"))
    });
    let provider = ScriptedProvider::new(vec![
        reply()
            .tool_call("c1", "crashing", json!({"text": "x"}))
            .tool_call("c2", "fine", json!({"text": "y"}))
            .done(),
        text_reply("ok"),
    ]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![crashing, fine]);
    let (_agent, result, seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    let lines = describe(&seen);
    for expected in [
        "message_start toolResult c1 error \"The tool crashed (panicked) while running. This is a bug in the tool; the call did not complete.\"",
        "message_start toolResult c2 \"fine result\"",
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "{expected} missing in {lines:#?}"
        );
    }
    assert_eq!(
        provider.contexts().len(),
        2,
        "the run asked the model again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_unknown_tools_and_failures_become_error_results() {
    let executed = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = executed.clone();
    let strict = tool("strict", ExecutionMode::Parallel, move |args, _ctx| {
        let record = record.clone();
        async move {
            record.lock().unwrap().push(args.to_string());
            Ok(ToolOutput::text("ran"))
        }
    });
    let failing = tool("failing", ExecutionMode::Parallel, |_args, _ctx| async {
        Err(ToolError::failed("ENOENT: no such file"))
    });
    // `legacy` accepts `{"value": …}` and repairs it before validation.
    let legacy = tool_with_prepare("legacy", |raw| match raw.get("value") {
        Some(value) => json!({"text": value}),
        None => raw,
    });
    let provider = ScriptedProvider::new(vec![
        reply()
            .tool_call("c1", "strict", json!({"text": 5}))
            .tool_call("c2", "nope", json!({}))
            .tool_call("c3", "failing", json!({"text": "x"}))
            .tool_call("c4", "legacy", json!({"value": "repaired"}))
            .done(),
        text_reply("ok"),
    ]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![strict, failing, legacy]);
    let (_agent, result, seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    assert!(
        executed.lock().unwrap().is_empty(),
        "invalid arguments must not run the tool"
    );
    let lines = describe(&seen);
    for expected in [
        "tool_end c1 error (not run)",
        "tool_end c2 error (not run)",
        "tool_end c3 error",
        "tool_end c4",
        "message_start toolResult c2 error \"Tool nope not found\"",
        "message_start toolResult c3 error \"ENOENT: no such file\"",
        "message_start toolResult c4 \"repaired\"",
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "{expected} missing in {lines:#?}"
        );
    }
    let AgentMessage::ToolResult(invalid) = &provider.contexts()[1][2] else {
        panic!("expected the first tool result");
    };
    let text = knightcode_protocol::content::join_text(&invalid.content);
    assert_eq!(
        text,
        "Validation failed for tool \"strict\":\n  - text: 5 is not of type \"string\"\n\nReceived arguments:\n{\n  \"text\": 5\n}"
    );
    assert!(invalid.is_error);
    assert_eq!(invalid.details, Some(json!({})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inactive_tools_are_not_offered_or_callable() {
    let provider = ScriptedProvider::new(vec![
        reply().tool_call("c1", "echo", json!({"text": "x"})).done(),
        text_reply("ok"),
    ]);
    let Setup {
        mut agent,
        mut events,
        ..
    } = setup(
        provider.clone(),
        vec![echo(), tool_with_prepare("other", |v| v)],
    );
    agent.config_mut().active_tools = Some(vec!["other".into()]);
    let (_agent, result, seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    let offered: Vec<String> = provider.requests()[0]
        .context
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(offered, ["other"]);
    assert!(
        describe(&seen)
            .contains(&"message_start toolResult c1 error \"Tool echo not found\"".into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_response_does_not_run_its_tool_calls() {
    let provider = ScriptedProvider::new(vec![
        reply()
            .tool_call("c1", "echo", json!({"text": "half"}))
            .done_with(StopReason::Length),
        text_reply("ok"),
    ]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![echo()]);
    let (_agent, result, seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    let result_line = describe(&seen)
        .into_iter()
        .find(|l| l.starts_with("message_start toolResult"))
        .unwrap();
    assert!(
        result_line.contains("was not executed: the response hit the output token limit"),
        "{result_line}"
    );
    assert_eq!(provider.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistence_sees_every_message_before_the_next_request() {
    let provider = ScriptedProvider::new(vec![
        reply().tool_call("c1", "echo", json!({"text": "a"})).done(),
        reply().tool_call("c2", "echo", json!({"text": "b"})).done(),
        text_reply("done"),
    ]);
    let Setup {
        agent,
        mut events,
        stored,
        ..
    } = setup(provider.clone(), vec![echo()]);
    let (agent, result, _seen) = run(agent, &mut events, "go").await;
    result.unwrap();
    let contexts = provider.contexts();
    let persisted = provider.persisted_at_request.lock().unwrap().clone();
    assert_eq!(contexts.len(), 3);
    for (context, persisted) in contexts.iter().zip(&persisted) {
        assert_eq!(
            context, persisted,
            "a message reached the model before the store"
        );
    }
    assert_eq!(
        *stored.lock().unwrap(),
        agent
            .messages()
            .iter()
            .map(|m| (**m).clone())
            .collect::<Vec<_>>()
    );
    let roles: Vec<String> = stored
        .lock()
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_store_stops_the_run() {
    let provider = ScriptedProvider::new(vec![
        reply().tool_call("c1", "echo", json!({"text": "a"})).done(),
        text_reply("never requested"),
    ]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![echo()]);
    let agent = agent.with_store(Box::new(
        |m: &AgentMessage| -> Result<(), knightcode_agent::PersistError> {
            match m {
                AgentMessage::ToolResult(_) => Err("disk full".into()),
                _ => Ok(()),
            }
        },
    ));
    let (_agent, result, seen) = run(agent, &mut events, "go").await;
    let error = result.unwrap_err();
    assert!(matches!(error, AgentError::Persist { .. }));
    let text = error.to_string();
    assert!(
        text.contains("toolResult") && text.contains("disk full"),
        "{text}"
    );
    assert_eq!(provider.requests().len(), 1);
    let lines = describe(&seen);
    assert_eq!(
        lines[lines.len() - 2..],
        ["agent_end 2 willRetry=false", "agent_settled aborted=false"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_consumer_holds_the_loop_back() {
    // 400 deltas through an 8-event channel: the loop must wait for the consumer rather than
    // queue them all.
    let text = "x".repeat(800);
    let mut builder = reply();
    builder = builder.text(&text);
    let mut flood = builder.done();
    let delta = flood
        .events
        .iter()
        .position(|e| matches!(e, knightcode_ai::StreamEvent::TextDelta { .. }))
        .unwrap();
    let many: Vec<knightcode_ai::StreamEvent> = (0..400)
        .map(|_| knightcode_ai::StreamEvent::TextDelta {
            content_index: 0,
            delta: "xx".into(),
        })
        .collect();
    flood.events.splice(delta..delta + 2, many);
    let provider = ScriptedProvider::new(vec![flood]);
    let Setup {
        mut agent,
        mut events,
        ..
    } = setup(provider.clone(), vec![]);
    let task = tokio::spawn(async move { agent.prompt(vec![user("flood")]).await });
    let mut updates = 0;
    let mut most_waiting = 0;
    while let Some(event) = events.recv().await {
        most_waiting = most_waiting.max(events.len());
        // A consumer slower than the producer.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        if matches!(event, AgentEvent::MessageUpdate { .. }) {
            updates += 1;
        }
        if matches!(event, AgentEvent::AgentSettled { .. }) {
            break;
        }
    }
    task.await.unwrap().unwrap();
    assert_eq!(updates, 402);
    assert!(most_waiting <= 8, "{most_waiting} events were buffered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_run_answers_the_conversation_as_it_stands() {
    let provider = ScriptedProvider::new(vec![text_reply("resumed"), text_reply("queued")]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![]);
    // Drain events alongside: the channel is bounded, so an unread channel stalls the loop.
    let drained = Arc::new(Mutex::new(Vec::new()));
    let sink = drained.clone();
    let drain = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            sink.lock().unwrap().push(event);
        }
    });
    let mut agent = agent.with_messages(vec![user("where were we")]);
    let run = agent.continue_run().await.unwrap();
    assert_eq!(run.messages.len(), 1);
    assert_eq!(provider.contexts()[0], vec![user("where were we")]);
    // Now the last message is the assistant's: only queued messages can continue it.
    let error = agent.continue_run().await.unwrap_err();
    assert!(matches!(error, AgentError::CannotContinue(_)), "{error}");
    agent.handle().follow_up(user("and then?"));
    let run = agent.continue_run().await.unwrap();
    assert_eq!(run.messages.len(), 2);
    assert_eq!(provider.contexts()[1].last(), Some(&user("and then?")));
    drop(agent);
    drain.await.unwrap();
    let lines = without_updates(describe(&drained.lock().unwrap()));
    assert_eq!(
        lines
            .iter()
            .filter(|l| *l == "agent_settled aborted=false")
            .count(),
        2
    );
    let empty = setup(ScriptedProvider::new(vec![]), vec![]);
    let mut empty_agent = empty.agent;
    assert!(matches!(
        empty_agent.continue_run().await,
        Err(AgentError::CannotContinue(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_every_result_terminates_ends_the_run_without_a_follow_up() {
    let done = tool("done", ExecutionMode::Parallel, |_args, _ctx| async {
        Ok(ToolOutput {
            terminate: true,
            ..ToolOutput::text("final answer")
        })
    });
    // Two batches: `done` with `echo` (one result does not terminate: the run goes on),
    // then `done` alone (it ends the run; the third reply is never asked for).
    let provider = ScriptedProvider::new(vec![
        reply()
            .tool_call("c1", "done", json!({"text": "a"}))
            .tool_call("c2", "echo", json!({"text": "b"}))
            .done(),
        reply().tool_call("c3", "done", json!({"text": "c"})).done(),
        text_reply("never asked"),
    ]);
    let Setup {
        agent, mut events, ..
    } = setup(provider.clone(), vec![done, echo()]);
    let (_agent, result, _seen) = run(agent, &mut events, "go").await;
    let outcome = result.unwrap();
    assert_eq!(provider.requests().len(), 2);
    let last = outcome.messages.last().unwrap();
    assert!(
        matches!(last, AgentMessage::ToolResult(r) if r.tool_call_id == "c3"),
        "{last:?}"
    );
}
