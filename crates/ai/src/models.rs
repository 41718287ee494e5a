//! The model registry: the built-in catalog plus `models.json` (providers.md §4).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Map;
use serde_json::Value;

use crate::auth::AuthContext;
use crate::auth::ResolvedAuth;
use crate::config_value;
use crate::config_value::LayeredEnv;
use crate::error::AiError;
use crate::model::Model;
use crate::model::ModelCost;
use crate::model::ThinkingLevelMap;

const CATALOG: &str = include_str!("catalog.json");

/// The built-in models (anthropic, openai, google and a few OpenAI-compatible services).
pub fn builtin_models() -> Vec<Model> {
    // The catalog is a constant of this crate, checked by a unit test.
    serde_json::from_str(CATALOG).unwrap_or_default()
}

/// One provider entry of models.json, kept as parsed JSON so unknown keys survive.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderConfig {
    pub raw: Map<String, Value>,
}

impl ProviderConfig {
    fn str(&self, key: &str) -> Option<&str> {
        self.raw.get(key).and_then(Value::as_str)
    }

    pub fn api_key(&self) -> Option<&str> {
        self.str("apiKey")
    }

    pub fn auth_header(&self) -> bool {
        self.raw.get("authHeader").and_then(Value::as_bool) == Some(true)
    }

    fn headers(&self) -> Option<&Map<String, Value>> {
        self.raw.get("headers").and_then(Value::as_object)
    }

    fn compat(&self) -> Option<&Map<String, Value>> {
        self.raw.get("compat").and_then(Value::as_object)
    }

    fn models(&self) -> &[Value] {
        self.raw
            .get("models")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    fn overrides(&self) -> Option<&Map<String, Value>> {
        self.raw.get("modelOverrides").and_then(Value::as_object)
    }
}

/// Parsed `models.json`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelsConfig {
    pub providers: Vec<(String, ProviderConfig)>,
}

/// Removes `//` and `/* */` comments and trailing commas outside strings.
pub fn strip_json_comments(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    let mut copy_from = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[copy_from..i]);
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                copy_from = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[copy_from..i]);
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(bytes.len());
                copy_from = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copy_from.min(text.len())..]);
    remove_trailing_commas(&out)
}

fn remove_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

fn schema_error(errors: &mut Vec<String>, path: &str, message: &str) {
    errors.push(format!("  - {path}: {message}"));
}

fn check_positive(errors: &mut Vec<String>, path: &str, value: Option<&Value>) {
    if let Some(v) = value
        && v.as_f64().is_none_or(|n| n <= 0.0)
    {
        schema_error(errors, path, "must be a number > 0");
    }
}

fn check_string(errors: &mut Vec<String>, path: &str, value: Option<&Value>, required: bool) {
    match value {
        Some(Value::String(s)) if !s.is_empty() => {}
        None if !required => {}
        None => schema_error(errors, path, "is required"),
        Some(_) => schema_error(errors, path, "must be a non-empty string"),
    }
}

fn check_model_fields(errors: &mut Vec<String>, path: &str, model: &Map<String, Value>) {
    for key in ["name", "api", "baseUrl"] {
        check_string(errors, &format!("{path}.{key}"), model.get(key), false);
    }
    check_positive(
        errors,
        &format!("{path}.contextWindow"),
        model.get("contextWindow"),
    );
    check_positive(errors, &format!("{path}.maxTokens"), model.get("maxTokens"));
    if let Some(v) = model.get("reasoning")
        && !v.is_boolean()
    {
        schema_error(errors, &format!("{path}.reasoning"), "must be a boolean");
    }
    if let Some(input) = model.get("input") {
        let ok = input.as_array().is_some_and(|items| {
            items
                .iter()
                .all(|i| matches!(i.as_str(), Some("text" | "image")))
        });
        if !ok {
            schema_error(
                errors,
                &format!("{path}.input"),
                "must be a list of \"text\" / \"image\"",
            );
        }
    }
    for key in [
        "headers",
        "compat",
        "cost",
        "thinkingLevelMap",
        "samplingParams",
    ] {
        if let Some(v) = model.get(key)
            && !v.is_object()
        {
            schema_error(errors, &format!("{path}.{key}"), "must be an object");
        }
    }
}

/// Parses and validates models.json text. Errors list every problem with a dotted path.
pub fn parse_models_json(text: &str, path: &Path) -> Result<ModelsConfig, AiError> {
    let value: Value =
        serde_json::from_str(&strip_json_comments(text)).map_err(|e| AiError::InvalidJson {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
    let mut errors = Vec::new();
    let Some(root) = value.as_object() else {
        return Err(AiError::InvalidModelsJson {
            path: path.display().to_string(),
            message: "the file must hold an object with \"providers\"".into(),
        });
    };
    let Some(providers) = root.get("providers").and_then(Value::as_object) else {
        return Err(AiError::InvalidModelsJson {
            path: path.display().to_string(),
            message: "\n  - providers: is required and must be an object".into(),
        });
    };
    let mut out = Vec::new();
    for (id, provider) in providers {
        let base = format!("providers.{id}");
        let Some(config) = provider.as_object() else {
            schema_error(&mut errors, &base, "must be an object");
            continue;
        };
        for key in ["name", "baseUrl", "apiKey", "api"] {
            check_string(
                &mut errors,
                &format!("{base}.{key}"),
                config.get(key),
                false,
            );
        }
        if let Some(v) = config.get("authHeader")
            && !v.is_boolean()
        {
            schema_error(
                &mut errors,
                &format!("{base}.authHeader"),
                "must be a boolean",
            );
        }
        for (index, model) in config
            .get("models")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let path = format!("{base}.models.{index}");
            match model.as_object() {
                Some(model) => {
                    check_string(&mut errors, &format!("{path}.id"), model.get("id"), true);
                    check_model_fields(&mut errors, &path, model);
                }
                None => schema_error(&mut errors, &path, "must be an object"),
            }
        }
        if let Some(overrides) = config.get("modelOverrides").and_then(Value::as_object) {
            for (model_id, patch) in overrides {
                let path = format!("{base}.modelOverrides.{model_id}");
                match patch.as_object() {
                    Some(patch) => check_model_fields(&mut errors, &path, patch),
                    None => schema_error(&mut errors, &path, "must be an object"),
                }
            }
        }
        out.push((
            id.clone(),
            ProviderConfig {
                raw: config.clone(),
            },
        ));
    }
    if !errors.is_empty() {
        return Err(AiError::InvalidModelsJson {
            path: path.display().to_string(),
            message: format!("\n{}", errors.join("\n")),
        });
    }
    Ok(ModelsConfig { providers: out })
}

/// Built-in models with models.json applied.
#[derive(Debug, Clone, Default)]
pub struct ModelRegistry {
    models: Vec<Model>,
    providers: HashMap<String, ProviderConfig>,
    /// Per-model raw headers from models.json (resolved per request).
    model_headers: HashMap<(String, String), Map<String, Value>>,
    error: Option<String>,
    /// Providers extensions registered, in order, and the registry as it was before the
    /// first of them (what `unregister_provider` goes back to before re-applying the rest).
    registered: Vec<(String, ProviderConfig)>,
    before_registered: Option<Box<ModelRegistry>>,
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
            Ok(config) => Self::new(builtin_models(), config.as_ref()),
            Err(error) => {
                let mut registry = Self::new(builtin_models(), None);
                registry.error = Some(error.to_string());
                registry
            }
        }
    }

    /// Applies `config` to `base` models.
    pub fn new(base: Vec<Model>, config: Option<&ModelsConfig>) -> Self {
        let mut registry = Self {
            models: base,
            ..Self::default()
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

    fn apply_provider(&mut self, id: &str, config: &ProviderConfig) -> Result<(), AiError> {
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
        for definition in config.models() {
            let Some(def) = definition.as_object() else {
                continue;
            };
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
        Ok(())
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
        let mut result = Ok(());
        for (id, config) in &registered {
            if let Err(message) = next.apply_registration(id, config) {
                result = Err(message);
            }
        }
        next.registered = registered;
        next.before_registered = Some(base);
        *self = next;
        result
    }

    fn apply_registration(&mut self, id: &str, config: &ProviderConfig) -> Result<(), AiError> {
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

    /// Every model (built-in and configured).
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        self.models
            .iter()
            .find(|m| m.provider == provider && m.id == id)
    }

    /// The problem with models.json, if loading or applying it failed.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn provider_config(&self, provider: &str) -> Option<&ProviderConfig> {
        self.providers.get(provider)
    }

    /// Models whose provider has resolvable auth (what `/model` and `--list-models` show).
    pub fn available(&self, auth: &AuthContext<'_>) -> Vec<Model> {
        self.models
            .iter()
            .filter(|m| {
                let key = self
                    .provider_config(&m.provider)
                    .and_then(ProviderConfig::api_key);
                auth.has_auth(&m.provider, key)
            })
            .cloned()
            .collect()
    }

    /// Resolves key and configured headers for one request to `model`.
    pub async fn resolve_auth(
        &self,
        model: &Model,
        auth: &AuthContext<'_>,
    ) -> Result<Option<ResolvedAuth>, AiError> {
        let config = self.provider_config(&model.provider);
        let Some((key, source, cred_env)) = auth
            .resolve_key(&model.provider, config.and_then(ProviderConfig::api_key))
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
            .get(&(model.provider.clone(), model.id.clone()));
        for raw in [config.and_then(ProviderConfig::headers), model_headers]
            .into_iter()
            .flatten()
        {
            for (name, value) in raw {
                let Some(text) = value.as_str() else {
                    continue;
                };
                let what = format!("header \"{name}\" of provider \"{}\"", model.provider);
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

fn def_str<'a>(def: &'a Map<String, Value>, key: &str) -> &'a str {
    def.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Merges compat objects; the routing and template maps merge one level deeper.
fn merge_compat(
    base: Option<Map<String, Value>>,
    patch: Option<&Map<String, Value>>,
) -> Option<Map<String, Value>> {
    let Some(patch) = patch else {
        return base;
    };
    let mut merged = base.unwrap_or_default();
    for (key, value) in patch {
        let nested = matches!(
            key.as_str(),
            "openRouterRouting"
                | "vercelGatewayRouting"
                | "chatTemplateKwargs"
                | "chatTemplateArgs"
        );
        match (nested, merged.get_mut(key), value) {
            (true, Some(Value::Object(existing)), Value::Object(new)) => {
                existing.extend(new.clone());
            }
            _ => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    Some(merged)
}

/// Builds a model from a models.json definition; omitted fields get the TS defaults.
fn model_from_json(
    provider: &str,
    def: &Map<String, Value>,
    config: &ProviderConfig,
    existing: &[Model],
) -> Result<Model, AiError> {
    let id = def_str(def, "id");
    let wanted_api = def.get("api").and_then(Value::as_str).or(config.str("api"));
    // Only api and baseUrl are inherited from a sibling model, and only from one on the same
    // api (a different api would bring the wrong endpoint).
    let defaults = match wanted_api {
        Some(api) => existing
            .iter()
            .find(|m| m.id == id && m.api == api)
            .or_else(|| existing.iter().find(|m| m.api == api)),
        None => existing
            .iter()
            .find(|m| m.id == id)
            .or_else(|| existing.iter().find(|m| m.api == "openai-completions"))
            .or(existing.first()),
    };
    let api = wanted_api
        .map(str::to_owned)
        .or_else(|| defaults.map(|m| m.api.clone()))
        .ok_or_else(|| {
            AiError::ProviderConfig(format!("Provider {provider}, model {id}: no \"api\" specified. Set at provider or model level."))
        })?;
    let base_url = def
        .get("baseUrl")
        .and_then(Value::as_str)
        .or(config.str("baseUrl"))
        .map(str::to_owned)
        .or_else(|| defaults.map(|m| m.base_url.clone()))
        .ok_or_else(|| {
            AiError::ProviderConfig(format!(
                "Provider {provider}: \"baseUrl\" is required when defining custom models."
            ))
        })?;
    let parse = |key: &str| def.get(key).cloned();
    Ok(Model {
        id: id.to_owned(),
        name: def
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(id)
            .to_owned(),
        api,
        provider: provider.to_owned(),
        base_url,
        reasoning: def
            .get("reasoning")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        thinking_level_map: parse("thinkingLevelMap")
            .and_then(|v| serde_json::from_value::<ThinkingLevelMap>(v).ok()),
        input: parse("input")
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_else(|| vec!["text".to_owned()]),
        cost: parse("cost")
            .and_then(|v| serde_json::from_value::<ModelCost>(v).ok())
            .unwrap_or_default(),
        context_window: def
            .get("contextWindow")
            .and_then(Value::as_f64)
            .map_or(128_000, |n| n as u64),
        max_tokens: def
            .get("maxTokens")
            .and_then(Value::as_f64)
            .map_or(16_384, |n| n as u64),
        headers: None,
        compat: merge_compat(
            config.compat().cloned(),
            def.get("compat").and_then(Value::as_object),
        ),
        prompt_cache: parse("promptCache"),
        input_limits: parse("inputLimits"),
        sampling_params: parse("samplingParams").and_then(|v| v.as_object().cloned()),
        sampling_params_by_thinking_level: parse("samplingParamsByThinkingLevel")
            .and_then(|v| v.as_object().cloned()),
    })
}

/// Patches an existing model with a `modelOverrides` entry.
fn apply_override(model: &mut Model, patch: &Map<String, Value>) {
    if let Some(name) = patch.get("name").and_then(Value::as_str) {
        model.name = name.to_owned();
    }
    if let Some(reasoning) = patch.get("reasoning").and_then(Value::as_bool) {
        model.reasoning = reasoning;
    }
    if let Some(map) = patch
        .get("thinkingLevelMap")
        .and_then(|v| serde_json::from_value::<ThinkingLevelMap>(v.clone()).ok())
    {
        let mut merged = model.thinking_level_map.take().unwrap_or_default();
        for level in crate::model::ThinkingLevel::ALL {
            let mapping = map.get(level);
            if *mapping != crate::model::LevelMapping::Absent {
                merged.set(level, mapping.clone());
            }
        }
        model.thinking_level_map = Some(merged);
    }
    if let Some(input) = patch
        .get("input")
        .and_then(|v| serde_json::from_value::<Vec<String>>(v.clone()).ok())
    {
        model.input = input;
    }
    if let Some(cost) = patch.get("cost").and_then(Value::as_object) {
        let num = |key: &str, old: f64| cost.get(key).and_then(Value::as_f64).unwrap_or(old);
        model.cost.input = num("input", model.cost.input);
        model.cost.output = num("output", model.cost.output);
        model.cost.cache_read = num("cacheRead", model.cost.cache_read);
        model.cost.cache_write = num("cacheWrite", model.cost.cache_write);
        if let Some(tiers) = cost
            .get("tiers")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
        {
            model.cost.tiers = tiers;
        }
    }
    if let Some(n) = patch.get("contextWindow").and_then(Value::as_f64) {
        model.context_window = n as u64;
    }
    if let Some(n) = patch.get("maxTokens").and_then(Value::as_f64) {
        model.max_tokens = n as u64;
    }
    if let Some(params) = patch.get("samplingParams").and_then(Value::as_object) {
        let mut merged = model.sampling_params.take().unwrap_or_default();
        merged.extend(params.clone());
        model.sampling_params = Some(merged);
    }
    for key in ["promptCache", "inputLimits"] {
        if let Some(value) = patch.get(key) {
            match key {
                "promptCache" => model.prompt_cache = Some(value.clone()),
                _ => model.input_limits = Some(value.clone()),
            }
        }
    }
    model.compat = merge_compat(
        model.compat.take(),
        patch.get("compat").and_then(Value::as_object),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthSource;
    use crate::auth::AuthStorage;
    use crate::config_value::MapEnv;

    #[test]
    fn catalog_parses() {
        let models: Vec<Model> = serde_json::from_str(CATALOG).unwrap();
        assert_eq!(models.len(), builtin_models().len());
        assert!(models.iter().all(|m| m.api_kind().is_some()));
        assert!(models.iter().any(|m| m.provider == "anthropic"));
        assert!(models.iter().any(|m| m.provider == "openai"));
        assert!(models.iter().any(|m| m.provider == "google"));
    }

    #[test]
    fn comments_and_trailing_commas() {
        let text = "{\n // c\n \"a\": \"http://x//y\", /* b */ \"c\": [1, 2,],\n}";
        let value: Value = serde_json::from_str(&strip_json_comments(text)).unwrap();
        assert_eq!(value, serde_json::json!({"a": "http://x//y", "c": [1, 2]}));
    }

    #[test]
    fn schema_errors_have_paths() {
        let text = r#"{"providers": {"ollama": {"baseUrl": 5, "models": [{"name": "x", "maxTokens": 0}]}}}"#;
        let err = parse_models_json(text, Path::new("models.json")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("providers.ollama.baseUrl: must be a non-empty string"),
            "{text}"
        );
        assert!(
            text.contains("providers.ollama.models.0.id: is required"),
            "{text}"
        );
        assert!(
            text.contains("providers.ollama.models.0.maxTokens: must be a number > 0"),
            "{text}"
        );
    }

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
        let registry = ModelRegistry::new(builtin_models(), Some(&config));
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
        let mut registry = ModelRegistry::new(builtin_models(), None);
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
