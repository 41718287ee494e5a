//! Steering and follow-up queues (rpc.md: `steer`, `follow_up`, `clear_queue`, queue modes).
//!
//! Steering messages are delivered after the current turn's tool calls finish, before the
//! next model request; follow-up messages when the agent would otherwise stop. In
//! `one-at-a-time` mode each delivery takes one message, in `all` mode the whole queue.

use std::collections::VecDeque;

use knightcode_protocol::AgentMessage;

/// How many queued messages one delivery takes: one per turn (steering) or per completion
/// (follow-up), or all at once. The wire type, so settings, RPC and the loop share one.
pub use knightcode_protocol::rpc::QueueMode;

/// Messages removed from the queues by [`crate::AgentHandle::clear_queue`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueuedMessages {
    pub steering: Vec<AgentMessage>,
    pub follow_up: Vec<AgentMessage>,
}

impl QueuedMessages {
    /// The steering messages' texts (RPC `clear_queue` data, `queue_update` events).
    pub fn steering_texts(&self) -> Vec<String> {
        texts(self.steering.iter())
    }

    pub fn follow_up_texts(&self) -> Vec<String> {
        texts(self.follow_up.iter())
    }

    pub fn is_empty(&self) -> bool {
        self.steering.is_empty() && self.follow_up.is_empty()
    }
}

fn texts<'a>(messages: impl Iterator<Item = &'a AgentMessage>) -> Vec<String> {
    messages
        .map(|m| m.display_text().unwrap_or_default())
        .collect()
}

/// Both queues and their modes.
#[derive(Debug, Default)]
pub(crate) struct Queues {
    steering: VecDeque<AgentMessage>,
    follow_up: VecDeque<AgentMessage>,
    pub(crate) steering_mode: QueueMode,
    pub(crate) follow_up_mode: QueueMode,
}

impl Queues {
    pub(crate) fn push_steering(&mut self, message: AgentMessage) {
        self.steering.push_back(message);
    }

    pub(crate) fn push_follow_up(&mut self, message: AgentMessage) {
        self.follow_up.push_back(message);
    }

    pub(crate) fn take_steering(&mut self) -> Vec<AgentMessage> {
        take(&mut self.steering, self.steering_mode)
    }

    pub(crate) fn take_follow_up(&mut self) -> Vec<AgentMessage> {
        take(&mut self.follow_up, self.follow_up_mode)
    }

    pub(crate) fn clear(&mut self) -> QueuedMessages {
        QueuedMessages {
            steering: self.steering.drain(..).collect(),
            follow_up: self.follow_up.drain(..).collect(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.steering.is_empty() && self.follow_up.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.steering.len() + self.follow_up.len()
    }

    /// `(steering, followUp)` texts for a `queue_update` event.
    pub(crate) fn texts(&self) -> (Vec<String>, Vec<String>) {
        (texts(self.steering.iter()), texts(self.follow_up.iter()))
    }
}

fn take(queue: &mut VecDeque<AgentMessage>, mode: QueueMode) -> Vec<AgentMessage> {
    match mode {
        QueueMode::All => queue.drain(..).collect(),
        QueueMode::OneAtATime => queue.pop_front().into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use knightcode_protocol::Millis;

    #[test]
    fn modes() {
        let mut queues = Queues::default();
        for text in ["a", "b", "c"] {
            queues.push_steering(AgentMessage::user(text, Millis(0)));
        }
        assert_eq!(queues.take_steering().len(), 1);
        assert_eq!(queues.texts().0, ["b", "c"]);
        queues.steering_mode = QueueMode::All;
        assert_eq!(queues.take_steering().len(), 2);
        assert!(queues.is_empty());
        assert_eq!(QueueMode::parse("all"), Some(QueueMode::All));
        assert_eq!(QueueMode::OneAtATime.as_str(), "one-at-a-time");
    }
}
