//! The `AgentMessage` union: every message role stored in sessions and sent on the wire.

use serde::Deserialize;
use serde::Serialize;

use crate::content::Blocks;
use crate::content::Content;
use crate::content::ContentBlock;
use crate::usage::Usage;
use crate::wire::Extra;
use crate::wire::Millis;
use crate::wire::Tokens;
use crate::wire_enum;
use crate::wire_struct;

/// Why an assistant message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// Only while streaming; never persisted.
    Pending,
    #[default]
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Deferred,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
            Self::Deferred => "deferred",
        }
    }
}

/// A stop reason as stored: a known value, or a newer writer's string kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StoredStopReason {
    Known(StopReason),
    Other(String),
}

impl Default for StoredStopReason {
    fn default() -> Self {
        Self::Known(StopReason::Stop)
    }
}

impl From<StopReason> for StoredStopReason {
    fn from(value: StopReason) -> Self {
        Self::Known(value)
    }
}

impl StoredStopReason {
    pub fn known(&self) -> Option<StopReason> {
        match self {
            Self::Known(reason) => Some(*reason),
            Self::Other(_) => None,
        }
    }
}

wire_struct! {
    /// A tool declaration carried by system messages (`toolsAdded`).
    pub struct ToolDeclaration {
        req "name" name: String,
        req "description" description: String,
        req "parameters" parameters: serde_json::Value,
        /// How a provider may constrain the model's arguments (`constrainedSampling`).
        opt "constrainedSampling" constrained_sampling: Option<ConstrainedSampling>,
    }
}

/// A tool's `constrainedSampling`: `false`, or a config tagged by `type`. Kept as written,
/// whatever it is, so a declaration read from a session file is written back the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConstrainedSampling {
    /// `false` (no constraint asked for); `true` is kept too, and means nothing either.
    Flag(bool),
    Config(SamplingConfig),
}

impl ConstrainedSampling {
    /// A grammar for the model's whole input, in each provider's dialect.
    pub fn grammar(variants: GrammarVariants) -> Self {
        Self::Config(SamplingConfig::Grammar(GrammarSampling {
            variants,
            ..GrammarSampling::default()
        }))
    }

    /// The grammar variants, when the tool asks for grammar-constrained input.
    pub fn grammar_variants(&self) -> Option<&GrammarVariants> {
        match self {
            Self::Config(SamplingConfig::Grammar(grammar)) => Some(&grammar.variants),
            _ => None,
        }
    }
}

wire_enum! {
    /// The kinds of constrained sampling a tool can ask for.
    pub enum SamplingConfig tag "type" {
        /// Strict JSON-schema arguments (`strict: "prefer" | "require"`).
        "json_schema" => JsonSchema(JsonSchemaSampling),
        /// The input is free text in a grammar's language (one string argument).
        "grammar" => Grammar(GrammarSampling),
    }
}

wire_struct! {
    pub struct JsonSchemaSampling {
        req "strict" strict: String,
    }
}

wire_struct! {
    pub struct GrammarSampling {
        req "variants" variants: GrammarVariants,
    }
}

wire_struct! {
    /// One grammar per provider dialect: OpenAI's Lark or regex (custom tools).
    pub struct GrammarVariants {
        opt "openai_lark" openai_lark: Option<String>,
        opt "openai_regex" openai_regex: Option<String>,
    }
}

wire_struct! {
    /// A tool reference (`toolsRemoved`).
    pub struct ToolReference {
        req "name" name: String,
    }
}

wire_struct! {
    /// System prompt and tool loadout. The first one of a session is the baseline; later ones
    /// patch `sections` by name (`null` removes one) and add or remove tools.
    pub struct SystemMessage {
        req "content" content: Content,
        opt "sections" sections: Option<SectionPatch>,
        opt "toolsAdded" tools_added: Option<Vec<ToolDeclaration>>,
        opt "toolsRemoved" tools_removed: Option<Vec<ToolReference>>,
        /// Discards all earlier state: this message is a new baseline.
        opt "replace" replace: Option<bool>,
        req "timestamp" timestamp: Millis,
    }
}

/// Section name -> text, or `null` to remove the section. Insertion order is prompt order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SectionPatch(pub serde_json::Map<String, serde_json::Value>);

impl SectionPatch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a section's text.
    pub fn set(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.0
            .insert(name.into(), serde_json::Value::String(text.into()));
    }

    /// Marks a section as removed.
    pub fn remove(&mut self, name: impl Into<String>) {
        self.0.insert(name.into(), serde_json::Value::Null);
    }

    /// Iterates `(name, Some(text) | None)`; non-string values count as removals.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

wire_struct! {
    /// A user prompt.
    pub struct UserMessage {
        req "content" content: Content,
        req "timestamp" timestamp: Millis,
    }
}

wire_struct! {
    /// A model response.
    pub struct AssistantMessage {
        req "content" content: Blocks,
        req "api" api: String,
        req "provider" provider: String,
        req "model" model: String,
        req "usage" usage: Usage,
        req "stopReason" stop_reason: StoredStopReason,
        req "timestamp" timestamp: Millis,
        // Set while streaming or at the end, so they follow `timestamp` in TypeScript's
        // insertion order.
        opt "responseId" response_id: Option<String>,
        opt "responseModel" response_model: Option<String>,
        /// The KnightCode thinking level requested for this response.
        opt "thinkingLevel" thinking_level: Option<String>,
        opt "providerThinkingLevel" provider_thinking_level: Option<serde_json::Value>,
        opt "diagnostics" diagnostics: Option<serde_json::Value>,
        opt "errorMessage" error_message: Option<String>,
        opt "rawStopReason" raw_stop_reason: Option<String>,
        opt "durationMs" duration_ms: Option<Tokens>,
        opt "deferred" deferred: Option<serde_json::Value>,
        opt "endTurn" end_turn: Option<bool>;
        memory {
            /// What kind of failure ended the response, decided where it arose (HTTP status,
            /// the provider's error code, the transport); `None` for successes and for
            /// messages read from files or made by providers that give only a text.
            error_class: crate::wire::MemoryOnly<crate::ErrorClass>,
            /// How long the server asked to wait before trying again (`retry-after-ms`,
            /// `retry-after` in seconds or as a date), in milliseconds; the agent's retry
            /// honours it.
            retry_after_ms: crate::wire::MemoryOnly<u64>,
        }
    }
}

impl AssistantMessage {
    /// The message's tool calls in content order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &crate::content::ToolCall> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// All text blocks joined with newlines.
    pub fn text(&self) -> String {
        crate::content::join_text(&self.content)
    }
}

wire_struct! {
    /// The result of one tool call.
    pub struct ToolResultMessage {
        req "toolCallId" tool_call_id: String,
        req "toolName" tool_name: String,
        req "content" content: Blocks,
        opt "details" details: Option<serde_json::Value>,
        opt "usage" usage: Option<Usage>,
        req "isError" is_error: bool,
        req "timestamp" timestamp: Millis,
    }
}

wire_struct! {
    /// A shell command the user ran (`!cmd`, `!!cmd`, RPC `bash`).
    pub struct BashExecutionMessage {
        req "command" command: String,
        req "output" output: String,
        /// `undefined` in TypeScript when the process was killed: omitted, never `null`.
        opt "exitCode" exit_code: Option<i64>,
        req "cancelled" cancelled: bool,
        req "truncated" truncated: bool,
        opt "fullOutputPath" full_output_path: Option<String>,
        /// `!!` commands: shown to the user, never sent to the model.
        opt "excludeFromContext" exclude_from_context: Option<bool>,
        req "timestamp" timestamp: Millis,
    }
}

wire_struct! {
    /// A message injected by an extension.
    pub struct CustomMessage {
        req "customType" custom_type: String,
        req "content" content: Content,
        req "display" display: bool,
        opt "details" details: Option<serde_json::Value>,
        req "timestamp" timestamp: Millis,
    }
}

wire_struct! {
    /// Summary of a branch the conversation came back from (derived from `branch_summary`).
    pub struct BranchSummaryMessage {
        req "summary" summary: String,
        req "fromId" from_id: Option<String>,
        req "timestamp" timestamp: Millis,
    }
}

wire_struct! {
    /// Summary of compacted history (derived from `compaction`).
    pub struct CompactionSummaryMessage {
        req "summary" summary: String,
        req "tokensBefore" tokens_before: Tokens,
        req "timestamp" timestamp: Millis,
    }
}

wire_enum! {
    /// Every message role, tagged by `role`.
    pub enum AgentMessage tag "role" {
        "system" => System(Box<SystemMessage>),
        "user" => User(UserMessage),
        "assistant" => Assistant(Box<AssistantMessage>),
        "toolResult" => ToolResult(Box<ToolResultMessage>),
        "bashExecution" => BashExecution(Box<BashExecutionMessage>),
        "custom" => Custom(Box<CustomMessage>),
        "branchSummary" => BranchSummary(BranchSummaryMessage),
        "compactionSummary" => CompactionSummary(CompactionSummaryMessage),
    }
}

impl AgentMessage {
    /// The role as written on the wire.
    pub fn role(&self) -> &str {
        self.tag()
    }

    /// The message timestamp in Unix milliseconds, if the role has one.
    pub fn timestamp(&self) -> Option<Millis> {
        match self {
            Self::System(m) => Some(m.timestamp),
            Self::User(m) => Some(m.timestamp),
            Self::Assistant(m) => Some(m.timestamp),
            Self::ToolResult(m) => Some(m.timestamp),
            Self::BashExecution(m) => Some(m.timestamp),
            Self::Custom(m) => Some(m.timestamp),
            Self::BranchSummary(m) => Some(m.timestamp),
            Self::CompactionSummary(m) => Some(m.timestamp),
            Self::Unknown(map) => map
                .get("timestamp")
                .and_then(serde_json::Value::as_i64)
                .map(Millis),
        }
    }

    /// The text a user would recognise the message by (user, custom and assistant text).
    pub fn display_text(&self) -> Option<String> {
        match self {
            Self::User(m) => Some(m.content.text()),
            Self::Assistant(m) => Some(m.text()),
            Self::Custom(m) => Some(m.content.text()),
            _ => None,
        }
    }

    pub fn user(content: impl Into<Content>, timestamp: Millis) -> Self {
        Self::User(UserMessage {
            content: content.into(),
            timestamp,
            extra: Extra::new(),
        })
    }
}
