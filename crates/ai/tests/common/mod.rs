//! Helpers shared by the integration tests: a fixed clock, models pointing at a mock server,
//! and compact event descriptions.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use knightcode_ai::Api;
use knightcode_ai::Client;
use knightcode_ai::Clock;
use knightcode_ai::Model;
use knightcode_ai::StreamEvent;
use knightcode_ai::clock::BoxFuture;
use knightcode_testkit::MockServer;
use knightcode_testkit::WireFormat;

pub const NOW_MS: i64 = 1_750_000_000_000;

/// A clock that never moves; sleeps return at once and are recorded.
#[derive(Debug, Default)]
pub struct FixedClock {
    pub sleeps: Mutex<Vec<Duration>>,
}

impl Clock for FixedClock {
    fn now_ms(&self) -> i64 {
        NOW_MS
    }

    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.sleeps.lock().unwrap().push(duration);
        Box::pin(async {})
    }

    fn random(&self) -> f64 {
        0.0
    }
}

pub fn client(clock: Arc<FixedClock>) -> Client {
    Client::with_clock(clock)
        .unwrap()
        .with_user_agent("knightcode (test)")
}

pub fn api_of(format: WireFormat) -> Api {
    Api::parse(format.api_name()).unwrap()
}

/// A reasoning, image-capable model served by `server`.
pub fn model_for(server: &MockServer, id: &str) -> Model {
    let api = api_of(server.format());
    let mut model = Model::new("mock", id, api, server.base_url());
    model.reasoning = true;
    model.input = vec!["text".into(), "image".into()];
    model.context_window = 200_000;
    model.max_tokens = 32_000;
    model.cost.input = 3.0;
    model.cost.output = 15.0;
    model.cost.cache_read = 0.3;
    model.cost.cache_write = 3.75;
    model
}

/// One line per event, usage updates left out.
pub fn describe(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| {
            Some(match event {
                StreamEvent::Start { .. } => "start".to_owned(),
                StreamEvent::TextStart { content_index } => format!("text_start {content_index}"),
                StreamEvent::TextDelta {
                    content_index,
                    delta,
                } => format!("text_delta {content_index} {delta:?}"),
                StreamEvent::TextEnd {
                    content_index,
                    content,
                } => format!("text_end {content_index} {content:?}"),
                StreamEvent::ThinkingStart { content_index } => {
                    format!("thinking_start {content_index}")
                }
                StreamEvent::ThinkingDelta {
                    content_index,
                    delta,
                } => format!("thinking_delta {content_index} {delta:?}"),
                StreamEvent::ThinkingEnd {
                    content_index,
                    content,
                } => format!("thinking_end {content_index} {content:?}"),
                StreamEvent::ToolCallStart {
                    content_index,
                    id,
                    name,
                } => format!("toolcall_start {content_index} {id} {name}"),
                StreamEvent::ToolCallDelta {
                    content_index,
                    delta,
                } => format!("toolcall_delta {content_index} {delta:?}"),
                StreamEvent::ToolCallEnd {
                    content_index,
                    tool_call,
                } => format!(
                    "toolcall_end {content_index} {} {}",
                    tool_call.id, tool_call.arguments
                ),
                StreamEvent::Usage(_) => return None,
                StreamEvent::Done { reason, .. } => format!("done {}", reason.as_str()),
                StreamEvent::Error { reason, message } => format!(
                    "error {} {}",
                    reason.as_str(),
                    message.error_message.as_deref().unwrap_or("")
                ),
            })
        })
        .collect()
}

/// Drains a stream into a vector of events.
pub async fn collect(mut stream: knightcode_ai::EventStream) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    while let Some(event) = stream.recv().await {
        events.push(event);
    }
    events
}
