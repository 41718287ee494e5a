//! A `models.json` model definition (or an extension's) as a [`Model`], and a
//! `modelOverrides` entry applied to one.

use serde_json::Map;
use serde_json::Value;

use super::config::ProviderConfig;
use crate::classify::ClassifierModel;
use crate::error::AiError;
use crate::model::Model;
use crate::model::ModelCost;
use crate::model::ThinkingLevelMap;

pub(super) fn def_str<'a>(def: &'a Map<String, Value>, key: &str) -> &'a str {
    def.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Merges compat objects; the routing and template maps merge one level deeper.
pub(super) fn merge_compat(
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
pub(super) fn model_from_json(
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

/// Whether a models.json definition declares a classifier model (`"type": "classifier"`).
pub(super) fn is_classifier(def: &Map<String, Value>) -> bool {
    def.get("type").and_then(Value::as_str) == Some("classifier")
}

/// A classifier model from a models.json definition: `api` and `baseUrl` from the entry or
/// its provider (never from a chat model's), the reference's defaults for the rest.
pub(super) fn classifier_from_json(
    provider: &str,
    def: &Map<String, Value>,
    config: &ProviderConfig,
) -> Result<ClassifierModel, AiError> {
    let id = def_str(def, "id");
    let text = |key: &str| def.get(key).and_then(Value::as_str).or(config.str(key));
    let api = text("api").ok_or_else(|| {
        AiError::ProviderConfig(format!(
            "Provider {provider}, model {id}: no \"api\" specified. Set at provider or model level (\"{}\" for a llama.cpp server).",
            crate::classify::LLAMA_CPP_CLASSIFY_API
        ))
    })?;
    let base_url = text("baseUrl").ok_or_else(|| {
        AiError::ProviderConfig(format!(
            "Provider {provider}: \"baseUrl\" is required when defining custom models."
        ))
    })?;
    Ok(ClassifierModel {
        id: id.to_owned(),
        name: def
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(id)
            .to_owned(),
        api: api.to_owned(),
        provider: provider.to_owned(),
        base_url: base_url.to_owned(),
        input: def
            .get("input")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_else(|| vec!["text".to_owned()]),
        cost: def
            .get("cost")
            .and_then(|v| serde_json::from_value::<ModelCost>(v.clone()).ok())
            .unwrap_or_default(),
        headers: None,
        model_type: "classifier".to_owned(),
        context_window: def
            .get("contextWindow")
            .and_then(Value::as_f64)
            .map_or(128_000, |n| n as u64),
    })
}

/// Patches an existing model with a `modelOverrides` entry.
pub(super) fn apply_override(model: &mut Model, patch: &Map<String, Value>) {
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
