//! Compaction (`spec/compaction.md`): older history is replaced by a model-written summary
//! so the conversation fits the context window again. [`prepare`] decides what to summarise
//! and keep, [`summary`] asks the session's model, and [`compact`] writes the
//! `compaction` entry; the session's context is rebuilt from it on the next request.

pub mod branch;
pub mod hooks;
pub mod prepare;
pub mod summary;

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::EventSender;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::rpc::CompactionResult;
use knightcode_session::NewCompaction;
use knightcode_session::SessionManager;
use tokio_util::sync::CancellationToken;

use crate::agent_session::lock;
use crate::hooks::CompactionDecision;
use crate::hooks::CompactionStarting;
use crate::hooks::SessionHooks;
use crate::settings::SettingsValues;
pub use prepare::Preparation;
pub use prepare::prepare;
use summary::SummaryKind;
pub use summary::SummaryModel;

/// `compact` when the branch already ends in a compaction.
pub const ALREADY_COMPACTED: &str = "Already compacted";
/// `compact` when everything still fits in the kept tail.
pub const NOTHING_TO_COMPACT: &str = "Nothing to compact (session too small)";
/// `compact` when it was aborted.
pub const COMPACTION_CANCELLED: &str = "Compaction cancelled";
/// The second overflow of one prompt (the loop recovers once).
pub const OVERFLOW_RECOVERY_EXHAUSTED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

/// The `compaction.*` settings one compaction runs with (captured when it starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionSettings {
    /// Only automatic compaction; `compact` always works.
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
}

impl CompactionSettings {
    /// The settings as written, before model overrides.
    fn from_values(values: &SettingsValues) -> Self {
        Self {
            enabled: values.compaction_enabled,
            reserve_tokens: values.compaction_reserve_tokens,
            keep_recent_tokens: values.compaction_keep_recent_tokens,
        }
    }

    /// What a compaction with `provider/model_id` runs with: each token value from the
    /// model's override, else the ordinary setting, else the default; an invalid value
    /// anywhere refuses with the reference's error.
    pub fn resolve(
        values: &SettingsValues,
        provider: &str,
        model_id: &str,
    ) -> Result<Self, CompactionError> {
        if let Some(invalid) = &values.compaction_invalid {
            return Err(CompactionError::InvalidSettings(invalid.clone()));
        }
        let mut settings = Self::from_values(values);
        if let Some(own) = values
            .compaction_model_overrides
            .get(&format!("{provider}/{model_id}"))
        {
            settings.reserve_tokens = own.reserve_tokens.unwrap_or(settings.reserve_tokens);
            settings.keep_recent_tokens = own
                .keep_recent_tokens
                .unwrap_or(settings.keep_recent_tokens);
        }
        Ok(settings)
    }

    /// The threshold rule: the context no longer leaves `reserveTokens` free.
    pub fn should_compact(&self, context_tokens: u64, context_window: u64) -> bool {
        self.enabled
            && context_window > 0
            && context_tokens > context_window.saturating_sub(self.reserve_tokens)
    }
}

/// Why a compaction did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    #[error("{ALREADY_COMPACTED}")]
    AlreadyCompacted,
    #[error("{NOTHING_TO_COMPACT}")]
    NothingToCompact,
    #[error("{COMPACTION_CANCELLED}")]
    Cancelled,
    /// The summary request failed (the text says how).
    #[error("{0}")]
    Failed(String),
    /// The session file could not be read or written (the text says why).
    #[error("{0}")]
    Session(String),
    /// Refused before anything changed (a `/tree` target plan mode cannot enforce); the
    /// text says why and what to do.
    #[error("{0}")]
    Refused(String),
    /// A `compaction.*` token setting is not a non-negative safe integer.
    #[error("{0}")]
    InvalidSettings(String),
}

impl From<knightcode_session::SessionError> for CompactionError {
    fn from(error: knightcode_session::SessionError) -> Self {
        Self::Session(error.to_string())
    }
}

impl CompactionError {
    /// The text a user reads for a compaction started for `reason`; `None` for a cancel.
    pub fn message_for(&self, reason: CompactionReason) -> Option<String> {
        let prefix = match reason {
            CompactionReason::Manual => "Compaction failed",
            CompactionReason::Threshold => "Auto-compaction failed",
            CompactionReason::Overflow => "Context overflow recovery failed",
        };
        match self {
            Self::Cancelled => None,
            Self::Refused(why) => Some(why.clone()),
            Self::AlreadyCompacted | Self::NothingToCompact
                if reason == CompactionReason::Manual =>
            {
                Some(self.to_string())
            }
            other => Some(format!("{prefix}: {other}")),
        }
    }
}

/// Everything one compaction works with.
pub struct CompactionJob<'a> {
    pub session: &'a Arc<Mutex<SessionManager>>,
    pub model: &'a SummaryModel,
    pub settings: CompactionSettings,
    pub custom_instructions: Option<&'a str>,
    /// Why it runs (the retry events of its summary requests say so).
    pub reason: CompactionReason,
    /// Where the summary requests' retry events go.
    pub events: &'a EventSender,
    /// An overflow recovery (the failed request is retried after it).
    pub will_retry: bool,
    /// `before_compact` may cancel or supply the summary.
    pub hooks: &'a dyn SessionHooks,
}

/// A compaction that was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    pub result: CompactionResult,
    /// The id of the `compaction` entry.
    pub entry_id: String,
    /// The summary came from a hook.
    pub from_hook: bool,
}

/// Summarises the older part of the branch and appends the `compaction` entry. An abort
/// (`cancel`) or a failure leaves the session as it was.
pub async fn compact(
    job: CompactionJob<'_>,
    cancel: &CancellationToken,
) -> Result<Compacted, CompactionError> {
    let preparation = prepare(
        &lock(job.session),
        job.settings.keep_recent_tokens,
        job.hooks.inspects_compaction_messages(),
    )?;
    let starting = CompactionStarting {
        preparation: &preparation,
        custom_instructions: job.custom_instructions,
        reason: job.reason,
        will_retry: job.will_retry,
    };
    // A session whose every message is kept (a short one) is compacted too, as in the
    // reference: the summary then covers what there is (the previous summary, or nothing),
    // and the entry marks the point later compactions start from. Only an empty branch or
    // one that ends in a compaction is refused (`prepare`).
    match job.hooks.before_compact(starting, cancel).await {
        CompactionDecision::Proceed => {}
        CompactionDecision::Cancel => return Err(CompactionError::Cancelled),
        CompactionDecision::Supply(supplied) => {
            let compaction = NewCompaction {
                summary: supplied.summary,
                first_kept_entry_id: Some(supplied.first_kept_entry_id),
                tokens_before: supplied.tokens_before,
                details: supplied.details,
                usage: supplied.usage,
                from_hook: Some(true),
                system_message: None,
            };
            return write(job.session, compaction);
        }
    }
    let reserve = job.settings.reserve_tokens;
    let custom = job.custom_instructions;
    let retry = summary::RetryEvents {
        events: job.events,
        source: summary::RetrySource::Compaction(job.reason),
    };
    let history = async {
        // The reference asks for a history summary even of an empty history, except beside a
        // split turn's prefix summary, where an empty history is "No prior history.".
        if preparation.history_count == 0
            && preparation.is_split_turn
            && preparation.prefix_count > 0
        {
            return Ok(None);
        }
        let prompt = summary::history_prompt(
            &preparation.history_text,
            preparation.previous_summary.as_deref(),
            custom,
        );
        let budget = job.model.budget(reserve, 0.8);
        job.model
            .summarize(prompt, budget, SummaryKind::History, &retry, cancel)
            .await
            .map(Some)
    };
    let prefix = async {
        if !preparation.is_split_turn || preparation.prefix_count == 0 {
            return Ok(None);
        }
        let prompt = summary::turn_prefix_prompt(&preparation.prefix_text, custom);
        let budget = job.model.budget(reserve, 0.5);
        job.model
            .summarize(prompt, budget, SummaryKind::TurnPrefix, &retry, cancel)
            .await
            .map(Some)
    };
    // One after the other: the summaries' order on the wire stays the same every time.
    let history = history.await?;
    let prefix = prefix.await?;
    if cancel.is_cancelled() {
        return Err(CompactionError::Cancelled);
    }
    let (mut text, mut usage) = match (history, &preparation.previous_summary) {
        (Some((text, usage)), _) => (text, Some(usage)),
        (None, Some(previous)) => (previous.clone(), None),
        (None, None) => ("No prior history.".to_owned(), None),
    };
    if let Some((prefix_text, prefix_usage)) = prefix {
        text.push_str("\n\n---\n\n**Turn Context (split turn):**\n\n");
        text.push_str(&prefix_text);
        usage = Some(match usage {
            Some(mut total) => {
                total.accumulate(&prefix_usage);
                total
            }
            None => prefix_usage,
        });
    }
    let (read, modified) = preparation.files.lists();
    append_file_list(&mut text, "read-files", &read);
    append_file_list(&mut text, "modified-files", &modified);
    let details = serde_json::json!({"readFiles": read, "modifiedFiles": modified});

    let compaction = NewCompaction {
        summary: text,
        first_kept_entry_id: Some(preparation.first_kept_entry_id),
        tokens_before: preparation.tokens_before,
        details: Some(details),
        usage,
        from_hook: Some(false),
        system_message: None,
    };
    write(job.session, compaction)
}

/// Appends the entry and reports it as the RPC result.
fn write(
    session: &Mutex<SessionManager>,
    compaction: NewCompaction,
) -> Result<Compacted, CompactionError> {
    let mut session = lock(session);
    let entry_id = session.append_compaction(compaction.clone())?;
    let estimated_after = session
        .build_context()
        .messages
        .iter()
        .map(|p| knightcode_ai::estimate_message_tokens(&p.message))
        .sum();
    Ok(Compacted {
        result: CompactionResult {
            summary: compaction.summary,
            first_kept_entry_id: compaction.first_kept_entry_id.unwrap_or_default(),
            tokens_before: compaction.tokens_before,
            estimated_tokens_after: Some(estimated_after),
            usage: compaction.usage,
            details: compaction.details,
            extra: Default::default(),
        },
        entry_id,
        from_hook: compaction.from_hook == Some(true),
    })
}

pub(crate) fn append_file_list(text: &mut String, tag: &str, files: &[String]) {
    if !files.is_empty() {
        text.push_str(&format!("\n\n<{tag}>\n{}\n</{tag}>", files.join("\n")));
    }
}

/// The branch's context as the agent holds it (after a compaction: summary, kept tail).
pub fn context_messages(session: &SessionManager) -> Vec<Arc<AgentMessage>> {
    session
        .build_context()
        .messages
        .iter()
        .map(|m| Arc::new((*m.message).clone()))
        .collect()
}
