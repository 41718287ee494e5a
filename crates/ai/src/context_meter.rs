//! [`ContextMeter`]: the size of the current context kept up to date one message at a time,
//! so a footer that shows it after every message does not rescan the conversation.

use knightcode_protocol::AgentMessage;

use crate::options::estimate_message_tokens;
use crate::options::usage_tokens;

/// The same figure as [`crate::estimate_context_tokens`] (the last usable response's usage
/// plus estimates of what came after it), maintained incrementally. After a compaction the
/// size is unknown until a response reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextMeter {
    /// The last usable response's context tokens.
    usage: Option<u64>,
    /// Estimates of the messages after it (of every message, before any response).
    trailing: u64,
    unknown: bool,
}

impl ContextMeter {
    /// Starts from a size computed the long way (`None`: unknown, as after a compaction).
    pub fn starting_at(tokens: Option<u64>) -> Self {
        Self {
            usage: tokens,
            trailing: 0,
            unknown: tokens.is_none(),
        }
    }

    /// A message joined the context.
    pub fn push(&mut self, message: &AgentMessage) {
        if let AgentMessage::Assistant(assistant) = message
            && let Some(tokens) = usage_tokens(assistant)
        {
            *self = Self {
                usage: Some(tokens),
                trailing: 0,
                unknown: false,
            };
            return;
        }
        self.trailing += estimate_message_tokens(message);
    }

    /// The history was compacted: unknown until the next response.
    pub fn compacted(&mut self) {
        *self = Self::starting_at(None);
    }

    pub fn tokens(&self) -> Option<u64> {
        (!self.unknown).then(|| self.usage.unwrap_or(0) + self.trailing)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use knightcode_protocol::Millis;

    use super::*;
    use crate::Context;
    use crate::estimate_context_tokens;

    fn assistant(total: u64) -> AgentMessage {
        serde_json::from_value(serde_json::json!({
            "role": "assistant", "api": "a", "provider": "p", "model": "m",
            "content": [{"type": "text", "text": "an answer of some length"}],
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": total,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 1
        }))
        .unwrap()
    }

    #[test]
    fn it_agrees_with_the_full_estimate_after_every_message() {
        let messages = [
            AgentMessage::user("first question, with some words", Millis(1)),
            assistant(1200),
            AgentMessage::user("second question", Millis(2)),
            assistant(0),
            AgentMessage::user("third", Millis(3)),
        ];
        let mut meter = ContextMeter::default();
        for (i, message) in messages.iter().enumerate() {
            meter.push(message);
            let context = Context {
                system_prompt: None,
                messages: messages[..=i].iter().cloned().map(Arc::new).collect(),
                tools: Vec::new(),
            };
            let (usage, trailing) = estimate_context_tokens(&context);
            assert_eq!(meter.tokens(), Some(usage + trailing), "after message {i}");
        }
    }

    #[test]
    fn after_a_compaction_it_is_unknown_until_a_response() {
        let mut meter = ContextMeter::starting_at(Some(5000));
        meter.compacted();
        assert_eq!(meter.tokens(), None);
        meter.push(&AgentMessage::user("next", Millis(1)));
        assert_eq!(meter.tokens(), None);
        meter.push(&assistant(900));
        assert_eq!(meter.tokens(), Some(900));
    }
}
