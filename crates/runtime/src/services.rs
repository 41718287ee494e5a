//! What a session is given rather than finding for itself: the session store, the
//! environment, the provider, the hooks. Real ones by default; tests pass their own, so an
//! API key in the developer's environment cannot change which model a test runs.

use std::sync::Arc;

use knightcode_ai::EnvSource;
use knightcode_ai::ProcessEnv;
use knightcode_ai::Provider;
use knightcode_clock::Clock;
use knightcode_clock::SystemClock;
use knightcode_session::SessionStore;

use crate::hooks::NoSessionHooks;
use crate::hooks::SessionHooks;

/// The services one [`crate::AgentSession`] runs with.
#[derive(Clone)]
pub struct Services {
    /// Time for the loop and the provider (timestamps, durations, retry backoff).
    pub clock: Arc<dyn Clock>,
    /// The session store: one ownership registry and clock per process.
    pub store: SessionStore,
    /// Where API keys and other variables are read from.
    pub env: Arc<dyn EnvSource>,
    /// The model provider; `None` streams over HTTP with [`knightcode_ai::Client`].
    pub provider: Option<Arc<dyn Provider>>,
    /// The hook points (compaction, extensions).
    pub hooks: Arc<dyn SessionHooks>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("provider", &self.provider.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for Services {
    fn default() -> Self {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
        Self {
            store: SessionStore::new(
                Arc::clone(&clock),
                knightcode_session::LockOptions::default(),
            ),
            clock,
            env: Arc::new(ProcessEnv),
            provider: None,
            hooks: Arc::new(NoSessionHooks),
        }
    }
}

impl Services {
    /// Replaces the clock of the loop and the provider (the store keeps its own: pass a
    /// store built with the same clock for one time source).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn with_store(mut self, store: SessionStore) -> Self {
        self.store = store;
        self
    }

    pub fn with_env(mut self, env: Arc<dyn EnvSource>) -> Self {
        self.env = env;
        self
    }

    pub fn with_hooks(mut self, hooks: Arc<dyn SessionHooks>) -> Self {
        self.hooks = hooks;
        self
    }

    pub fn with_provider(mut self, provider: Arc<dyn Provider>) -> Self {
        self.provider = Some(provider);
        self
    }
}
