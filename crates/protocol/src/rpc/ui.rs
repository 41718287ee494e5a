//! The extension UI subprotocol: `extension_ui_request` lines on stdout and
//! `extension_ui_response` lines on stdin (spec `rpc.md` §6).

use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::Serializer;
use serde::ser::SerializeMap;

/// Severity of a `notify` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyType {
    Info,
    Warning,
    Error,
}

/// Where a `setWidget` widget goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WidgetPlacement {
    #[serde(rename = "aboveEditor")]
    AboveEditor,
    #[serde(rename = "belowEditor")]
    BelowEditor,
}

/// The `method` of a request with its fields. Dialogs (`select`, `confirm`, `input`, `editor`)
/// wait for a reply; the others are fire-and-forget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all_fields = "camelCase")]
pub enum UiRequestKind {
    #[serde(rename = "select")]
    Select {
        title: String,
        options: Vec<String>,
        /// Milliseconds after which the agent gives up and uses the default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "confirm")]
    Confirm {
        title: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "input")]
    Input {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placeholder: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "editor")]
    Editor {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefill: Option<String>,
    },
    #[serde(rename = "notify")]
    Notify {
        message: String,
        /// Absent means `info`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        notify_type: Option<NotifyType>,
    },
    #[serde(rename = "setStatus")]
    SetStatus {
        status_key: String,
        /// Absent clears the entry.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status_text: Option<String>,
    },
    #[serde(rename = "setWidget")]
    SetWidget {
        widget_key: String,
        /// Absent clears the widget.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        widget_lines: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        widget_placement: Option<WidgetPlacement>,
    },
    #[serde(rename = "setTitle")]
    SetTitle { title: String },
    /// Without `text` (an extension's `setEditorText(undefined)`, which the reference writes
    /// without the field) the editor is emptied.
    #[serde(rename = "set_editor_text")]
    SetEditorText {
        #[serde(default)]
        text: String,
    },
}

impl UiRequestKind {
    /// The `method` as written on the wire.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Select { .. } => "select",
            Self::Confirm { .. } => "confirm",
            Self::Input { .. } => "input",
            Self::Editor { .. } => "editor",
            Self::Notify { .. } => "notify",
            Self::SetStatus { .. } => "setStatus",
            Self::SetWidget { .. } => "setWidget",
            Self::SetTitle { .. } => "setTitle",
            Self::SetEditorText { .. } => "set_editor_text",
        }
    }

    /// Dialogs block until a reply (or their timeout); everything else needs none.
    pub fn expects_response(&self) -> bool {
        matches!(
            self,
            Self::Select { .. } | Self::Confirm { .. } | Self::Input { .. } | Self::Editor { .. }
        )
    }
}

/// `{"type":"extension_ui_request","id","method",...}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionUiRequest {
    pub id: String,
    pub kind: UiRequestKind,
}

#[derive(Serialize)]
struct RequestOut<'a> {
    #[serde(rename = "type")]
    tag: &'static str,
    id: &'a str,
    #[serde(flatten)]
    kind: &'a UiRequestKind,
}

#[derive(Deserialize)]
struct RequestIn {
    id: String,
    #[serde(flatten)]
    kind: UiRequestKind,
}

impl Serialize for ExtensionUiRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RequestOut {
            tag: "extension_ui_request",
            id: &self.id,
            kind: &self.kind,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ExtensionUiRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let RequestIn { id, kind } = RequestIn::deserialize(deserializer)?;
        Ok(Self { id, kind })
    }
}

/// The client's answer to a dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiReply {
    /// The chosen option (`select`) or entered text (`input`, `editor`).
    Value(String),
    /// The answer to a `confirm`.
    Confirmed(bool),
    /// Dismissed; the extension gets the dialog's default (`undefined` / `false`).
    Cancelled,
}

/// `{"type":"extension_ui_response","id", "value" | "confirmed" | "cancelled":true}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionUiResponse {
    pub id: String,
    pub reply: UiReply,
}

impl ExtensionUiResponse {
    pub fn new(id: impl Into<String>, reply: UiReply) -> Self {
        Self {
            id: id.into(),
            reply,
        }
    }
}

impl Serialize for ExtensionUiResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("type", "extension_ui_response")?;
        map.serialize_entry("id", &self.id)?;
        match &self.reply {
            UiReply::Value(value) => map.serialize_entry("value", value)?,
            UiReply::Confirmed(confirmed) => map.serialize_entry("confirmed", confirmed)?,
            UiReply::Cancelled => map.serialize_entry("cancelled", &true)?,
        }
        map.end()
    }
}

/// Any JSON value; replies are read leniently, as the reference agent does.
#[derive(Deserialize)]
struct ResponseIn {
    #[serde(default)]
    id: serde_json::Value,
    #[serde(default)]
    value: serde_json::Value,
    #[serde(default)]
    confirmed: serde_json::Value,
    #[serde(default)]
    cancelled: serde_json::Value,
}

impl<'de> Deserialize<'de> for ExtensionUiResponse {
    /// Never fails for an object: a reply without a usable answer counts as cancelled (the
    /// reference resolves it to the dialog's default too), and one without a string `id`
    /// gets an empty id, which matches no request and is therefore ignored.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = ResponseIn::deserialize(deserializer)?;
        let reply = if raw.cancelled.as_bool() == Some(true) {
            UiReply::Cancelled
        } else if let serde_json::Value::String(value) = raw.value {
            UiReply::Value(value)
        } else if let Some(confirmed) = raw.confirmed.as_bool() {
            UiReply::Confirmed(confirmed)
        } else {
            UiReply::Cancelled
        };
        let id = match raw.id {
            serde_json::Value::String(id) => id,
            _ => String::new(),
        };
        Ok(Self { id, reply })
    }
}
