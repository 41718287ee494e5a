//! [`SessionLink`]: the app's line to the session's task. Commands go out tagged; each
//! tag is remembered with what its reply should do ([`Pending`]) until that reply comes
//! back in the event stream, so a reply is acted on once, in order with the events its
//! command caused.

use std::collections::HashMap;

use knightcode_agent::QueuedMessages;
use knightcode_runtime::Command;
use knightcode_runtime::Responder;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::SessionEvents;
use knightcode_runtime::SessionHandle;

use super::actions::Pending;

#[derive(Default)]
pub struct SessionLink {
    handle: Option<SessionHandle>,
    events: Option<SessionEvents>,
    /// Commands sent whose replies have not come back, by tag.
    pending: HashMap<u64, Pending>,
    next_tag: u64,
}

impl SessionLink {
    /// The session now runs in its task: commands go through `handle`, news comes on
    /// `events`.
    pub fn connect(&mut self, handle: SessionHandle, events: SessionEvents) {
        self.handle = Some(handle);
        self.events = Some(events);
    }

    /// The task is gone (or being stopped): hands back what connected it, if anything did.
    pub fn disconnect(&mut self) -> Option<(SessionHandle, SessionEvents)> {
        let handle = self.handle.take();
        let events = self.events.take();
        handle.zip(events)
    }

    /// Sends a command; its reply comes back as an event that [`Self::reply_to`] matches
    /// with `pending`. False when the session is gone.
    pub fn send(&mut self, command: Command, pending: Pending) -> bool {
        let Some(handle) = &self.handle else {
            return false;
        };
        let tag = self.next_tag;
        self.next_tag += 1;
        self.pending.insert(tag, pending);
        handle.send(command, Responder::Stream(tag));
        true
    }

    /// What the reply tagged `tag` should do (once: the tag is forgotten).
    pub fn reply_to(&mut self, tag: u64) -> Option<Pending> {
        self.pending.remove(&tag)
    }

    /// Aborts the running prompt now, ahead of queued commands.
    pub fn abort_now(&self) {
        if let Some(handle) = &self.handle {
            handle.abort_now();
        }
    }

    /// The session's extensions that register an OAuth login (`/login` offers them).
    pub fn extension_logins(
        &self,
    ) -> Option<knightcode_runtime::extensions::login::ExtensionLogins> {
        self.handle
            .as_ref()
            .and_then(SessionHandle::extension_logins)
    }

    /// Takes the queued steering and follow-up messages back from the session.
    pub fn clear_queue_now(&self) -> Option<QueuedMessages> {
        self.handle.as_ref().map(SessionHandle::clear_queue_now)
    }

    /// The next item of the session's stream; `None` once the task has ended, never while
    /// no session is connected. Cancel-safe.
    pub async fn recv(&mut self) -> Option<SessionEvent> {
        match &mut self.events {
            Some(events) => events.recv().await,
            None => std::future::pending().await,
        }
    }

    /// Every item already waiting in the stream.
    pub fn drain(&mut self) -> Vec<SessionEvent> {
        let mut drained = Vec::new();
        if let Some(events) = &mut self.events {
            while let Ok(event) = events.try_recv() {
                drained.push(event);
            }
        }
        drained
    }
}
