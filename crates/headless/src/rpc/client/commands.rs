//! One typed method per RPC command (spec `rpc.md` §2).

use knightcode_protocol::AgentMessage;
use knightcode_protocol::rpc::BashResult;
use knightcode_protocol::rpc::CancelledResult;
use knightcode_protocol::rpc::CommandsResult;
use knightcode_protocol::rpc::CompactionResult;
use knightcode_protocol::rpc::CycleModelResult;
use knightcode_protocol::rpc::EntriesResult;
use knightcode_protocol::rpc::ExportHtmlResult;
use knightcode_protocol::rpc::ForkMessage;
use knightcode_protocol::rpc::ForkMessagesResult;
use knightcode_protocol::rpc::ForkResult;
use knightcode_protocol::rpc::LastAssistantTextResult;
use knightcode_protocol::rpc::MessagesResult;
use knightcode_protocol::rpc::ModelInfo;
use knightcode_protocol::rpc::ModelsResult;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_protocol::rpc::PromptResult;
use knightcode_protocol::rpc::QueueContents;
use knightcode_protocol::rpc::QueueMode;
use knightcode_protocol::rpc::RpcCommandBody as Cmd;
use knightcode_protocol::rpc::SessionState;
use knightcode_protocol::rpc::SessionStats;
use knightcode_protocol::rpc::SlashCommand;
use knightcode_protocol::rpc::ThinkingLevelResult;
use knightcode_protocol::rpc::ThinkingLevelsResult;
use knightcode_protocol::rpc::TreeResult;

use super::RpcClient;
use crate::HeadlessError;

type Result<T> = std::result::Result<T, HeadlessError>;

impl RpcClient {
    /// `prompt`: resolves once the server accepted (or queued, or handled) the prompt; the
    /// run's events follow on the event stream. The disposition is `None` from servers that
    /// do not report one (pi 0.73). For images or `streamingBehavior`, use
    /// [`RpcClient::call`] with [`Cmd::Prompt`].
    pub async fn prompt(&self, message: impl Into<String>) -> Result<Option<PromptDisposition>> {
        self.disposition(Cmd::prompt(message)).await
    }

    /// `steer`: queue a message for delivery after the current turn's tool calls.
    pub async fn steer(&self, message: impl Into<String>) -> Result<Option<PromptDisposition>> {
        let body = Cmd::Steer {
            message: message.into(),
            images: None,
        };
        self.disposition(body).await
    }

    /// `follow_up`: queue a message for when the agent would otherwise stop.
    pub async fn follow_up(&self, message: impl Into<String>) -> Result<Option<PromptDisposition>> {
        let body = Cmd::FollowUp {
            message: message.into(),
            images: None,
        };
        self.disposition(body).await
    }

    async fn disposition(&self, body: Cmd) -> Result<Option<PromptDisposition>> {
        let result: Option<PromptResult> = self.call(body).await?;
        Ok(result.and_then(|result| result.disposition))
    }

    /// `abort`: stops the run and resolves once the session is idle.
    pub async fn abort(&self) -> Result<()> {
        self.call_unit(Cmd::Abort).await
    }

    /// `clear_queue`: empties both queues and returns what they held.
    pub async fn clear_queue(&self) -> Result<QueueContents> {
        self.call(Cmd::ClearQueue).await
    }

    /// `new_session`; `true` when an extension cancelled it.
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<bool> {
        let result: CancelledResult = self.call(Cmd::NewSession { parent_session }).await?;
        Ok(result.cancelled)
    }

    pub async fn get_state(&self) -> Result<SessionState> {
        self.call(Cmd::GetState).await
    }

    /// `get_messages`: the current context's messages.
    pub async fn get_messages(&self) -> Result<Vec<AgentMessage>> {
        let result: MessagesResult = self.call(Cmd::GetMessages).await?;
        Ok(result.messages)
    }

    pub async fn set_model(
        &self,
        provider: impl Into<String>,
        model_id: impl Into<String>,
    ) -> Result<ModelInfo> {
        let body = Cmd::SetModel {
            provider: provider.into(),
            model_id: model_id.into(),
        };
        self.call(body).await
    }

    /// `cycle_model`; `None` when there is no other model to switch to.
    pub async fn cycle_model(&self) -> Result<Option<CycleModelResult>> {
        self.call(Cmd::CycleModel).await
    }

    pub async fn get_available_models(&self) -> Result<Vec<ModelInfo>> {
        let result: ModelsResult = self.call(Cmd::GetAvailableModels).await?;
        Ok(result.models)
    }

    /// `set_thinking_level`; the server clamps the level to what the model supports.
    pub async fn set_thinking_level(&self, level: impl Into<String>) -> Result<()> {
        let body = Cmd::SetThinkingLevel {
            level: level.into(),
        };
        self.call_unit(body).await
    }

    /// `cycle_thinking_level`: the new level, `None` for a model without reasoning.
    pub async fn cycle_thinking_level(&self) -> Result<Option<String>> {
        let result: Option<ThinkingLevelResult> = self.call(Cmd::CycleThinkingLevel).await?;
        Ok(result.map(|result| result.level))
    }

    pub async fn get_available_thinking_levels(&self) -> Result<Vec<String>> {
        let result: ThinkingLevelsResult = self.call(Cmd::GetAvailableThinkingLevels).await?;
        Ok(result.levels)
    }

    pub async fn set_steering_mode(&self, mode: QueueMode) -> Result<()> {
        self.call_unit(Cmd::SetSteeringMode { mode }).await
    }

    pub async fn set_follow_up_mode(&self, mode: QueueMode) -> Result<()> {
        self.call_unit(Cmd::SetFollowUpMode { mode }).await
    }

    pub async fn compact(&self, custom_instructions: Option<String>) -> Result<CompactionResult> {
        self.call(Cmd::Compact {
            custom_instructions,
        })
        .await
    }

    pub async fn set_auto_compaction(&self, enabled: bool) -> Result<()> {
        self.call_unit(Cmd::SetAutoCompaction { enabled }).await
    }

    pub async fn set_auto_retry(&self, enabled: bool) -> Result<()> {
        self.call_unit(Cmd::SetAutoRetry { enabled }).await
    }

    pub async fn abort_retry(&self) -> Result<()> {
        self.call_unit(Cmd::AbortRetry).await
    }

    /// `bash`: runs a user shell command; its output streams as `bash_execution_update`
    /// events carrying this request's id.
    pub async fn bash(&self, command: impl Into<String>) -> Result<BashResult> {
        let body = Cmd::Bash {
            command: command.into(),
            exclude_from_context: None,
        };
        self.call(body).await
    }

    pub async fn abort_bash(&self) -> Result<()> {
        self.call_unit(Cmd::AbortBash).await
    }

    pub async fn get_session_stats(&self) -> Result<SessionStats> {
        self.call(Cmd::GetSessionStats).await
    }

    /// `export_html`: the path written.
    pub async fn export_html(&self, output_path: Option<String>) -> Result<String> {
        let result: ExportHtmlResult = self.call(Cmd::ExportHtml { output_path }).await?;
        Ok(result.path)
    }

    /// `switch_session`; `true` when an extension cancelled it.
    pub async fn switch_session(&self, session_path: impl Into<String>) -> Result<bool> {
        let body = Cmd::SwitchSession {
            session_path: session_path.into(),
        };
        let result: CancelledResult = self.call(body).await?;
        Ok(result.cancelled)
    }

    /// `fork` before the given user message.
    pub async fn fork(&self, entry_id: impl Into<String>) -> Result<ForkResult> {
        let body = Cmd::Fork {
            entry_id: entry_id.into(),
        };
        self.call(body).await
    }

    /// `clone`: copies the active branch into a new session; `true` when cancelled.
    pub async fn clone_session(&self) -> Result<bool> {
        let result: CancelledResult = self.call(Cmd::Clone).await?;
        Ok(result.cancelled)
    }

    pub async fn get_fork_messages(&self) -> Result<Vec<ForkMessage>> {
        let result: ForkMessagesResult = self.call(Cmd::GetForkMessages).await?;
        Ok(result.messages)
    }

    /// `get_entries`, optionally only those after the entry `since`.
    pub async fn get_entries(&self, since: Option<String>) -> Result<EntriesResult> {
        self.call(Cmd::GetEntries { since }).await
    }

    pub async fn get_tree(&self) -> Result<TreeResult> {
        self.call(Cmd::GetTree).await
    }

    pub async fn get_last_assistant_text(&self) -> Result<Option<String>> {
        let result: LastAssistantTextResult = self.call(Cmd::GetLastAssistantText).await?;
        Ok(result.text)
    }

    pub async fn set_session_name(&self, name: impl Into<String>) -> Result<()> {
        self.call_unit(Cmd::SetSessionName { name: name.into() })
            .await
    }

    /// `get_commands`: extension commands, prompt templates and skills.
    pub async fn get_commands(&self) -> Result<Vec<SlashCommand>> {
        let result: CommandsResult = self.call(Cmd::GetCommands).await?;
        Ok(result.commands)
    }
}
