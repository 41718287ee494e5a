//! Auto-retry of failed turns (providers.md §6).

use crate::common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use knightcode_agent::RETRY_CANCELLED;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;

const OVERLOADED: &str =
    r#"529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overloaded_then_success() {
    let provider = ScriptedProvider::new(vec![error_reply(OVERLOADED), text_reply("ok")]);
    let Setup {
        agent,
        mut events,
        clock,
        omitted,
        stored,
    } = setup(provider.clone(), vec![]);
    let (agent, result, seen) = run(agent, &mut events, "hi").await;
    let outcome = result.unwrap();
    let error = format!("{OVERLOADED:?}");
    assert_eq!(
        without_updates(describe(&seen)),
        [
            "agent_start".to_owned(),
            "turn_start".into(),
            "message_start user \"hi\"".into(),
            "message_end user \"hi\"".into(),
            format!("message_start assistant error {error}"),
            format!("message_end assistant error {error}"),
            "turn_end 0".into(),
            "agent_end 2 willRetry=true".into(),
            format!("auto_retry_start 1/3 2000ms {error}"),
            "agent_start".into(),
            "turn_start".into(),
            "message_start assistant pending".into(),
            "message_end assistant stop".into(),
            "auto_retry_end success=true attempt=1 None".into(),
            "turn_end 0".into(),
            "agent_end 1 willRetry=false".into(),
            "agent_settled aborted=false".into(),
        ]
    );
    assert_eq!(*clock.sleeps.lock().unwrap(), [Duration::from_millis(2000)]);
    // The retry request does not show the model its failed attempt …
    let contexts = provider.contexts();
    assert_eq!(contexts[1], vec![user("hi")]);
    assert_eq!(agent.messages().len(), 2);
    // … while the session keeps it and is told to leave it out of the context.
    assert_eq!(stored.lock().unwrap().len(), 3);
    let omitted = omitted.lock().unwrap();
    assert!(
        matches!(&omitted[..], [AgentMessage::Assistant(m)] if m.error_message.as_deref() == Some(OVERLOADED))
    );
    assert_eq!(outcome.messages.len(), 3);
    assert_eq!(outcome.error, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_retry_for_auth_errors_or_context_overflow() {
    for error in [
        "401 Incorrect API key provided",
        "prompt is too long: 213462 tokens > 200000 maximum",
        "429 You exceeded your current quota: insufficient_quota",
    ] {
        let provider = ScriptedProvider::new(vec![error_reply(error), text_reply("unused")]);
        let Setup {
            agent,
            mut events,
            clock,
            ..
        } = setup(provider.clone(), vec![]);
        let (_agent, result, seen) = run(agent, &mut events, "hi").await;
        let outcome = result.unwrap();
        assert_eq!(outcome.error.as_deref(), Some(error));
        let lines = describe(&seen);
        assert!(
            lines.contains(&"agent_end 2 willRetry=false".to_owned()),
            "{error}"
        );
        assert!(
            !lines.iter().any(|l| l.starts_with("auto_retry")),
            "{error}"
        );
        assert_eq!(provider.requests().len(), 1);
        assert!(clock.sleeps.lock().unwrap().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_error_class_decides_over_the_wording() {
    use knightcode_ai::ErrorClass;
    // (text, class the provider decided, retried?)
    let cases = [
        // A rate limit whose text names no kind (an OpenAI-compatible error chunk's message).
        ("Slow down", ErrorClass::RateLimit, true),
        ("Connection dropped", ErrorClass::Network, true),
        // Wording that looks transient, for a failure the provider's code called otherwise.
        ("400 upstream overloaded", ErrorClass::Other, false),
        (
            "503 Service Unavailable",
            ErrorClass::ContextOverflow,
            false,
        ),
        ("429 Too many requests", ErrorClass::Quota, false),
    ];
    for (error, class, retried) in cases {
        let provider =
            ScriptedProvider::new(vec![classified_error_reply(error, class), text_reply("ok")]);
        let Setup {
            agent, mut events, ..
        } = setup(provider.clone(), vec![]);
        let (_agent, result, seen) = run(agent, &mut events, "hi").await;
        let outcome = result.unwrap();
        let lines = describe(&seen);
        assert!(
            lines.contains(&format!("agent_end 2 willRetry={retried}")),
            "{error}: {lines:?}"
        );
        assert_eq!(
            provider.requests().len(),
            if retried { 2 } else { 1 },
            "{error}"
        );
        let expected_error = (!retried).then_some(error);
        assert_eq!(outcome.error.as_deref(), expected_error, "{error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gives_up_after_max_retries_with_exponential_backoff() {
    let failure = "503 Service Unavailable";
    let provider = ScriptedProvider::new(vec![
        error_reply(failure),
        reply().text("half").fail(failure),
        error_reply(failure),
        text_reply("unused"),
    ]);
    let Setup {
        mut agent,
        mut events,
        clock,
        ..
    } = setup(provider.clone(), vec![]);
    agent.config_mut().retry.max_retries = 2;
    let (_agent, result, seen) = run(agent, &mut events, "hi").await;
    assert_eq!(result.unwrap().error.as_deref(), Some(failure));
    let retry_lines: Vec<String> = describe(&seen)
        .into_iter()
        .filter(|l| l.starts_with("auto_retry") || l.starts_with("agent_"))
        .collect();
    assert_eq!(
        retry_lines,
        [
            "agent_start",
            "agent_end 2 willRetry=true",
            "auto_retry_start 1/2 2000ms \"503 Service Unavailable\"",
            "agent_start",
            "agent_end 1 willRetry=true",
            "auto_retry_start 2/2 4000ms \"503 Service Unavailable\"",
            "agent_start",
            "agent_end 1 willRetry=false",
            "auto_retry_end success=false attempt=2 Some(\"503 Service Unavailable\")",
            "agent_settled aborted=false",
        ]
    );
    assert_eq!(
        *clock.sleeps.lock().unwrap(),
        [Duration::from_millis(2000), Duration::from_millis(4000)]
    );
    assert_eq!(provider.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_retry_does_not_retry() {
    let provider = ScriptedProvider::new(vec![error_reply(OVERLOADED), text_reply("unused")]);
    let Setup {
        mut agent,
        mut events,
        ..
    } = setup(provider.clone(), vec![]);
    agent.config_mut().retry.enabled = false;
    let (_agent, result, seen) = run(agent, &mut events, "hi").await;
    assert_eq!(result.unwrap().error.as_deref(), Some(OVERLOADED));
    assert!(describe(&seen).contains(&"agent_end 2 willRetry=false".to_owned()));
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_during_backoff_cancels_the_retry() {
    let provider = ScriptedProvider::new(vec![error_reply(OVERLOADED), text_reply("unused")]);
    let Setup {
        agent,
        mut events,
        clock,
        ..
    } = setup(provider.clone(), vec![]);
    clock.block_sleeps.store(true, Ordering::SeqCst);
    let handle = agent.handle();
    let (_agent, result, seen) = run_with(agent, &mut events, vec![user("hi")], |event| {
        if matches!(event, AgentEvent::AutoRetryStart { .. }) {
            handle.abort();
        }
    })
    .await;
    assert!(result.unwrap().aborted);
    let lines = describe(&seen);
    assert_eq!(
        lines[lines.len() - 3..],
        [
            format!("auto_retry_start 1/3 2000ms {OVERLOADED:?}"),
            format!("auto_retry_end success=false attempt=1 Some({RETRY_CANCELLED:?}) cancelled"),
            "agent_settled aborted=true".to_owned(),
        ]
    );
    assert_eq!(provider.requests().len(), 1);
}
