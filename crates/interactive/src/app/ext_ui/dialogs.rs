//! [`TuiDialogs`]: the session's [`Dialogs`] in the interactive mode. The extension host
//! runs on other tasks; each request travels to the app's loop as an [`ExtUiMessage`] and,
//! for a dialog, the caller waits for the answer, its timeout or its abort.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use knightcode_agent::HookFuture;
use knightcode_protocol::rpc::NotifyType;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use knightcode_runtime::dialogs::Dialogs;
use knightcode_runtime::dialogs::NoticeKind;
use knightcode_runtime::dialogs::Question;
use knightcode_runtime::dialogs::QuestionAnswer;
use tokio::sync::mpsc;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// What the session's side sends the loop.
#[derive(Debug)]
pub enum ExtUiMessage {
    Request {
        id: u64,
        request: UiRequestKind,
        /// Where a dialog's answer goes (`None` for the fire-and-forget kinds).
        reply: Option<oneshot::Sender<UiReply>>,
    },
    /// A question of the session's own (a plan's review, `ask_user`) for its picker.
    Question {
        id: u64,
        question: Question,
        reply: oneshot::Sender<QuestionAnswer>,
    },
    /// The dialog timed out or its signal aborted: take it away.
    Dismiss(u64),
    /// News of a component (see `Dialogs::extension_component`).
    Component(serde_json::Value),
    /// An extension moved to another session or branch: show it, then answer.
    SessionReplaced(oneshot::Sender<()>),
    /// `tui.stop()` / `tui.start()`: release or take back the terminal, then answer.
    Terminal {
        lend: bool,
        done: std::sync::mpsc::Sender<()>,
    },
}

/// The session's dialogs in the interactive mode.
pub struct TuiDialogs {
    tx: mpsc::UnboundedSender<ExtUiMessage>,
    next_id: AtomicU64,
    /// The editor's text as of the last key (the loop keeps it current).
    editor_text: std::sync::Arc<std::sync::Mutex<String>>,
}

impl TuiDialogs {
    pub fn new(
        tx: mpsc::UnboundedSender<ExtUiMessage>,
        editor_text: std::sync::Arc<std::sync::Mutex<String>>,
    ) -> Self {
        Self {
            tx,
            next_id: AtomicU64::new(0),
            editor_text,
        }
    }

    fn send(&self, request: UiRequestKind) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // A closed loop means the app is quitting: nobody would see it.
        let _ = self.tx.send(ExtUiMessage::Request {
            id,
            request,
            reply: None,
        });
    }

    /// Sends a dialog to the loop now (so requests keep the order they were made in) and
    /// returns the wait for its answer, timeout or abort.
    fn ask(
        &self,
        request: UiRequestKind,
        timeout: Option<Duration>,
        cancel: CancellationToken,
    ) -> impl std::future::Future<Output = Option<UiReply>> + Send + 'static {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        let sent = self
            .tx
            .send(ExtUiMessage::Request {
                id,
                request,
                reply: Some(reply),
            })
            .is_ok();
        let tx = self.tx.clone();
        async move {
            if !sent {
                return None;
            }
            let expired = async {
                match timeout {
                    Some(after) => tokio::time::sleep(after).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                answer = answer => answer.ok(),
                () = expired => {
                    let _ = tx.send(ExtUiMessage::Dismiss(id));
                    None
                }
                () = cancel.cancelled() => {
                    let _ = tx.send(ExtUiMessage::Dismiss(id));
                    None
                }
            }
        }
    }
}

impl Dialogs for TuiDialogs {
    fn has_menus(&self) -> bool {
        true
    }

    fn select<'a>(
        &'a self,
        title: &'a str,
        options: Vec<String>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<String>> {
        Box::pin(async move {
            let request = UiRequestKind::Select {
                title: title.to_owned(),
                options,
                timeout: None,
            };
            match self.ask(request, None, cancel.clone()).await {
                Some(UiReply::Value(choice)) => Some(choice),
                _ => None,
            }
        })
    }

    fn ask_question(
        &self,
        question: Question,
        cancel: CancellationToken,
    ) -> Option<HookFuture<'static, Option<QuestionAnswer>>> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        let sent = self
            .tx
            .send(ExtUiMessage::Question {
                id,
                question,
                reply,
            })
            .is_ok();
        let tx = self.tx.clone();
        Some(Box::pin(async move {
            if !sent {
                return None;
            }
            tokio::select! {
                answer = answer => answer.ok(),
                () = cancel.cancelled() => {
                    let _ = tx.send(ExtUiMessage::Dismiss(id));
                    None
                }
            }
        }))
    }

    fn notify<'a>(&'a self, message: &'a str, kind: NoticeKind) -> HookFuture<'a, ()> {
        let notify_type = match kind {
            NoticeKind::Info => NotifyType::Info,
            NoticeKind::Warning => NotifyType::Warning,
            NoticeKind::Error => NotifyType::Error,
        };
        self.send(UiRequestKind::Notify {
            message: message.to_owned(),
            notify_type: Some(notify_type),
        });
        Box::pin(std::future::ready(()))
    }

    fn set_editor_text<'a>(&'a self, text: &'a str) -> HookFuture<'a, ()> {
        self.send(UiRequestKind::SetEditorText {
            text: text.to_owned(),
        });
        Box::pin(std::future::ready(()))
    }

    fn has_ui(&self) -> bool {
        true
    }

    fn extension_ui(
        &self,
        request: UiRequestKind,
        timeout: Option<Duration>,
        cancel: CancellationToken,
    ) -> HookFuture<'static, Option<UiReply>> {
        if !request.expects_response() {
            self.send(request);
            return Box::pin(std::future::ready(None));
        }
        Box::pin(self.ask(request, timeout, cancel))
    }

    fn extension_component(&self, message: serde_json::Value) {
        let _ = self.tx.send(ExtUiMessage::Component(message));
    }

    fn lend_terminal(&self, lend: bool) {
        let (done, finished) = std::sync::mpsc::channel();
        if self.tx.send(ExtUiMessage::Terminal { lend, done }).is_ok() {
            // The loop never waits for the JS thread, so it answers at once; the limit only
            // covers a loop that has ended.
            let _ = finished.recv_timeout(std::time::Duration::from_secs(5));
        }
    }

    fn session_replaced(&self) -> HookFuture<'_, ()> {
        let (done, shown) = oneshot::channel();
        let sent = self.tx.send(ExtUiMessage::SessionReplaced(done)).is_ok();
        Box::pin(async move {
            if sent {
                let _ = shown.await;
            }
        })
    }

    fn editor_text(&self) -> Option<String> {
        Some(
            self.editor_text
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        )
    }
}
