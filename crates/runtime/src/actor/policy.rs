//! The one table of what each command does while a prompt runs. It names every command and
//! has no wildcard, so a new command does not compile until it has a rule here; the busy
//! path ([`super::handlers::busy`]) routes by it.

use super::Command;

/// What a command does while a prompt runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WhileRunning {
    /// Answered at once from the session view and the agent handle (reads, queue edits).
    ServeNow,
    /// Answered at once by a rule of its own (a prompt is queued or refused, an abort is
    /// answered when the run has ended, a shell command runs beside the prompt, …).
    OwnRule,
    /// The running agent takes the change at once; the settings file is written after the
    /// run.
    ChangeNowSaveAfter,
    /// Answered at once; the change is made (and saved) after the run.
    SaveAfterRun,
    /// Held until the run has ended, then run as when idle.
    AfterRun,
    /// Aborts the run, then runs once it has ended.
    AbortThenRun,
}

pub(super) fn while_running(command: &Command) -> WhileRunning {
    use WhileRunning::AbortThenRun;
    use WhileRunning::AfterRun;
    use WhileRunning::ChangeNowSaveAfter;
    use WhileRunning::OwnRule;
    use WhileRunning::SaveAfterRun;
    use WhileRunning::ServeNow;
    match command {
        Command::Steer { .. }
        | Command::FollowUp { .. }
        | Command::ClearQueue
        | Command::AbortRetry
        | Command::AbortBash
        | Command::GetState
        | Command::GetMessages
        | Command::GetAvailableModels
        | Command::GetAvailableThinkingLevels
        | Command::GetSessionStats
        | Command::GetEntries { .. }
        | Command::GetTree
        | Command::GetForkMessages
        | Command::GetLastAssistantText
        | Command::GetCommands
        | Command::ExportHtml { .. }
        | Command::ExportJsonl { .. }
        | Command::Ping
        | Command::Report(_)
        | Command::ExtensionCommandDone => ServeNow,
        Command::Prompt { .. }
        | Command::Abort
        | Command::SendCustomMessage { .. }
        | Command::Bash { .. }
        | Command::SetSessionName(_)
        | Command::RecordCacheWarm(_)
        | Command::EndOfInput
        | Command::Terminate => OwnRule,
        Command::SetSteeringMode(_) | Command::SetFollowUpMode(_) => ChangeNowSaveAfter,
        Command::SetAutoCompaction(_) | Command::SetAutoRetry(_) | Command::SaveSettings(_) => {
            SaveAfterRun
        }
        Command::NewSession { .. }
        | Command::SwitchSession(_)
        | Command::ForkSessionFile(_)
        | Command::Fork(_)
        | Command::ExtensionFork { .. }
        | Command::Clone
        | Command::NavigateTree { .. }
        | Command::Compact { .. } => AbortThenRun,
        Command::SetModel { .. }
        | Command::CycleModel { .. }
        | Command::SetThinkingLevel(_)
        | Command::SetModelForSession { .. }
        | Command::SetThinkingLevelForSession(_)
        | Command::CycleThinkingLevel
        | Command::ConfigureWebTools(_)
        | Command::SetActiveTools(_)
        | Command::RefreshExtensionTools
        | Command::ExtensionProvider { .. }
        | Command::ExtensionVirtualModel { .. }
        | Command::ExtensionMcpServers(_)
        | Command::SetScopedModels { .. }
        | Command::ReloadCredentials { .. }
        | Command::Snapshot
        | Command::Reload
        | Command::WaitForIdle
        | Command::ReloadContext => AfterRun,
    }
}
