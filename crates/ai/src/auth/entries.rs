//! Writing `auth.json` entries for a login or a logout, and reading a bearer token that must
//! stay valid a while (`knightcode auth print-bearer-token`).

use std::path::Path;
use std::sync::Arc;
use std::sync::PoisonError;

use serde_json::Map;
use serde_json::Value;

use super::AuthStorage;
use super::Credential;
use super::Refresher;
use crate::config_value::EnvSource;
use crate::error::AiError;
use crate::oauth::BuiltinLogin;

impl AuthStorage {
    /// Stores a login or key as `auth.json` entry `entry`, under the file's lock and on top of
    /// the file as it is now, so entries other processes wrote meanwhile stay.
    pub async fn store(
        &mut self,
        provider: &str,
        entry: Map<String, Value>,
    ) -> Result<(), AiError> {
        self.rewrite(|credentials| {
            credentials.insert(provider.to_owned(), Value::Object(entry.clone()));
        })
        .await
    }

    /// Removes `provider`'s stored entry the same way; whether there was one.
    pub async fn forget(&mut self, provider: &str) -> Result<bool, AiError> {
        let mut removed = false;
        self.rewrite(|credentials| removed = credentials.shift_remove(provider).is_some())
            .await?;
        Ok(removed)
    }

    async fn rewrite(
        &mut self,
        change: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<(), AiError> {
        let write_err = |source| AiError::WriteFile {
            path: self.path.clone(),
            source,
        };
        let _lock = crate::oauth::AuthFileLock::acquire(&self.path)
            .await
            .map_err(|e| write_err(std::io::Error::other(e.to_string())))?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut current = Self::load(dir)?;
        change(&mut current.credentials);
        current.save()?;
        self.credentials = current.credentials;
        self.refreshed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        Ok(())
    }

    /// The access token of `provider`'s stored OAuth login, refreshed first when it lapses
    /// within `min_validity_ms` (`auth print-bearer-token`). `None` when the stored entry is
    /// no OAuth login.
    pub async fn bearer_token(
        &self,
        provider: &str,
        env: &dyn EnvSource,
        min_validity_ms: f64,
    ) -> Option<Result<String, AiError>> {
        let Some(Credential::OAuth { raw, access }) = self.get(provider) else {
            return None;
        };
        let hooks = self.hooks_for(provider).map(Arc::clone);
        let refresher = match &hooks {
            Some(hooks) => Refresher::Hooks(hooks.as_ref()),
            None => match BuiltinLogin::of(provider, env) {
                Some(login) => Refresher::Builtin(login),
                None => return Some(Ok(access)),
            },
        };
        Some(
            self.oauth_key_within(provider, raw, refresher, min_validity_ms)
                .await,
        )
    }
}
