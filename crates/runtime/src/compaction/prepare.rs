//! What a compaction summarises and keeps (`spec/compaction.md` §5): the cut point, split
//! turns, the messages to summarise, and the cumulative file lists.

use std::collections::BTreeSet;

use knightcode_ai::estimate_message_tokens;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::SessionEntry;
use knightcode_session::SessionManager;

use super::CompactionError;
use super::summary::serialize_conversation;

/// Everything the summary requests and the compaction entry need, copied out of the session
/// so the lock is not held while the model answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation {
    /// The entry the kept tail starts at.
    pub first_kept_entry_id: String,
    /// History before the kept tail (or before the split turn's start), serialized for the
    /// summary request; empty when there is none.
    pub history_text: String,
    /// The start of a turn that is cut in the middle, serialized: summarised on its own.
    pub prefix_text: String,
    /// How many messages each of the two holds.
    pub history_count: usize,
    pub prefix_count: usize,
    /// The same as messages, only when asked for (hooks that look at them); copying a long
    /// history costs more than serializing it.
    pub messages_to_summarize: Vec<AgentMessage>,
    pub turn_prefix: Vec<AgentMessage>,
    pub is_split_turn: bool,
    /// The summary of the compaction before this one, carried into the new summary.
    pub previous_summary: Option<String>,
    pub tokens_before: u64,
    pub files: FileOps,
}

impl Preparation {
    /// Everything still fits in the kept tail: no message to summarise.
    pub fn is_empty(&self) -> bool {
        self.history_count == 0 && self.prefix_count == 0
    }
}

/// Files touched by `read`, `write` and `edit` calls, cumulative across compactions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileOps {
    pub read: BTreeSet<String>,
    pub written: BTreeSet<String>,
    pub edited: BTreeSet<String>,
}

impl FileOps {
    /// `(read-only files, modified files)`, each sorted.
    pub fn lists(&self) -> (Vec<String>, Vec<String>) {
        let modified: BTreeSet<&String> = self.edited.iter().chain(&self.written).collect();
        let read = self
            .read
            .iter()
            .filter(|f| !modified.contains(f))
            .cloned()
            .collect();
        (read, modified.into_iter().cloned().collect())
    }

    pub(crate) fn add_calls(&mut self, message: &AgentMessage) {
        let AgentMessage::Assistant(assistant) = message else {
            return;
        };
        for block in assistant.content.iter() {
            let ContentBlock::ToolCall(call) = block else {
                continue;
            };
            let Some(path) = call.arguments.get("path").and_then(|p| p.as_str()) else {
                continue;
            };
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_owned());
        }
    }

    /// A previous compaction's `details` (`readFiles`, `modifiedFiles`).
    pub(crate) fn add_details(&mut self, details: &serde_json::Value) {
        let list = |key: &str| {
            details[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect::<Vec<_>>()
        };
        self.read.extend(list("readFiles"));
        self.edited.extend(list("modifiedFiles"));
    }
}

/// One model-visible message of the part of the branch a compaction may touch, borrowed
/// from the projection (only what is summarised is copied out).
struct Item<'a> {
    entry_id: &'a str,
    message: &'a AgentMessage,
}

fn is_valid_cut(message: &AgentMessage) -> bool {
    matches!(
        message,
        AgentMessage::User(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
    )
}

fn is_turn_start(message: &AgentMessage) -> bool {
    matches!(
        message,
        AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
    )
}

/// Chooses what to summarise and what to keep for the session's current branch; the
/// summarised messages themselves are copied out only `with_messages`.
pub fn prepare(
    session: &SessionManager,
    keep_recent_tokens: u64,
    with_messages: bool,
) -> Result<Preparation, CompactionError> {
    let branch = session.branch(None)?;
    // A compaction at the end of a run is followed by the run's turn end, which changes
    // nothing the model sees.
    let last = branch
        .iter()
        .rev()
        .find(|entry| !knightcode_session::turns::is_turn_boundary(entry));
    if matches!(last, Some(SessionEntry::Compaction(_))) {
        return Err(CompactionError::AlreadyCompacted);
    }
    let context = session.build_context();
    let mut previous_summary = None;
    let mut files = FileOps::default();
    let mut items = Vec::new();
    for projected in &context.messages {
        if let SessionEntry::Compaction(compaction) = projected.entry {
            // The previous compaction's own messages are carried as its summary; its kept
            // tail (the items after it) is summarised again.
            previous_summary = Some(compaction.summary.clone());
            if compaction.from_hook != Some(true)
                && let Some(details) = &compaction.details
            {
                files.add_details(details);
            }
            continue;
        }
        items.push(Item {
            entry_id: projected.entry.id(),
            message: &projected.message,
        });
    }
    let tokens_before = tokens_before(&branch, &context.messages);

    let cut = find_cut(&items, keep_recent_tokens).ok_or(CompactionError::NothingToCompact)?;
    let turn_start = if is_turn_start(items[cut].message) {
        None
    } else {
        (0..cut).rev().find(|&i| is_turn_start(items[i].message))
    };
    let history_end = turn_start.unwrap_or(cut);
    let summarizable = |item: &&Item<'_>| !matches!(item.message, AgentMessage::System(_));
    let history = || {
        items[..history_end]
            .iter()
            .filter(summarizable)
            .map(|i| i.message)
    };
    let prefix = || {
        items[history_end..cut]
            .iter()
            .filter(summarizable)
            .map(|i| i.message)
    };
    // Nothing before the kept tail is no error yet: an extension may still compact (the
    // reference hands it this empty preparation); [`super::compact`] refuses otherwise.
    let (history_count, prefix_count) = (history().count(), prefix().count());
    for message in history().chain(prefix()) {
        files.add_calls(message);
    }
    let copy = |messages: &dyn Fn() -> Vec<AgentMessage>| {
        if with_messages {
            messages()
        } else {
            Vec::new()
        }
    };
    let messages_to_summarize = copy(&|| history().cloned().collect());
    let turn_prefix = copy(&|| prefix().cloned().collect());
    Ok(Preparation {
        first_kept_entry_id: items[cut].entry_id.to_owned(),
        history_text: serialize_conversation(history()),
        prefix_text: serialize_conversation(prefix()),
        history_count,
        prefix_count,
        messages_to_summarize,
        turn_prefix,
        is_split_turn: turn_start.is_some(),
        previous_summary,
        tokens_before,
        files,
    })
}

/// Walks back from the newest message until `keep` tokens are kept; the cut is the first
/// valid cut point at or after the message that reached it. Never reached: everything is
/// kept (the first cut point). Only the walked messages are estimated.
fn find_cut(items: &[Item<'_>], keep: u64) -> Option<usize> {
    let mut kept = 0;
    for i in (0..items.len()).rev() {
        let tokens = estimate_message_tokens(items[i].message);
        if tokens == 0 {
            continue;
        }
        kept += tokens;
        if kept >= keep {
            return (i..items.len())
                .find(|&j| is_valid_cut(items[j].message))
                .or_else(|| items.iter().rposition(|it| is_valid_cut(it.message)));
        }
    }
    items.iter().position(|it| is_valid_cut(it.message))
}

/// The context's size before compacting: the last usable response's usage plus estimates of
/// what followed, trusted only when that response came after the branch's latest compaction
/// or context edit (their usage counts messages no longer sent); else a pure estimate.
pub(crate) fn tokens_before(
    branch: &[&SessionEntry],
    projected: &[knightcode_session::ProjectedMessage<'_>],
) -> u64 {
    let last_edit = branch.iter().rposition(|e| {
        matches!(
            e,
            SessionEntry::Compaction(_) | SessionEntry::ContextEdit(_)
        )
    });
    let usable = projected
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, p)| match &*p.message {
            AgentMessage::Assistant(a) => {
                knightcode_ai::usage_tokens(a).map(|tokens| (i, tokens, p.entry.id()))
            }
            _ => None,
        });
    if let Some((index, tokens, id)) = usable {
        // From the end: the usable response is almost always among the newest entries.
        let position = branch.iter().rposition(|e| e.id() == id);
        if last_edit.is_none_or(|edit| position.is_some_and(|p| p > edit)) {
            let trailing: u64 = projected[index + 1..]
                .iter()
                .map(|p| estimate_message_tokens(&p.message))
                .sum();
            return tokens + trailing;
        }
    }
    projected
        .iter()
        .map(|p| estimate_message_tokens(&p.message))
        .sum()
}
