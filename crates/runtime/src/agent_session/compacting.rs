//! The session's side of compaction: what it compacts with, and taking up the result.

use std::sync::Arc;
use std::sync::PoisonError;

use knightcode_protocol::rpc::CompactionResult;
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use super::Navigated;
use super::lock;
use crate::compaction::CompactionError;
use crate::compaction::CompactionSettings;
use crate::compaction::SummaryModel;
use crate::compaction::branch;
use crate::compaction::branch::SummaryRequest;
use crate::compaction::branch::prepare_branch;
use crate::compaction::context_messages;
use crate::compaction::hooks::Announce;
use crate::compaction::hooks::CompactingFlag;
use crate::compaction::hooks::CompactionTarget;
use crate::compaction::hooks::SharedTarget;
use crate::compaction::summary::RetryEvents;
use crate::compaction::summary::RetrySource;
use crate::hooks::TreeChanged;
use crate::hooks::TreeDecision;
use crate::hooks::TreeNavigation;
use knightcode_agent::EventSender;
use knightcode_ai::Context;
use knightcode_ai::estimate_context_tokens;
use knightcode_clock::Clock;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::StopReason;

impl AgentSession {
    /// The session file, model, credentials and settings a compaction uses now.
    pub fn compaction_target(&self) -> CompactionTarget {
        let config = self.agent.config();
        let model = &config.model;
        // A virtual model's summary request is routed like any other ("direct"); its
        // threshold is the window of the model that answered last.
        let mut summary_model = model.clone();
        summary_model.context_window = self.limits_model().context_window;
        CompactionTarget {
            session: Arc::clone(&self.session),
            model: SummaryModel {
                provider: Arc::clone(&self.provider),
                model: summary_model,
                options: config.options.clone(),
                retry: config.retry,
                clock: Arc::clone(&self.compaction.clock),
            },
            settings: CompactionSettings::resolve(
                self.settings.values(),
                &model.provider,
                &model.id,
            ),
        }
    }

    /// Hands the loop's compactions the current model and settings.
    pub(crate) fn refresh_compaction_target(&self) {
        let target = self.compaction_target();
        *self
            .compaction
            .target
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(target);
    }

    /// Whether a compaction runs now (`isCompacting`).
    pub fn is_compacting(&self) -> bool {
        self.compaction.compacting.get()
    }

    /// Compacts now (`compact`, `/compact`, or the check before a prompt), between
    /// `compaction_start` and `compaction_end` events; `cancel` stops the summary request and
    /// leaves the session unchanged.
    pub async fn compact(
        &mut self,
        reason: CompactionReason,
        custom_instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CompactionResult, CompactionError> {
        let target = self.compaction_target();
        let _compacting = self.compaction.compacting.raise();
        let announce = Announce {
            reason,
            will_retry: false,
            events: &self.compaction.events,
            hooks: self.hooks.as_ref(),
        };
        let result = target
            .compact_announced(announce, custom_instructions, cancel)
            .await?;
        self.reload_context();
        Ok(result)
    }

    /// For a virtual model, the physical model of the latest response (`None` before one,
    /// and for a physical model).
    pub(crate) fn routed_model(&self) -> Option<knightcode_ai::Model> {
        let model = &self.agent.config().model;
        if model.api != knightcode_ai::VIRTUAL_API {
            return None;
        }
        let messages = self.agent.messages();
        messages.iter().rev().find_map(|m| match &**m {
            AgentMessage::Assistant(a) if a.api != knightcode_ai::VIRTUAL_API => {
                self.ops.registry.find(&a.provider, &a.model).cloned()
            }
            _ => None,
        })
    }

    /// The model whose limits (context window) apply: the session's, or for a virtual
    /// model the physical model of the latest response (the declared limits before one).
    pub(crate) fn limits_model(&self) -> knightcode_ai::Model {
        self.routed_model()
            .unwrap_or_else(|| self.agent.config().model.clone())
    }

    /// The check before a new prompt (`spec/compaction.md` §3): the last response (aborted
    /// ones too) left less than `reserveTokens` free. Responses of another model, and ones
    /// from before the latest compaction, do not count.
    pub fn needs_compaction_before_prompt(&self) -> bool {
        let messages = self.agent.messages();
        let Some(last) = messages.iter().rev().find_map(|m| match &**m {
            AgentMessage::Assistant(a) => Some(a),
            _ => None,
        }) else {
            return false;
        };
        let model = &self.limits_model();
        if last.provider != model.provider || last.model != model.id {
            return false;
        }
        let tokens = if last.stop_reason.known() == Some(StopReason::Error)
            || context_tokens(&last.usage) == 0
        {
            let context = Context {
                system_prompt: None,
                messages: messages.to_vec(),
                tools: Vec::new(),
            };
            let (usage, trailing) = estimate_context_tokens(&context);
            if usage == 0 {
                return false;
            }
            usage + trailing
        } else {
            context_tokens(&last.usage)
        };
        let settings =
            CompactionSettings::resolve(self.settings.values(), &model.provider, &model.id);
        if !settings.is_ok_and(|s| s.should_compact(tokens, model.context_window)) {
            return false;
        }
        // Stale: the response was already compacted away.
        let session = lock(&self.session);
        let latest = session.branch(None).ok().and_then(|branch| {
            branch.iter().rev().find_map(|entry| match entry {
                SessionEntry::Compaction(c) => Some(c.timestamp.clone()),
                _ => None,
            })
        });
        match latest.and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok()) {
            Some(compacted) => last.timestamp.0 > compacted.timestamp_millis(),
            None => true,
        }
    }

    /// `/tree` with a summary of the branch left behind (`spec/compaction.md` §8): the
    /// summary entry goes where the conversation continues (after the target, or before a
    /// user message whose text comes back for editing, returned here), labelled with
    /// `label`. An abort or a failed summary leaves the session where it was.
    pub async fn navigate_tree_summarized(
        &mut self,
        entry_id: &str,
        request: &SummaryRequest,
        label: Option<&str>,
        restore_files: bool,
        cancel: &CancellationToken,
    ) -> Result<Navigated, CompactionError> {
        if lock(&self.session).leaf_id() == Some(entry_id) {
            return Ok(Navigated::default());
        }
        let plan = self.restore_plan_for(Some(entry_id), restore_files);
        let target = self.compaction_target();
        let reserve = self.settings.values().branch_summary_reserve_tokens;
        let (leaf, text, preparation) = {
            let session = lock(&self.session);
            let (leaf, text) = match knightcode_session::fork_point(&session, entry_id) {
                Ok((parent, text)) => (parent, Some(text)),
                Err(_) => (Some(entry_id.to_owned()), None),
            };
            if let Some(why) = self.plan.tree_target_refusal(&session, leaf.as_deref()) {
                return Err(CompactionError::Refused(why));
            }
            let budget = branch::budget(&target.model, reserve);
            let preparation = prepare_branch(&session, leaf.as_deref(), budget)?;
            (leaf, text, preparation)
        };
        let mut request = request.clone();
        let mut label = label.map(str::to_owned);
        let navigation = TreeNavigation {
            target_id: entry_id,
            old_leaf_id: preparation.old_leaf_id.as_deref(),
            common_ancestor_id: preparation.common_ancestor_id.as_deref(),
            entries_to_summarize: &preparation.messages,
            user_wants_summary: true,
            custom_instructions: request.custom_instructions.as_deref(),
            replace_instructions: request.replace_instructions,
            label: label.as_deref(),
        };
        let hooks = Arc::clone(&self.hooks);
        let supplied = match hooks.before_tree(navigation, cancel).await {
            TreeDecision::Proceed => None,
            TreeDecision::Cancel => return Err(CompactionError::Cancelled),
            TreeDecision::Supply { summary, details } => Some((summary, details)),
            TreeDecision::Override {
                custom_instructions,
                replace_instructions,
                label: new_label,
            } => {
                request.custom_instructions = custom_instructions.or(request.custom_instructions);
                request.replace_instructions =
                    replace_instructions.unwrap_or(request.replace_instructions);
                label = new_label.or(label);
                None
            }
        };
        let from_hook = supplied.is_some();
        let summary = match supplied {
            Some((text, details)) => branch::BranchSummary {
                text,
                details: details.unwrap_or(serde_json::Value::Null),
                usage: None,
            },
            None => {
                let retry = RetryEvents {
                    events: &self.compaction.events,
                    source: RetrySource::BranchSummary,
                };
                branch::summarize_branch(&target.model, &preparation, &request, &retry, cancel)
                    .await?
            }
        };
        if cancel.is_cancelled() {
            return Err(CompactionError::Cancelled);
        }
        // Files go back before the leaf moves: a crash between the two leaves the old leaf,
        // whose `/tree` or `/undo` makes the same (idempotent) restore again, where the other
        // order would leave a moved leaf with nothing left to restore from it.
        let restored = self.apply_restore(plan);
        let summary_id = {
            let mut session = lock(&self.session);
            let details = (!summary.details.is_null()).then_some(summary.details);
            let id = session.branch_with_summary(
                leaf.as_deref(),
                &summary.text,
                details,
                summary.usage,
                Some(from_hook),
            )?;
            if let Some(label) = &label {
                session.set_label(&id, Some(label))?;
            }
            id
        };
        self.reload_context();
        hooks
            .tree_changed(TreeChanged {
                new_leaf_id: Some(&summary_id),
                old_leaf_id: preparation.old_leaf_id.as_deref(),
                summary_entry_id: Some(&summary_id),
                from_hook,
            })
            .await;
        Ok(Navigated { text, restored })
    }

    /// [`AgentSession::navigate_tree`], then `tree_changed` for the hooks (a move without a
    /// summary); with `restore_files` the files the abandoned turns changed are put back.
    pub async fn navigate_tree_announced(
        &mut self,
        entry_id: Option<&str>,
        label: Option<&str>,
        restore_files: bool,
    ) -> crate::Result<Navigated> {
        let old_leaf = lock(&self.session).leaf_id().map(str::to_owned);
        let mut label = label.map(str::to_owned);
        if let Some(target) = entry_id
            && old_leaf.as_deref() != Some(target)
        {
            // Hooks hear of every move, not only summarised ones (`session_before_tree`).
            let preparation = {
                let session = lock(&self.session);
                let leaf = match knightcode_session::fork_point(&session, target) {
                    Ok((parent, _)) => parent,
                    Err(_) => Some(target.to_owned()),
                };
                // Before the hooks hear of it and before any file is restored.
                if let Some(why) = self.plan.tree_target_refusal(&session, leaf.as_deref()) {
                    return Err(crate::error::RuntimeError::PlanModeRefused(why));
                }
                prepare_branch(&session, leaf.as_deref(), u64::MAX).ok()
            };
            let navigation = TreeNavigation {
                target_id: target,
                old_leaf_id: old_leaf.as_deref(),
                common_ancestor_id: preparation
                    .as_ref()
                    .and_then(|p| p.common_ancestor_id.as_deref()),
                entries_to_summarize: preparation.as_ref().map_or(&[], |p| &p.messages),
                user_wants_summary: false,
                custom_instructions: None,
                replace_instructions: false,
                label: label.as_deref(),
            };
            let hooks = Arc::clone(&self.hooks);
            match hooks
                .before_tree(navigation, &CancellationToken::new())
                .await
            {
                TreeDecision::Cancel => {
                    return Err(crate::error::RuntimeError::NavigationCancelled);
                }
                TreeDecision::Override {
                    label: Some(new_label),
                    ..
                } => label = Some(new_label),
                _ => {}
            }
        }
        let plan =
            self.restore_plan_for(entry_id, restore_files && old_leaf.as_deref() != entry_id);
        // Files first, as in the summarised move above; only once the target is known, so
        // a move that fails restores nothing.
        let target_known = entry_id.is_none_or(|id| lock(&self.session).entry(id).is_some());
        let restored = if target_known {
            self.apply_restore(plan)
        } else {
            None
        };
        let text = self.navigate_tree(entry_id, label.as_deref())?;
        let new_leaf = lock(&self.session).leaf_id().map(str::to_owned);
        if new_leaf != old_leaf {
            let hooks = Arc::clone(&self.hooks);
            hooks
                .tree_changed(TreeChanged {
                    new_leaf_id: new_leaf.as_deref(),
                    old_leaf_id: old_leaf.as_deref(),
                    summary_entry_id: None,
                    from_hook: false,
                })
                .await;
        }
        Ok(Navigated { text, restored })
    }

    /// The agent takes up the branch's context as the session file now has it.
    pub(crate) fn reload_context(&mut self) {
        let messages = context_messages(&lock(&self.session));
        self.agent.replace_messages(messages);
    }
}

/// What a response's usage says the context held: the total, else the sum of its parts.
fn context_tokens(usage: &knightcode_protocol::Usage) -> u64 {
    if usage.total_tokens.0 > 0 {
        usage.total_tokens.0
    } else {
        usage.input.0 + usage.output.0 + usage.cache_read.0 + usage.cache_write.0
    }
}

/// The session's part of compaction besides the session file: what the loop's compactions
/// use and report through.
pub(crate) struct CompactionState {
    pub(crate) target: SharedTarget,
    pub(crate) events: EventSender,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) compacting: CompactingFlag,
}

impl CompactionState {
    /// No target yet (set before each run), not compacting.
    pub(crate) fn new(events: EventSender, clock: Arc<dyn Clock>) -> Self {
        Self {
            target: SharedTarget::default(),
            events,
            clock,
            compacting: CompactingFlag::default(),
        }
    }
}
