//! A 2,000-turn conversation in a small window: automatic compaction keeps every request
//! inside it, turn after turn, with summaries that build on each other. The model here
//! measures each request the way the threshold does and refuses any that does not fit.

use crate::common;

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_ai::CancellationToken;
use knightcode_ai::EventStream;
use knightcode_ai::Provider;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamRequest;
use knightcode_ai::estimate_message_tokens;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::Tokens;
use knightcode_runtime::SessionEvent;
use knightcode_testkit::WireFormat;
use tokio::sync::mpsc;

use common::Running;
use common::TestSession;

const WINDOW: u64 = 16_000;
const TURNS: usize = 2_000;

#[derive(Default)]
struct Record {
    /// Sizes of the conversation requests and the summary requests, in order.
    turns: Vec<u64>,
    summaries: Vec<u64>,
    /// Summary requests that carried the previous summary.
    updates: usize,
}

/// Answers every request with its own measured size as the usage, and refuses a request
/// over the window as a real server would.
#[derive(Clone, Default)]
struct WindowModel {
    record: Arc<Mutex<Record>>,
}

fn request_tokens(request: &StreamRequest) -> u64 {
    let system = request
        .context
        .system_prompt
        .as_deref()
        .map_or(0, |p| p.len() as u64 / 4);
    let tools = serde_json::to_string(&request.context.tools).unwrap().len() as u64 / 4;
    let messages: u64 = request
        .context
        .messages
        .iter()
        .map(|m| estimate_message_tokens(m))
        .sum();
    system + tools + messages
}

impl Provider for WindowModel {
    fn stream(&self, request: &StreamRequest, _cancel: CancellationToken) -> EventStream {
        let tokens = request_tokens(request);
        let summarizing = request
            .context
            .system_prompt
            .as_deref()
            .is_some_and(|p| p.contains("context checkpoints"));
        let text = {
            let mut record = self.record.lock().unwrap();
            if summarizing {
                record.summaries.push(tokens);
                let carries_previous = request.context.messages.iter().any(|m| {
                    serde_json::to_string(&**m)
                        .unwrap()
                        .contains("<previous-summary>")
                });
                if carries_previous {
                    record.updates += 1;
                }
                format!("## Goal\nSUMMARY {}", record.summaries.len())
            } else {
                record.turns.push(tokens);
                format!("answer {} {}", record.turns.len(), "y".repeat(400))
            }
        };
        let mut message = AssistantMessage {
            api: request.model.api.clone(),
            provider: request.model.provider.clone(),
            model: request.model.id.clone(),
            ..AssistantMessage::default()
        };
        let events = if tokens > WINDOW {
            message.stop_reason = StopReason::Error.into();
            message.error_message = Some(format!("prompt is too long: {tokens} > {WINDOW}"));
            vec![StreamEvent::Error {
                reason: StopReason::Error,
                message,
            }]
        } else {
            message.content.0.push(ContentBlock::text(&text));
            message.stop_reason = StopReason::Stop.into();
            message.usage.input = Tokens(tokens);
            message.usage.output = Tokens(text.len() as u64 / 4);
            message.usage.total_tokens = Tokens(tokens + text.len() as u64 / 4);
            vec![StreamEvent::Done {
                reason: StopReason::Stop,
                message,
            }]
        };
        let (tx, rx) = mpsc::channel(4);
        tokio::spawn(async move {
            for event in events {
                if tx.send(event).await.is_err() {
                    return;
                }
            }
        });
        EventStream::from_receiver(rx)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_turns_stay_inside_a_small_window() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, Vec::new()).await;
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": test.server.base_url(), "api": "openai-completions", "apiKey": "test-key",
        "models": [{"id": "mock-model", "name": "Mock", "contextWindow": WINDOW,
            "maxTokens": 1000}]}}});
    std::fs::write(test.agent_dir.join("models.json"), models.to_string()).unwrap();
    let test =
        test.with_settings(r#"{"compaction": {"reserveTokens": 3000, "keepRecentTokens": 2000}}"#);
    let model = WindowModel::default();
    let hooks = Arc::new(knightcode_runtime::hooks::NoSessionHooks);
    let services = test.services(hooks).with_provider(Arc::new(model.clone()));
    let mut run = Running::spawn_with(test, services).await;

    let mut compactions = 0;
    for turn in 0..TURNS {
        let seen = run
            .prompt(&format!("turn {turn}: {}", "x".repeat(800)))
            .await;
        for event in &seen {
            match event {
                SessionEvent::Agent(AgentEvent::CompactionEnd {
                    result,
                    error_message,
                    ..
                }) => {
                    assert!(result.is_some(), "turn {turn}: {error_message:?}");
                    compactions += 1;
                }
                SessionEvent::Agent(AgentEvent::MessageEnd {
                    message: knightcode_protocol::AgentMessage::Assistant(a),
                }) => {
                    assert_ne!(
                        a.stop_reason.known(),
                        Some(StopReason::Error),
                        "turn {turn}"
                    );
                }
                _ => {}
            }
        }
    }
    assert_eq!(run.compactions().await.len(), compactions);
    let record = model.record.lock().unwrap();
    assert_eq!(
        record.turns.len(),
        TURNS,
        "one request per turn, none refused"
    );
    assert!(record.turns.iter().all(|&t| t <= WINDOW));
    assert!(record.summaries.iter().all(|&t| t <= WINDOW));
    assert!(compactions >= 50, "{compactions} compactions");
    assert_eq!(record.summaries.len(), compactions);
    assert_eq!(
        record.updates,
        compactions - 1,
        "each summary builds on the last"
    );
}
