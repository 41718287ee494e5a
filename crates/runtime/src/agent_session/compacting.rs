//! The session's side of compaction: what it compacts with, and taking up the result.

use std::sync::Arc;
use std::sync::PoisonError;

use knightcode_protocol::rpc::CompactionResult;
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use super::lock;
use crate::compaction::CompactionError;
use crate::compaction::CompactionJob;
use crate::compaction::CompactionSettings;
use crate::compaction::SummaryModel;
use crate::compaction::compact;
use crate::compaction::context_messages;
use crate::compaction::hooks::CompactionTarget;

impl AgentSession {
    /// The session file, model, credentials and settings a compaction uses now.
    pub fn compaction_target(&self) -> CompactionTarget {
        let config = self.agent.config();
        CompactionTarget {
            session: Arc::clone(&self.session),
            model: SummaryModel {
                provider: Arc::clone(&self.provider),
                model: config.model.clone(),
                options: config.options.clone(),
            },
            settings: CompactionSettings::from_values(self.settings.values()),
        }
    }

    /// Hands the loop's overflow recovery the current model and settings.
    pub(crate) fn refresh_compaction_target(&self) {
        let target = self.compaction_target();
        *self
            .compaction_target
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(target);
    }

    /// Compacts now (`compact`, `/compact`); `cancel` stops the summary request and leaves
    /// the session unchanged.
    pub async fn compact(
        &mut self,
        custom_instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CompactionResult, CompactionError> {
        let target = self.compaction_target();
        let result = compact(
            CompactionJob {
                session: &target.session,
                model: &target.model,
                settings: target.settings,
                custom_instructions,
            },
            cancel,
        )
        .await?;
        self.reload_context();
        Ok(result)
    }

    /// The agent takes up the branch's context as the session file now has it.
    pub(crate) fn reload_context(&mut self) {
        let messages = context_messages(&lock(&self.session));
        self.agent.replace_messages(messages);
    }
}
