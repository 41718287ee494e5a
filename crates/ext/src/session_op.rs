//! The session operations extensions reach through `__kc.session(op, args)` and
//! `__kc.sessionAsync(op, args)`: defined once, here, with the names the JS side uses
//! (a test reads `js/*.js` and checks every name it calls against this list, and that each
//! operation is called).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// An answer the session gives later (a dialog, a session replacement).
pub type PortFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, String>> + Send + 'static>>;

/// What the session offers its extensions (entries, messages, state). The runtime
/// implements it; `op` names a `pi`/`ctx` member (`appendEntry`, `getBranch`, …).
pub trait SessionPort: Send + Sync {
    fn call(&self, op: SessionOp, args: Value) -> Result<Value, String>;

    /// An operation whose answer takes time (`ctx.ui.select`, `ctx.newSession`): the JS
    /// side gets a promise and keeps running. `cancel` fires when the caller's
    /// `AbortSignal` aborts.
    fn call_async(&self, op: SessionOp, args: Value, cancel: CancellationToken) -> PortFuture {
        let _ = (args, cancel);
        Box::pin(std::future::ready(Err(unsupported(op.name()))))
    }
}

/// What an operation this host does not have answers with.
pub(crate) fn unsupported(op: &str) -> String {
    format!("{op} is not supported by KnightCode's extension host yet")
}

/// One session operation, by the name JS calls it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionOp {
    // The UI and the run's state.
    HasUi,
    Ui,
    UiComponent,
    UiTerminal,
    GetEditorText,
    IsProjectTrusted,
    GetSystemPrompt,
    GetSystemPromptOptions,
    IsIdle,
    HasPendingMessages,
    GetContextUsage,
    GetModel,
    GetThinkingLevel,
    GetActiveTools,
    Abort,
    Shutdown,
    WaitForIdle,
    // What extensions ask the session to do.
    SendUserMessage,
    SendMessage,
    SetModel,
    SetThinkingLevel,
    RegisterProvider,
    UnregisterProvider,
    RefreshTools,
    SetActiveTools,
    Compact,
    Reload,
    ReloadContext,
    NewSession,
    SwitchSession,
    Fork,
    NavigateTree,
    // The session file.
    GetEntries,
    GetBranch,
    GetLeafId,
    GetSessionFile,
    GetSessionId,
    GetHeader,
    GetSessionName,
    SetSessionName,
    SetLabel,
    AppendMessage,
    AppendEntry,
    AppendCustomMessageEntry,
}

impl SessionOp {
    /// Every operation, in declaration order.
    pub const ALL: [Self; 44] = [
        Self::HasUi,
        Self::Ui,
        Self::UiComponent,
        Self::UiTerminal,
        Self::GetEditorText,
        Self::IsProjectTrusted,
        Self::GetSystemPrompt,
        Self::GetSystemPromptOptions,
        Self::IsIdle,
        Self::HasPendingMessages,
        Self::GetContextUsage,
        Self::GetModel,
        Self::GetThinkingLevel,
        Self::GetActiveTools,
        Self::Abort,
        Self::Shutdown,
        Self::WaitForIdle,
        Self::SendUserMessage,
        Self::SendMessage,
        Self::SetModel,
        Self::SetThinkingLevel,
        Self::RegisterProvider,
        Self::UnregisterProvider,
        Self::RefreshTools,
        Self::SetActiveTools,
        Self::Compact,
        Self::Reload,
        Self::ReloadContext,
        Self::NewSession,
        Self::SwitchSession,
        Self::Fork,
        Self::NavigateTree,
        Self::GetEntries,
        Self::GetBranch,
        Self::GetLeafId,
        Self::GetSessionFile,
        Self::GetSessionId,
        Self::GetHeader,
        Self::GetSessionName,
        Self::SetSessionName,
        Self::SetLabel,
        Self::AppendMessage,
        Self::AppendEntry,
        Self::AppendCustomMessageEntry,
    ];

    /// The name JS calls the operation by.
    pub fn name(self) -> &'static str {
        match self {
            Self::HasUi => "hasUI",
            Self::Ui => "ui",
            Self::UiComponent => "uiComponent",
            Self::UiTerminal => "uiTerminal",
            Self::GetEditorText => "getEditorText",
            Self::IsProjectTrusted => "isProjectTrusted",
            Self::GetSystemPrompt => "getSystemPrompt",
            Self::GetSystemPromptOptions => "getSystemPromptOptions",
            Self::IsIdle => "isIdle",
            Self::HasPendingMessages => "hasPendingMessages",
            Self::GetContextUsage => "getContextUsage",
            Self::GetModel => "getModel",
            Self::GetThinkingLevel => "getThinkingLevel",
            Self::GetActiveTools => "getActiveTools",
            Self::Abort => "abort",
            Self::Shutdown => "shutdown",
            Self::WaitForIdle => "waitForIdle",
            Self::SendUserMessage => "sendUserMessage",
            Self::SendMessage => "sendMessage",
            Self::SetModel => "setModel",
            Self::SetThinkingLevel => "setThinkingLevel",
            Self::RegisterProvider => "registerProvider",
            Self::UnregisterProvider => "unregisterProvider",
            Self::RefreshTools => "refreshTools",
            Self::SetActiveTools => "setActiveTools",
            Self::Compact => "compact",
            Self::Reload => "reload",
            Self::ReloadContext => "reloadContext",
            Self::NewSession => "newSession",
            Self::SwitchSession => "switchSession",
            Self::Fork => "fork",
            Self::NavigateTree => "navigateTree",
            Self::GetEntries => "getEntries",
            Self::GetBranch => "getBranch",
            Self::GetLeafId => "getLeafId",
            Self::GetSessionFile => "getSessionFile",
            Self::GetSessionId => "getSessionId",
            Self::GetHeader => "getHeader",
            Self::GetSessionName => "getSessionName",
            Self::SetSessionName => "setSessionName",
            Self::SetLabel => "setLabel",
            Self::AppendMessage => "appendMessage",
            Self::AppendEntry => "appendEntry",
            Self::AppendCustomMessageEntry => "appendCustomMessageEntry",
        }
    }

    /// The operation JS named; `None` for a name this host does not have.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|op| op.name() == name)
    }
}

impl std::fmt::Display for SessionOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
