//! Providers by wire API: extensions add APIs of their own (`registerProvider` with a
//! `streamSimple`, `registerApiProvider`); every other model goes to the built-in client.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::RwLock;

use tokio_util::sync::CancellationToken;

use crate::client::Provider;
use crate::event::EventStream;
use crate::options::StreamRequest;

/// A [`Provider`] that sends each request to the provider registered for its model's `api`,
/// else to `fallback`. Registrations can change while sessions stream (an extension
/// registering a provider after start-up); each request reads the table once.
pub struct ApiRouter {
    fallback: Arc<dyn Provider>,
    apis: RwLock<HashMap<String, Arc<dyn Provider>>>,
}

impl std::fmt::Debug for ApiRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiRouter").finish_non_exhaustive()
    }
}

impl ApiRouter {
    pub fn new(fallback: Arc<dyn Provider>) -> Self {
        Self {
            fallback,
            apis: RwLock::new(HashMap::new()),
        }
    }

    /// Routes `api` to `provider` (replacing an earlier registration of that api).
    pub fn register(&self, api: &str, provider: Arc<dyn Provider>) {
        self.apis
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(api.to_owned(), provider);
    }

    pub fn unregister(&self, api: &str) {
        self.apis
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(api);
    }

    /// The built-in client, for callers that must not reach an extension's provider.
    pub fn fallback(&self) -> &Arc<dyn Provider> {
        &self.fallback
    }

    fn route(&self, api: &str) -> Arc<dyn Provider> {
        self.apis
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(api)
            .cloned()
            .unwrap_or_else(|| Arc::clone(&self.fallback))
    }
}

impl Provider for ApiRouter {
    fn stream(&self, request: &StreamRequest, cancel: CancellationToken) -> EventStream {
        self.route(&request.model.api).stream(request, cancel)
    }
}
