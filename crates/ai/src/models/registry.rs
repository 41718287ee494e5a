//! [`ModelRegistry`]: the catalog with `models.json` applied, the providers extensions
//! register on top, and the auth and headers of one request.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Map;
use serde_json::Value;

use super::LazyCatalog;
use super::config::ModelsConfig;
use super::config::ProviderConfig;
use super::config::parse_models_json;
use super::definition::apply_override;
use super::definition::classifier_from_json;
use super::definition::def_str;
use super::definition::is_classifier;
use super::definition::merge_compat;
use super::definition::model_from_json;
use crate::auth::AuthContext;
use crate::auth::ResolvedAuth;
use crate::classify::ClassifierModel;
use crate::config_value;
use crate::config_value::LayeredEnv;
use crate::error::AiError;
use crate::model::Model;

/// Built-in models with models.json applied.
#[derive(Debug, Clone)]
pub struct ModelRegistry {
    /// The catalog's providers nothing has changed, parsed when asked for.
    catalog: LazyCatalog,
    /// Catalog providers whose models moved to `models` (models.json or an extension
    /// changed them), in the order they moved.
    taken: Vec<&'static str>,
    /// Every other model: changed catalog providers and configured ones.
    models: Vec<Model>,
    /// The untouched catalog followed by `models`, built when every model is asked for;
    /// shared by clones (a session snapshots its registry per run), reset by every change.
    all: OnceLock<std::sync::Arc<[Model]>>,
    providers: HashMap<String, ProviderConfig>,
    /// Per-model raw headers from models.json (resolved per request).
    model_headers: HashMap<(String, String), Map<String, Value>>,
    error: Option<String>,
    /// Providers extensions registered, in order, and the registry as it was before the
    /// first of them (what `unregister_provider` goes back to before re-applying the rest).
    registered: Vec<(String, ProviderConfig)>,
    before_registered: Option<Box<ModelRegistry>>,
    /// Models extensions route per request (`registerVirtualModel`), in registration order.
    virtual_models: Vec<Model>,
    /// Classifier models (`"type": "classifier"` in models.json), kept apart from the chat
    /// models: they are never offered for chat.
    classifiers: Vec<ClassifierModel>,
}

/// The `api` of a virtual model: no wire API, the extension's `route()` picks a real model
/// for each request.
pub const VIRTUAL_API: &str = "knightcode-virtual";

impl Default for ModelRegistry {
    /// No models at all (not even the catalog's).
    fn default() -> Self {
        Self::new(Vec::new(), None)
    }
}

impl ModelRegistry {
    /// Built-in catalog plus `<agent_dir>/models.json`. A broken file does not fail: its
    /// problem is kept in [`ModelRegistry::error`] and the built-in models stay usable.
    pub fn load(agent_dir: &Path) -> Self {
        let path = agent_dir.join("models.json");
        let config = match std::fs::read_to_string(&path) {
            Ok(text) => parse_models_json(&text, &path).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(AiError::ReadFile { path, source }),
        };
        match config {
            Ok(config) => Self::build(LazyCatalog::builtin(), Vec::new(), config.as_ref()),
            Err(error) => {
                let mut registry = Self::build(LazyCatalog::builtin(), Vec::new(), None);
                registry.error = Some(error.to_string());
                registry
            }
        }
    }

    /// Applies `config` to `base` models (without the built-in catalog).
    pub fn new(base: Vec<Model>, config: Option<&ModelsConfig>) -> Self {
        Self::build(LazyCatalog::empty(), base, config)
    }

    fn build(catalog: LazyCatalog, base: Vec<Model>, config: Option<&ModelsConfig>) -> Self {
        let mut registry = Self {
            catalog,
            taken: Vec::new(),
            models: base,
            all: OnceLock::new(),
            providers: HashMap::new(),
            model_headers: HashMap::new(),
            error: None,
            registered: Vec::new(),
            before_registered: None,
            virtual_models: Vec::new(),
            classifiers: Vec::new(),
        };
        let mut errors = Vec::new();
        for (id, provider) in config.map(|c| c.providers.as_slice()).unwrap_or_default() {
            if let Err(error) = registry.apply_provider(id, provider) {
                errors.push(error.to_string());
            }
            registry.providers.insert(id.clone(), provider.clone());
        }
        if !errors.is_empty() {
            registry.error = Some(errors.join("\n"));
        }
        registry
    }

    /// The catalog providers nothing has changed, in catalog order.
    fn untouched(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.catalog
            .provider_ids()
            .filter(|id| !self.taken.contains(id))
    }

    /// Moves a catalog provider's models to `models`, before something changes them.
    fn take_provider(&mut self, id: &str) {
        self.all = OnceLock::new();
        let Some(id) = self.untouched().find(|p| *p == id) else {
            return;
        };
        self.taken.push(id);
        let models = self.catalog.models(id).to_vec();
        self.models.extend(models);
    }

    fn apply_provider(&mut self, id: &str, config: &ProviderConfig) -> Result<(), AiError> {
        self.take_provider(id);
        let mut models: Vec<Model> = self
            .models
            .iter()
            .filter(|m| m.provider == id)
            .cloned()
            .collect();
        for model in &mut models {
            if let Some(url) = config.str("baseUrl") {
                model.base_url = url.to_owned();
            }
            model.compat = merge_compat(model.compat.take(), config.compat());
        }
        let mut classifiers = Vec::new();
        for definition in config.models() {
            let Some(def) = definition.as_object() else {
                continue;
            };
            if is_classifier(def) {
                let model = classifier_from_json(id, def, config)?;
                if let Some(headers) = def.get("headers").and_then(Value::as_object) {
                    let key = (id.to_owned(), model.id.clone());
                    self.model_headers
                        .entry(key)
                        .or_default()
                        .extend(headers.clone());
                }
                classifiers.retain(|c: &ClassifierModel| c.id != model.id);
                classifiers.push(model);
                continue;
            }
            let model = model_from_json(id, def, config, &models)?;
            match models.iter().position(|m| m.id == model.id) {
                Some(i) => models[i] = model,
                None => models.push(model),
            }
            if let Some(headers) = def.get("headers").and_then(Value::as_object) {
                let key = (id.to_owned(), def_str(def, "id").to_owned());
                self.model_headers
                    .entry(key)
                    .or_default()
                    .extend(headers.clone());
            }
        }
        for (model_id, patch) in config.overrides().into_iter().flatten() {
            let Some(patch) = patch.as_object() else {
                continue;
            };
            if let Some(model) = models.iter_mut().find(|m| &m.id == model_id) {
                apply_override(model, patch);
                if let Some(headers) = patch.get("headers").and_then(Value::as_object) {
                    let key = (id.to_owned(), model_id.clone());
                    let entry = self.model_headers.entry(key).or_default();
                    // Definition headers win over override headers.
                    let mut merged = headers.clone();
                    merged.extend(std::mem::take(entry));
                    *entry = merged;
                }
            }
        }
        self.models.retain(|m| m.provider != id);
        self.models.extend(models);
        self.classifiers.retain(|c| c.provider != id);
        self.classifiers.extend(classifiers);
        Ok(())
    }

    /// The classifier models, in declaration order.
    pub fn classifiers(&self) -> &[ClassifierModel] {
        &self.classifiers
    }

    pub fn find_classifier(&self, provider: &str, id: &str) -> Option<&ClassifierModel> {
        self.classifiers
            .iter()
            .find(|c| c.provider == provider && c.id == id)
    }

    /// Whether `provider` has credentials (a key `auth.json`, `--api-key`, the environment
    /// or its models.json `apiKey` gives).
    pub fn has_auth(&self, provider: &str, auth: &AuthContext<'_>) -> bool {
        let key = self
            .provider_config(provider)
            .and_then(ProviderConfig::api_key);
        auth.has_auth(provider, key)
    }

    /// Resolves key and configured headers for one request to the classifier `model`.
    pub async fn resolve_classifier_auth(
        &self,
        model: &ClassifierModel,
        auth: &AuthContext<'_>,
    ) -> Result<Option<ResolvedAuth>, AiError> {
        self.resolve_auth_of(&model.provider, &model.id, &model.api, auth)
            .await
    }

    /// An extension's `registerProvider(name, config)` (the reference's rules): with
    /// `models` the provider's models are replaced by those; with only `baseUrl` the
    /// existing models move there. `apiKey`, `headers` and `authHeader` are used for its
    /// requests as a models.json entry's are. Registering a name again merges the configs.
    pub fn register_provider(&mut self, id: &str, config: ProviderConfig) -> Result<(), AiError> {
        validate_registration(id, &config)?;
        if self.before_registered.is_none() {
            self.before_registered = Some(Box::new(self.clone()));
        }
        match self.registered.iter_mut().find(|(name, _)| name == id) {
            Some((_, existing)) => {
                for (key, value) in config.raw {
                    if !value.is_null() {
                        existing.raw.insert(key, value);
                    }
                }
            }
            None => self.registered.push((id.to_owned(), config)),
        }
        self.reapply_registered()
    }

    /// Removes an extension's provider and restores what it overrode (built-in models,
    /// models.json). Nothing happens for a name that was never registered.
    pub fn unregister_provider(&mut self, id: &str) {
        if !self.registered.iter().any(|(name, _)| name == id) {
            return;
        }
        self.registered.retain(|(name, _)| name != id);
        // The remaining registrations were accepted before; re-applying them cannot fail.
        let _ = self.reapply_registered();
    }

    /// Adds the models local servers serve ([`crate::local`]), each server a provider keyed
    /// with [`crate::local::LOCAL_API_KEY`]. A provider `models.json` or an extension already
    /// defines keeps its own definition. Returns whether anything was added.
    pub fn add_local_models(&mut self, models: Vec<Model>) -> bool {
        let mut added = false;
        for model in models {
            let provider = model.provider.clone();
            let configured = self
                .providers
                .get(&provider)
                .is_some_and(|config| config.api_key() != Some(crate::local::LOCAL_API_KEY));
            if configured || self.find(&provider, &model.id).is_some() {
                continue;
            }
            self.providers.entry(provider).or_insert_with(|| {
                let mut raw = Map::new();
                raw.insert("baseUrl".into(), Value::String(model.base_url.clone()));
                raw.insert("api".into(), Value::String(model.api.clone()));
                raw.insert(
                    "apiKey".into(),
                    Value::String(crate::local::LOCAL_API_KEY.into()),
                );
                ProviderConfig { raw }
            });
            self.models.push(model);
            self.all = OnceLock::new();
            added = true;
        }
        added
    }

    /// Replaces every model with `models` (what an OAuth provider's `modifyModels` returned
    /// for the whole list, as pi applies it); providers' request settings stay. Registering
    /// or unregistering a provider afterwards starts again from the registrations.
    pub fn replace_models(&mut self, models: Vec<Model>) {
        let untouched: Vec<&'static str> = self.untouched().collect();
        self.taken.extend(untouched);
        self.models = models;
        self.all = OnceLock::new();
    }

    /// The names of the providers extensions registered.
    pub fn registered_providers(&self) -> impl Iterator<Item = &str> {
        self.registered.iter().map(|(name, _)| name.as_str())
    }

    fn reapply_registered(&mut self) -> Result<(), AiError> {
        let Some(base) = self.before_registered.clone() else {
            return Ok(());
        };
        let registered = std::mem::take(&mut self.registered);
        let mut next = (*base).clone();
        next.all = OnceLock::new();
        let mut result = Ok(());
        for (id, config) in &registered {
            if let Err(message) = next.apply_registration(id, config) {
                result = Err(message);
            }
        }
        next.registered = registered;
        next.before_registered = Some(base);
        next.virtual_models = std::mem::take(&mut self.virtual_models);
        *self = next;
        result
    }

    fn apply_registration(&mut self, id: &str, config: &ProviderConfig) -> Result<(), AiError> {
        self.take_provider(id);
        let mut request = self.providers.get(id).cloned().unwrap_or_default();
        for key in ["apiKey", "headers", "authHeader", "baseUrl", "api"] {
            if let Some(value) = config.raw.get(key).filter(|v| !v.is_null()) {
                request.raw.insert(key.to_owned(), value.clone());
            }
        }
        if !config.models().is_empty() {
            let mut models = Vec::new();
            for definition in config.models() {
                let Some(def) = definition.as_object() else {
                    continue;
                };
                models.push(model_from_json(id, def, config, &[])?);
                let key = (id.to_owned(), def_str(def, "id").to_owned());
                match def.get("headers").and_then(Value::as_object) {
                    Some(headers) => {
                        self.model_headers.insert(key, headers.clone());
                    }
                    None => {
                        self.model_headers.remove(&key);
                    }
                }
            }
            self.models.retain(|m| m.provider != id);
            self.models.extend(models);
        } else if let Some(url) = config.str("baseUrl") {
            for model in self.models.iter_mut().filter(|m| m.provider == id) {
                model.base_url = url.to_owned();
            }
        }
        self.providers.insert(id.to_owned(), request);
        Ok(())
    }

    /// Every model (built-in and configured). This parses the whole catalog; a start
    /// that only needs the models it has keys for asks [`ModelRegistry::available`].
    pub fn models(&self) -> &[Model] {
        self.all.get_or_init(|| {
            let mut all: Vec<Model> = self
                .untouched()
                .flat_map(|id| self.catalog.models(id).iter().cloned())
                .collect();
            all.extend(self.models.iter().cloned());
            all.retain(|m| !self.hidden_by_virtual(m));
            all.extend(self.virtual_models.iter().cloned());
            all.into()
        })
    }

    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        if let Some(model) = self
            .virtual_models
            .iter()
            .find(|m| m.provider == provider && m.id == id)
        {
            return Some(model);
        }
        let in_catalog = || {
            self.untouched()
                .find(|p| *p == provider)
                .and_then(|p| self.catalog.models(p).iter().find(|m| m.id == id))
        };
        self.models
            .iter()
            .find(|m| m.provider == provider && m.id == id)
            .or_else(in_catalog)
    }

    /// The problem with models.json, if loading or applying it failed.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn provider_config(&self, provider: &str) -> Option<&ProviderConfig> {
        self.providers.get(provider)
    }

    /// Models whose provider has resolvable auth (what `/model` and `--list-models` show).
    /// Only the catalog providers with auth are parsed.
    pub fn available(&self, auth: &AuthContext<'_>) -> Vec<Model> {
        let has_auth = |provider: &str| {
            let key = self
                .provider_config(provider)
                .and_then(ProviderConfig::api_key);
            auth.has_auth(provider, key)
        };
        let mut available: Vec<Model> = self
            .untouched()
            .filter(|id| has_auth(id))
            .flat_map(|id| self.catalog.models(id).iter().cloned())
            .collect();
        available.extend(
            self.models
                .iter()
                .filter(|m| has_auth(&m.provider))
                .cloned(),
        );
        available.retain(|m| !self.hidden_by_virtual(m));
        // Under a provider of ours a virtual model follows that provider's credentials;
        // under an id of its own it needs none.
        available.extend(
            self.virtual_models
                .iter()
                .filter(|m| !self.knows_provider(&m.provider) || has_auth(&m.provider))
                .cloned(),
        );
        available
    }

    /// Adds (or replaces, same provider and id) a virtual model: `model.api` is
    /// [`VIRTUAL_API`]. It hides a physical model of the same provider and id.
    pub fn register_virtual(&mut self, model: Model) {
        self.virtual_models
            .retain(|m| !(m.provider == model.provider && m.id == model.id));
        self.virtual_models.push(model);
        self.all = OnceLock::new();
    }

    pub fn unregister_virtual(&mut self, provider: &str, id: &str) {
        self.virtual_models
            .retain(|m| !(m.provider == provider && m.id == id));
        self.all = OnceLock::new();
    }

    /// The virtual models registered, in registration order.
    pub fn virtual_models(&self) -> &[Model] {
        &self.virtual_models
    }

    fn hidden_by_virtual(&self, model: &Model) -> bool {
        model.api != VIRTUAL_API
            && self
                .virtual_models
                .iter()
                .any(|v| v.provider == model.provider && v.id == model.id)
    }

    /// A provider the catalog, models.json or an extension defines.
    fn knows_provider(&self, provider: &str) -> bool {
        self.providers.contains_key(provider)
            || self.models.iter().any(|m| m.provider == provider)
            || self.catalog.provider_ids().any(|p| p == provider)
    }

    /// Resolves key and configured headers for one request to `model`.
    pub async fn resolve_auth(
        &self,
        model: &Model,
        auth: &AuthContext<'_>,
    ) -> Result<Option<ResolvedAuth>, AiError> {
        self.resolve_auth_of(&model.provider, &model.id, &model.api, auth)
            .await
    }

    async fn resolve_auth_of(
        &self,
        provider: &str,
        id: &str,
        api: &str,
        auth: &AuthContext<'_>,
    ) -> Result<Option<ResolvedAuth>, AiError> {
        if api == VIRTUAL_API && !self.knows_provider(provider) {
            // A virtual model's own provider id has no credentials to resolve: the request
            // it routes to uses the physical model's.
            return Ok(Some(ResolvedAuth {
                api_key: None,
                headers: Map::new(),
                source: crate::auth::AuthSource::Runtime,
            }));
        }
        let config = self.provider_config(provider);
        let Some((key, source, cred_env)) = auth
            .resolve_key(provider, config.and_then(ProviderConfig::api_key))
            .await?
        else {
            return Ok(None);
        };
        let env = LayeredEnv {
            first: Some(&cred_env),
            rest: auth.env,
        };
        let mut headers = Map::new();
        let model_headers = self
            .model_headers
            .get(&(provider.to_owned(), id.to_owned()));
        for raw in [config.and_then(ProviderConfig::headers), model_headers]
            .into_iter()
            .flatten()
        {
            for (name, value) in raw {
                let Some(text) = value.as_str() else {
                    continue;
                };
                let what = format!("header \"{name}\" of provider \"{provider}\"");
                let resolved = config_value::resolve(text, &what, &env).await?;
                headers.insert(name.clone(), Value::String(resolved));
            }
        }
        if config.is_some_and(ProviderConfig::auth_header) {
            headers.insert(
                "Authorization".into(),
                Value::String(format!("Bearer {key}")),
            );
        }
        Ok(Some(ResolvedAuth {
            api_key: Some(key),
            headers,
            source,
        }))
    }
}

/// The reference's checks of a registration (its messages).
fn validate_registration(id: &str, config: &ProviderConfig) -> Result<(), AiError> {
    if config.raw.get("streamSimple").and_then(Value::as_bool) == Some(true)
        && config.str("api").is_none()
    {
        return Err(AiError::ProviderConfig(format!(
            "Provider {id}: \"api\" is required when registering streamSimple."
        )));
    }
    if config.models().is_empty() {
        return Ok(());
    }
    if config.str("baseUrl").is_none() {
        return Err(AiError::ProviderConfig(format!(
            "Provider {id}: \"baseUrl\" is required when defining models."
        )));
    }
    if config.api_key().is_none() && config.raw.get("oauth").is_none_or(Value::is_null) {
        return Err(AiError::ProviderConfig(format!(
            "Provider {id}: \"apiKey\" or \"oauth\" is required when defining models."
        )));
    }
    for def in config.models() {
        if def.get("api").and_then(Value::as_str).is_none() && config.str("api").is_none() {
            return Err(AiError::ProviderConfig(format!(
                "Provider {id}, model {}: no \"api\" specified.",
                def.get("id").and_then(Value::as_str).unwrap_or("")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthSource;
    use crate::auth::AuthStorage;
    use crate::config_value::MapEnv;

    #[tokio::test]
    async fn custom_provider_and_overrides() {
        let text = r#"{
          // local server
          "providers": {
            "ollama": {
              "baseUrl": "http://127.0.0.1:11434/v1",
              "api": "openai-completions",
              "apiKey": "dummy",
              "headers": {"x-team": "$TEAM"},
              "authHeader": true,
              "models": [{"id": "qwen3:8b", "reasoning": true, "headers": {"x-model": "m"}}]
            },
            "anthropic": {
              "modelOverrides": {"claude-sonnet-4-5": {"name": "Sonnet", "cost": {"input": 1}}},
              "baseUrl": "https://proxy.example/anthropic"
            }
          }
        }"#;
        let config = parse_models_json(text, Path::new("models.json")).unwrap();
        let registry = ModelRegistry::new(super::super::builtin_models(), Some(&config));
        assert_eq!(registry.error(), None);
        let local = registry.find("ollama", "qwen3:8b").unwrap();
        assert_eq!(local.name, "qwen3:8b");
        assert_eq!(local.context_window, 128_000);
        assert_eq!(local.max_tokens, 16_384);
        assert!(local.reasoning);
        let sonnet = registry.find("anthropic", "claude-sonnet-4-5").unwrap();
        assert_eq!(sonnet.name, "Sonnet");
        assert_eq!(sonnet.cost.input, 1.0);
        assert_eq!(sonnet.cost.output, 15.0);
        assert_eq!(sonnet.base_url, "https://proxy.example/anthropic");

        let dir = tempfile::tempdir().unwrap();
        let storage = AuthStorage::empty(dir.path());
        let env = MapEnv::new([("TEAM", "core")]);
        let runtime = HashMap::new();
        let auth = AuthContext {
            storage: &storage,
            env: &env,
            runtime_keys: &runtime,
        };
        let available = registry.available(&auth);
        assert!(available.iter().any(|m| m.provider == "ollama"));
        assert!(!available.iter().any(|m| m.provider == "anthropic"));
        let resolved = registry.resolve_auth(local, &auth).await.unwrap().unwrap();
        assert_eq!(resolved.api_key.as_deref(), Some("dummy"));
        assert_eq!(resolved.source, AuthSource::ModelsJsonKey);
        assert_eq!(
            Value::Object(resolved.headers),
            serde_json::json!({"x-team": "core", "x-model": "m", "Authorization": "Bearer dummy"})
        );
    }

    #[test]
    fn registered_providers_replace_models_and_unregistering_restores_them() {
        let mut registry = ModelRegistry::new(super::super::builtin_models(), None);
        let sonnet = registry
            .find("anthropic", "claude-sonnet-4-5")
            .unwrap()
            .clone();
        let config = |value: Value| ProviderConfig {
            raw: value.as_object().unwrap().clone(),
        };
        // baseUrl only: the built-in models move.
        registry
            .register_provider(
                "anthropic",
                config(serde_json::json!({"baseUrl": "http://proxy"})),
            )
            .unwrap();
        assert_eq!(
            registry
                .find("anthropic", "claude-sonnet-4-5")
                .unwrap()
                .base_url,
            "http://proxy"
        );
        // With models: they replace the provider's.
        registry
            .register_provider(
                "custom",
                config(serde_json::json!({"baseUrl": "http://c", "apiKey": "k", "api": "custom-api",
                    "streamSimple": true, "models": [{"id": "m1", "contextWindow": 1000, "maxTokens": 10}]})),
            )
            .unwrap();
        let m1 = registry.find("custom", "m1").unwrap();
        assert_eq!(
            (m1.api.as_str(), m1.base_url.as_str()),
            ("custom-api", "http://c")
        );
        assert_eq!(
            registry.provider_config("custom").unwrap().api_key(),
            Some("k")
        );
        let error = registry
            .register_provider("bad", config(serde_json::json!({"models": [{"id": "x"}]})))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Provider bad: \"baseUrl\" is required when defining models."
        );
        registry.unregister_provider("anthropic");
        assert_eq!(
            registry.find("anthropic", "claude-sonnet-4-5"),
            Some(&sonnet)
        );
        assert!(registry.find("custom", "m1").is_some());
        registry.unregister_provider("custom");
        assert!(registry.find("custom", "m1").is_none());
    }

    #[test]
    fn broken_file_keeps_builtins() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("models.json"), "{ nope").unwrap();
        let registry = ModelRegistry::load(dir.path());
        assert!(registry.error().is_some());
        assert!(!registry.models().is_empty());
    }
}
