//! The model description (providers.md §3), thinking levels and their clamping (§5).

use knightcode_protocol::JsNumber;
use knightcode_protocol::rpc::{ModelCostInfo, ModelInfo};
use knightcode_protocol::wire::Extra;
use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde_json::Map;
use serde_json::Value;

/// Wire APIs this crate speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    AnthropicMessages,
    OpenAiCompletions,
    OpenAiResponses,
    GoogleGenerativeAi,
    /// Gemini through Vertex AI (an API key, or application default credentials).
    GoogleVertex,
    /// Mistral's chat API.
    MistralConversations,
    /// OpenAI's Responses API on an Azure OpenAI resource.
    AzureOpenAiResponses,
    /// The Responses backend of ChatGPT Plus/Pro plans, with a ChatGPT login.
    OpenAiCodexResponses,
    /// Amazon Bedrock's Converse API, streaming (AWS event-stream framing, SigV4).
    BedrockConverseStream,
}

impl Api {
    pub const ALL: [Api; 9] = [
        Api::AnthropicMessages,
        Api::OpenAiCompletions,
        Api::OpenAiResponses,
        Api::GoogleGenerativeAi,
        Api::GoogleVertex,
        Api::MistralConversations,
        Api::AzureOpenAiResponses,
        Api::OpenAiCodexResponses,
        Api::BedrockConverseStream,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::AnthropicMessages => "anthropic-messages",
            Self::OpenAiCompletions => "openai-completions",
            Self::OpenAiResponses => "openai-responses",
            Self::GoogleGenerativeAi => "google-generative-ai",
            Self::GoogleVertex => "google-vertex",
            Self::MistralConversations => "mistral-conversations",
            Self::AzureOpenAiResponses => "azure-openai-responses",
            Self::OpenAiCodexResponses => "openai-codex-responses",
            Self::BedrockConverseStream => "bedrock-converse-stream",
        }
    }

    pub fn parse(name: &str) -> Option<Api> {
        Self::ALL.into_iter().find(|api| api.as_str() == name)
    }
}

/// Reasoning effort requested from a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ThinkingLevel {
    #[default]
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    Max,
}

impl ThinkingLevel {
    /// All levels, lowest first (the clamp search order).
    pub const ALL: [ThinkingLevel; 7] = [
        Self::Off,
        Self::Minimal,
        Self::Low,
        Self::Medium,
        Self::High,
        Self::Xhigh,
        Self::Max,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }

    pub fn parse(name: &str) -> Option<ThinkingLevel> {
        Self::ALL.into_iter().find(|level| level.as_str() == name)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One `thinkingLevelMap` entry: absent (use the default mapping), `null` (level unsupported)
/// or a provider-specific value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LevelMapping {
    #[default]
    Absent,
    Unsupported,
    Value(String),
}

impl LevelMapping {
    pub fn is_unsupported(&self) -> bool {
        *self == Self::Unsupported
    }

    /// The provider value, when one is mapped.
    pub fn value(&self) -> Option<&str> {
        match self {
            Self::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// `thinkingLevelMap`: per-level provider values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThinkingLevelMap {
    entries: [LevelMapping; 7],
}

impl ThinkingLevelMap {
    pub fn get(&self, level: ThinkingLevel) -> &LevelMapping {
        &self.entries[level.index()]
    }

    pub fn set(&mut self, level: ThinkingLevel, mapping: LevelMapping) {
        self.entries[level.index()] = mapping;
    }

    /// The mapped string value for a level, if any.
    pub fn value(&self, level: ThinkingLevel) -> Option<&str> {
        match self.get(level) {
            LevelMapping::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_unsupported(&self, level: ThinkingLevel) -> bool {
        *self.get(level) == LevelMapping::Unsupported
    }
}

impl Serialize for ThinkingLevelMap {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for level in ThinkingLevel::ALL {
            match self.get(level) {
                LevelMapping::Absent => {}
                LevelMapping::Unsupported => map.serialize_entry(level.as_str(), &())?,
                LevelMapping::Value(v) => map.serialize_entry(level.as_str(), v)?,
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ThinkingLevelMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Map::<String, Value>::deserialize(deserializer)?;
        let mut out = ThinkingLevelMap::default();
        for (key, value) in raw {
            // Unknown level names are ignored, as the TypeScript agent does.
            let Some(level) = ThinkingLevel::parse(&key) else {
                continue;
            };
            let mapping = match value {
                Value::Null => LevelMapping::Unsupported,
                Value::String(s) => LevelMapping::Value(s),
                other => LevelMapping::Value(other.to_string()),
            };
            out.set(level, mapping);
        }
        Ok(out)
    }
}

/// A pricing tier that applies above an input-token threshold.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CostTier {
    pub input_tokens_above: u64,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// Prices in USD per million tokens.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelCost {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<CostTier>,
}

/// A model as the catalog and `models.json` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub id: String,
    pub name: String,
    /// Wire API name (`anthropic-messages`, ...); kept as text so unknown APIs survive.
    pub api: String,
    pub provider: String,
    pub base_url: String,
    #[serde(default)]
    pub reasoning: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<ThinkingLevelMap>,
    /// Input kinds: `text`, `image`.
    #[serde(default = "default_input")]
    pub input: Vec<String>,
    #[serde(default)]
    pub cost: ModelCost,
    pub context_window: u64,
    pub max_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Map<String, Value>>,
    /// API-specific compatibility flags, read by each wire module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_limits: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_params: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_params_by_thinking_level: Option<Map<String, Value>>,
}

fn default_input() -> Vec<String> {
    vec!["text".to_owned()]
}

impl Model {
    /// A minimal model: text only, no reasoning, zero cost (local servers, tests).
    pub fn new(
        provider: impl Into<String>,
        id: impl Into<String>,
        api: Api,
        base_url: impl Into<String>,
    ) -> Self {
        let id = id.into();
        Self {
            name: id.clone(),
            id,
            api: api.as_str().to_owned(),
            provider: provider.into(),
            base_url: base_url.into(),
            reasoning: false,
            thinking_level_map: None,
            input: default_input(),
            cost: ModelCost::default(),
            context_window: 128_000,
            max_tokens: 16_384,
            headers: None,
            compat: None,
            prompt_cache: None,
            input_limits: None,
            sampling_params: None,
            sampling_params_by_thinking_level: None,
        }
    }

    /// What an interactive session holds before any model is configured (a first run):
    /// no provider, no id. Nothing is sent with it; [`Model::is_unselected`] tells it apart.
    pub fn unselected() -> Self {
        Self {
            name: String::new(),
            api: String::new(),
            context_window: 0,
            max_tokens: 0,
            ..Self::new("", "", Api::OpenAiCompletions, "")
        }
    }

    /// Whether this is [`Model::unselected`]'s stand-in rather than a model.
    pub fn is_unselected(&self) -> bool {
        self.provider.is_empty() && self.id.is_empty()
    }

    pub fn api_kind(&self) -> Option<Api> {
        Api::parse(&self.api)
    }

    pub fn supports_images(&self) -> bool {
        self.input.iter().any(|kind| kind == "image")
    }

    /// A boolean compat flag, if set.
    pub fn compat_bool(&self, key: &str) -> Option<bool> {
        self.compat.as_ref()?.get(key)?.as_bool()
    }

    /// A string compat flag, if set.
    pub fn compat_str(&self, key: &str) -> Option<&str> {
        self.compat.as_ref()?.get(key)?.as_str()
    }

    pub fn level_map(&self, level: ThinkingLevel) -> &LevelMapping {
        static ABSENT: LevelMapping = LevelMapping::Absent;
        self.thinking_level_map
            .as_ref()
            .map_or(&ABSENT, |map| map.get(level))
    }

    /// Levels this model accepts: `off` only for non-reasoning models; otherwise every level
    /// not mapped to `null`, with `xhigh`/`max` only when explicitly mapped (opt-in).
    pub fn supported_thinking_levels(&self) -> Vec<ThinkingLevel> {
        if !self.reasoning {
            return vec![ThinkingLevel::Off];
        }
        ThinkingLevel::ALL
            .into_iter()
            .filter(|level| match self.level_map(*level) {
                LevelMapping::Unsupported => false,
                LevelMapping::Absent => !matches!(level, ThinkingLevel::Xhigh | ThinkingLevel::Max),
                LevelMapping::Value(_) => true,
            })
            .collect()
    }

    /// The nearest supported level, searching upward first, then downward.
    pub fn clamp_thinking_level(&self, level: ThinkingLevel) -> ThinkingLevel {
        let available = self.supported_thinking_levels();
        if available.contains(&level) {
            return level;
        }
        let start = level.index();
        let upward = ThinkingLevel::ALL[start..].iter();
        let downward = ThinkingLevel::ALL[..start].iter().rev();
        upward
            .chain(downward)
            .find(|candidate| available.contains(candidate))
            .copied()
            .unwrap_or_else(|| available.first().copied().unwrap_or(ThinkingLevel::Off))
    }
}

/// The model as RPC reports it (`get_state`, `set_model`, `get_available_models`), field by
/// field in `ModelInfo`'s key order. Keys RPC has no field for (per-level sampling params)
/// travel in `extra`, written after the known ones, where serializing the model puts them.
impl From<&Model> for ModelInfo {
    fn from(model: &Model) -> Self {
        let mut extra = Extra::new();
        if let Some(by_level) = &model.sampling_params_by_thinking_level {
            extra.insert(
                "samplingParamsByThinkingLevel".to_owned(),
                Value::Object(by_level.clone()),
            );
        }
        // A JSON `null` reads as an absent optional key, so none is written.
        let present = |value: &Option<Value>| value.clone().filter(|value| !value.is_null());
        ModelInfo {
            id: model.id.clone(),
            name: model.name.clone(),
            api: model.api.clone(),
            provider: model.provider.clone(),
            base_url: model.base_url.clone(),
            reasoning: model.reasoning,
            thinking_level_map: model
                .thinking_level_map
                .as_ref()
                .and_then(|map| serde_json::to_value(map).ok()),
            input: model.input.clone(),
            cost: ModelCostInfo {
                input: price(model.cost.input),
                output: price(model.cost.output),
                cache_read: price(model.cost.cache_read),
                cache_write: price(model.cost.cache_write),
                tiers: (!model.cost.tiers.is_empty())
                    .then(|| serde_json::to_value(&model.cost.tiers).ok())
                    .flatten(),
                extra: Extra::new(),
            },
            context_window: model.context_window,
            max_tokens: model.max_tokens,
            headers: model.headers.clone().map(Value::Object),
            compat: model.compat.clone().map(Value::Object),
            prompt_cache: present(&model.prompt_cache),
            input_limits: present(&model.input_limits),
            sampling_params: model.sampling_params.clone().map(Value::Object),
            extra,
        }
    }
}

/// JSON has no NaN or infinity: such a price is written as `null` and read back as 0.
fn price(value: f64) -> JsNumber {
    JsNumber(if value.is_finite() { value } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reasoning_model(map: &str) -> Model {
        let mut model = Model::new("p", "m", Api::AnthropicMessages, "http://x");
        model.reasoning = true;
        model.thinking_level_map = serde_json::from_str(map).ok();
        model
    }

    #[test]
    fn clamp_searches_upward_first() {
        let model = reasoning_model(r#"{"minimal": null}"#);
        assert_eq!(
            model.clamp_thinking_level(ThinkingLevel::Minimal),
            ThinkingLevel::Low
        );
        assert_eq!(
            model.clamp_thinking_level(ThinkingLevel::Xhigh),
            ThinkingLevel::High
        );
        let opted_in = reasoning_model(r#"{"off": null, "xhigh": "xhigh"}"#);
        assert_eq!(
            opted_in.clamp_thinking_level(ThinkingLevel::Xhigh),
            ThinkingLevel::Xhigh
        );
        assert_eq!(
            opted_in.clamp_thinking_level(ThinkingLevel::Off),
            ThinkingLevel::Minimal
        );
        let plain = Model::new("p", "m", Api::OpenAiCompletions, "http://x");
        assert_eq!(
            plain.clamp_thinking_level(ThinkingLevel::High),
            ThinkingLevel::Off
        );
    }

    #[test]
    fn level_map_round_trip() {
        let map: ThinkingLevelMap =
            serde_json::from_str(r#"{"off":null,"minimal":"MINIMAL","bogus":"x"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            r#"{"off":null,"minimal":"MINIMAL"}"#
        );
    }

    /// What `ModelInfo::from` replaced: the model through JSON into the wire struct.
    fn through_json(model: &Model) -> String {
        let value = serde_json::to_value(model).unwrap();
        let info: ModelInfo = serde_json::from_value(value).unwrap();
        serde_json::to_string(&info).unwrap()
    }

    #[test]
    fn model_info_writes_what_the_json_round_trip_wrote() {
        let mut full: Model = serde_json::from_str(
            r#"{"id":"m","name":"M","api":"openai-completions","provider":"p",
            "baseUrl":"http://x","reasoning":true,"thinkingLevelMap":{"off":null,"high":"hi"},
            "input":["text","image"],"cost":{"input":0.3,"output":15,"cacheRead":1e-7,
            "cacheWrite":3.75,"tiers":[{"inputTokensAbove":200000,"input":6,"output":22.5,
            "cacheRead":0.6,"cacheWrite":7.5}]},"contextWindow":200000,"maxTokens":64000,
            "headers":{"x-b":"1","x-a":"2"},"compat":{"supportsStore":false},
            "promptCache":{"ttl":"1h"},"inputLimits":{"images":{"max":3}},
            "samplingParams":{"temperature":0.7},
            "samplingParamsByThinkingLevel":{"high":{"top_p":0.9}}}"#,
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&ModelInfo::from(&full)).unwrap(),
            through_json(&full)
        );
        full.prompt_cache = Some(Value::Null);
        full.cost.output = f64::NAN;
        assert_eq!(
            serde_json::to_string(&ModelInfo::from(&full)).unwrap(),
            through_json(&full)
        );
        let plain = Model::new("p", "m", Api::AnthropicMessages, "http://x");
        assert_eq!(
            serde_json::to_string(&ModelInfo::from(&plain)).unwrap(),
            through_json(&plain)
        );
        for model in crate::models::builtin_models() {
            assert_eq!(
                serde_json::to_string(&ModelInfo::from(&model)).unwrap(),
                through_json(&model),
                "{}/{}",
                model.provider,
                model.id
            );
        }
    }
}
