//! Turn boundaries (`session-format.md`, "Turn boundaries"): a `knightcode.turn` custom entry
//! where a run's first `agent_start` happens and a `knightcode.turnEnd` entry where it settles.
//! They are custom entries, so they never enter model context and need no new session version.

use serde::Deserialize;
use serde::Serialize;

use crate::error_class::ErrorClass;

/// `customType` of the entry that opens a turn; its entry id is the turn id.
pub const TURN_MARKER: &str = "knightcode.turn";
/// `customType` of the entry that closes the open turn.
pub const TURN_END: &str = "knightcode.turnEnd";

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    Completed,
    /// Aborted, or never ended (a crash, a killed process): a marker without a valid end.
    Interrupted,
    Failed,
}

impl TurnStatus {
    /// As written in `data.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Interrupted => "interrupted",
            Self::Failed => "failed",
        }
    }
}

/// The kinds of a failed turn's error, as the app server reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TurnErrorKind {
    Auth,
    RateLimit,
    ContextOverflow,
    Network,
    Provider,
    Other,
}

impl TurnErrorKind {
    /// As written in `data.error.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::RateLimit => "rateLimit",
            Self::ContextOverflow => "contextOverflow",
            Self::Network => "network",
            Self::Provider => "provider",
            Self::Other => "other",
        }
    }
}

impl From<ErrorClass> for TurnErrorKind {
    /// The kind of a model call's failure, from the class the provider layer decided.
    /// Exhausted quotas come as rate limits (HTTP 429) and are reported with them; an
    /// overloaded or failing provider is `provider`; what nothing identifies is `other`.
    fn from(class: ErrorClass) -> Self {
        match class {
            ErrorClass::Auth => Self::Auth,
            ErrorClass::RateLimit | ErrorClass::Quota => Self::RateLimit,
            ErrorClass::ContextOverflow => Self::ContextOverflow,
            ErrorClass::Network => Self::Network,
            ErrorClass::Overloaded => Self::Provider,
            ErrorClass::Aborted | ErrorClass::Other => Self::Other,
        }
    }
}

/// A failed turn's error (`data.error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnError {
    pub message: String,
    pub kind: TurnErrorKind,
}

/// The `data` of a `knightcode.turnEnd` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEnd {
    pub status: TurnStatus,
    pub error: Option<TurnError>,
}

impl TurnEnd {
    pub fn completed() -> Self {
        Self {
            status: TurnStatus::Completed,
            error: None,
        }
    }

    pub fn interrupted() -> Self {
        Self {
            status: TurnStatus::Interrupted,
            error: None,
        }
    }

    pub fn failed(message: impl Into<String>, kind: TurnErrorKind) -> Self {
        Self {
            status: TurnStatus::Failed,
            error: Some(TurnError {
                message: message.into(),
                kind,
            }),
        }
    }

    /// The entry's `data`.
    pub fn to_data(&self) -> serde_json::Value {
        let mut data = serde_json::Map::new();
        data.insert("status".into(), self.status.as_str().into());
        if let Some(error) = &self.error {
            let mut object = serde_json::Map::new();
            object.insert("message".into(), error.message.clone().into());
            object.insert("kind".into(), error.kind.as_str().into());
            data.insert("error".into(), object.into());
        }
        data.into()
    }

    /// Reads an entry's `data`; `None` when it is not a valid end (the turn then reads as
    /// interrupted). An `error` that is a plain string reads as that message of kind
    /// `other`; an unknown kind reads as `other` too.
    pub fn from_data(data: Option<&serde_json::Value>) -> Option<Self> {
        let data = data?.as_object()?;
        let status = match data.get("status")?.as_str()? {
            "completed" => TurnStatus::Completed,
            "interrupted" => TurnStatus::Interrupted,
            "failed" => TurnStatus::Failed,
            _ => return None,
        };
        let error = match data.get("error") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(message)) => Some(TurnError {
                message: message.clone(),
                kind: TurnErrorKind::Other,
            }),
            Some(serde_json::Value::Object(error)) => Some(TurnError {
                message: error
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or_default()
                    .to_owned(),
                kind: error
                    .get("kind")
                    .cloned()
                    .and_then(|kind| serde_json::from_value(kind).ok())
                    .unwrap_or(TurnErrorKind::Other),
            }),
            Some(_) => None,
        };
        Some(Self { status, error })
    }
}
