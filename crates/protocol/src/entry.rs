//! Session file records: the header line and the tree entries (format version 3).

use crate::content::Content;

/// Entry ids (8 hex digits), parent ids and ISO timestamps (24 characters) fit inline: no
/// heap allocation for the three strings every entry carries.
pub type EntryId = compact_str::CompactString;
use crate::message::AgentMessage;
use crate::message::SystemMessage;
use crate::usage::Usage;
use crate::wire::Tokens;
use crate::wire_enum;
use crate::wire_struct;

/// The session format version this crate writes.
pub const CURRENT_SESSION_VERSION: u32 = 3;

wire_struct! {
    /// First line of a session file. Not part of the tree.
    pub struct SessionHeader {
        /// Absent in version 1 files.
        opt "version" version: Option<u32>,
        req "id" id: String,
        req "timestamp" timestamp: String,
        req "cwd" cwd: String,
        /// The session file this one was forked or cloned from.
        opt "parentSession" parent_session: Option<String>,
    }
}

impl SessionHeader {
    /// The format version, `1` when the header has none.
    pub fn format_version(&self) -> u32 {
        self.version.unwrap_or(1)
    }
}

/// Serializes a header with its `"type":"session"` tag first, as the TypeScript agent does.
impl SessionHeader {
    pub fn to_json_line(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&TaggedHeader(self))
    }
}

struct TaggedHeader<'a>(&'a SessionHeader);

impl serde::Serialize for TaggedHeader<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "session")?;
        crate::wire::WireObject::serialize_fields(self.0, &mut map)?;
        map.end()
    }
}

wire_struct! {
    /// A conversation message.
    pub struct MessageEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        req "message" message: AgentMessage,
    }
}

wire_struct! {
    /// The user switched models.
    pub struct ModelChangeEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        req "provider" provider: String,
        req "modelId" model_id: String,
    }
}

wire_struct! {
    /// The user changed the thinking level.
    pub struct ThinkingLevelChangeEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        req "thinkingLevel" thinking_level: String,
    }
}

wire_struct! {
    /// Model usage that is not an assistant message (e.g. `cache_warm`). Counts toward totals,
    /// never enters context.
    pub struct UsageEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        req "kind" kind: String,
        req "provider" provider: String,
        req "model" model: String,
        req "usage" usage: Usage,
        opt "note" note: Option<String>,
    }
}

wire_struct! {
    /// Earlier history replaced by a summary. `firstKeptEntryId` is the first retained entry
    /// before this one; a retain-none compaction stores its own id there.
    pub struct CompactionEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        req "summary" summary: String,
        req "firstKeptEntryId" first_kept_entry_id: String,
        req "tokensBefore" tokens_before: Tokens,
        opt "details" details: Option<serde_json::Value>,
        opt "usage" usage: Option<Usage>,
        opt "fromHook" from_hook: Option<bool>,
        /// Complete prompt and tool checkpoint at the compaction boundary.
        opt "systemMessage" system_message: Option<SystemCheckpoint>,
    }
}

/// A compaction's `systemMessage`: a whole system message, `role` included, that stands for
/// every system message before it (`session-format.md`, CompactionEntry). Kept apart from
/// [`AgentMessage`] so that nothing but a system message can sit there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemCheckpoint(pub SystemMessage);

impl std::ops::Deref for SystemCheckpoint {
    type Target = SystemMessage;
    fn deref(&self) -> &SystemMessage {
        &self.0
    }
}

impl serde::Serialize for SystemCheckpoint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        // A foreign role read from a file goes back as it came (among the unknown keys).
        if !self.0.extra.contains_key("role") {
            map.serialize_entry("role", "system")?;
        }
        crate::wire::WireObject::serialize_fields(&self.0, &mut map)?;
        map.end()
    }
}

impl<'de> serde::Deserialize<'de> for SystemCheckpoint {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut message = SystemMessage::deserialize(deserializer)?;
        // The role is written first by `serialize`; any other role stays an unknown key.
        if message.extra.get("role").and_then(|role| role.as_str()) == Some("system") {
            message.extra.shift_remove("role");
            if message.extra.is_empty() {
                message.extra = crate::wire::Extra::new();
            }
        }
        Ok(Self(message))
    }
}

wire_struct! {
    /// An append-only edit of an earlier entry's model-visible content.
    pub struct ContextEditEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        req "targetId" target_id: String,
        /// `null` omits the target from context; otherwise replaces its content.
        req "replacement" replacement: Option<Content>,
    }
}

wire_struct! {
    /// Summary of the branch left behind when navigating the tree.
    pub struct BranchSummaryEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        req "fromId" from_id: String,
        req "summary" summary: String,
        opt "details" details: Option<serde_json::Value>,
        opt "usage" usage: Option<Usage>,
        opt "fromHook" from_hook: Option<bool>,
    }
}

wire_struct! {
    /// Extension state. Never enters context.
    pub struct CustomEntry {
        // Written with the base after the payload, like `custom_message`.
        req "customType" custom_type: String,
        opt "data" data: Option<serde_json::Value>,
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
    }
}

wire_struct! {
    /// An extension-injected message that enters context.
    pub struct CustomMessageEntry {
        // The TypeScript writer spreads the message first and adds the base after it.
        req "customType" custom_type: String,
        req "content" content: Content,
        req "display" display: bool,
        opt "details" details: Option<serde_json::Value>,
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
    }
}

wire_struct! {
    /// A bookmark on an entry; no `label` clears it.
    pub struct LabelEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        req "targetId" target_id: String,
        opt "label" label: Option<String>,
    }
}

wire_struct! {
    /// Session metadata (display name); no `name` clears it.
    pub struct SessionInfoEntry {
        req "id" id: EntryId,
        req "parentId" parent_id: Option<EntryId>,
        req "timestamp" timestamp: EntryId,
        opt "name" name: Option<String>,
    }
}

wire_enum! {
    /// One line of a session file after the header, tagged by `type`.
    pub enum SessionEntry tag "type" {
        "message" => Message(MessageEntry),
        "model_change" => ModelChange(ModelChangeEntry),
        "thinking_level_change" => ThinkingLevelChange(ThinkingLevelChangeEntry),
        "usage" => Usage(Box<UsageEntry>),
        "compaction" => Compaction(Box<CompactionEntry>),
        "context_edit" => ContextEdit(Box<ContextEditEntry>),
        "branch_summary" => BranchSummary(Box<BranchSummaryEntry>),
        "custom" => Custom(Box<CustomEntry>),
        "custom_message" => CustomMessage(Box<CustomMessageEntry>),
        "label" => Label(LabelEntry),
        "session_info" => SessionInfo(SessionInfoEntry),
    }
}

/// Applies the same expression to the common base of every known entry variant.
macro_rules! with_base {
    ($entry:expr, $e:ident => $body:expr, unknown $m:ident => $other:expr) => {
        match $entry {
            SessionEntry::Message($e) => $body,
            SessionEntry::ModelChange($e) => $body,
            SessionEntry::ThinkingLevelChange($e) => $body,
            SessionEntry::Usage($e) => $body,
            SessionEntry::Compaction($e) => $body,
            SessionEntry::ContextEdit($e) => $body,
            SessionEntry::BranchSummary($e) => $body,
            SessionEntry::Custom($e) => $body,
            SessionEntry::CustomMessage($e) => $body,
            SessionEntry::Label($e) => $body,
            SessionEntry::SessionInfo($e) => $body,
            SessionEntry::Unknown($m) => $other,
        }
    };
}

impl SessionEntry {
    /// The entry's id (empty for an unknown entry without one).
    pub fn id(&self) -> &str {
        with_base!(self, e => &e.id, unknown m => m.get("id").and_then(|v| v.as_str()).unwrap_or(""))
    }

    /// The parent entry's id; `None` for a root.
    pub fn parent_id(&self) -> Option<&str> {
        with_base!(self, e => e.parent_id.as_deref(), unknown m => m.get("parentId").and_then(|v| v.as_str()))
    }

    /// The entry's ISO-8601 timestamp.
    pub fn timestamp(&self) -> &str {
        with_base!(self, e => &e.timestamp, unknown m => m.get("timestamp").and_then(|v| v.as_str()).unwrap_or(""))
    }

    pub fn set_id(&mut self, id: &str) {
        with_base!(self, e => e.id = id.into(), unknown m => {
            m.insert("id".to_owned(), serde_json::Value::String(id.to_owned()));
        })
    }

    pub fn set_parent_id(&mut self, parent_id: Option<&str>) {
        with_base!(self, e => e.parent_id = parent_id.map(EntryId::from), unknown m => {
            m.insert(
                "parentId".to_owned(),
                parent_id.map_or(serde_json::Value::Null, |p| serde_json::Value::String(p.to_owned())),
            );
        })
    }

    /// The stored message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match self {
            Self::Message(entry) => Some(&entry.message),
            _ => None,
        }
    }

    /// Serializes the entry as one JSON line (no trailing newline).
    pub fn to_json_line(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}
