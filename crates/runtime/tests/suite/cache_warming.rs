//! Prompt-cache warming against the Anthropic mock, over simulated time: the session runs
//! on a `ManualClock`, so half an hour of idling takes no time and every refresh is one the
//! test let fall due.

use std::sync::Arc;
use std::time::Duration;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::UsageEntry;
use knightcode_runtime::AgentSession;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::cache_warming::CacheWarming;
use knightcode_runtime::cache_warming::CacheWarmingStatus;
use knightcode_runtime::cache_warming::WarmState;
use knightcode_runtime::cache_warming::format_status;
use knightcode_testkit::Fault;
use knightcode_testkit::ManualClock;
use knightcode_testkit::MockUsage;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use crate::common::Running;
use crate::common::TestSession;

/// A 50,000-token prompt, written to the cache by the first response.
const PROMPT: MockUsage = MockUsage {
    input: 1000,
    output: 20,
    cache_read: 0,
    cache_write: 49_000,
    reasoning: 0,
};

/// What a refresh reports: the prompt read from the cache, one token out.
fn warm_reply() -> ScriptedReply {
    ScriptedReply::text("").with_usage(MockUsage {
        input: 0,
        output: 1,
        cache_read: 50_000,
        cache_write: 0,
        reasoning: 0,
    })
}

/// A session on the Anthropic mock whose model keeps a five-minute cache and is priced so
/// that a 50,000-token prompt is worth warming even idle (0.15 × $1.725 − $0.150 ≈ $0.11).
async fn test_session(settings: &str, replies: Vec<ScriptedReply>) -> TestSession {
    let test = TestSession::new(WireFormat::AnthropicMessages, replies)
        .await
        .with_settings(settings);
    let models = serde_json::json!({"providers": {"mock": {
    "baseUrl": test.server.base_url(), "api": "anthropic-messages", "apiKey": "test-key",
    "models": [{
        "id": "mock-model", "name": "Mock", "contextWindow": 1_000_000, "maxTokens": 1000,
        "cost": {"input": 30, "output": 150, "cacheRead": 3, "cacheWrite": 37.5},
        "promptCache": {"short": 300}
    }]}}});
    std::fs::write(test.agent_dir.join("models.json"), models.to_string()).unwrap();
    test
}

/// The session spawned on `clock`, and its warmer.
async fn spawn(
    test: TestSession,
    clock: &ManualClock,
    extension: Option<&str>,
) -> (Running, CacheWarming) {
    let mut setup = test.setup();
    if let Some(source) = extension {
        let path = test.project.join("warming.js");
        std::fs::write(&path, source).unwrap();
        setup.extensions.cli = vec![path.to_string_lossy().into_owned()];
    }
    let hooks = Arc::new(knightcode_runtime::hooks::NoSessionHooks);
    let services = test.services(hooks).with_clock(Arc::new(clock.clone()));
    let (session, events) = AgentSession::start_with(setup, services).await.unwrap();
    let warming = session.cache_warming().clone();
    let (handle, events) = session.spawn(events);
    (Running::from_parts(test, handle, events), warming)
}

/// Waits (bounded) until the warmer's status satisfies `done`.
async fn status_when(
    warming: &CacheWarming,
    done: impl Fn(&CacheWarmingStatus) -> bool,
) -> CacheWarmingStatus {
    let mut changed = warming.subscribe();
    let wait = async {
        loop {
            changed.borrow_and_update();
            let status = warming.status();
            if done(&status) {
                return status;
            }
            changed.changed().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or_else(|_| panic!("watchdog: status stayed {:?}", warming.status()))
}

/// Lets the next refresh fall due and returns its usage entry, once recorded.
async fn next_refresh(running: &mut Running, clock: &ManualClock) -> UsageEntry {
    let wait = tokio::time::timeout(
        Duration::from_secs(30),
        clock.next_timer_after(Duration::from_secs(200)),
    )
    .await
    .expect("watchdog: no refresh was timed");
    assert_eq!(wait, Duration::from_secs(270), "90 % of the 300 s lifetime");
    clock.advance(wait);
    let seen = running
        .read_until(|e| {
            matches!(
                e,
                SessionEvent::Agent(AgentEvent::EntryAppended {
                    entry: SessionEntry::Usage(_)
                })
            )
        })
        .await;
    match seen.last() {
        Some(SessionEvent::Agent(AgentEvent::EntryAppended {
            entry: SessionEntry::Usage(usage),
        })) => (**usage).clone(),
        other => panic!("{other:?}"),
    }
}

fn usage_entries(entries: &[SessionEntry]) -> Vec<UsageEntry> {
    entries
        .iter()
        .filter_map(|e| match e {
            SessionEntry::Usage(u) => Some((**u).clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn idle_warming_refreshes_until_the_half_hour_limit() {
    let mut replies = vec![ScriptedReply::text("Hello.").with_usage(PROMPT)];
    replies.extend((0..7).map(|_| warm_reply()));
    let test = test_session(r#"{"cacheWarming": "idle"}"#, replies).await;
    let clock = ManualClock::new();
    let (mut running, warming) = spawn(test, &clock, None).await;
    running.prompt("hello").await;

    // Refreshes at 4.5, 9, …, 27 minutes; the seventh would fall after 30 minutes.
    for warmed in 1..=6 {
        let entry = next_refresh(&mut running, &clock).await;
        assert_eq!(entry.kind, "cache_warm");
        assert_eq!(entry.provider, "mock");
        assert_eq!(entry.model, "mock-model");
        assert_eq!(entry.usage.cache_read.0, 50_000);
        assert_eq!(entry.note, None);
        assert_eq!(running.test.server.requests().len(), 1 + warmed);
    }
    let status = status_when(&warming, |s| s.state == WarmState::Inactive).await;
    assert_eq!(
        format_status(&status),
        "Inactive (30-minute idle safety limit reached)"
    );
    assert_eq!(clock.pending_timers(), 0);

    // Each refresh replays the real request exactly, with a one-token cap.
    let requests = running.test.server.requests();
    let mut real = requests[0].body.clone();
    real["max_tokens"] = serde_json::json!(1);
    for warm in &requests[1..] {
        assert_eq!(warm.body, real);
    }
    // Recorded, counted in the totals, never in context.
    let entries = running.entries().await;
    assert_eq!(usage_entries(&entries).len(), 6);
    let knightcode_runtime::Reply::Stats(stats) = running
        .handle
        .request(knightcode_runtime::Command::GetSessionStats)
        .await
    else {
        panic!("no stats");
    };
    assert_eq!(stats.tokens.cache_read, 6 * 50_000);
    let knightcode_runtime::Reply::Messages(messages) = running
        .handle
        .request(knightcode_runtime::Command::GetMessages)
        .await
    else {
        panic!("no messages");
    };
    assert_eq!(messages.len(), 2, "{messages:?}");
}

#[tokio::test]
async fn streaming_warming_refreshes_during_a_run_and_stops_when_it_settles() {
    let replies = vec![
        ScriptedReply::text("First.").with_usage(PROMPT),
        // The second answer stalls, as a long tool call would keep the run going.
        ScriptedReply::text("Second.")
            .with_usage(PROMPT)
            .with_fault(Fault::StallAfterEvents(2)),
        warm_reply(),
    ];
    // `streaming` is the default.
    let test = test_session("{}", replies).await;
    let clock = ManualClock::new();
    let (mut running, warming) = spawn(test, &clock, None).await;
    running.prompt("first").await;
    let status = status_when(&warming, |s| s.state == WarmState::Inactive).await;
    assert_eq!(format_status(&status), "Inactive (agent run settled)");

    running.send(knightcode_runtime::Command::Prompt {
        text: "second".into(),
        images: Vec::new(),
        queueing: None,
        source: knightcode_runtime::hooks::InputSource::Rpc,
    });
    running.test.server.wait_for_stalls(1).await;
    let status = status_when(&warming, |s| s.state == WarmState::Scheduled).await;
    assert!(
        format_status(&status).starts_with(
            "Decision in 4m 30s (100% continuation probability while agent is running"
        ),
        "{}",
        format_status(&status)
    );
    let entry = next_refresh(&mut running, &clock).await;
    assert_eq!(entry.kind, "cache_warm");
    assert!(
        running.handle.is_running(),
        "refreshed while the run went on"
    );
    running.test.server.release_stalls();
    running.until_settled().await;
    let status = status_when(&warming, |s| s.state == WarmState::Inactive).await;
    assert_eq!(format_status(&status), "Inactive (agent run settled)");
    assert_eq!(running.test.server.requests().len(), 3);
    assert_eq!(usage_entries(&running.entries().await).len(), 1);
}

/// Records each decision it is asked about and warms whatever the warmer thinks.
const ALWAYS_WARM: &str = r#"
export default function (pi) {
  pi.on("cache_warming_decision", (event) => {
    pi.appendEntry("decision", event);
    return { action: "warm" };
  });
}
"#;

#[tokio::test]
async fn an_extension_overrides_the_decision() {
    // A 5,000-token prompt is not worth warming idle (0.15 × $0.17 < $0.015 + $0.05).
    let small = MockUsage {
        cache_write: 4_000,
        ..PROMPT
    };
    let replies = vec![
        ScriptedReply::text("Hello.").with_usage(small),
        warm_reply(),
    ];
    let test = test_session(r#"{"cacheWarming": "idle"}"#, replies).await;
    let clock = ManualClock::new();
    let (mut running, warming) = spawn(test, &clock, Some(ALWAYS_WARM)).await;
    running.prompt("hello").await;
    let entry = next_refresh(&mut running, &clock).await;
    assert_eq!(entry.note.as_deref(), Some("extension override"));

    let entries = running.entries().await;
    let decision = entries
        .iter()
        .find_map(|e| match e {
            SessionEntry::Custom(c) if c.custom_type == "decision" => c.data.clone(),
            _ => None,
        })
        .expect("the extension saw the decision");
    assert_eq!(decision["type"], "cache_warming_decision");
    assert_eq!(decision["action"], "stop");
    assert_eq!(decision["continuationProbability"], 0.15);
    assert!(decision["warmCost"].as_f64().unwrap() > 0.0);
    assert!(decision["missCost"].as_f64().unwrap() > 0.0);
    let status = status_when(&warming, |s| s.state == WarmState::Scheduled).await;
    assert!(
        format_status(&status).contains("expected savings"),
        "{}",
        format_status(&status)
    );
}

#[tokio::test]
async fn off_never_warms() {
    let replies = vec![ScriptedReply::text("Hello.").with_usage(PROMPT)];
    let test = test_session(r#"{"cacheWarming": "off"}"#, replies).await;
    let clock = ManualClock::new();
    let (mut running, warming) = spawn(test, &clock, None).await;
    running.prompt("hello").await;
    assert_eq!(
        format_status(&warming.status()),
        "Inactive (cache warming disabled)"
    );
    assert_eq!(clock.pending_timers(), 0);
    assert_eq!(running.test.server.requests().len(), 1);
}

#[tokio::test]
async fn a_new_conversation_stops_warming() {
    let replies = vec![ScriptedReply::text("Hello.").with_usage(PROMPT)];
    let test = test_session(r#"{"cacheWarming": "idle"}"#, replies).await;
    let clock = ManualClock::new();
    let (mut running, warming) = spawn(test, &clock, None).await;
    running.prompt("hello").await;
    status_when(&warming, |s| s.state == WarmState::Scheduled).await;
    let tag = running.send(knightcode_runtime::Command::NewSession {
        parent_session: None,
    });
    running.reply(tag).await;
    let status = status_when(&warming, |s| s.state == WarmState::Inactive).await;
    assert_eq!(
        format_status(&status),
        "Inactive (conversation context changed)"
    );
    assert_eq!(running.test.server.requests().len(), 1);
}

/// A handler that throws: reported, and the warmer's own decision stands.
const THROWS: &str = r#"
export default function (pi) {
  pi.on("cache_warming_decision", () => {
    throw new Error("no opinion");
  });
}
"#;

#[tokio::test]
async fn a_failing_handler_leaves_the_decision() {
    let replies = vec![
        ScriptedReply::text("Hello.").with_usage(PROMPT),
        warm_reply(),
    ];
    let test = test_session(r#"{"cacheWarming": "idle"}"#, replies).await;
    let clock = ManualClock::new();
    let (mut running, _warming) = spawn(test, &clock, Some(THROWS)).await;
    running.prompt("hello").await;
    let wait = tokio::time::timeout(
        Duration::from_secs(30),
        clock.next_timer_after(Duration::from_secs(200)),
    )
    .await
    .expect("watchdog: no refresh was timed");
    clock.advance(wait);
    let seen = running
        .read_until(|e| {
            matches!(
                e,
                SessionEvent::Agent(AgentEvent::EntryAppended {
                    entry: SessionEntry::Usage(_)
                })
            )
        })
        .await;
    assert!(
        seen.iter().any(|e| matches!(
            e,
            SessionEvent::Agent(AgentEvent::ExtensionError { event, .. })
                if event == "cache_warming_decision"
        )),
        "{seen:?}"
    );
    let usage = usage_entries(&running.entries().await);
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0].note, None);
}
