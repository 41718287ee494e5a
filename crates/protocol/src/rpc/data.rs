//! `data` of successful responses, one type per fixed shape, keys in the order the reference
//! agent writes them (checked against `fixtures/pi/rpc*/rpc-out.jsonl`).

use serde::Deserialize;
use serde::Serialize;

use super::command::QueueMode;
use crate::entry::SessionEntry;
use crate::message::AgentMessage;
use crate::usage::Usage;
use crate::wire::JsNumber;
use crate::wire_struct;

wire_struct! {
    /// Prices in USD per million tokens.
    pub struct ModelCostInfo {
        req "input" input: JsNumber,
        req "output" output: JsNumber,
        req "cacheRead" cache_read: JsNumber,
        req "cacheWrite" cache_write: JsNumber,
        opt "tiers" tiers: Option<serde_json::Value>,
    }
}

wire_struct! {
    /// A model as `get_state`, `set_model`, `cycle_model` and `get_available_models` return it.
    /// `cost` precedes `contextWindow` (the reference docs show the reverse; its output does not).
    pub struct ModelInfo {
        req "id" id: String,
        req "name" name: String,
        req "api" api: String,
        req "provider" provider: String,
        req "baseUrl" base_url: String,
        req "reasoning" reasoning: bool,
        opt "thinkingLevelMap" thinking_level_map: Option<serde_json::Value>,
        req "input" input: Vec<String>,
        req "cost" cost: ModelCostInfo,
        req "contextWindow" context_window: u64,
        req "maxTokens" max_tokens: u64,
        opt "headers" headers: Option<serde_json::Value>,
        opt "compat" compat: Option<serde_json::Value>,
        opt "promptCache" prompt_cache: Option<serde_json::Value>,
        opt "inputLimits" input_limits: Option<serde_json::Value>,
        opt "samplingParams" sampling_params: Option<serde_json::Value>,
    }
}

/// What became of a submitted prompt, steer or follow-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptDisposition {
    /// Accepted and a run started.
    #[default]
    Started,
    /// Queued behind the current run.
    Queued,
    /// Consumed by an extension command or input handler.
    Handled,
}

wire_struct! {
    /// `prompt`, `steer` and `follow_up`. pi 0.73 sends no `data` at all; read it with
    /// `Option<PromptResult>`.
    pub struct PromptResult {
        opt "disposition" disposition: Option<PromptDisposition>,
    }
}

wire_struct! {
    /// `clear_queue` (and the `queue_update` event's fields).
    pub struct QueueContents {
        req "steering" steering: Vec<String>,
        req "followUp" follow_up: Vec<String>,
    }
}

wire_struct! {
    /// `new_session`, `switch_session`, `clone`.
    pub struct CancelledResult {
        req "cancelled" cancelled: bool,
    }
}

wire_struct! {
    /// `get_state`.
    pub struct SessionState {
        /// Omitted when no model is selected.
        opt "model" model: Option<ModelInfo>,
        req "thinkingLevel" thinking_level: String,
        req "isStreaming" is_streaming: bool,
        req "isCompacting" is_compacting: bool,
        req "steeringMode" steering_mode: QueueMode,
        req "followUpMode" follow_up_mode: QueueMode,
        /// Absent for in-memory sessions (`--no-session`).
        opt "sessionFile" session_file: Option<String>,
        req "sessionId" session_id: String,
        opt "sessionName" session_name: Option<String>,
        req "autoCompactionEnabled" auto_compaction_enabled: bool,
        req "messageCount" message_count: u64,
        req "pendingMessageCount" pending_message_count: u64,
    }
}

wire_struct! {
    /// `get_messages`.
    pub struct MessagesResult {
        req "messages" messages: Vec<AgentMessage>,
    }
}

wire_struct! {
    /// `get_available_models`.
    pub struct ModelsResult {
        req "models" models: Vec<ModelInfo>,
    }
}

wire_struct! {
    /// `cycle_model`; the whole `data` is `null` when there is nothing to cycle to.
    pub struct CycleModelResult {
        req "model" model: ModelInfo,
        req "thinkingLevel" thinking_level: String,
        req "isScoped" is_scoped: bool,
    }
}

wire_struct! {
    /// `cycle_thinking_level`; `data` is `null` for a model without reasoning.
    pub struct ThinkingLevelResult {
        req "level" level: String,
    }
}

wire_struct! {
    /// `get_available_thinking_levels`.
    pub struct ThinkingLevelsResult {
        req "levels" levels: Vec<String>,
    }
}

wire_struct! {
    /// `compact` (also `compaction_end.result`).
    pub struct CompactionResult {
        req "summary" summary: String,
        req "firstKeptEntryId" first_kept_entry_id: String,
        req "tokensBefore" tokens_before: u64,
        opt "estimatedTokensAfter" estimated_tokens_after: Option<u64>,
        opt "usage" usage: Option<Usage>,
        opt "details" details: Option<serde_json::Value>,
    }
}

wire_struct! {
    /// `bash`.
    pub struct BashResult {
        req "output" output: String,
        /// Omitted when the command was cancelled.
        opt "exitCode" exit_code: Option<i64>,
        req "cancelled" cancelled: bool,
        req "truncated" truncated: bool,
        /// Set when the output was truncated: the temp file with all of it.
        opt "fullOutputPath" full_output_path: Option<String>,
    }
}

wire_struct! {
    /// Token totals of `get_session_stats`.
    pub struct TokenTotals {
        req "input" input: u64,
        req "output" output: u64,
        req "cacheRead" cache_read: u64,
        req "cacheWrite" cache_write: u64,
        req "total" total: u64,
    }
}

wire_struct! {
    /// Current context-window use; `tokens` and `percent` are `null` right after a compaction.
    pub struct ContextUsage {
        req "tokens" tokens: Option<u64>,
        req "contextWindow" context_window: u64,
        req "percent" percent: Option<JsNumber>,
    }
}

wire_struct! {
    /// `get_session_stats`.
    pub struct SessionStats {
        opt "sessionFile" session_file: Option<String>,
        req "sessionId" session_id: String,
        req "userMessages" user_messages: u64,
        req "assistantMessages" assistant_messages: u64,
        req "toolCalls" tool_calls: u64,
        req "toolResults" tool_results: u64,
        req "totalMessages" total_messages: u64,
        req "tokens" tokens: TokenTotals,
        req "cost" cost: JsNumber,
        opt "contextUsage" context_usage: Option<ContextUsage>,
    }
}

wire_struct! {
    /// `export_html`.
    pub struct ExportHtmlResult {
        req "path" path: String,
    }
}

wire_struct! {
    /// `fork`: the text of the user message forked from (absent when cancelled).
    pub struct ForkResult {
        opt "text" text: Option<String>,
        req "cancelled" cancelled: bool,
    }
}

wire_struct! {
    /// One user message that can be forked from.
    pub struct ForkMessage {
        req "entryId" entry_id: String,
        req "text" text: String,
    }
}

wire_struct! {
    /// `get_fork_messages`.
    pub struct ForkMessagesResult {
        req "messages" messages: Vec<ForkMessage>,
    }
}

wire_struct! {
    /// `get_entries`.
    pub struct EntriesResult {
        req "entries" entries: Vec<SessionEntry>,
        req "leafId" leaf_id: Option<String>,
    }
}

wire_struct! {
    /// A node of `get_tree`.
    pub struct SessionTreeNode {
        req "entry" entry: SessionEntry,
        req "children" children: Vec<SessionTreeNode>,
        opt "label" label: Option<String>,
        opt "labelTimestamp" label_timestamp: Option<String>,
    }
}

wire_struct! {
    /// `get_tree`.
    pub struct TreeResult {
        req "tree" tree: Vec<SessionTreeNode>,
        req "leafId" leaf_id: Option<String>,
    }
}

wire_struct! {
    /// `get_last_assistant_text`.
    pub struct LastAssistantTextResult {
        req "text" text: Option<String>,
    }
}

/// Where a slash command comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandSource {
    #[default]
    Extension,
    Prompt,
    Skill,
}

wire_struct! {
    /// The resource that registered a command.
    pub struct SourceInfo {
        req "path" path: String,
        /// How it was discovered: `local`, `auto`, `cli`, ...
        req "source" source: String,
        /// `user`, `project` or `temporary`.
        req "scope" scope: String,
        /// `top-level` or `package`.
        req "origin" origin: String,
        opt "baseDir" base_dir: Option<String>,
    }
}

wire_struct! {
    /// One command invocable through `prompt` as `/name`.
    pub struct SlashCommand {
        req "name" name: String,
        opt "description" description: Option<String>,
        req "source" source: CommandSource,
        req "sourceInfo" source_info: SourceInfo,
    }
}

wire_struct! {
    /// `get_commands`.
    pub struct CommandsResult {
        req "commands" commands: Vec<SlashCommand>,
    }
}
