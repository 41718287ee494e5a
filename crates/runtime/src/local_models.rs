//! The session's probe of local model servers (`knightcode_ai::local`): started with the
//! session and never waited for, unless the start has no other model to use (or names a
//! local one). What it finds joins the models a session lists once it has answered.

use std::sync::Arc;
use std::sync::OnceLock;

use knightcode_ai::Model;
use knightcode_ai::local::LocalServer;
use tokio::task::JoinHandle;

/// A probe running in the background, or finished.
#[derive(Debug, Default)]
pub struct LocalProbe {
    found: Arc<OnceLock<Vec<Model>>>,
    task: Option<JoinHandle<()>>,
}

impl LocalProbe {
    /// Starts asking `servers` (nothing to do without any).
    pub fn spawn(servers: Vec<LocalServer>) -> Self {
        if servers.is_empty() {
            let found = Arc::new(OnceLock::new());
            let _ = found.set(Vec::new());
            return Self { found, task: None };
        }
        let found = Arc::new(OnceLock::new());
        let slot = Arc::clone(&found);
        let task = tokio::spawn(async move {
            let _ = slot.set(knightcode_ai::local::probe_local_servers(&servers).await);
        });
        Self {
            found,
            task: Some(task),
        }
    }

    /// What the servers serve, waiting for the probe (bounded by its own timeout).
    pub async fn wait(&mut self) -> Vec<Model> {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.ready().to_vec()
    }

    /// What the servers serve, if the probe has answered yet.
    pub fn ready(&self) -> &[Model] {
        self.found.get().map_or(&[], Vec::as_slice)
    }
}

impl Drop for LocalProbe {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// Whether a start must wait for the probe: `--provider`/`--model` name a local server's
/// provider.
pub fn names_local_provider(provider: Option<&str>, model: Option<&str>) -> bool {
    let named = provider.or_else(|| model.and_then(|m| m.split_once('/').map(|(p, _)| p)));
    named.is_some_and(knightcode_ai::local::is_local_provider)
}
