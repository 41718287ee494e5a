//! Commands a client writes to `knightcode --mode rpc` on stdin, and the classification of one
//! input line (command, extension UI reply, parse error, unknown or malformed command).

use serde::Deserialize;
use serde::Serialize;

use super::response::RpcResponse;
use super::ui::ExtensionUiResponse;
use crate::content::ContentBlock;
use crate::content::ImageContent;

/// How a `prompt` sent while the agent is streaming is queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StreamingBehavior {
    #[serde(rename = "steer")]
    Steer,
    #[serde(rename = "followUp")]
    FollowUp,
}

/// Delivery mode of the steering and follow-up queues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum QueueMode {
    #[serde(rename = "all")]
    All,
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
}

impl QueueMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::OneAtATime => "one-at-a-time",
        }
    }

    /// Parses `one-at-a-time` or `all` (settings and RPC spell them alike).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "one-at-a-time" => Some(Self::OneAtATime),
            "all" => Some(Self::All),
            _ => None,
        }
    }
}

/// One command with its request fields, without the correlation `id` (see [`RpcCommand`]).
///
/// Thinking levels stay strings: the set grows with providers (`xhigh`, `max`), and the server
/// clamps whatever it gets to what the model supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum RpcCommandBody {
    // Prompting
    Prompt {
        message: String,
        /// Image blocks (`{"type":"image","data","mimeType"}`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ContentBlock>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        streaming_behavior: Option<StreamingBehavior>,
    },
    Steer {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ContentBlock>>,
    },
    FollowUp {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ContentBlock>>,
    },
    Abort,
    ClearQueue,
    NewSession {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_session: Option<String>,
    },
    // State and model
    GetState,
    GetMessages,
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    // Thinking
    SetThinkingLevel {
        level: String,
    },
    CycleThinkingLevel,
    GetAvailableThinkingLevels,
    // Queue modes
    SetSteeringMode {
        mode: QueueMode,
    },
    SetFollowUpMode {
        mode: QueueMode,
    },
    // Compaction and retry
    Compact {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_instructions: Option<String>,
    },
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    AbortRetry,
    // User shell
    Bash {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exclude_from_context: Option<bool>,
    },
    AbortBash,
    // Session
    GetSessionStats,
    ExportHtml {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_path: Option<String>,
    },
    SwitchSession {
        session_path: String,
    },
    Fork {
        entry_id: String,
    },
    Clone,
    GetForkMessages,
    GetEntries {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<String>,
    },
    GetTree,
    GetLastAssistantText,
    SetSessionName {
        name: String,
    },
    GetCommands,
}

/// Every command `type`, in the order of [`RpcCommandBody`].
pub const COMMAND_TYPES: &[&str] = &[
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "clear_queue",
    "new_session",
    "get_state",
    "get_messages",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "get_available_thinking_levels",
    "set_steering_mode",
    "set_follow_up_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "export_html",
    "switch_session",
    "fork",
    "clone",
    "get_fork_messages",
    "get_entries",
    "get_tree",
    "get_last_assistant_text",
    "set_session_name",
    "get_commands",
];

impl RpcCommandBody {
    /// The command's `type` as written on the wire; responses echo it as `command`.
    pub fn command_type(&self) -> &'static str {
        match self {
            Self::Prompt { .. } => "prompt",
            Self::Steer { .. } => "steer",
            Self::FollowUp { .. } => "follow_up",
            Self::Abort => "abort",
            Self::ClearQueue => "clear_queue",
            Self::NewSession { .. } => "new_session",
            Self::GetState => "get_state",
            Self::GetMessages => "get_messages",
            Self::SetModel { .. } => "set_model",
            Self::CycleModel => "cycle_model",
            Self::GetAvailableModels => "get_available_models",
            Self::SetThinkingLevel { .. } => "set_thinking_level",
            Self::CycleThinkingLevel => "cycle_thinking_level",
            Self::GetAvailableThinkingLevels => "get_available_thinking_levels",
            Self::SetSteeringMode { .. } => "set_steering_mode",
            Self::SetFollowUpMode { .. } => "set_follow_up_mode",
            Self::Compact { .. } => "compact",
            Self::SetAutoCompaction { .. } => "set_auto_compaction",
            Self::SetAutoRetry { .. } => "set_auto_retry",
            Self::AbortRetry => "abort_retry",
            Self::Bash { .. } => "bash",
            Self::AbortBash => "abort_bash",
            Self::GetSessionStats => "get_session_stats",
            Self::ExportHtml { .. } => "export_html",
            Self::SwitchSession { .. } => "switch_session",
            Self::Fork { .. } => "fork",
            Self::Clone => "clone",
            Self::GetForkMessages => "get_fork_messages",
            Self::GetEntries { .. } => "get_entries",
            Self::GetTree => "get_tree",
            Self::GetLastAssistantText => "get_last_assistant_text",
            Self::SetSessionName { .. } => "set_session_name",
            Self::GetCommands => "get_commands",
        }
    }

    /// A plain-text prompt.
    pub fn prompt(message: impl Into<String>) -> Self {
        Self::Prompt {
            message: message.into(),
            images: None,
            streaming_behavior: None,
        }
    }

    /// The image blocks of a prompt, steer or follow-up (other block kinds are skipped).
    pub fn images(&self) -> impl Iterator<Item = &ImageContent> {
        let images = match self {
            Self::Prompt { images, .. }
            | Self::Steer { images, .. }
            | Self::FollowUp { images, .. } => images.as_deref(),
            _ => None,
        };
        images
            .unwrap_or_default()
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Image(image) => Some(image),
                _ => None,
            })
    }
}

/// A command line: the body plus the optional correlation `id`.
///
/// Written as `{"type", ...fields, "id"}`: the reference client spreads the body first and
/// appends the id, and the recorded transcripts have that order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcCommand {
    #[serde(flatten)]
    pub body: RpcCommandBody,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl RpcCommand {
    pub fn new(id: Option<String>, body: RpcCommandBody) -> Self {
        Self { body, id }
    }

    pub fn command_type(&self) -> &'static str {
        self.body.command_type()
    }
}

/// What one stdin line turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum RpcInput {
    /// A known command whose fields parsed.
    Command(RpcCommand),
    /// A reply to an `extension_ui_request`; never answered with a response.
    UiResponse(ExtensionUiResponse),
    /// Not a JSON object with a string `type`. `id` is set when the line was an object whose
    /// `id` could be read.
    ParseError { id: Option<String>, message: String },
    /// A JSON object whose `type` names no command.
    Unknown { id: Option<String>, command: String },
    /// A known command whose fields did not parse (missing or mistyped field).
    Invalid {
        id: Option<String>,
        command: String,
        error: String,
    },
}

/// The two keys needed to route a line, read without materialising the rest (a prompt line
/// can carry megabytes of base64 images).
#[derive(Deserialize)]
struct Envelope {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

impl RpcInput {
    /// Classifies one line (without its LF; a trailing CR already stripped).
    pub fn parse(line: &str) -> Self {
        let envelope = match serde_json::from_str::<Envelope>(line) {
            Ok(envelope) => envelope,
            Err(error) => {
                return Self::ParseError {
                    id: None,
                    message: error.to_string(),
                };
            }
        };
        let Some(kind) = envelope.kind else {
            return Self::ParseError {
                id: envelope.id,
                message: "the object has no string \"type\"".to_owned(),
            };
        };
        if kind == "extension_ui_response" {
            // Lenient by design: a reply that cannot be matched is ignored, never answered.
            return match serde_json::from_str::<ExtensionUiResponse>(line) {
                Ok(response) => Self::UiResponse(response),
                Err(error) => Self::ParseError {
                    id: envelope.id,
                    message: error.to_string(),
                },
            };
        }
        if !COMMAND_TYPES.contains(&kind.as_str()) {
            return Self::Unknown {
                id: envelope.id,
                command: kind,
            };
        }
        match serde_json::from_str::<RpcCommandBody>(line) {
            Ok(body) => Self::Command(RpcCommand {
                body,
                id: envelope.id,
            }),
            Err(error) => Self::Invalid {
                id: envelope.id,
                command: kind,
                error: error.to_string(),
            },
        }
    }

    /// The response to write for a line that is not a runnable command; `None` for commands
    /// and extension UI replies.
    pub fn error_response(&self) -> Option<RpcResponse> {
        match self {
            Self::Command(_) | Self::UiResponse(_) => None,
            Self::ParseError { id, message } => Some(RpcResponse::parse_error(id.clone(), message)),
            Self::Unknown { id, command } => Some(RpcResponse::error(
                id.clone(),
                command.clone(),
                format!("Unknown command: {command}"),
            )),
            Self::Invalid { id, command, error } => Some(RpcResponse::error(
                id.clone(),
                command.clone(),
                format!("Invalid {command} command: {error}"),
            )),
        }
    }
}
