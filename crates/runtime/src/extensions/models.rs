//! Extensions and models: the providers extensions register join the model registry before
//! the session picks its model, APIs implemented in JS join the session's provider (an
//! [`ApiRouter`]), and extensions see models, credentials and our providers through a
//! [`ModelPort`] (`ctx.modelRegistry`, `@knightcode/ai`'s `complete`/`streamSimple`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use knightcode_ai::ApiRouter;
use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::EnvSource;
use knightcode_ai::Model;
use knightcode_ai::ModelRegistry;
use knightcode_ai::Provider;
use knightcode_ai::models::ProviderConfig;
use knightcode_ext::AuthFuture;
use knightcode_ext::ExtensionHost;
use knightcode_ext::ModelPort;
use knightcode_ext::RequestAuth;

/// Applies the providers `host`'s extensions registered to `registry`; returns what went
/// wrong (the reference reports these as `register_provider` extension errors).
pub fn register_providers(host: &ExtensionHost, registry: &mut ModelRegistry) -> Vec<String> {
    let mut problems = Vec::new();
    let registered = host.registry();
    for spec in registered.virtual_models {
        registry.register_virtual(spec.model);
    }
    for spec in registered.providers {
        let config = provider_config(&spec);
        if let Err(message) = registry.register_provider(&spec.name, config) {
            problems.push(format!(
                "Extension error ({}, register_provider): {message}",
                spec.extension_path
            ));
        }
    }
    problems
}

/// pi's `oauth.modifyModels`: each extension provider with one, whose OAuth login is
/// stored, gets the whole model list and its answer replaces it (a Copilot-style provider
/// moves its models to the login's own endpoint). Returns what went wrong; a failing
/// provider leaves the list as it was.
pub async fn modify_models(
    host: &ExtensionHost,
    registry: &mut ModelRegistry,
    storage: &AuthStorage,
) -> Vec<String> {
    let mut problems = Vec::new();
    for provider in host.providers_modifying_models() {
        let Some(knightcode_ai::Credential::OAuth { raw, .. }) = storage.get(&provider) else {
            continue;
        };
        match host.modify_models(&provider, registry.models(), &raw).await {
            Ok(models) => registry.replace_models(models),
            Err(error) => problems.push(format!(
                "Extension error (provider {provider}, oauth.modifyModels): {error}"
            )),
        }
    }
    problems
}

/// A registration's config as the model registry takes it.
pub(crate) fn provider_config(spec: &knightcode_ext::ProviderSpec) -> ProviderConfig {
    let mut raw = spec.config.clone();
    if let Some(key) = raw.get("apiKey").and_then(serde_json::Value::as_str)
        && let Some(legacy) = legacy_env_key(key)
    {
        raw.insert("apiKey".to_owned(), serde_json::Value::String(legacy));
    }
    ProviderConfig { raw }
}

/// pi 0.73 read an `apiKey` naming a set environment variable (`"GITLAB_TOKEN"`) as that
/// variable; its example extensions rely on it. Such a bare upper-case name whose variable
/// is set becomes `${NAME}`; anything else keeps KnightCode's syntax (literal, `$NAME`, `!cmd`).
fn legacy_env_key(key: &str) -> Option<String> {
    let bare = !key.is_empty()
        && key.starts_with(|c: char| c.is_ascii_uppercase())
        && key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    (bare && std::env::var_os(key).is_some_and(|v| !v.is_empty())).then(|| format!("${{{key}}}"))
}

/// The extensions `--list-models` loads: `-e`, the user-level folder and the user's
/// `extensions` settings (a project's own are left out: listing models never trusts a
/// project).
pub fn list_models_paths(
    sources: &crate::ExtensionSources,
    cwd: &Path,
    agent_dir: &Path,
    home: Option<&Path>,
) -> Vec<std::path::PathBuf> {
    let settings = crate::Settings::load(agent_dir, cwd, false);
    crate::extensions::discover(sources, &settings, cwd, agent_dir, home, false)
}

/// The models the extensions at `paths` register, added to `registry` (for
/// `--list-models`), then changed by the `oauth.modifyModels` of providers whose login
/// `storage` holds, as a session's start changes them. A load failure is returned as text.
pub async fn add_extension_models(
    paths: Vec<std::path::PathBuf>,
    sources: &crate::ExtensionSources,
    cwd: &Path,
    registry: &mut ModelRegistry,
    storage: &AuthStorage,
) -> std::result::Result<Vec<String>, crate::RuntimeError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let host = ExtensionHost::load(knightcode_ext::HostConfig {
        paths,
        cwd: cwd.to_path_buf(),
        mode: "print".to_owned(),
        flags: sources.flags.clone(),
        ..Default::default()
    })
    .await
    .map_err(|e| {
        crate::RuntimeError::Setup(format!(
            "{e}\nStart without extensions using \"knightcode -ne\""
        ))
    })?;
    let mut notices: Vec<String> = host.diagnostics();
    notices.extend(register_providers(&host, registry));
    notices.extend(modify_models(&host, registry, storage).await);
    Ok(notices)
}

/// Routes the extensions' JS APIs through `provider` and gives the host its model port;
/// returns what the session streams with.
pub(crate) fn bind(
    host: &Arc<ExtensionHost>,
    provider: Arc<dyn Provider>,
    registry: Option<ModelRegistry>,
    agent_dir: &Path,
    env: Arc<dyn EnvSource>,
    runtime_keys: HashMap<String, String>,
) -> (Arc<dyn Provider>, SharedModels) {
    // Always a router: an extension may register a `streamSimple` provider later.
    let router = Arc::new(ApiRouter::new(Arc::clone(&provider)));
    for api in host.custom_apis() {
        let name = api.api().to_owned();
        router.register(&name, api);
    }
    let session_provider: Arc<dyn Provider> = Arc::clone(&router) as Arc<dyn Provider>;
    let storage = AuthStorage::load(agent_dir).unwrap_or_else(|_| AuthStorage::empty(agent_dir));
    storage.set_oauth(host.oauth_hooks());
    let inner = Arc::new(Inner {
        registry: std::sync::Mutex::new(registry.unwrap_or_default()),
        registry_version: std::sync::atomic::AtomicU64::new(0),
        storage,
        env,
        runtime_keys,
        router,
        host: Arc::downgrade(host),
        late_apis: std::sync::Mutex::default(),
        classifier: knightcode_ai::Client::new().ok(),
        compact_ahead: std::sync::Mutex::new(None),
    });
    inner.router.register(
        knightcode_ai::VIRTUAL_API,
        super::virtual_models::provider(&inner),
    );
    host.bind_models(Arc::new(SessionModels {
        inner: Arc::clone(&inner),
        provider: Arc::clone(&session_provider),
        builtin: provider,
    }));
    (session_provider, SharedModels(inner))
}

/// The registry extensions see, kept in step with the session's when an extension
/// registers a provider after loading.
#[derive(Clone)]
pub(crate) struct SharedModels(Arc<Inner>);

impl SharedModels {
    /// The session's compaction, which routing uses when a routed model is too small.
    pub(crate) fn set_compactor(&self, compactor: &Arc<dyn super::virtual_models::CompactAhead>) {
        *self
            .0
            .compact_ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::downgrade(compactor));
    }
}

impl SharedModels {
    /// `registerProvider` after loading, at once (a bad config is the caller's error).
    /// A JS `streamSimple` joins the session's router too, so the next request to one of
    /// its models streams through the extension.
    pub(crate) fn register(
        &self,
        spec: &knightcode_ext::ProviderSpec,
    ) -> Result<(), knightcode_ai::AiError> {
        self.0
            .registry_mut()
            .register_provider(&spec.name, provider_config(spec))?;
        let api = spec.config.get("api").and_then(serde_json::Value::as_str);
        let streams = spec.config.get("streamSimple") == Some(&serde_json::Value::Bool(true));
        if let (Some(api), true, Some(host)) = (api, streams, self.0.host.upgrade()) {
            self.0.router.register(api, host.api_provider(api));
            self.0
                .late_apis
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(spec.name.clone(), api.to_owned());
        }
        Ok(())
    }

    pub(crate) fn unregister(&self, name: &str) {
        self.0.registry_mut().unregister_provider(name);
        let api = self
            .0
            .late_apis
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(name);
        if let Some(api) = api {
            self.0.router.unregister(&api);
        }
    }

    /// A virtual model registered (`Some`) or unregistered after loading.
    pub(crate) fn virtual_model(&self, provider: &str, id: &str, model: Option<Model>) {
        let mut registry = self.0.registry_mut();
        match model {
            Some(model) => registry.register_virtual(model),
            None => registry.unregister_virtual(provider, id),
        }
    }

    pub(crate) fn set_registry(&self, registry: ModelRegistry) {
        *self.0.registry_mut() = registry;
    }
}

pub(crate) struct Inner {
    registry: std::sync::Mutex<ModelRegistry>,
    /// Bumped by every change of `registry` (what extensions read of it is cached by it).
    registry_version: std::sync::atomic::AtomicU64,
    storage: AuthStorage,
    env: Arc<dyn EnvSource>,
    runtime_keys: HashMap<String, String>,
    /// The session's provider: our clients, and the APIs extensions implement in JS.
    pub(crate) router: Arc<ApiRouter>,
    pub(crate) host: std::sync::Weak<ExtensionHost>,
    /// The APIs of providers registered after loading, by provider name.
    late_apis: std::sync::Mutex<HashMap<String, String>>,
    /// What classifies (its label token cache lasts the session).
    classifier: Option<knightcode_ai::Client>,
    /// The session's compaction, for routed models too small for the context (weak: the
    /// session's hooks reach this registry through the extension host).
    compact_ahead:
        std::sync::Mutex<Option<std::sync::Weak<dyn super::virtual_models::CompactAhead>>>,
}

impl Inner {
    pub(crate) fn auth(&self) -> AuthContext<'_> {
        AuthContext {
            storage: &self.storage,
            env: self.env.as_ref(),
            runtime_keys: &self.runtime_keys,
        }
    }
}

impl Inner {
    /// The registry to change; the change counts as a new version of the models.
    fn registry_mut(&self) -> std::sync::MutexGuard<'_, ModelRegistry> {
        let guard = self
            .registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.registry_version
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        guard
    }

    pub(crate) fn compactor(&self) -> Option<Arc<dyn super::virtual_models::CompactAhead>> {
        self.compact_ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .and_then(std::sync::Weak::upgrade)
    }

    pub(crate) fn registry(&self) -> ModelRegistry {
        self.registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The session's models as extensions see them.
struct SessionModels {
    inner: Arc<Inner>,
    provider: Arc<dyn Provider>,
    builtin: Arc<dyn Provider>,
}

impl ModelPort for SessionModels {
    // Availability comes from the registry's keys and this session's credentials, which
    // are fixed for its life (a login rebuilds the registry), so the registry's version is
    // the list's.
    fn models_version(&self) -> Option<u64> {
        Some(
            self.inner
                .registry_version
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    fn models(&self) -> Vec<(Model, bool)> {
        let auth = self.inner.auth();
        let registry = self.inner.registry();
        registry
            .models()
            .iter()
            .map(|m| (m.clone(), registry.has_auth(&m.provider, &auth)))
            .collect()
    }

    fn resolve_auth(
        &self,
        model: Model,
    ) -> AuthFuture<std::result::Result<Option<RequestAuth>, knightcode_ai::AiError>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let registry = inner.registry();
            let resolved = registry.resolve_auth(&model, &inner.auth()).await?;
            Ok(resolved.map(|r| RequestAuth {
                api_key: r.api_key,
                headers: r.headers,
            }))
        })
    }

    fn provider(&self) -> Arc<dyn Provider> {
        Arc::clone(&self.provider)
    }

    fn builtin(&self) -> Arc<dyn Provider> {
        Arc::clone(&self.builtin)
    }

    fn classifiers(&self) -> Vec<(knightcode_ai::ClassifierModel, bool)> {
        crate::classify::classifier_models(&self.inner.registry(), &self.inner.auth())
    }

    fn classify(&self, request: serde_json::Value) -> AuthFuture<serde_json::Value> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let registry = inner.registry();
            let cancel = knightcode_ai::CancellationToken::new();
            let client = inner.classifier.as_ref();
            crate::classify::classify(&registry, &inner.auth(), client, &request, cancel).await
        })
    }
}
