//! Credentials (providers.md §2): `auth.json`, provider environment variables and the
//! resolution order `--api-key` → `auth.json` → `models.json` `apiKey` → environment.

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;

use serde_json::Map;
use serde_json::Value;

use crate::config_value;
use crate::config_value::EnvSource;
use crate::config_value::LayeredEnv;
use crate::error::AiError;
use crate::error::OAuthHookError;
use crate::oauth::BuiltinLogin;

mod ambient;
mod entries;
mod expiry;

use ambient::ambient_credentials;
use expiry::expired;
use expiry::expires_within;

/// Environment variables that hold a provider's API key, in lookup order: the reference's
/// (generated with the catalog), then those of providers only this agent knows by name.
pub fn provider_env_vars(provider: &str) -> &'static [&'static str] {
    if let Some(names) = crate::models::catalog_env_vars(provider) {
        return names;
    }
    match provider {
        "agentrouter" => &["AGENTROUTER_API_KEY"],
        "ant-ling" => &["ANT_LING_API_KEY"],
        "qwen-token-plan" | "qwen-token-plan-individual" => &["QWEN_TOKEN_PLAN_API_KEY"],
        "qwen-token-plan-cn" => &["QWEN_TOKEN_PLAN_CN_API_KEY"],
        "nvidia" => &["NVIDIA_API_KEY"],
        "radius" => &["RADIUS_API_KEY"],
        "zai-coding-cn" => &["ZAI_CODING_CN_API_KEY"],
        "together" => &["TOGETHER_API_KEY"],
        "baseten" => &["BASETEN_API_KEY"],
        "meta" => &["META_API_KEY"],
        "typesafe" => &["TYPESAFE_API_KEY"],
        "llama.cpp" => &["LLAMA_API_KEY"],
        _ => &[],
    }
}

/// What the reference answers for a provider whose credentials come from the platform's own
/// chain rather than one key: it counts as configured, and the key stands for no key.
pub(crate) const AMBIENT_CREDENTIALS: &str = "<authenticated>";

/// The API key from the provider's environment variables.
pub fn env_api_key(provider: &str, env: &dyn EnvSource) -> Option<String> {
    provider_env_vars(provider)
        .iter()
        .find_map(|name| env.var(name).filter(|v| !v.is_empty()))
        .or_else(|| ambient_credentials(provider, env).then(|| AMBIENT_CREDENTIALS.to_owned()))
}

/// A request that cannot be sent for want of a key: an auth failure, never retried.
pub(crate) fn no_api_key_failure(provider: &str) -> crate::error::StreamFailure {
    crate::error::StreamFailure::new(
        crate::error::ErrorClass::Auth,
        no_api_key_message(provider, None, None),
    )
}

/// What to tell someone whose provider has no key: who lacks one (`model_id` names the model
/// when a model was asked for) and every way to supply it. Every "no API key" text is built
/// here so they all give the same advice. `auth_file` is `auth.json`'s path where the caller
/// knows the agent directory.
pub fn no_api_key_message(
    provider: &str,
    model_id: Option<&str>,
    auth_file: Option<&Path>,
) -> String {
    let subject = match model_id {
        Some(id) => format!("{provider}/{id}"),
        None => format!("provider: {provider}"),
    };
    let auth_file =
        auth_file.map_or_else(|| "auth.json".to_owned(), |path| path.display().to_string());
    let store = format!("add a key for \"{provider}\" to {auth_file}");
    if provider == "google-vertex" {
        return format!(
            "No API key for {subject}. To use it, set GOOGLE_CLOUD_API_KEY, {store}, or use \
             application default credentials (`gcloud auth application-default login`, or \
             GOOGLE_APPLICATION_CREDENTIALS naming a service account key file) with \
             GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION set."
        );
    }
    if provider == "amazon-bedrock" {
        return crate::providers::bedrock::no_credentials_message(&subject);
    }
    match provider_env_vars(provider) {
        [] => format!("No API key for {subject}. To use it, {store} or pass --api-key."),
        names => format!(
            "No API key for {subject}. To use it, set {}, {store}, or pass --api-key.",
            names.join(" or ")
        ),
    }
}

/// Where a resolved credential came from (for status displays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthSource {
    Runtime,
    Stored,
    ModelsJsonKey,
    ModelsJsonCommand,
    Environment,
}

/// One `auth.json` entry. Unknown fields are kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Credential {
    ApiKey {
        key: String,
        env: HashMap<String, String>,
        raw: Map<String, Value>,
    },
    OAuth {
        access: String,
        raw: Map<String, Value>,
    },
    Other(Map<String, Value>),
}

impl Credential {
    pub fn api_key(key: impl Into<String>) -> Self {
        let key = key.into();
        let mut raw = Map::new();
        raw.insert("type".into(), Value::String("api_key".into()));
        raw.insert("key".into(), Value::String(key.clone()));
        Self::ApiKey {
            key,
            env: HashMap::new(),
            raw,
        }
    }

    fn from_json(value: &Value) -> Option<Self> {
        let raw = value.as_object()?.clone();
        let text = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(match raw.get("type").and_then(Value::as_str) {
            Some("api_key") => Self::ApiKey {
                key: text("key").unwrap_or_default(),
                env: raw
                    .get("env")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                            .collect()
                    })
                    .unwrap_or_default(),
                raw,
            },
            Some("oauth") => Self::OAuth {
                access: text("access").unwrap_or_default(),
                raw,
            },
            _ => Self::Other(raw),
        })
    }

    fn raw(&self) -> &Map<String, Value> {
        match self {
            Self::ApiKey { raw, .. } | Self::OAuth { raw, .. } | Self::Other(raw) => raw,
        }
    }
}

/// The variables a stored API-key credential defines (its `env`) for its `!command` and
/// templates; they come back with the key they resolved.
pub type CredentialEnv = HashMap<String, String>;

/// What an OAuth hook answers. The caller wraps its error in [`AiError::OAuthRefresh`] or
/// [`AiError::OAuthApiKey`].
pub type OAuthFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, OAuthHookError>> + Send + 'a>>;

/// OAuth implemented outside this crate: an extension's `registerProvider({ oauth })`.
/// A stored `oauth` credential of a provider these hooks know is refreshed through them
/// once it has expired, and turned into the request's key by them.
pub trait OAuthProviders: Send + Sync {
    fn handles(&self, provider: &str) -> bool;
    /// New credentials (`access`, `refresh`, `expires` and whatever else the provider keeps).
    fn refresh<'a>(
        &'a self,
        provider: &'a str,
        credentials: &'a Map<String, Value>,
    ) -> OAuthFuture<'a, Map<String, Value>>;
    fn api_key<'a>(
        &'a self,
        provider: &'a str,
        credentials: &'a Map<String, Value>,
    ) -> OAuthFuture<'a, String>;
}

/// `auth.json` in the agent directory (created with mode 0600).
pub struct AuthStorage {
    path: PathBuf,
    credentials: Map<String, Value>,
    /// Output of `!command` keys, cached for the life of this storage (the process).
    command_cache: Mutex<HashMap<String, Option<String>>>,
    oauth: OnceLock<Arc<dyn OAuthProviders>>,
    /// OAuth credentials refreshed since loading (also written to the file).
    refreshed: Mutex<HashMap<String, Map<String, Value>>>,
}

impl std::fmt::Debug for AuthStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthStorage")
            .field("path", &self.path)
            .field("providers", &self.credentials.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl AuthStorage {
    /// Reads `<agent_dir>/auth.json`; a missing file is an empty store.
    pub fn load(agent_dir: &Path) -> Result<Self, AiError> {
        let path = agent_dir.join("auth.json");
        let credentials = match std::fs::read_to_string(&path) {
            Ok(text) if text.trim().is_empty() => Map::new(),
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => map,
                Ok(_) => {
                    return Err(AiError::InvalidJson {
                        path,
                        message: "expected an object of provider credentials".into(),
                    });
                }
                Err(e) => {
                    return Err(AiError::InvalidJson {
                        path,
                        message: e.to_string(),
                    });
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
            Err(source) => return Err(AiError::ReadFile { path, source }),
        };
        Ok(Self {
            path,
            credentials,
            command_cache: Mutex::new(HashMap::new()),
            oauth: OnceLock::new(),
            refreshed: Mutex::default(),
        })
    }

    /// An empty store that writes to `<agent_dir>/auth.json`.
    pub fn empty(agent_dir: &Path) -> Self {
        Self {
            path: agent_dir.join("auth.json"),
            credentials: Map::new(),
            command_cache: Mutex::new(HashMap::new()),
            oauth: OnceLock::new(),
            refreshed: Mutex::default(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The OAuth hooks of providers defined outside this crate (set once).
    pub fn set_oauth(&self, hooks: Arc<dyn OAuthProviders>) {
        let _ = self.oauth.set(hooks);
    }

    /// Reads the file again (a login made since, in another shell or by pi), keeping the
    /// hooks; a file that cannot be read leaves the credentials as they were.
    pub fn reload(&mut self) -> Result<(), AiError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let fresh = Self::load(dir)?;
        self.credentials = fresh.credentials;
        self.command_cache = fresh.command_cache;
        self.refreshed = fresh.refreshed;
        Ok(())
    }

    /// The hooks, when they refresh `provider`'s logins.
    fn hooks_for(&self, provider: &str) -> Option<&Arc<dyn OAuthProviders>> {
        self.oauth.get().filter(|hooks| hooks.handles(provider))
    }

    /// `auth.json` as it is on disk now (empty when it cannot be read).
    fn on_disk(&self) -> Self {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        Self::load(dir).unwrap_or_else(|_| Self::empty(dir))
    }

    /// The key of an `oauth` credential this agent can refresh (an extension's hooks or a
    /// built-in login): refreshed first when it has expired (`expires`, epoch
    /// milliseconds), as the reference does.
    async fn oauth_key(
        &self,
        provider: &str,
        stored: Map<String, Value>,
        refresher: Refresher<'_>,
    ) -> Result<String, AiError> {
        self.oauth_key_within(provider, stored, refresher, 0.0)
            .await
    }

    /// [`Self::oauth_key`] for a key that must stay valid `margin_ms` longer.
    async fn oauth_key_within(
        &self,
        provider: &str,
        stored: Map<String, Value>,
        refresher: Refresher<'_>,
        margin_ms: f64,
    ) -> Result<String, AiError> {
        let known = self.refreshed_credentials(provider);
        let mut credentials = known.unwrap_or(stored);
        if expires_within(&credentials, margin_ms) {
            credentials = self
                .refresh_locked(provider, &refresher, credentials, margin_ms)
                .await?;
        }
        match refresher {
            Refresher::Hooks(hooks) => {
                hooks
                    .api_key(provider, &credentials)
                    .await
                    .map_err(|source| AiError::OAuthApiKey {
                        provider: provider.to_owned(),
                        source,
                    })
            }
            Refresher::Builtin(_) => Ok(credentials
                .get("access")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()),
        }
    }

    /// Refreshes `provider`'s login under `auth.json`'s lock (shared with the reference
    /// agent), so two processes never spend one refresh token twice: whoever comes second
    /// finds the fresh login in the file and uses it. A refusal reads the file once more, in
    /// case another process refreshed it meanwhile.
    async fn refresh_locked(
        &self,
        provider: &str,
        refresher: &Refresher<'_>,
        stale: Map<String, Value>,
        margin_ms: f64,
    ) -> Result<Map<String, Value>, AiError> {
        let expired = |c: &Map<String, Value>| expires_within(c, margin_ms);
        let on_disk = |storage: &Self| {
            storage
                .on_disk()
                .credentials
                .get(provider)
                .and_then(Value::as_object)
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("oauth"))
                .cloned()
        };
        let lock = crate::oauth::AuthFileLock::acquire(&self.path).await;
        let current = on_disk(self);
        if let Some(fresh) = current.as_ref().filter(|c| !expired(c)) {
            self.remember_refreshed(provider, fresh);
            return Ok(fresh.clone());
        }
        let current = current.unwrap_or(stale);
        let result = match &lock {
            Ok(_) => refresher.refresh(provider, &current).await,
            Err(busy) => Err(OAuthHookError::Failed(busy.to_string())),
        };
        let outcome = match result {
            Ok(fresh) => {
                let mut entry = Map::new();
                entry.insert("type".into(), Value::String("oauth".into()));
                entry.extend(fresh);
                self.write_refreshed(provider, &entry)?;
                Ok(entry)
            }
            Err(source) => match on_disk(self).filter(|c| !expired(c)) {
                Some(fresh) => {
                    self.remember_refreshed(provider, &fresh);
                    Ok(fresh)
                }
                None => Err(AiError::OAuthRefresh {
                    provider: provider.to_owned(),
                    source,
                }),
            },
        };
        drop(lock);
        outcome
    }

    fn remember_refreshed(&self, provider: &str, credentials: &Map<String, Value>) {
        self.refreshed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(provider.to_owned(), credentials.clone());
    }

    /// `provider`'s OAuth credentials as last refreshed by this process, if they were.
    fn refreshed_credentials(&self, provider: &str) -> Option<Map<String, Value>> {
        self.refreshed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(provider)
            .cloned()
    }

    /// Whether `provider`'s stored OAuth login is one the hooks refresh and has expired
    /// (a session re-resolves its key before the next prompt then).
    /// Runs before every prompt: the cheap checks come first, the hooks are asked last.
    pub fn oauth_expired(&self, provider: &str) -> bool {
        let expired_now = match self.refreshed_credentials(provider) {
            Some(credentials) => expired(&credentials),
            None => {
                matches!(self.get(provider), Some(Credential::OAuth { raw, .. }) if expired(&raw))
            }
        };
        expired_now && (self.hooks_for(provider).is_some() || BuiltinLogin::handles(provider))
    }

    /// Puts a refreshed credential in the file without touching the other entries, which
    /// may have changed since this storage was loaded.
    fn write_refreshed(&self, provider: &str, entry: &Map<String, Value>) -> Result<(), AiError> {
        let mut current = self.on_disk();
        current
            .credentials
            .insert(provider.to_owned(), Value::Object(entry.clone()));
        current.save()?;
        self.remember_refreshed(provider, entry);
        Ok(())
    }

    pub fn get(&self, provider: &str) -> Option<Credential> {
        self.credentials
            .get(provider)
            .and_then(Credential::from_json)
    }

    pub fn providers(&self) -> impl Iterator<Item = &str> {
        self.credentials.keys().map(String::as_str)
    }

    /// Stores a credential and writes the file.
    pub fn set(&mut self, provider: &str, credential: &Credential) -> Result<(), AiError> {
        self.credentials
            .insert(provider.to_owned(), Value::Object(credential.raw().clone()));
        self.save()
    }

    /// Removes a stored credential (`/logout`) and writes the file.
    pub fn remove(&mut self, provider: &str) -> Result<(), AiError> {
        if self.credentials.shift_remove(provider).is_some() {
            self.save()?;
        }
        Ok(())
    }

    /// Writes atomically (temp file + rename) with owner-only permissions.
    fn save(&self) -> Result<(), AiError> {
        let write_err = |source| AiError::WriteFile {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let text = serde_json::to_string_pretty(&Value::Object(self.credentials.clone()))
            .map_err(|e| write_err(std::io::Error::other(e)))?;
        write_private(&self.path, text.as_bytes()).map_err(write_err)
    }

    /// The key of a stored API-key credential, resolving `!command` (cached) and templates.
    async fn stored_key(
        &self,
        provider: &str,
        env: &dyn EnvSource,
    ) -> Option<Result<(String, CredentialEnv), AiError>> {
        let credential = self.get(provider)?;
        if let Credential::OAuth { raw, .. } = &credential {
            let hooks = self.hooks_for(provider).map(Arc::clone);
            let refresher = match &hooks {
                Some(hooks) => Some(Refresher::Hooks(hooks.as_ref())),
                None => BuiltinLogin::of(provider, env).map(Refresher::Builtin),
            };
            if let Some(refresher) = refresher {
                return Some(
                    self.oauth_key(provider, raw.clone(), refresher)
                        .await
                        .map(|key| (key, HashMap::new())),
                );
            }
        }
        let (key, cred_env) = match credential {
            Credential::ApiKey { key, env, .. } => (key, env),
            // The access token of a login this agent cannot refresh is used as it is.
            Credential::OAuth { access, .. } if !access.is_empty() => {
                return Some(Ok((access, HashMap::new())));
            }
            _ => return None,
        };
        let layered = LayeredEnv {
            first: Some(&cred_env),
            rest: env,
        };
        if let Some(command) = key.strip_prefix('!') {
            let cached = self
                .command_cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(command)
                .cloned();
            let value = match cached {
                Some(value) => value,
                None => {
                    let value = config_value::run_command(command, &layered).await;
                    self.command_cache
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(command.to_owned(), value.clone());
                    value
                }
            };
            return value.map(|v| Ok((v, cred_env.clone())));
        }
        let what = format!("stored API key for provider \"{provider}\"");
        Some(
            config_value::resolve(&key, &what, &layered)
                .await
                .map(|k| (k, cred_env.clone())),
        )
    }
}

/// Replaces `path` whole with owner-only permissions (see `knightcode_files::replace`; a
/// linked `auth.json` is replaced where the link points).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    knightcode_files::replace(path, bytes, Some(0o600))
}

/// How an expired login is refreshed: an extension's hooks, or built in.
enum Refresher<'a> {
    Hooks(&'a dyn OAuthProviders),
    Builtin(BuiltinLogin),
}

impl Refresher<'_> {
    async fn refresh(
        &self,
        provider: &str,
        credentials: &Map<String, Value>,
    ) -> Result<Map<String, Value>, OAuthHookError> {
        match self {
            Self::Hooks(hooks) => hooks.refresh(provider, credentials).await,
            Self::Builtin(login) => login.refresh(credentials).await,
        }
    }
}

/// A resolved credential for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedAuth {
    pub api_key: Option<String>,
    /// Headers from models.json (values resolved) and `Authorization` for `authHeader: true`.
    pub headers: Map<String, Value>,
    pub source: AuthSource,
}

/// What auth resolution needs: the stores and the environment.
pub struct AuthContext<'a> {
    pub storage: &'a AuthStorage,
    pub env: &'a dyn EnvSource,
    /// `--api-key` overrides by provider id.
    pub runtime_keys: &'a HashMap<String, String>,
}

impl AuthContext<'_> {
    /// Whether a provider has resolvable auth without running commands (model availability).
    pub fn has_auth(&self, provider: &str, models_json_key: Option<&str>) -> bool {
        if self.runtime_keys.contains_key(provider) {
            return true;
        }
        match self.storage.get(provider) {
            Some(Credential::ApiKey { key, .. }) if !key.is_empty() => return true,
            Some(Credential::OAuth { access, .. }) if !access.is_empty() => return true,
            _ => {}
        }
        if let Some(key) = models_json_key {
            return config_value::is_configured(key, self.env);
        }
        env_api_key(provider, self.env).is_some()
    }

    /// Resolves the key for a provider in precedence order. `models_json_key` is the raw
    /// `apiKey` of the provider's models.json entry.
    pub async fn resolve_key(
        &self,
        provider: &str,
        models_json_key: Option<&str>,
    ) -> Result<Option<(String, AuthSource, CredentialEnv)>, AiError> {
        if let Some(key) = self.runtime_keys.get(provider) {
            return Ok(Some((key.clone(), AuthSource::Runtime, HashMap::new())));
        }
        if let Some(stored) = self.storage.stored_key(provider, self.env).await {
            let (key, env) = stored?;
            return Ok(Some((key, AuthSource::Stored, env)));
        }
        if let Some(raw) = models_json_key {
            let what = format!("API key for provider \"{provider}\"");
            // models.json commands run for every request (not cached), as the TS agent does.
            let key = config_value::resolve(raw, &what, self.env).await?;
            let source = if config_value::is_command(raw) {
                AuthSource::ModelsJsonCommand
            } else {
                AuthSource::ModelsJsonKey
            };
            return Ok(Some((key, source, HashMap::new())));
        }
        Ok(env_api_key(provider, self.env).map(|k| (k, AuthSource::Environment, HashMap::new())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_api_key_says_where_a_key_can_go() {
        let auth = Path::new("/home/u/.knightcode/agent/auth.json");
        assert_eq!(
            no_api_key_message("anthropic", None, Some(auth)),
            "No API key for provider: anthropic. To use it, set ANTHROPIC_OAUTH_TOKEN or \
             ANTHROPIC_API_KEY, add a key for \"anthropic\" to \
             /home/u/.knightcode/agent/auth.json, or pass --api-key."
        );
        assert_eq!(
            no_api_key_message("openai", Some("gpt-5"), Some(auth)),
            "No API key for openai/gpt-5. To use it, set OPENAI_API_KEY, add a key for \
             \"openai\" to /home/u/.knightcode/agent/auth.json, or pass --api-key."
        );
        let unknown = no_api_key_message("my-proxy", None, None);
        assert_eq!(
            unknown,
            "No API key for provider: my-proxy. To use it, add a key for \"my-proxy\" to \
             auth.json or pass --api-key."
        );
        assert!(!unknown.contains("/login"));
    }
    use crate::config_value::MapEnv;

    #[tokio::test]
    async fn precedence_and_file_mode() {
        let dir = tempfile::tempdir().unwrap();
        let mut storage = AuthStorage::load(dir.path()).unwrap();
        let env = MapEnv::new([("OPENAI_API_KEY", "env-key"), ("MY_KEY", "templated")]);
        let mut runtime = HashMap::new();
        fn ctx<'a>(
            storage: &'a AuthStorage,
            env: &'a MapEnv,
            runtime: &'a HashMap<String, String>,
        ) -> AuthContext<'a> {
            AuthContext {
                storage,
                env,
                runtime_keys: runtime,
            }
        }
        let key = |r: Option<(String, AuthSource, CredentialEnv)>| r.map(|(k, s, _)| (k, s));

        let c = ctx(&storage, &env, &runtime);
        assert_eq!(
            key(c.resolve_key("openai", None).await.unwrap()),
            Some(("env-key".into(), AuthSource::Environment))
        );
        assert_eq!(
            key(c.resolve_key("openai", Some("$MY_KEY")).await.unwrap()),
            Some(("templated".into(), AuthSource::ModelsJsonKey))
        );
        assert!(c.resolve_key("openai", Some("$NOPE")).await.is_err());
        assert!(!c.has_auth("openai", Some("$NOPE")));
        assert!(c.has_auth("openai", None));
        assert!(!c.has_auth("anthropic", None));

        storage
            .set("openai", &Credential::api_key("stored"))
            .unwrap();
        let c = ctx(&storage, &env, &runtime);
        assert_eq!(
            key(c.resolve_key("openai", Some("$MY_KEY")).await.unwrap()),
            Some(("stored".into(), AuthSource::Stored))
        );
        runtime.insert("openai".to_owned(), "cli".to_owned());
        let c = ctx(&storage, &env, &runtime);
        assert_eq!(
            key(c.resolve_key("openai", None).await.unwrap()),
            Some(("cli".into(), AuthSource::Runtime))
        );

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("auth.json"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let reloaded = AuthStorage::load(dir.path()).unwrap();
        assert_eq!(reloaded.get("openai"), Some(Credential::api_key("stored")));
        let mut reloaded = reloaded;
        reloaded.remove("openai").unwrap();
        assert_eq!(AuthStorage::load(dir.path()).unwrap().get("openai"), None);
    }

    #[tokio::test]
    async fn stored_commands_run_once() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("count");
        let mut storage = AuthStorage::empty(dir.path());
        let command = format!("!echo x >> {} && echo secret", counter.display());
        storage.set("p", &Credential::api_key(command)).unwrap();
        let env = MapEnv::default();
        let runtime = HashMap::new();
        let c = AuthContext {
            storage: &storage,
            env: &env,
            runtime_keys: &runtime,
        };
        for _ in 0..2 {
            let (k, source, _) = c.resolve_key("p", None).await.unwrap().unwrap();
            assert_eq!((k.as_str(), source), ("secret", AuthSource::Stored));
        }
        assert_eq!(std::fs::read_to_string(counter).unwrap(), "x\n");
    }
}
