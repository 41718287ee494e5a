//! Classifier models: models that do not chat but answer typed questions about a JSON state
//! (pick a choice, give a score, say yes or no), each answer with its probabilities.
//!
//! [`ClassifierModel`] is how such a model is declared (`"type": "classifier"` in
//! `models.json`), [`ClassifierContext`] what is asked, [`ClassifierResult`] what comes back:
//! answers keyed by question id, or `stopReason` `error`/`aborted` with an `errorMessage`.
//! A provider's failure never escapes as an `Err`, as for chat models.
//!
//! The one wire so far is `llama-cpp-classify` ([`llama_cpp`]): a chat model served by
//! llama.cpp's `llama-server`, whose next-token probabilities of answer labels are the answer.

mod answer;
mod llama_cpp;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

pub use answer::label_probabilities;
pub use answer::peak_confidence;

use crate::error::StreamFailure;
use crate::model::ModelCost;
use crate::options::PayloadHook;
use crate::options::ResponseHook;

/// The API of classification with a chat model on llama.cpp's `llama-server`.
pub const LLAMA_CPP_CLASSIFY_API: &str = "llama-cpp-classify";

/// A classifier model, as the reference's `ClassifierModel` (`type: "classifier"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassifierModel {
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    pub base_url: String,
    #[serde(default = "text_input")]
    pub input: Vec<String>,
    #[serde(default)]
    pub cost: ModelCost,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Map<String, Value>>,
    /// Always `classifier`.
    #[serde(rename = "type", default = "classifier_type")]
    pub model_type: String,
    #[serde(default = "default_context_window")]
    pub context_window: u64,
}

fn text_input() -> Vec<String> {
    vec!["text".to_owned()]
}

fn classifier_type() -> String {
    "classifier".to_owned()
}

fn default_context_window() -> u64 {
    128_000
}

/// One question. Choice options keep their order (their labels follow it).
#[derive(Debug, Clone, PartialEq)]
pub enum ClassifierQuestion {
    Choice {
        instructions: String,
        /// Option key and what it means, in order.
        criteria: Vec<(String, String)>,
    },
    Score {
        instructions: String,
        /// The levels, lowest first.
        criteria: Vec<String>,
    },
    Bool {
        instructions: String,
        when_true: String,
        when_false: String,
    },
}

/// What a classifier is asked: the state and the questions, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClassifierContext {
    pub state: Map<String, Value>,
    /// Images judged with the state (`{type: "image", data, mimeType}`).
    pub images: Vec<Value>,
    pub questions: Vec<(String, ClassifierQuestion)>,
}

/// One answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ClassifierAnswer {
    Choice {
        choice: String,
        /// Every option's probability, in option order.
        probabilities: Vec<(String, f64)>,
        confidence: f64,
    },
    Score {
        /// The expected level.
        score: f64,
        confidence: f64,
    },
    Bool {
        /// The probability of `true`.
        probability: f64,
    },
}

/// How a classification ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassifierStopReason {
    Stop,
    Error,
    Aborted,
}

/// What a classification returns, as the reference's `ClassifierResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifierResult {
    pub api: String,
    pub provider: String,
    pub model: String,
    pub answers: Vec<(String, ClassifierAnswer)>,
    pub usage: Option<knightcode_protocol::Usage>,
    pub stop_reason: ClassifierStopReason,
    pub error_message: Option<String>,
    pub timestamp: i64,
}

/// Request options (the reference's `ClassifierOptions`).
#[derive(Debug, Clone, Default)]
pub struct ClassifierOptions {
    pub api_key: Option<String>,
    /// Request headers over the model's; `null` removes one.
    pub headers: Map<String, Value>,
    /// Divides the label logits before they are normalized; must be positive (default 1).
    pub temperature: Option<f64>,
    /// Re-issues of a failed request (default 2).
    pub max_retries: Option<u32>,
    pub max_retry_delay_ms: Option<u64>,
    /// Gives up on a request without a response after this long (default: no limit).
    pub timeout_ms: Option<u64>,
    /// Sees (and may replace) each `/completion` body before it is sent.
    pub payload_hook: Option<PayloadHook>,
    /// Told the status and headers of each `/completion` response.
    pub response_hook: Option<ResponseHook>,
}

/// Why a classification failed; its text is the result's `errorMessage`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClassifyError {
    #[error("Unsupported classifier API: {0}")]
    UnsupportedApi(String),
    #[error("Temperature must be a positive number, got {0}")]
    Temperature(f64),
    #[error("{0}")]
    InvalidQuestion(String),
    #[error("Unknown question: {0}")]
    UnknownQuestion(String),
    #[error("{model} does not take images; only models whose input includes \"image\" do")]
    ImagesNotAccepted { model: String },
    #[error(
        "Label \"{label}\" is not a single token for {model}: the model's vocabulary splits it, so its probability cannot be read. Use another model"
    )]
    LabelNotOneToken { label: String, model: String },
    #[error("Labels share a token for {model}: {labels}")]
    LabelsShareToken { model: String, labels: String },
    #[error("llama.cpp did not rank labels {labels} for {question} within the top {depth} tokens")]
    LabelsNotRanked {
        labels: String,
        question: String,
        depth: u32,
    },
    #[error("{model} gave no probability to any answer label for {question}")]
    NoProbability { model: String, question: String },
    #[error("llama.cpp {0}")]
    UnexpectedResponse(&'static str),
    #[error("llama.cpp error: {0}")]
    Request(String),
    #[error("{}", crate::driver::ABORTED_MESSAGE)]
    Aborted,
}

impl From<StreamFailure> for ClassifyError {
    fn from(failure: StreamFailure) -> Self {
        Self::Request(failure.message)
    }
}

/// Label token ids per server, model and label (`None`: not one token), shared by a
/// client's clones. Failed lookups are not kept, so a later call asks again.
#[derive(Debug, Default, Clone)]
pub(crate) struct LabelTokens(Arc<Mutex<HashMap<LabelKey, Option<u64>>>>);

/// A label token's key: the server root, the model id, the label.
type LabelKey = (String, String, String);

impl LabelTokens {
    fn get(&self, key: &LabelKey) -> Option<Option<u64>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(key)
            .copied()
    }

    fn insert(&self, key: LabelKey, token: Option<u64>) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, token);
    }
}

impl ClassifierContext {
    /// The JS `ClassifierContext` (`{state, images?, questions}`); questions keep their
    /// order, choice options theirs.
    pub fn from_json(value: &Value) -> Result<Self, ClassifyError> {
        let invalid = |text: &str| ClassifyError::InvalidQuestion(text.to_owned());
        let state = match value.get("state") {
            Some(Value::Object(state)) => state.clone(),
            _ => return Err(invalid("The classifier context needs a \"state\" object")),
        };
        let Some(questions) = value.get("questions").and_then(Value::as_object) else {
            return Err(invalid(
                "The classifier context needs a \"questions\" object",
            ));
        };
        let images = value
            .get("images")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let questions = questions
            .iter()
            .map(|(id, q)| Ok((id.clone(), ClassifierQuestion::from_json(id, q)?)))
            .collect::<Result<_, ClassifyError>>()?;
        Ok(Self {
            state,
            images,
            questions,
        })
    }
}

/// A criterion as JavaScript would write it in a template string (`null` and a missing
/// one are empty: the reference leaves falsy descriptions out).
fn js_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

impl ClassifierQuestion {
    fn from_json(id: &str, value: &Value) -> Result<Self, ClassifyError> {
        let instructions = match value.get("instructions") {
            Some(Value::String(text)) => text.clone(),
            _ => {
                return Err(ClassifyError::InvalidQuestion(format!(
                    "Question {id} needs \"instructions\" text"
                )));
            }
        };
        let criteria = value.get("criteria");
        match value.get("type").and_then(Value::as_str) {
            Some("choice") => {
                let Some(options) = criteria.and_then(Value::as_object) else {
                    return Err(ClassifyError::InvalidQuestion(format!(
                        "Choice question {id} needs \"criteria\": an object of options"
                    )));
                };
                Ok(Self::Choice {
                    instructions,
                    criteria: options
                        .iter()
                        .map(|(key, meaning)| (key.clone(), js_text(Some(meaning))))
                        .collect(),
                })
            }
            Some("score") => {
                let Some(levels) = criteria.and_then(Value::as_array) else {
                    return Err(ClassifyError::InvalidQuestion(format!(
                        "Score question {id} needs \"criteria\": a list of levels"
                    )));
                };
                Ok(Self::Score {
                    instructions,
                    criteria: levels.iter().map(|l| js_text(Some(l))).collect(),
                })
            }
            Some("bool") => Ok(Self::Bool {
                instructions,
                when_true: js_text(criteria.and_then(|c| c.get("true"))),
                when_false: js_text(criteria.and_then(|c| c.get("false"))),
            }),
            other => Err(ClassifyError::InvalidQuestion(format!(
                "Question {id} has type {}: use \"choice\", \"score\" or \"bool\"",
                other.map_or_else(|| "undefined".to_owned(), |t| format!("\"{t}\""))
            ))),
        }
    }
}

impl ClassifierAnswer {
    pub fn to_json(&self) -> Value {
        match self {
            Self::Choice {
                choice,
                probabilities,
                confidence,
            } => {
                let probabilities: Map<String, Value> = probabilities
                    .iter()
                    .map(|(key, p)| (key.clone(), json!(p)))
                    .collect();
                json!({"type": "choice", "choice": choice, "probabilities": probabilities,
                       "confidence": confidence})
            }
            Self::Score { score, confidence } => {
                json!({"type": "score", "score": score, "confidence": confidence})
            }
            Self::Bool { probability } => json!({"type": "bool", "probability": probability}),
        }
    }
}

impl ClassifierResult {
    fn start(model: &ClassifierModel, timestamp: i64) -> Self {
        Self {
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            answers: Vec::new(),
            usage: None,
            stop_reason: ClassifierStopReason::Stop,
            error_message: None,
            timestamp,
        }
    }

    /// A failed result for `model` (a call that never reached a wire: no such model, no
    /// credentials).
    pub fn failed(
        provider: &str,
        model: &str,
        api: &str,
        message: impl Into<String>,
        timestamp: i64,
    ) -> Self {
        Self {
            api: api.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            answers: Vec::new(),
            usage: None,
            stop_reason: ClassifierStopReason::Error,
            error_message: Some(message.into()),
            timestamp,
        }
    }

    /// The JS `ClassifierResult`, keys in the reference's order.
    pub fn to_json(&self) -> Value {
        let answers: Map<String, Value> = self
            .answers
            .iter()
            .map(|(id, answer)| (id.clone(), answer.to_json()))
            .collect();
        let mut out = Map::new();
        out.insert("api".into(), json!(self.api));
        out.insert("provider".into(), json!(self.provider));
        out.insert("model".into(), json!(self.model));
        out.insert("answers".into(), Value::Object(answers));
        if let Some(usage) = &self.usage {
            out.insert("usage".into(), json!(usage));
        }
        let stop = match self.stop_reason {
            ClassifierStopReason::Stop => "stop",
            ClassifierStopReason::Error => "error",
            ClassifierStopReason::Aborted => "aborted",
        };
        out.insert("stopReason".into(), json!(stop));
        out.insert("timestamp".into(), json!(self.timestamp));
        if let Some(message) = &self.error_message {
            out.insert("errorMessage".into(), json!(message));
        }
        Value::Object(out)
    }
}

impl ClassifierOptions {
    /// The JS options (`apiKey`, `headers`, `temperature`, `maxRetries`, `maxRetryDelayMs`,
    /// `timeoutMs`); the rest (signal, callbacks) stays in JS.
    pub fn from_json(value: &Value) -> Self {
        let number = |key: &str| value.get(key).and_then(Value::as_f64);
        Self {
            api_key: value
                .get("apiKey")
                .and_then(Value::as_str)
                .filter(|k| !k.is_empty())
                .map(str::to_owned),
            headers: value
                .get("headers")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            temperature: number("temperature"),
            max_retries: number("maxRetries").map(|n| n.max(0.0) as u32),
            max_retry_delay_ms: number("maxRetryDelayMs").map(|n| n.max(0.0) as u64),
            timeout_ms: number("timeoutMs").map(|n| n.max(0.0) as u64),
            payload_hook: None,
            response_hook: None,
        }
    }
}

impl crate::client::Client {
    /// Classifies `context` with `model`. Failures end in the result (`stopReason` `error`,
    /// or `aborted` once `cancel` fired), never as an `Err`.
    pub async fn classify(
        &self,
        model: &ClassifierModel,
        context: &ClassifierContext,
        options: &ClassifierOptions,
        cancel: tokio_util::sync::CancellationToken,
    ) -> ClassifierResult {
        let clock = self.clock();
        let mut result = ClassifierResult::start(model, clock.now_ms());
        let outcome = match self.http() {
            Ok(http) => {
                let wire = llama_cpp::Wire {
                    http,
                    clock: clock.as_ref(),
                    labels: self.label_tokens(),
                    model,
                    options,
                    cancel: &cancel,
                };
                wire.classify(context).await
            }
            Err(failure) => Err(ClassifyError::from(failure)),
        };
        match outcome {
            Ok(answers) => result.answers = answers,
            Err(error) => {
                result.stop_reason = if cancel.is_cancelled() {
                    ClassifierStopReason::Aborted
                } else {
                    ClassifierStopReason::Error
                };
                result.error_message = Some(error.to_string());
            }
        }
        result
    }
}
