//! Agent session events as written by `--mode json` and RPC mode (`spec/seed/json.md`).
//!
//! These are the wire shapes: `message_update` carries only the delta, never the cumulative
//! `partial` snapshot, so stream size stays linear in the reply length.

use serde::Deserialize;
use serde::Serialize;

use crate::content::ToolCall;
use crate::entry::SessionEntry;
use crate::message::AgentMessage;
use crate::message::AssistantMessage;
use crate::message::StopReason;
use crate::usage::Usage;

/// A content-block update of a streaming assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AssistantMessageEvent {
    Start,
    TextStart {
        content_index: usize,
    },
    TextDelta {
        content_index: usize,
        delta: String,
    },
    TextEnd {
        content_index: usize,
        content: String,
    },
    ThinkingStart {
        content_index: usize,
    },
    ThinkingDelta {
        content_index: usize,
        delta: String,
    },
    ThinkingEnd {
        content_index: usize,
        content: String,
    },
    ToolcallStart {
        content_index: usize,
        id: String,
        tool_name: String,
    },
    ToolcallDelta {
        content_index: usize,
        delta: String,
    },
    ToolcallEnd {
        content_index: usize,
        /// The finished content block, written with its `type` tag first as the reference
        /// writes it; streams of earlier KnightCode builds, which left the tag out, still read.
        #[serde(with = "tagged_tool_call")]
        tool_call: ToolCall,
    },
    Done {
        reason: StopReason,
        message: AssistantMessage,
    },
    Error {
        reason: StopReason,
        error: AssistantMessage,
    },
}

/// `toolcall_end.toolCall` as a tagged content block (`{"type":"toolCall", id, name, ...}`).
mod tagged_tool_call {
    use serde::Deserialize;
    use serde::Deserializer;
    use serde::Serializer;
    use serde::de;
    use serde::ser::SerializeMap;

    use crate::content::ToolCall;
    use crate::wire::Extra;
    use crate::wire::WireObject;

    const TAG: &str = "toolCall";

    pub(super) fn serialize<S: Serializer>(
        call: &ToolCall,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", TAG)?;
        call.serialize_fields(&mut map)?;
        map.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<ToolCall, D::Error> {
        let mut call = ToolCall::deserialize(deserializer)?;
        match call.extra.shift_remove("type") {
            None => {}
            Some(serde_json::Value::String(tag)) if tag == TAG => {}
            Some(other) => {
                return Err(de::Error::custom(format!(
                    "toolcall_end.toolCall has type {other}, expected \"{TAG}\""
                )));
            }
        }
        if call.extra.is_empty() {
            // The tag was the only unknown key: compare equal to a call read without it.
            call.extra = Extra::new();
        }
        Ok(call)
    }
}

/// A tool's result as reported in tool execution events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResultPayload {
    pub content: Vec<crate::content::ContentBlock>,
    /// Omitted when the tool reported none, as the reference writes it.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub details: serde_json::Value,
}

/// Why compaction started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionReason {
    Manual,
    Threshold,
    Overflow,
}

/// Every session event of the JSON stream and RPC mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AgentEvent {
    AgentStart,
    AgentEnd {
        messages: Vec<AgentMessage>,
        /// Absent in streams of older agents.
        #[serde(default)]
        will_retry: bool,
    },
    AgentSettled {
        aborted: bool,
    },
    TurnStart,
    TurnEnd {
        message: AgentMessage,
        tool_results: Vec<AgentMessage>,
    },
    MessageStart {
        message: AgentMessage,
    },
    MessageUpdate {
        usage: Usage,
        assistant_message_event: AssistantMessageEvent,
    },
    MessageEnd {
        message: AgentMessage,
    },
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        args: serde_json::Value,
        /// Set for a call another tool made (`ctx.executeTool`); its id is `<parent>/<n>`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        args: serde_json::Value,
        partial_result: ToolResultPayload,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        result: ToolResultPayload,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    QueueUpdate {
        steering: Vec<String>,
        follow_up: Vec<String>,
    },
    EntryAppended {
        entry: SessionEntry,
    },
    SessionInfoChanged {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    ThinkingLevelChanged {
        level: String,
    },
    CompactionStart {
        reason: CompactionReason,
    },
    CompactionEnd {
        reason: CompactionReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<serde_json::Value>,
        aborted: bool,
        will_retry: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    AutoRetryStart {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
        /// An abort ended the retry before its attempt (in memory only): the agent says so
        /// where it happens, so front ends need not recognise `finalError`'s words. On the
        /// wire the reference gives only those words; an event read back says `false`.
        #[serde(skip)]
        cancelled: bool,
    },
    SummarizationRetryScheduled {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    SummarizationRetryAttemptStart {
        source: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<CompactionReason>,
    },
    SummarizationRetryFinished,
    BashExecutionUpdate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        delta: String,
    },
    ExtensionError {
        extension_path: String,
        event: String,
        error: String,
    },
}
