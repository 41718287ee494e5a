//! `SessionManager`: one open session — its header, entry tree, leaf and storage.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::BranchSummaryEntry;
use knightcode_protocol::CURRENT_SESSION_VERSION;
use knightcode_protocol::CompactionEntry;
use knightcode_protocol::Content;
use knightcode_protocol::ContextEditEntry;
use knightcode_protocol::CustomEntry;
use knightcode_protocol::CustomMessageEntry;
use knightcode_protocol::EntryId;
use knightcode_protocol::LabelEntry;
use knightcode_protocol::MessageEntry;
use knightcode_protocol::Millis;
use knightcode_protocol::ModelChangeEntry;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;
use knightcode_protocol::SessionInfoEntry;
use knightcode_protocol::SystemCheckpoint;
use knightcode_protocol::SystemMessage;
use knightcode_protocol::ThinkingLevelChangeEntry;
use knightcode_protocol::Tokens;
use knightcode_protocol::Usage;
use knightcode_protocol::UsageEntry;

use crate::context;
use crate::context::ProjectedMessage;
use crate::context::SessionContext;
use crate::error::Result;
use crate::error::SessionError;
use crate::ids::Clock;
use crate::ids::iso_timestamp;
use crate::ids::new_entry_id;
use crate::load::LoadWarning;
use crate::storage::Storage;
use crate::tree::EntryIndex;
use crate::tree::Forest;
use crate::tree::SessionTree;

/// A compaction to record (see [`SessionManager::append_compaction`]).
#[derive(Debug, Clone, Default)]
pub struct NewCompaction {
    pub summary: String,
    /// The first entry kept from before the compaction; `None` keeps none (retain-none).
    pub first_kept_entry_id: Option<String>,
    pub tokens_before: u64,
    pub details: Option<serde_json::Value>,
    pub usage: Option<Usage>,
    pub from_hook: Option<bool>,
    /// The prompt and tool checkpoint; `None` takes the branch's replayed system state at
    /// the leaf, so every compaction carries one.
    pub system_message: Option<SystemMessage>,
}

/// One open session.
#[derive(Debug)]
pub struct SessionManager {
    pub(crate) header: SessionHeader,
    pub(crate) tree: SessionTree,
    pub(crate) storage: Storage,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) warnings: Vec<LoadWarning>,
    /// Whether the session holds a message (a prompt the agent accepted, an answer): the
    /// trigger for the first write. Acknowledged means stored: a prompt is on disk before
    /// the events that report it, even if no answer ever comes (a crash, an abort).
    pub(crate) has_conversation: bool,
}

impl SessionManager {
    pub(crate) fn new_parts(
        header: SessionHeader,
        tree: SessionTree,
        storage: Storage,
        clock: Arc<dyn Clock>,
        warnings: Vec<LoadWarning>,
    ) -> Self {
        let has_conversation = tree.entries().iter().any(|e| e.message().is_some());
        Self {
            header,
            tree,
            storage,
            clock,
            warnings,
            has_conversation,
        }
    }

    /// A session that never touches disk (`--no-session`).
    pub fn in_memory(cwd: &Path, session_id: Option<String>, clock: Arc<dyn Clock>) -> Self {
        let header = SessionHeader {
            version: Some(CURRENT_SESSION_VERSION),
            id: session_id.unwrap_or_else(crate::ids::new_session_id),
            timestamp: iso_timestamp(crate::ids::now(clock.as_ref())),
            cwd: cwd.to_string_lossy().into_owned(),
            ..SessionHeader::default()
        };
        Self::new_parts(
            header,
            SessionTree::default(),
            Storage::Memory,
            clock,
            Vec::new(),
        )
    }

    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    pub fn cwd(&self) -> &str {
        &self.header.cwd
    }

    /// The session file; `None` for in-memory sessions.
    pub fn session_file(&self) -> Option<&Path> {
        self.storage.path()
    }

    /// Whether the file exists on disk yet (false until the first message).
    pub fn is_persisted(&self) -> bool {
        match &self.storage {
            Storage::File(writer) => writer.is_on_disk(),
            Storage::ReadOnly { path } | Storage::Closed { path } => path.exists(),
            Storage::Memory => false,
        }
    }

    pub fn is_in_memory(&self) -> bool {
        matches!(self.storage, Storage::Memory)
    }

    /// The session clock's time in `toISOString()` form (for records made about the session,
    /// like an export's header).
    pub fn now_iso(&self) -> String {
        crate::ids::iso_timestamp(crate::ids::now(&*self.clock))
    }

    /// Problems found (and worked around) when the file was read.
    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    pub fn tree(&self) -> &SessionTree {
        &self.tree
    }

    /// All entries in file order.
    pub fn entries(&self) -> &[SessionEntry] {
        self.tree.entries()
    }

    pub fn entry(&self, id: &str) -> Option<&SessionEntry> {
        self.tree.get(id)
    }

    pub fn leaf_id(&self) -> Option<&str> {
        self.tree.leaf_id()
    }

    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.tree.leaf().map(|i| self.tree.entry(i))
    }

    /// Root-to-leaf path (or root-to-`from`).
    pub fn branch(&self, from: Option<&str>) -> Result<Vec<&SessionEntry>> {
        let index = self.resolve(from)?;
        Ok(self.tree.branch(index))
    }

    pub fn children(&self, id: &str) -> Vec<&SessionEntry> {
        self.tree.children(id)
    }

    pub fn forest(&self) -> Forest {
        self.tree.forest()
    }

    pub fn label(&self, id: &str) -> Option<&str> {
        self.tree.label(id)
    }

    pub fn session_name(&self) -> Option<&str> {
        self.tree.name()
    }

    fn resolve(&self, id: Option<&str>) -> Result<Option<EntryIndex>> {
        match id {
            None => Ok(self.tree.leaf()),
            Some(id) => self
                .tree
                .index_of(id)
                .map(Some)
                .ok_or_else(|| SessionError::EntryNotFound { id: id.to_owned() }),
        }
    }

    /// Moves the leaf to an entry: the next append becomes its child.
    pub fn navigate(&mut self, id: &str) -> Result<()> {
        let index = self.resolve(Some(id))?;
        self.tree.set_leaf(index);
        Ok(())
    }

    /// Clears the leaf: the next entry becomes a new root.
    pub fn reset_leaf(&mut self) {
        self.tree.set_leaf(None);
    }

    /// Entries selected for context on the current branch.
    pub fn context_entries(&self) -> Vec<&SessionEntry> {
        context::build_context_entries(&self.tree, self.tree.leaf())
            .into_iter()
            .map(|i| self.tree.entry(i))
            .collect()
    }

    /// Model-visible messages with their source entries.
    pub fn projection(&self) -> Vec<ProjectedMessage<'_>> {
        context::build_projection(&self.tree, self.tree.leaf())
    }

    /// Everything the next model request needs.
    pub fn build_context(&self) -> SessionContext<'_> {
        context::build_session_context(&self.tree, self.tree.leaf())
    }

    // ----- appending -----

    fn base(&self) -> (EntryId, Option<EntryId>, EntryId) {
        (
            new_entry_id(self.tree.ids()).into(),
            self.tree.leaf_id().map(EntryId::from),
            iso_timestamp(crate::ids::now(self.clock.as_ref())).into(),
        )
    }

    /// Appends a built entry as a child of the leaf, persisting it (or buffering it until the
    /// first message). A failed write leaves the session as it was.
    pub fn append_entry(&mut self, entry: SessionEntry) -> Result<String> {
        match &self.storage {
            Storage::ReadOnly { path } => {
                return Err(SessionError::ReadOnly { path: path.clone() });
            }
            Storage::Closed { path } => return Err(SessionError::Closed { path: path.clone() }),
            Storage::File(_) | Storage::Memory => {}
        }
        let id = entry.id().to_owned();
        let previous_leaf = self.tree.leaf();
        let had_conversation = self.has_conversation;
        if entry.message().is_some() {
            self.has_conversation = true;
        }
        self.tree.push(entry);
        if let Err(error) = self.persist_last() {
            self.tree.pop(previous_leaf);
            self.has_conversation = had_conversation;
            return Err(error);
        }
        Ok(id)
    }

    fn persist_last(&mut self) -> Result<()> {
        let Storage::File(writer) = &mut self.storage else {
            return Ok(());
        };
        if writer.is_on_disk() && !writer.still_at_path() {
            // Deleted while open: written again whole, the new entry with it.
            writer.reopen_gone();
            return writer.create(&self.header, self.tree.entries());
        }
        if writer.is_on_disk() {
            let Some(last) = self.tree.entries().last() else {
                return Ok(());
            };
            writer.append(last)
        } else if self.has_conversation {
            writer.create(&self.header, self.tree.entries())
        } else {
            // Lazy creation: a session abandoned before its first prompt leaves no file.
            writer.lock.verify()
        }
    }

    pub fn append_message(&mut self, message: AgentMessage) -> Result<String> {
        let (id, parent_id, timestamp) = self.base();
        self.append_entry(SessionEntry::Message(MessageEntry {
            id,
            parent_id,
            timestamp,
            message,
            extra: Default::default(),
        }))
    }

    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<String> {
        let (id, parent_id, timestamp) = self.base();
        self.append_entry(SessionEntry::ModelChange(ModelChangeEntry {
            id,
            parent_id,
            timestamp,
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
            extra: Default::default(),
        }))
    }

    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String> {
        let (id, parent_id, timestamp) = self.base();
        self.append_entry(SessionEntry::ThinkingLevelChange(
            ThinkingLevelChangeEntry {
                id,
                parent_id,
                timestamp,
                thinking_level: level.to_owned(),
                extra: Default::default(),
            },
        ))
    }

    /// A `usage` entry: model usage outside the conversation (`note` says why, when
    /// something other than the usual decided it).
    pub fn append_usage(
        &mut self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: Usage,
        note: Option<&str>,
    ) -> Result<String> {
        let (id, parent_id, timestamp) = self.base();
        self.append_entry(SessionEntry::Usage(Box::new(UsageEntry {
            id,
            parent_id,
            timestamp,
            kind: kind.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            usage,
            note: note.map(str::to_owned),
            extra: Default::default(),
        })))
    }

    pub fn append_compaction(&mut self, compaction: NewCompaction) -> Result<String> {
        let (id, parent_id, timestamp) = self.base();
        if let Some(kept) = &compaction.first_kept_entry_id
            && !self.tree.contains(kept)
        {
            return Err(SessionError::EntryNotFound { id: kept.clone() });
        }
        let first_kept_entry_id = compaction
            .first_kept_entry_id
            .unwrap_or_else(|| id.to_string());
        let system_message = compaction.system_message.unwrap_or_else(|| {
            crate::context::system_state(&self.tree, self.tree.leaf())
                .checkpoint(Millis(self.clock.now_ms()))
        });
        self.append_entry(SessionEntry::Compaction(Box::new(CompactionEntry {
            id,
            parent_id,
            timestamp,
            summary: compaction.summary,
            first_kept_entry_id,
            tokens_before: Tokens(compaction.tokens_before),
            details: compaction.details,
            usage: compaction.usage,
            from_hook: compaction.from_hook,
            system_message: Some(SystemCheckpoint(system_message)),
            extra: Default::default(),
        })))
    }

    /// Omits (`None`) or replaces the content of an earlier entry in future context.
    pub fn append_context_edit(
        &mut self,
        target_id: &str,
        replacement: Option<Content>,
    ) -> Result<String> {
        let target = self
            .tree
            .get(target_id)
            .ok_or_else(|| SessionError::EntryNotFound {
                id: target_id.to_owned(),
            })?;
        let editable = matches!(target, SessionEntry::CustomMessage(_))
            || matches!(
                target.message(),
                Some(
                    AgentMessage::User(_)
                        | AgentMessage::Assistant(_)
                        | AgentMessage::ToolResult(_)
                )
            );
        if !editable {
            return Err(SessionError::EntryNotFound {
                id: target_id.to_owned(),
            });
        }
        let (id, parent_id, timestamp) = self.base();
        self.append_entry(SessionEntry::ContextEdit(Box::new(ContextEditEntry {
            id,
            parent_id,
            timestamp,
            target_id: target_id.to_owned(),
            replacement,
            extra: Default::default(),
        })))
    }

    /// Moves to `branch_from` (or a new root for `None`) and records a summary of the branch
    /// that was left, which ended at `from_id`.
    pub fn branch_with_summary(
        &mut self,
        branch_from: Option<&str>,
        summary: &str,
        details: Option<serde_json::Value>,
        usage: Option<Usage>,
        from_hook: Option<bool>,
    ) -> Result<String> {
        // Leaving an empty conversation is leaving "root", as the reference writes it.
        let from_id = self.tree.leaf_id().unwrap_or("root").to_owned();
        let target = self.resolve(branch_from)?;
        let previous = self.tree.leaf();
        self.tree
            .set_leaf(if branch_from.is_some() { target } else { None });
        let (id, parent_id, timestamp) = self.base();
        let result = self.append_entry(SessionEntry::BranchSummary(Box::new(BranchSummaryEntry {
            id,
            parent_id,
            timestamp,
            from_id,
            summary: summary.to_owned(),
            details,
            usage,
            from_hook,
            extra: Default::default(),
        })));
        if result.is_err() {
            self.tree.set_leaf(previous);
        }
        result
    }

    pub fn append_custom_entry(
        &mut self,
        custom_type: &str,
        data: Option<serde_json::Value>,
    ) -> Result<String> {
        let (id, parent_id, timestamp) = self.base();
        self.append_entry(SessionEntry::Custom(Box::new(CustomEntry {
            id,
            parent_id,
            timestamp,
            custom_type: custom_type.to_owned(),
            data,
            extra: Default::default(),
        })))
    }

    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: Content,
        display: bool,
        details: Option<serde_json::Value>,
    ) -> Result<String> {
        let (id, parent_id, timestamp) = self.base();
        self.append_entry(SessionEntry::CustomMessage(Box::new(CustomMessageEntry {
            id,
            parent_id,
            timestamp,
            custom_type: custom_type.to_owned(),
            content,
            display,
            details,
            extra: Default::default(),
        })))
    }

    /// Sets (or with `None`/empty, clears) the label of an entry.
    pub fn set_label(&mut self, target_id: &str, label: Option<&str>) -> Result<String> {
        if !self.tree.contains(target_id) {
            return Err(SessionError::EntryNotFound {
                id: target_id.to_owned(),
            });
        }
        let (id, parent_id, timestamp) = self.base();
        let label = label
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned);
        self.append_entry(SessionEntry::Label(LabelEntry {
            id,
            parent_id,
            timestamp,
            target_id: target_id.to_owned(),
            label,
            extra: Default::default(),
        }))
    }

    /// Sets (or with an empty name, clears) the session's display name.
    pub fn set_session_name(&mut self, name: &str) -> Result<String> {
        let (id, parent_id, timestamp) = self.base();
        let name = collapse_line_breaks(name.trim());
        self.append_entry(SessionEntry::SessionInfo(SessionInfoEntry {
            id,
            parent_id,
            timestamp,
            // Written even when empty: an empty name explicitly clears the title.
            name: Some(name),
            extra: Default::default(),
        }))
    }

    /// Closing is final: the session stays readable but never writes again, and this
    /// handle's share of the ownership lock is released.
    pub fn close(&mut self) {
        let path = self.storage.path().map(Path::to_path_buf);
        match path {
            Some(path) if !matches!(self.storage, Storage::Memory) => {
                self.storage = Storage::Closed { path };
            }
            _ => {}
        }
    }

    /// The path this session will be (or is) written to.
    pub fn path_buf(&self) -> Option<PathBuf> {
        self.storage.path().map(Path::to_path_buf)
    }
}

/// Session names are one line: runs of CR/LF become one space.
fn collapse_line_breaks(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_break = false;
    for c in name.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            out.push(c);
            in_break = false;
        }
    }
    out
}
