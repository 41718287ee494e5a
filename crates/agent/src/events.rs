//! The channel that carries [`AgentEvent`]s from the loop to its consumer (JSON/RPC writer,
//! TUI).
//!
//! Two kinds of producers share it. The loop's events can come in floods (`message_update`
//! per token), so [`EventSender::emit`] waits while the channel holds `capacity` events: a
//! slow consumer slows the loop down instead of the loop buffering without bound. Queue
//! changes made through an [`crate::AgentHandle`] are rare and come from the consumer's side
//! (an RPC `steer` command), often from the very task that drains the channel; waiting there
//! would deadlock it, so [`EventSender::emit_now`] pushes past the capacity. One queue keeps
//! both in order.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;

use knightcode_protocol::AgentEvent;
use tokio::sync::Notify;

/// Default number of events buffered before the loop waits for the consumer.
pub const DEFAULT_EVENT_CAPACITY: usize = 256;

struct State {
    events: VecDeque<AgentEvent>,
    senders: usize,
    receiver_alive: bool,
}

/// Hears events before they are queued, awaited by the emitter: what it does happens in
/// the order the agent emits, before the next event (the session's extensions, whose
/// handlers must see `turn_start` before that turn's `tool_call`, as in the reference).
pub trait EventObserver: Send + Sync {
    /// Whether `observe` has anything to do with this event (cheap; no await otherwise).
    fn wants(&self, event: &AgentEvent) -> bool;
    fn observe<'a>(
        &'a self,
        event: &'a AgentEvent,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>;
}

struct Inner {
    observer: Mutex<Option<Arc<dyn EventObserver>>>,
    state: Mutex<State>,
    capacity: usize,
    /// Signalled when an event was pushed or the last sender left.
    ready: Notify,
    /// Signalled when an event was taken or the receiver left.
    space: Notify,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock leaves the queue itself consistent (push/pop only).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A bounded channel for agent events: `capacity` events for the loop, plus any number of
/// queue updates (see the module docs).
pub fn event_channel(capacity: usize) -> (EventSender, EventReceiver) {
    let inner = Arc::new(Inner {
        observer: Mutex::new(None),
        state: Mutex::new(State {
            events: VecDeque::new(),
            senders: 1,
            receiver_alive: true,
        }),
        capacity: capacity.max(1),
        ready: Notify::new(),
        space: Notify::new(),
    });
    (
        EventSender {
            inner: inner.clone(),
        },
        EventReceiver { inner },
    )
}

/// The sending side; cheap to clone.
pub struct EventSender {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for EventSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSender")
            .field("capacity", &self.inner.capacity)
            .finish_non_exhaustive()
    }
}

impl Clone for EventSender {
    fn clone(&self) -> Self {
        self.inner.lock().senders += 1;
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl Drop for EventSender {
    fn drop(&mut self) {
        let last = {
            let mut state = self.inner.lock();
            state.senders -= 1;
            state.senders == 0
        };
        if last {
            self.inner.ready.notify_one();
        }
    }
}

impl EventSender {
    /// A sender whose events go nowhere (no consumer).
    pub fn discard() -> Self {
        let (sender, receiver) = event_channel(1);
        drop(receiver);
        sender
    }

    /// Sends an event, waiting while the channel is full. Events for a receiver that is gone
    /// are dropped: the run goes on (and keeps persisting) without a listener.
    pub async fn emit(&self, event: AgentEvent) {
        let observer = self
            .inner
            .observer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(observer) = observer
            && observer.wants(&event)
        {
            observer.observe(&event).await;
        }
        loop {
            let space = self.inner.space.notified();
            tokio::pin!(space);
            space.as_mut().enable();
            {
                let mut state = self.inner.lock();
                if !state.receiver_alive {
                    return;
                }
                if state.events.len() < self.inner.capacity {
                    state.events.push_back(event);
                    drop(state);
                    self.inner.ready.notify_one();
                    return;
                }
            }
            space.await;
        }
    }

    /// Sends an event without waiting, past the capacity if need be. Only for rare events
    /// that may come from the consumer's own task (queue updates).
    pub fn emit_now(&self, event: AgentEvent) {
        {
            let mut state = self.inner.lock();
            if !state.receiver_alive {
                return;
            }
            state.events.push_back(event);
        }
        self.inner.ready.notify_one();
    }

    /// Every sender of this channel (clones included) lets `observer` hear its events
    /// first (see [`EventObserver`]); `emit_now` events are not observed.
    pub fn set_observer(&self, observer: Arc<dyn EventObserver>) {
        *self
            .inner
            .observer
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(observer);
    }

    /// Whether a receiver still listens.
    pub fn is_connected(&self) -> bool {
        self.inner.lock().receiver_alive
    }
}

/// The receiving side.
pub struct EventReceiver {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for EventReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventReceiver").finish_non_exhaustive()
    }
}

impl Drop for EventReceiver {
    fn drop(&mut self) {
        {
            let mut state = self.inner.lock();
            state.receiver_alive = false;
            state.events.clear();
        }
        self.inner.space.notify_waiters();
    }
}

impl EventReceiver {
    /// The next event; `None` once every sender is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<AgentEvent> {
        loop {
            let ready = self.inner.ready.notified();
            tokio::pin!(ready);
            ready.as_mut().enable();
            match pop(&self.inner) {
                Ok(event) => return Some(event),
                Err(TryRecvError::Closed) => return None,
                Err(TryRecvError::Empty) => {}
            }
            ready.await;
        }
    }

    /// The next event if one is queued.
    pub fn try_recv(&mut self) -> Result<AgentEvent, TryRecvError> {
        pop(&self.inner)
    }

    /// How many events are waiting.
    pub fn len(&self) -> usize {
        self.inner.lock().events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn pop(inner: &Inner) -> Result<AgentEvent, TryRecvError> {
    let event = {
        let mut state = inner.lock();
        match state.events.pop_front() {
            Some(event) => event,
            None if state.senders == 0 => return Err(TryRecvError::Closed),
            None => return Err(TryRecvError::Empty),
        }
    };
    inner.space.notify_waiters();
    Ok(event)
}

/// Why [`EventReceiver::try_recv`] returned nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryRecvError {
    /// Nothing queued right now.
    Empty,
    /// Nothing queued and no sender left.
    Closed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bounded_for_emit_unbounded_for_emit_now() {
        let (tx, mut rx) = event_channel(1);
        tx.emit(AgentEvent::TurnStart).await;
        tx.emit_now(AgentEvent::AgentStart);
        // The channel is over capacity: a loop event waits until the consumer takes one.
        let waiting = tx.clone();
        let pending = tokio::spawn(async move { waiting.emit(AgentEvent::TurnStart).await });
        assert_eq!(rx.recv().await, Some(AgentEvent::TurnStart));
        assert_eq!(rx.recv().await, Some(AgentEvent::AgentStart));
        assert_eq!(rx.recv().await, Some(AgentEvent::TurnStart));
        let _ = pending.await;
        drop(tx);
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn emitting_without_receiver_does_not_block() {
        let tx = EventSender::discard();
        for _ in 0..10 {
            tx.emit(AgentEvent::TurnStart).await;
        }
        assert!(!tx.is_connected());
    }
}
