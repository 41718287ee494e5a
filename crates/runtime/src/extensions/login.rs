//! The interactive login of a provider an extension registers with an `oauth`
//! (`/login`, `knightcode auth login <provider>`): its `oauth.login(callbacks)` runs on the
//! JS thread, the front end shows what the callbacks say and answers their questions, and
//! the credentials it returns are stored as `{ "type": "oauth", ...credentials }`, as pi's
//! auth storage does.

use std::path::Path;
use std::sync::Arc;

use knightcode_ai::AuthStorage;
use knightcode_ext::ExtensionHost;
pub use knightcode_ext::LOGIN_CANCELLED;
pub use knightcode_ext::LoginNews;
pub use knightcode_ext::OAuthLoginProvider;
use serde_json::Map;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::RuntimeError;

/// The extensions that can log in; cheap to clone.
#[derive(Clone)]
pub struct ExtensionLogins {
    host: Arc<ExtensionHost>,
}

impl std::fmt::Debug for ExtensionLogins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionLogins").finish_non_exhaustive()
    }
}

/// Why an extension's login did not store a login.
#[derive(Debug, thiserror::Error)]
pub enum ExtensionLoginError {
    /// Escape, Ctrl+C or the end of input: nothing was written.
    #[error("{LOGIN_CANCELLED}")]
    Cancelled,
    /// The extension's `login` threw or rejected (or returned no credentials).
    #[error("{0}")]
    Failed(String),
    /// `auth.json` could not be written.
    #[error("{0}")]
    Save(#[from] knightcode_ai::AiError),
}

impl ExtensionLogins {
    pub(crate) fn new(host: Arc<ExtensionHost>) -> Self {
        Self { host }
    }

    /// Loads the extensions a command outside a session uses (`knightcode auth login`):
    /// `-e`, the user's, and the project's when it is trusted; `None` when none is configured.
    pub async fn load(
        sources: &crate::ExtensionSources,
        cwd: &Path,
        agent_dir: &Path,
        home: Option<&Path>,
        project_trusted: bool,
    ) -> Result<Option<Self>, RuntimeError> {
        let settings = crate::Settings::load(agent_dir, cwd, project_trusted);
        let paths =
            crate::extensions::discover(sources, &settings, cwd, agent_dir, home, project_trusted);
        if paths.is_empty() {
            return Ok(None);
        }
        let host = ExtensionHost::load(knightcode_ext::HostConfig {
            paths,
            cwd: cwd.to_path_buf(),
            mode: sources.mode.clone(),
            flags: sources.flags.clone(),
            ..Default::default()
        })
        .await
        .map_err(|e| {
            RuntimeError::Setup(format!(
                "{e}\nStart without extensions using \"knightcode -ne\""
            ))
        })?;
        Ok(Some(Self { host }))
    }

    /// The providers with an OAuth login, in registration order.
    pub fn providers(&self) -> Vec<OAuthLoginProvider> {
        self.host.oauth_login_providers()
    }

    /// The login provider `provider` registered, if it did.
    pub fn find(&self, provider: &str) -> Option<OAuthLoginProvider> {
        self.providers()
            .into_iter()
            .find(|p| p.provider == provider)
    }

    /// Runs `provider`'s `oauth.login` (its news to `news`; `cancel` stops it) and writes
    /// what it returns to `<agent_dir>/auth.json` under the file's lock, other entries kept.
    pub async fn login(
        &self,
        provider: &str,
        agent_dir: &Path,
        news: mpsc::UnboundedSender<LoginNews>,
        cancel: CancellationToken,
    ) -> Result<(), ExtensionLoginError> {
        let credentials = self
            .host
            .oauth_login(provider, news, cancel.clone())
            .await
            .map_err(|e| {
                if cancel.is_cancelled() {
                    ExtensionLoginError::Cancelled
                } else {
                    ExtensionLoginError::Failed(e.to_string())
                }
            })?;
        let mut entry = Map::new();
        entry.insert("type".into(), Value::from("oauth"));
        // `{ type: "oauth", ...credentials }`, as pi writes it.
        entry.extend(credentials);
        let mut storage = AuthStorage::load(agent_dir)?;
        storage.store(provider, entry).await?;
        Ok(())
    }
}
