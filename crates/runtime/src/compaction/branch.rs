//! Branch summaries (`spec/compaction.md` §8): when `/tree` leaves a branch, what was done
//! on it can follow as a summary attached where the conversation continues.

use knightcode_ai::estimate_message_tokens;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::Usage;
use knightcode_session::SessionManager;
use knightcode_session::context::entry_message;
use tokio_util::sync::CancellationToken;

use super::CompactionError;
use super::append_file_list;
use super::prepare::FileOps;
use super::summary;
use super::summary::RetryEvents;
use super::summary::SummaryKind;
use super::summary::SummaryModel;

/// The window a summary may fill when the model does not say its own.
const DEFAULT_WINDOW: u64 = 128_000;
/// Output budget of a branch summary (capped by the model's maximum).
const MAX_SUMMARY_TOKENS: u64 = 4096;
/// The text of a summary of nothing (a branch of metadata only).
pub const NO_CONTENT: &str = "No content to summarize";

/// What leaving the current branch for `target` abandons.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchPreparation {
    /// The leaf being left (`None` for an empty conversation).
    pub old_leaf_id: Option<String>,
    /// The deepest entry the old branch and the target's path share.
    pub common_ancestor_id: Option<String>,
    /// Entries from just after the common ancestor to the old leaf.
    pub entry_count: usize,
    /// The abandoned messages the summary sees (newest first within the budget), in order.
    pub messages: Vec<AgentMessage>,
    pub files: FileOps,
}

/// What the summary of the part left behind is made of when the leaf moves to `new_leaf`
/// (`None`: before the first entry). `budget` limits the messages (newest kept); a summary
/// entry already on the branch still goes in while under 90 % of it.
///
/// Going to a user message moves the leaf to its parent, so that message counts as left
/// behind too: what was asked belongs to what was tried.
pub fn prepare_branch(
    session: &SessionManager,
    new_leaf: Option<&str>,
    budget: u64,
) -> Result<BranchPreparation, CompactionError> {
    let old_path = session.branch(None)?;
    let target_path = match new_leaf {
        Some(id) => session.branch(Some(id))?,
        None => Vec::new(),
    };
    let old_ids: std::collections::HashSet<&str> = old_path.iter().map(|e| e.id()).collect();
    let ancestor = target_path
        .iter()
        .rev()
        .find(|e| old_ids.contains(e.id()))
        .map(|e| e.id().to_owned());
    let start = match &ancestor {
        Some(id) => old_path
            .iter()
            .position(|e| e.id() == id)
            .map_or(0, |i| i + 1),
        None => 0,
    };
    let abandoned = &old_path[start..];

    let mut files = FileOps::default();
    for entry in abandoned {
        if let SessionEntry::BranchSummary(summary) = entry
            && summary.from_hook != Some(true)
            && let Some(details) = &summary.details
        {
            files.add_details(details);
        }
    }
    let mut messages = Vec::new();
    let mut total = 0u64;
    for entry in abandoned.iter().rev() {
        let Some(message) = entry_message(entry) else {
            continue;
        };
        if matches!(
            message,
            AgentMessage::ToolResult(_) | AgentMessage::System(_)
        ) {
            continue;
        }
        let tokens = estimate_message_tokens(&message);
        if total + tokens > budget {
            let is_summary = matches!(
                message,
                AgentMessage::CompactionSummary(_) | AgentMessage::BranchSummary(_)
            );
            if is_summary && (total as f64) < budget as f64 * 0.9 {
                messages.push(message);
            }
            break;
        }
        total += tokens;
        files.add_calls(&message);
        messages.push(message);
    }
    messages.reverse();
    Ok(BranchPreparation {
        old_leaf_id: session.leaf_id().map(str::to_owned),
        common_ancestor_id: ancestor,
        entry_count: abandoned.len(),
        messages,
        files,
    })
}

/// A written branch summary: the entry's text (preamble and file lists included), its
/// details and the request's usage.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummary {
    pub text: String,
    pub details: serde_json::Value,
    pub usage: Option<Usage>,
}

/// How the user asked for the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummaryRequest {
    /// Added to our instructions as a focus, or instead of them with `replace_instructions`.
    pub custom_instructions: Option<String>,
    pub replace_instructions: bool,
}

/// The input budget for a model: its window (or 128k) less `branchSummary.reserveTokens`.
pub fn budget(model: &SummaryModel, reserve: u64) -> u64 {
    let window = match model.model.context_window {
        0 => DEFAULT_WINDOW,
        window => window,
    };
    window.saturating_sub(reserve)
}

/// Asks the model for the summary of `preparation`; an empty branch gets
/// [`NO_CONTENT`] without a request.
pub async fn summarize_branch(
    model: &SummaryModel,
    preparation: &BranchPreparation,
    request: &SummaryRequest,
    retry: &RetryEvents<'_>,
    cancel: &CancellationToken,
) -> Result<BranchSummary, CompactionError> {
    let (body, usage) = if preparation.messages.is_empty() {
        (NO_CONTENT.to_owned(), None)
    } else {
        let prompt = summary::branch_prompt(
            &preparation.messages,
            request.custom_instructions.as_deref(),
            request.replace_instructions,
        );
        let max_tokens = match model.model.max_tokens {
            0 => MAX_SUMMARY_TOKENS,
            max => MAX_SUMMARY_TOKENS.min(max),
        };
        let (text, usage) = model
            .summarize(prompt, max_tokens, SummaryKind::Branch, retry, cancel)
            .await?;
        (text, Some(usage))
    };
    let mut text = format!("{}{body}", summary::BRANCH_PREAMBLE);
    let (read, modified) = preparation.files.lists();
    append_file_list(&mut text, "read-files", &read);
    append_file_list(&mut text, "modified-files", &modified);
    Ok(BranchSummary {
        text,
        details: serde_json::json!({"readFiles": read, "modifiedFiles": modified}),
        usage,
    })
}
