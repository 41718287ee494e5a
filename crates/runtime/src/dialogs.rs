//! Questions the session asks a user (the built-in `/undo` outside the terminal UI, and
//! extensions' `ctx.ui`): RPC mode answers them over the extension-UI subprotocol
//! (`spec/rpc.md` §6), print and JSON modes have nobody to ask ([`NoDialogs`]).

use std::time::Duration;

use knightcode_agent::HookFuture;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use tokio_util::sync::CancellationToken;

/// How a notice is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

/// A front end's dialogs. Every method has the no-UI default.
pub trait Dialogs: Send + Sync {
    /// One of `options`, or `None` (cancelled, timed out, no UI).
    fn select<'a>(
        &'a self,
        title: &'a str,
        options: Vec<String>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<String>> {
        let _ = (title, options, cancel);
        Box::pin(std::future::ready(None))
    }

    fn notify<'a>(&'a self, message: &'a str, kind: NoticeKind) -> HookFuture<'a, ()> {
        let _ = (message, kind);
        Box::pin(std::future::ready(()))
    }

    /// Puts text in the editor (a message to edit and resubmit).
    fn set_editor_text<'a>(&'a self, text: &'a str) -> HookFuture<'a, ()> {
        let _ = text;
        Box::pin(std::future::ready(()))
    }

    /// Whether anybody answers (`ctx.hasUI`).
    fn has_ui(&self) -> bool {
        false
    }

    /// Issues an extension's `ctx.ui` request as the subprotocol carries it, and returns the
    /// wait for its answer. The request is issued before this returns, not when the future is
    /// first polled: requests then reach the front end in the order extensions made them, and
    /// before anything the session emits afterwards (the reference writes a request when it
    /// is made, so a `notify` issued before `ctx.abort()` precedes the run's end). A dialog
    /// resolves with the reply, or `None` after `timeout`, on `cancel` or without a UI; the
    /// fire-and-forget kinds resolve once they are written.
    fn extension_ui(
        &self,
        request: UiRequestKind,
        timeout: Option<Duration>,
        cancel: CancellationToken,
    ) -> HookFuture<'static, Option<UiReply>> {
        let _ = (request, timeout, cancel);
        Box::pin(std::future::ready(None))
    }
}

/// Nobody to ask: dialogs answer `None`, notices go nowhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoDialogs;

impl Dialogs for NoDialogs {}
