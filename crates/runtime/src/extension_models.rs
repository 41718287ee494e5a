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
    for spec in host.registry().providers {
        let mut raw = spec.config;
        if let Some(key) = raw.get("apiKey").and_then(serde_json::Value::as_str)
            && let Some(legacy) = legacy_env_key(key)
        {
            raw.insert("apiKey".to_owned(), serde_json::Value::String(legacy));
        }
        let config = ProviderConfig { raw };
        if let Err(message) = registry.register_provider(&spec.name, config) {
            problems.push(format!(
                "Extension error ({}, register_provider): {message}",
                spec.extension_path
            ));
        }
    }
    problems
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
/// `--list-models`). A load failure is returned as text.
pub async fn add_extension_models(
    paths: Vec<std::path::PathBuf>,
    sources: &crate::ExtensionSources,
    cwd: &Path,
    registry: &mut ModelRegistry,
) -> std::result::Result<Vec<String>, String> {
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
    .map_err(|e| format!("{e}\nStart without extensions using \"knightcode -ne\""))?;
    let mut notices: Vec<String> = host.diagnostics();
    notices.extend(register_providers(&host, registry));
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
) -> Arc<dyn Provider> {
    let apis = host.custom_apis();
    let session_provider: Arc<dyn Provider> = if apis.is_empty() {
        Arc::clone(&provider)
    } else {
        let router = ApiRouter::new(Arc::clone(&provider));
        for api in apis {
            let name = api.api().to_owned();
            router.register(&name, api);
        }
        Arc::new(router)
    };
    let storage = AuthStorage::load(agent_dir).unwrap_or_else(|_| AuthStorage::empty(agent_dir));
    host.bind_models(Arc::new(SessionModels {
        inner: Arc::new(Inner {
            registry: registry.unwrap_or_default(),
            storage,
            env,
            runtime_keys,
        }),
        provider: Arc::clone(&session_provider),
        builtin: provider,
    }));
    session_provider
}

struct Inner {
    registry: ModelRegistry,
    storage: AuthStorage,
    env: Arc<dyn EnvSource>,
    runtime_keys: HashMap<String, String>,
}

impl Inner {
    fn auth(&self) -> AuthContext<'_> {
        AuthContext {
            storage: &self.storage,
            env: self.env.as_ref(),
            runtime_keys: &self.runtime_keys,
        }
    }
}

/// The session's models as extensions see them (the registry as it was at start-up).
struct SessionModels {
    inner: Arc<Inner>,
    provider: Arc<dyn Provider>,
    builtin: Arc<dyn Provider>,
}

impl ModelPort for SessionModels {
    fn models(&self) -> Vec<(Model, bool)> {
        let auth = self.inner.auth();
        self.inner
            .registry
            .models()
            .iter()
            .map(|m| {
                let key = self
                    .inner
                    .registry
                    .provider_config(&m.provider)
                    .and_then(ProviderConfig::api_key);
                (m.clone(), auth.has_auth(&m.provider, key))
            })
            .collect()
    }

    fn resolve_auth(
        &self,
        model: Model,
    ) -> AuthFuture<std::result::Result<Option<RequestAuth>, String>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let resolved = inner
                .registry
                .resolve_auth(&model, &inner.auth())
                .await
                .map_err(|e| e.to_string())?;
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
}
