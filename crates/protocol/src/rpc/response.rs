//! The response envelope and the classification of one stdout line.

use std::fmt;

use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::Serializer;
use serde::de;
use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;

use super::ui::ExtensionUiRequest;
use crate::event::AgentEvent;

/// Whether a command succeeded, with its result.
#[derive(Debug, Clone)]
pub enum RpcOutcome {
    /// `success: true`. `None` writes no `data` key (commands without a result);
    /// `Some("null")` writes `"data":null` (`cycle_model` with one model).
    Success(Option<Box<RawValue>>),
    /// `success: false` with the error text.
    Error(String),
}

impl PartialEq for RpcOutcome {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Success(a), Self::Success(b)) => {
                a.as_ref().map(|raw| raw.get()) == b.as_ref().map(|raw| raw.get())
            }
            (Self::Error(a), Self::Error(b)) => a == b,
            _ => false,
        }
    }
}

/// `{id?, type:"response", command, success, data? | error?}`.
///
/// `data` is kept as the JSON text it was written as: re-serializing through
/// `serde_json::Value` would reformat JavaScript numbers (`0.00009999999999999999` would come
/// back as `9.999999999999999e-5`). Read it with [`RpcResponse::data_as`].
#[derive(Debug, Clone)]
pub struct RpcResponse {
    pub id: Option<String>,
    pub command: String,
    pub outcome: RpcOutcome,
    /// Keys this version does not know, with their JSON text, written after the known ones.
    pub extra: Vec<(String, Box<RawValue>)>,
}

impl PartialEq for RpcResponse {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.command == other.command
            && self.outcome == other.outcome
            && self.extra.len() == other.extra.len()
            && self
                .extra
                .iter()
                .zip(&other.extra)
                .all(|((ka, va), (kb, vb))| ka == kb && va.get() == vb.get())
    }
}

impl RpcResponse {
    /// Success without a `data` key.
    pub fn ok(id: Option<String>, command: impl Into<String>) -> Self {
        Self {
            id,
            command: command.into(),
            outcome: RpcOutcome::Success(None),
            extra: Vec::new(),
        }
    }

    /// Success carrying `data` (which may serialize to `null`).
    pub fn with_data<T: Serialize + ?Sized>(
        id: Option<String>,
        command: impl Into<String>,
        data: &T,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self {
            id,
            command: command.into(),
            outcome: RpcOutcome::Success(Some(serde_json::value::to_raw_value(data)?)),
            extra: Vec::new(),
        })
    }

    /// A failure with its message.
    pub fn error(
        id: Option<String>,
        command: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            id,
            command: command.into(),
            outcome: RpcOutcome::Error(message.into()),
            extra: Vec::new(),
        }
    }

    /// The answer to a line that is not a command object:
    /// `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: …"}`.
    pub fn parse_error(id: Option<String>, message: &str) -> Self {
        Self::error(id, "parse", format!("Failed to parse command: {message}"))
    }

    pub fn is_success(&self) -> bool {
        matches!(self.outcome, RpcOutcome::Success(_))
    }

    /// The error text of a failure.
    pub fn error_message(&self) -> Option<&str> {
        match &self.outcome {
            RpcOutcome::Error(message) => Some(message),
            RpcOutcome::Success(_) => None,
        }
    }

    /// The raw `data` of a success (`None` when absent or on failure).
    pub fn data(&self) -> Option<&RawValue> {
        match &self.outcome {
            RpcOutcome::Success(data) => data.as_deref(),
            RpcOutcome::Error(_) => None,
        }
    }

    /// Reads `data` as `T`; an absent `data` reads as JSON `null` (so `Option<T>` and `()`
    /// accept it).
    pub fn data_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match self.data() {
            Some(raw) => serde_json::from_str(raw.get()),
            None => serde_json::from_str("null"),
        }
    }
}

impl Serialize for RpcResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(id) = &self.id {
            map.serialize_entry("id", id)?;
        }
        map.serialize_entry("type", "response")?;
        map.serialize_entry("command", &self.command)?;
        match &self.outcome {
            RpcOutcome::Success(data) => {
                map.serialize_entry("success", &true)?;
                if let Some(data) = data {
                    map.serialize_entry("data", data)?;
                }
            }
            RpcOutcome::Error(message) => {
                map.serialize_entry("success", &false)?;
                map.serialize_entry("error", message)?;
            }
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RpcResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ResponseVisitor;
        impl<'de> de::Visitor<'de> for ResponseVisitor {
            type Value = RpcResponse;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RPC response object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RpcResponse, A::Error> {
                let mut id = None;
                let mut kind: Option<String> = None;
                let mut command = None;
                let mut success = None;
                let mut data = None;
                let mut error = None;
                let mut extra = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "id" => id = map.next_value::<Option<String>>()?,
                        "type" => kind = Some(map.next_value()?),
                        "command" => command = Some(map.next_value::<String>()?),
                        "success" => success = Some(map.next_value::<bool>()?),
                        // Raw, so that `"data":null` stays distinguishable from no data.
                        "data" => data = Some(map.next_value::<Box<RawValue>>()?),
                        "error" => error = map.next_value::<Option<String>>()?,
                        _ => extra.push((key, map.next_value::<Box<RawValue>>()?)),
                    }
                }
                if let Some(kind) = kind
                    && kind != "response"
                {
                    return Err(de::Error::custom(format!(
                        "expected type \"response\", got {kind:?}"
                    )));
                }
                let command = command.ok_or_else(|| de::Error::missing_field("command"))?;
                let success = success.ok_or_else(|| de::Error::missing_field("success"))?;
                let outcome = if success {
                    RpcOutcome::Success(data)
                } else {
                    RpcOutcome::Error(error.unwrap_or_default())
                };
                Ok(RpcResponse {
                    id,
                    command,
                    outcome,
                    extra,
                })
            }
        }
        deserializer.deserialize_map(ResponseVisitor)
    }
}

/// What one stdout line of the server turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum RpcOutput {
    Response(RpcResponse),
    UiRequest(ExtensionUiRequest),
    /// A session event, including the RPC-only `bash_execution_update` and `extension_error`.
    Event(AgentEvent),
    /// A JSON object this version cannot type: a newer event, or an older agent's shape
    /// (pi 0.73 writes `message_update` with `partial`/`message` and without `usage`).
    Other(serde_json::Value),
}

#[derive(Deserialize)]
struct OutputEnvelope {
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

impl RpcOutput {
    /// Classifies one line. Fails only when the line is not JSON (or not an object), or when it
    /// claims to be a response but lacks the envelope keys.
    pub fn parse(line: &str) -> Result<Self, serde_json::Error> {
        let envelope: OutputEnvelope = serde_json::from_str(line)?;
        match envelope.kind.as_deref() {
            Some("response") => serde_json::from_str(line).map(Self::Response),
            Some("extension_ui_request") => Ok(match serde_json::from_str(line) {
                Ok(request) => Self::UiRequest(request),
                Err(_) => Self::Other(serde_json::from_str(line)?),
            }),
            _ => Ok(match serde_json::from_str(line) {
                Ok(event) => Self::Event(event),
                Err(_) => Self::Other(serde_json::from_str(line)?),
            }),
        }
    }
}
