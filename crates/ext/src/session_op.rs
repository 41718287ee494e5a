//! The session operations extensions reach through `__kc.session(op, args)` and
//! `__kc.sessionAsync(op, args)`: defined once, here, with the names the JS side uses. JS
//! names them from one frozen table (`js/session.js`'s `SessionOp`); a test checks that
//! table against this enum both ways, that every entry is used, and that no other file
//! calls a session operation by a literal name.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// An answer the session gives later (a dialog, a session replacement).
pub type PortFuture = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Value, crate::PortError>> + Send + 'static>,
>;

/// What the session offers its extensions (entries, messages, state). The runtime
/// implements it; `op` names a `pi`/`ctx` member (`appendEntry`, `getBranch`, …).
pub trait SessionPort: Send + Sync {
    fn call(&self, op: SessionOp, args: Value) -> Result<Value, crate::PortError>;

    /// An operation whose answer takes time (`ctx.ui.select`, `ctx.newSession`): the JS
    /// side gets a promise and keeps running. `cancel` fires when the caller's
    /// `AbortSignal` aborts.
    fn call_async(&self, op: SessionOp, args: Value, cancel: CancellationToken) -> PortFuture {
        let _ = (args, cancel);
        Box::pin(std::future::ready(Err(crate::PortError::Unsupported(
            op.name().to_owned(),
        ))))
    }
}

/// One session operation, by the name JS calls it with (camelCase of the variant).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::EnumIter,
    strum::EnumString,
    strum::IntoStaticStr,
)]
#[strum(serialize_all = "camelCase")]
pub enum SessionOp {
    // The UI and the run's state.
    #[strum(serialize = "hasUI")]
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
    RegisterVirtualModel,
    UnregisterVirtualModel,
    /// The extensions' MCP servers after a (un)registration past loading: the whole list.
    McpServersChanged,
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
    pub fn all() -> impl Iterator<Item = Self> {
        <Self as strum::IntoEnumIterator>::iter()
    }

    /// The name JS calls the operation by.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The operation JS named; `None` for a name this host does not have.
    pub fn parse(name: &str) -> Option<Self> {
        name.parse().ok()
    }
}

impl std::fmt::Display for SessionOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
