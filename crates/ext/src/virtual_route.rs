//! The conversation a virtual model's `route()` is asked about. The host keeps the
//! request's messages (shared, not copied) under a route id while the call runs, and JS
//! converts them only when the router reads `request.messages` (`kc.routeMessages(id)`):
//! most routers decide from the reason, the previous model and their state, and converting
//! a long conversation to JSON and copying it to the JS thread before every request cost
//! more than the rest of the routing.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use knightcode_protocol::AgentMessage;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;

/// The conversations of the `route()` calls under way, by route id.
#[derive(Default)]
pub(crate) struct Conversations {
    next_id: AtomicU64,
    live: Mutex<HashMap<u64, Vec<Arc<AgentMessage>>>>,
}

impl Conversations {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Vec<Arc<AgentMessage>>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `messages` until the returned guard drops (the call ended or was cancelled).
    pub(crate) fn hold(self: &Arc<Self>, messages: Vec<Arc<AgentMessage>>) -> Held {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        self.lock().insert(id, messages);
        Held {
            id,
            conversations: Arc::clone(self),
        }
    }

    /// How many calls' conversations are kept now.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// `kc.routeMessages(id)`: the conversation as JSON text, each message as the model
    /// sees it (as `convertToLlm` reduces it); `None` once the call has ended.
    fn messages_json(&self, id: u64) -> Option<String> {
        // Converted outside the lock: another request's route may start meanwhile.
        let messages = self.lock().get(&id).cloned()?;
        serde_json::to_string(&knightcode_ai::llm_messages_json(&messages)).ok()
    }
}

/// A conversation kept for one `route()` call; dropping it lets it go.
pub(crate) struct Held {
    pub(crate) id: u64,
    conversations: Arc<Conversations>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.conversations.lock().remove(&self.id);
    }
}

pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    kc: &Object<'js>,
    conversations: &Arc<Conversations>,
) -> rquickjs::Result<()> {
    let c = Arc::clone(conversations);
    kc.set(
        "routeMessages",
        Function::new(ctx.clone(), move |id: f64| c.messages_json(id as u64))?,
    )?;
    Ok(())
}
