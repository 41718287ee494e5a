//! Context building: which entries the model sees, with compaction and context edits applied,
//! and the replayed system prompt (`session-format.md`, "Context Building").

use std::collections::HashMap;

use chrono::DateTime;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::BranchSummaryMessage;
use knightcode_protocol::CompactionSummaryMessage;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::CustomEntry;
use knightcode_protocol::CustomMessage;
use knightcode_protocol::Millis;
use knightcode_protocol::SectionPatch;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::SystemMessage;
use knightcode_protocol::ToolDeclaration;

use crate::tree::EntryIndex;
use crate::tree::SessionTree;

/// Thinking level when the branch never set one.
pub const DEFAULT_THINKING_LEVEL: &str = "off";

/// Entries selected for context: the path from root to leaf, with the latest compaction on
/// the path replacing everything before its first kept entry.
pub fn build_context_entries(tree: &SessionTree, leaf: Option<EntryIndex>) -> Vec<EntryIndex> {
    let path = tree.path_to(leaf);
    let Some(compaction_pos) = path
        .iter()
        .rposition(|&i| matches!(tree.entry(i), SessionEntry::Compaction(_)))
    else {
        return path;
    };
    let SessionEntry::Compaction(compaction) = tree.entry(path[compaction_pos]) else {
        return path;
    };
    let mut selected = Vec::with_capacity(path.len() - compaction_pos + 8);
    selected.push(path[compaction_pos]);
    // A retain-none compaction names itself, which is not found before it: nothing kept.
    if let Some(kept_pos) = path[..compaction_pos]
        .iter()
        .position(|&i| tree.entry(i).id() == compaction.first_kept_entry_id)
    {
        selected.extend(
            path[kept_pos..compaction_pos]
                .iter()
                .copied()
                .filter(|&i| !is_system_message(tree.entry(i))),
        );
    }
    selected.extend_from_slice(&path[compaction_pos + 1..]);
    selected
}

fn is_system_message(entry: &SessionEntry) -> bool {
    matches!(entry.message(), Some(AgentMessage::System(_)))
}

/// A stored message as is, or one derived or edited for context. Two words, so the projection
/// of a long session stays small.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageRef<'a> {
    Stored(&'a AgentMessage),
    Derived(Box<AgentMessage>),
}

impl std::ops::Deref for MessageRef<'_> {
    type Target = AgentMessage;
    fn deref(&self) -> &AgentMessage {
        match self {
            Self::Stored(message) => message,
            Self::Derived(message) => message,
        }
    }
}

fn derived(message: AgentMessage) -> MessageRef<'static> {
    MessageRef::Derived(Box::new(message))
}

impl AsRef<AgentMessage> for MessageRef<'_> {
    fn as_ref(&self) -> &AgentMessage {
        self
    }
}

/// One model-visible message and the entry it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectedMessage<'a> {
    pub entry: &'a SessionEntry,
    pub message: MessageRef<'a>,
}

/// Applies context edits and converts selected entries to messages
/// (`buildSessionProjection`). The raw entries are not modified.
pub fn build_projection<'a>(
    tree: &'a SessionTree,
    leaf: Option<EntryIndex>,
) -> Vec<ProjectedMessage<'a>> {
    let selected = build_context_entries(tree, leaf);
    let edits = latest_edits(tree, leaf);
    let mut out = Vec::with_capacity(selected.len() + 1);
    for index in selected {
        let entry = tree.entry(index);
        // Most sessions have no edits: skip hashing every id then.
        let edit = if edits.is_empty() {
            None
        } else {
            edits.get(entry.id())
        };
        if let Some(None) = edit {
            continue;
        }
        let replacement = edit.and_then(|e| *e);
        match entry {
            SessionEntry::Message(message_entry) => {
                let message = match replacement {
                    Some(content) => derived(replace_content(&message_entry.message, content)),
                    None => MessageRef::Stored(&message_entry.message),
                };
                out.push(ProjectedMessage { entry, message });
            }
            SessionEntry::Compaction(compaction) => {
                if let Some(checkpoint) = &compaction.system_message {
                    // The checkpoint is complete: it replaces all earlier prompt state.
                    let mut checkpoint = checkpoint.0.clone();
                    checkpoint.replace = Some(true);
                    out.push(ProjectedMessage {
                        entry,
                        message: derived(AgentMessage::System(Box::new(checkpoint))),
                    });
                }
                if let Some(message) = entry_message(entry) {
                    out.push(ProjectedMessage {
                        entry,
                        message: derived(message),
                    });
                }
            }
            SessionEntry::BranchSummary(summary) if !summary.summary.is_empty() => {
                if let Some(message) = entry_message(entry) {
                    out.push(ProjectedMessage {
                        entry,
                        message: derived(message),
                    });
                }
            }
            SessionEntry::CustomMessage(custom) => {
                let content = replacement
                    .cloned()
                    .unwrap_or_else(|| custom.content.clone());
                out.push(ProjectedMessage {
                    entry,
                    message: derived(AgentMessage::Custom(Box::new(CustomMessage {
                        custom_type: custom.custom_type.clone(),
                        content,
                        display: custom.display,
                        details: custom.details.clone(),
                        timestamp: entry_millis(&custom.timestamp),
                        extra: Default::default(),
                    }))),
                });
            }
            _ => {}
        }
    }
    out
}

/// Latest `context_edit` per target on the active branch: `None` omits, `Some` replaces.
fn latest_edits(tree: &SessionTree, leaf: Option<EntryIndex>) -> HashMap<&str, Option<&Content>> {
    let mut edits = HashMap::new();
    for index in tree.path_to(leaf) {
        if let SessionEntry::ContextEdit(edit) = tree.entry(index) {
            edits.insert(edit.target_id.as_str(), edit.replacement.as_ref());
        }
    }
    edits
}

/// Replaces only the content of a message. Assistant and tool-result content must be a block
/// list, so a string replacement becomes one text block there.
fn replace_content(message: &AgentMessage, content: &Content) -> AgentMessage {
    let as_blocks = || -> Blocks {
        match content {
            Content::Text(text) => Blocks(vec![ContentBlock::text(text.clone())]),
            Content::Blocks(blocks) => Blocks(blocks.clone()),
        }
    };
    let mut message = message.clone();
    match &mut message {
        AgentMessage::User(user) => user.content = content.clone(),
        AgentMessage::Custom(custom) => custom.content = content.clone(),
        AgentMessage::System(system) => system.content = content.clone(),
        AgentMessage::Assistant(assistant) => assistant.content = as_blocks(),
        AgentMessage::ToolResult(result) => result.content = as_blocks(),
        _ => {}
    }
    message
}

/// Entry timestamps are ISO strings; derived messages carry Unix milliseconds.
/// The message an entry stands for in a conversation, without context edits: stored
/// messages as they are, a compaction as its summary, branch summaries and custom messages
/// as theirs. Metadata entries (labels, model changes, ...) stand for none.
pub fn entry_message(entry: &SessionEntry) -> Option<AgentMessage> {
    Some(match entry {
        SessionEntry::Message(message_entry) => message_entry.message.clone(),
        SessionEntry::Compaction(compaction) => {
            AgentMessage::CompactionSummary(CompactionSummaryMessage {
                summary: compaction.summary.clone(),
                tokens_before: compaction.tokens_before,
                timestamp: entry_millis(&compaction.timestamp),
                extra: Default::default(),
            })
        }
        SessionEntry::BranchSummary(summary) => AgentMessage::BranchSummary(BranchSummaryMessage {
            summary: summary.summary.clone(),
            from_id: Some(summary.from_id.clone()),
            timestamp: entry_millis(&summary.timestamp),
            extra: Default::default(),
        }),
        SessionEntry::CustomMessage(custom) => AgentMessage::Custom(Box::new(CustomMessage {
            custom_type: custom.custom_type.clone(),
            content: custom.content.clone(),
            display: custom.display,
            details: custom.details.clone(),
            timestamp: entry_millis(&custom.timestamp),
            extra: Default::default(),
        })),
        _ => return None,
    })
}

fn entry_millis(iso: &str) -> Millis {
    DateTime::parse_from_rfc3339(iso)
        .map(|time| Millis(time.timestamp_millis()))
        .unwrap_or_default()
}

/// The model a branch last used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub model_id: String,
}

/// The system prompt and tools after replaying every system message in context order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemState {
    /// Sections in prompt order.
    pub sections: Vec<(String, String)>,
    pub tools: Vec<ToolDeclaration>,
    /// A forced full prompt (stored as plain content without sections).
    pub full_prompt: Option<String>,
}

impl SystemState {
    /// Applies one system message.
    pub fn apply(&mut self, message: &SystemMessage) {
        if message.replace == Some(true) {
            *self = Self::default();
        }
        match &message.sections {
            Some(patch) => {
                for (name, text) in patch.iter() {
                    match text {
                        Some(text) => match self.sections.iter_mut().find(|(n, _)| n == name) {
                            Some(slot) => slot.1 = text.to_owned(),
                            None => self.sections.push((name.to_owned(), text.to_owned())),
                        },
                        None => self.sections.retain(|(n, _)| n != name),
                    }
                }
            }
            None => {
                let text = message.content.text();
                if !text.is_empty() {
                    self.full_prompt = Some(text);
                }
            }
        }
        for tool in message.tools_added.iter().flatten() {
            match self.tools.iter_mut().find(|t| t.name == tool.name) {
                Some(slot) => *slot = tool.clone(),
                None => self.tools.push(tool.clone()),
            }
        }
        for removed in message.tools_removed.iter().flatten() {
            self.tools.retain(|t| t.name != removed.name);
        }
    }

    /// The whole state as one system message, for a compaction's `systemMessage`: every
    /// section (or the forced prompt as content when there are none) and every tool.
    pub fn checkpoint(&self, timestamp: Millis) -> SystemMessage {
        let (content, sections) = if self.sections.is_empty() {
            (self.full_prompt.clone().unwrap_or_default(), None)
        } else {
            let mut patch = SectionPatch::new();
            for (name, text) in &self.sections {
                patch.set(name.as_str(), text.as_str());
            }
            (String::new(), Some(patch))
        };
        SystemMessage {
            content: Content::Text(content),
            sections,
            tools_added: Some(self.tools.clone()),
            timestamp,
            ..SystemMessage::default()
        }
    }

    /// The prompt text: a forced full prompt, else the sections joined by blank lines.
    pub fn prompt_text(&self) -> String {
        if let Some(full) = &self.full_prompt
            && self.sections.is_empty()
        {
            return full.clone();
        }
        let texts: Vec<&str> = self
            .sections
            .iter()
            .map(|(_, text)| text.as_str())
            .filter(|text| !text.is_empty())
            .collect();
        texts.join("\n\n")
    }
}

/// The replayed prompt and tools of the branch ending at `leaf`, without building the
/// messages (what a compaction checkpoints).
pub fn system_state(tree: &SessionTree, leaf: Option<EntryIndex>) -> SystemState {
    let mut system = SystemState::default();
    for index in build_context_entries(tree, leaf) {
        match tree.entry(index) {
            SessionEntry::Message(entry) => {
                if let AgentMessage::System(message) = &entry.message {
                    system.apply(message);
                }
            }
            SessionEntry::Compaction(compaction) => {
                if let Some(checkpoint) = &compaction.system_message {
                    system = SystemState::default();
                    system.apply(checkpoint);
                }
            }
            _ => {}
        }
    }
    system
}

/// The custom entries (`appendEntry`) on the context path of `leaf`, each with how many of
/// `projection`'s messages come before it: where a transcript shows them (an extension's
/// entry renderer draws them; they never enter context). `projection` is that branch's
/// [`build_projection`].
pub fn custom_entry_positions<'a>(
    tree: &'a SessionTree,
    leaf: Option<EntryIndex>,
    projection: &[ProjectedMessage<'_>],
) -> Vec<(usize, &'a CustomEntry)> {
    let mut positions = Vec::new();
    let mut next = 0;
    for index in build_context_entries(tree, leaf) {
        let entry = tree.entry(index);
        // An entry's messages (a compaction gives two) follow each other in the projection.
        while projection
            .get(next)
            .is_some_and(|projected| std::ptr::eq(projected.entry, entry))
        {
            next += 1;
        }
        if let SessionEntry::Custom(custom) = entry {
            positions.push((next, custom.as_ref()));
        }
    }
    positions
}

/// What the next model request is built from (`buildSessionContext`).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext<'a> {
    /// Model-visible messages in order (system messages included; see `system`).
    pub messages: Vec<ProjectedMessage<'a>>,
    pub system: SystemState,
    /// The model of the latest `model_change` or assistant message, whichever came last.
    pub model: Option<ModelRef>,
    /// The model of the latest `model_change` alone: the selection, which may be a virtual
    /// model whose responses name the physical models that answered.
    pub selection: Option<ModelRef>,
    pub thinking_level: String,
}

/// Builds the model context for the branch ending at `leaf`.
pub fn build_session_context(tree: &SessionTree, leaf: Option<EntryIndex>) -> SessionContext<'_> {
    // Remember where the settings came from and copy them once, not once per message.
    let mut model_source: Option<&SessionEntry> = None;
    let mut selection = None;
    let mut thinking_source: Option<&str> = None;
    for index in tree.path_to(leaf) {
        let entry = tree.entry(index);
        match entry {
            SessionEntry::ThinkingLevelChange(change) => {
                thinking_source = Some(&change.thinking_level)
            }
            SessionEntry::ModelChange(change) => {
                model_source = Some(entry);
                selection = Some(change);
            }
            SessionEntry::Message(message)
                if matches!(message.message, AgentMessage::Assistant(_)) =>
            {
                model_source = Some(entry);
            }
            _ => {}
        }
    }
    let model = model_source.and_then(|entry| match entry {
        SessionEntry::ModelChange(change) => Some(ModelRef {
            provider: change.provider.clone(),
            model_id: change.model_id.clone(),
        }),
        SessionEntry::Message(message) => match &message.message {
            AgentMessage::Assistant(assistant) => Some(ModelRef {
                provider: assistant.provider.clone(),
                model_id: assistant.model.clone(),
            }),
            _ => None,
        },
        _ => None,
    });
    let thinking_level = thinking_source.unwrap_or(DEFAULT_THINKING_LEVEL).to_owned();
    let messages = build_projection(tree, leaf);
    let mut system = SystemState::default();
    for projected in &messages {
        if let AgentMessage::System(message) = projected.message.as_ref() {
            system.apply(message);
        }
    }
    let selection = selection.map(|change| ModelRef {
        provider: change.provider.clone(),
        model_id: change.model_id.clone(),
    });
    SessionContext {
        selection,
        messages,
        system,
        model,
        thinking_level,
    }
}
