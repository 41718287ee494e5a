#![allow(dead_code)]
//! Builders shared by the session tests.

use std::sync::Arc;
use std::sync::Mutex;

use chrono::DateTime;
use chrono::Duration;
use chrono::Utc;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::SectionPatch;
use knightcode_protocol::StopReason;
use knightcode_protocol::SystemMessage;
use knightcode_protocol::ToolDeclaration;
use knightcode_protocol::ToolReference;
use knightcode_protocol::ToolResultMessage;
use knightcode_session::Clock;
use knightcode_session::LockOptions;
use knightcode_session::SessionStore;

/// A clock that advances one millisecond per reading, so entry order is deterministic.
#[derive(Debug)]
pub struct StepClock(Mutex<DateTime<Utc>>);

impl StepClock {
    pub fn new() -> Arc<Self> {
        let start = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.000Z")
            .unwrap()
            .with_timezone(&Utc);
        Arc::new(Self(Mutex::new(start)))
    }
}

impl Clock for StepClock {
    fn now_ms(&self) -> i64 {
        let mut now = self.0.lock().unwrap();
        *now += Duration::milliseconds(1);
        now.timestamp_millis()
    }

    fn monotonic(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    fn sleep(&self, _duration: std::time::Duration) -> knightcode_clock::BoxFuture<'static, ()> {
        Box::pin(async {})
    }

    fn random(&self) -> f64 {
        0.0
    }
}

pub fn store() -> SessionStore {
    SessionStore::new(StepClock::new(), LockOptions::default())
}

pub fn user(text: &str) -> AgentMessage {
    AgentMessage::user(text, Millis(1))
}

pub fn assistant(text: &str) -> AgentMessage {
    AgentMessage::Assistant(Box::new(AssistantMessage {
        content: Blocks(vec![ContentBlock::text(text)]),
        api: "openai-completions".into(),
        provider: "mock".into(),
        model: "mock-model".into(),
        stop_reason: StopReason::Stop.into(),
        timestamp: Millis(2),
        ..AssistantMessage::default()
    }))
}

pub fn assistant_with(provider: &str, model: &str, text: &str) -> AgentMessage {
    let AgentMessage::Assistant(mut message) = assistant(text) else {
        unreachable!()
    };
    message.provider = provider.into();
    message.model = model.into();
    AgentMessage::Assistant(message)
}

pub fn tool_result(call_id: &str, text: &str) -> AgentMessage {
    AgentMessage::ToolResult(Box::new(ToolResultMessage {
        tool_call_id: call_id.into(),
        tool_name: "read".into(),
        content: Blocks(vec![ContentBlock::text(text)]),
        is_error: false,
        timestamp: Millis(3),
        ..ToolResultMessage::default()
    }))
}

pub fn system(sections: &[(&str, Option<&str>)], added: &[&str], removed: &[&str]) -> AgentMessage {
    let mut patch = SectionPatch::new();
    for (name, text) in sections {
        match text {
            Some(text) => patch.set(*name, *text),
            None => patch.remove(*name),
        }
    }
    AgentMessage::System(Box::new(SystemMessage {
        content: "".into(),
        sections: Some(patch),
        tools_added: (!added.is_empty()).then(|| {
            added
                .iter()
                .map(|name| ToolDeclaration {
                    name: (*name).into(),
                    description: format!("{name} tool"),
                    parameters: serde_json::json!({"type":"object"}),
                    constrained_sampling: None,
                    extra: Default::default(),
                })
                .collect()
        }),
        tools_removed: (!removed.is_empty()).then(|| {
            removed
                .iter()
                .map(|name| ToolReference {
                    name: (*name).into(),
                    extra: Default::default(),
                })
                .collect()
        }),
        timestamp: Millis(0),
        ..SystemMessage::default()
    }))
}

/// A compact description of a message for asserting context order.
pub fn describe(message: &AgentMessage) -> String {
    match message {
        AgentMessage::System(m) => format!(
            "system[{}]",
            m.sections
                .as_ref()
                .map(|s| s
                    .iter()
                    .map(|(k, _)| k.to_owned())
                    .collect::<Vec<_>>()
                    .join(","))
                .unwrap_or_default()
        ),
        AgentMessage::User(m) => format!("user:{}", m.content.text()),
        AgentMessage::Assistant(m) => format!("assistant:{}", m.text()),
        AgentMessage::ToolResult(m) => format!(
            "tool:{}",
            knightcode_protocol::content::join_text(&m.content)
        ),
        AgentMessage::Custom(m) => format!("custom:{}", m.content.text()),
        AgentMessage::BranchSummary(m) => format!("branch:{}", m.summary),
        AgentMessage::CompactionSummary(m) => format!("compaction:{}", m.summary),
        other => format!("other:{}", other.role()),
    }
}

pub fn context_of(session: &knightcode_session::SessionManager) -> Vec<String> {
    session
        .build_context()
        .messages
        .iter()
        .map(|m| describe(&m.message))
        .collect()
}
