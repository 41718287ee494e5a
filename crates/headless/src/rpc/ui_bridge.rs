//! Server side of the extension UI subprotocol (spec `rpc.md` §6).
//!
//! Extensions ask for dialogs (`select`, `confirm`, `input`, `editor`); the bridge writes an
//! `extension_ui_request` with a fresh id and waits until the client's
//! `extension_ui_response` with that id arrives ([`UiBridge::resolve`], called by the input
//! loop). A timeout, an abort or a closed output resolves the dialog with its default instead
//! (`None` / `false`), so an extension never hangs on a client that does not answer.
//! Fire-and-forget methods (`notify`, `setStatus`, `setWidget`, `setTitle`,
//! `set_editor_text`) are written and forgotten.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use knightcode_protocol::rpc::ExtensionUiRequest;
use knightcode_protocol::rpc::ExtensionUiResponse;
use knightcode_protocol::rpc::NotifyType;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use knightcode_protocol::rpc::WidgetPlacement;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::framing::LineWriter;
use crate::HeadlessError;

/// How long a dialog may wait, and what aborts it.
#[derive(Debug, Clone, Default)]
pub struct DialogOptions {
    /// Give up after this long; for `select`, `confirm` and `input` it is also sent to the
    /// client as `timeout` (milliseconds) so that it can close the dialog itself.
    pub timeout: Option<Duration>,
    /// Give up when cancelled (the run the extension belongs to was aborted).
    pub signal: Option<CancellationToken>,
}

impl DialogOptions {
    pub fn timeout(timeout: Duration) -> Self {
        Self {
            timeout: Some(timeout),
            signal: None,
        }
    }
}

/// How far [`UiBridge::write_now`] got.
enum Write {
    Queued,
    /// The output queue was full: written by the wait instead.
    Later(ExtensionUiRequest),
    Closed,
}

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<UiReply>>>>;

/// Issues extension UI requests over an RPC output and matches the replies. Cheap to clone.
#[derive(Debug, Clone)]
pub struct UiBridge {
    out: LineWriter,
    pending: Pending,
    /// No reply can come any more (the client's input ended): dialogs answer at once.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

/// Forgets a pending dialog however its wait ends (answer, timeout, abort, dropped future).
struct PendingGuard {
    pending: Pending,
    id: String,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        lock(&self.pending).remove(&self.id);
    }
}

fn lock(pending: &Pending) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<UiReply>>> {
    // A panic while holding the lock cannot leave the map inconsistent (single inserts and
    // removes), so a poisoned lock is still usable.
    pending.lock().unwrap_or_else(PoisonError::into_inner)
}

impl UiBridge {
    pub fn new(out: LineWriter) -> Self {
        Self {
            out,
            pending: Arc::default(),
            closed: Arc::default(),
        }
    }

    /// Writes a request and, for a dialog, waits for its reply. `None` means no reply: the
    /// dialog timed out, was aborted, or the output or the bridge closed. Fire-and-forget
    /// kinds return `None` as soon as they are queued. For `select`, `confirm` and `input`
    /// the written `timeout` is taken from `options`.
    pub async fn request(&self, kind: UiRequestKind, options: &DialogOptions) -> Option<UiReply> {
        self.issue(kind, options.clone()).await
    }

    /// Like [`UiBridge::request`], but the request is queued for writing before this returns
    /// (the future only waits for the reply), so requests keep the order of the calls and
    /// precede whatever is written after them. Only a full output queue (a client that does
    /// not read) defers the write to the future.
    pub fn issue(
        &self,
        kind: UiRequestKind,
        options: DialogOptions,
    ) -> impl std::future::Future<Output = Option<UiReply>> + Send + 'static {
        let (unwritten, reply) = self.start(kind, &options);
        let out = self.out.clone();
        async move {
            match unwritten {
                Write::Queued => {}
                Write::Later(request) => out.send(&request).await.ok()?,
                Write::Closed => return None,
            }
            let (rx, _guard) = reply?;
            let timeout = async {
                match options.timeout {
                    Some(timeout) => tokio::time::sleep(timeout).await,
                    None => std::future::pending().await,
                }
            };
            let abort = async {
                match &options.signal {
                    Some(signal) => signal.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                reply = rx => reply.ok(),
                () = timeout => None,
                () = abort => None,
            }
        }
    }

    /// The synchronous part of [`UiBridge::issue`]: a dialog is registered for its reply,
    /// then the request is queued. Returns how far the write got and, for a dialog still to
    /// be answered, what its reply comes through.
    fn start(
        &self,
        mut kind: UiRequestKind,
        options: &DialogOptions,
    ) -> (Write, Option<(oneshot::Receiver<UiReply>, PendingGuard)>) {
        if !kind.expects_response() {
            let request = ExtensionUiRequest {
                id: uuid::Uuid::new_v4().to_string(),
                kind,
            };
            return (self.write_now(request), None);
        }
        if options
            .signal
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
        {
            return (Write::Closed, None);
        }
        let millis = options
            .timeout
            .map(|timeout| u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX));
        match &mut kind {
            UiRequestKind::Select { timeout, .. }
            | UiRequestKind::Confirm { timeout, .. }
            | UiRequestKind::Input { timeout, .. } => *timeout = millis,
            _ => {}
        }
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        // Registered before the request is written, so a fast reply cannot be missed.
        lock(&self.pending).insert(id.clone(), tx);
        let guard = PendingGuard {
            pending: Arc::clone(&self.pending),
            id: id.clone(),
        };
        // Checked after registering: a `close` either is seen here or drops the sender (the
        // guard forgets the dialog).
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return (Write::Closed, None);
        }
        let request = ExtensionUiRequest { id, kind };
        (self.write_now(request), Some((rx, guard)))
    }

    /// Queues `request` without waiting; gives it back when the queue is full.
    fn write_now(&self, request: ExtensionUiRequest) -> Write {
        match self.out.try_send(&request) {
            Ok(()) => Write::Queued,
            Err(HeadlessError::OutputFull) => Write::Later(request),
            // A closed output only means nobody would see it, or answer it.
            Err(_) => Write::Closed,
        }
    }

    /// Hands a client reply to the dialog waiting for it. Returns `false` for an id that no
    /// dialog waits for (unknown, already answered, timed out); such replies are ignored.
    pub fn resolve(&self, response: ExtensionUiResponse) -> bool {
        let Some(waiter) = lock(&self.pending).remove(&response.id) else {
            return false;
        };
        waiter.send(response.reply).is_ok()
    }

    /// Resolves every waiting dialog with its default (shutdown, session switch).
    pub fn cancel_all(&self) {
        lock(&self.pending).clear();
    }

    /// The client's input ended: every dialog, waiting or later, resolves with its default,
    /// so nothing waits for a reply that cannot come.
    pub fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.cancel_all();
    }

    /// Dialogs currently waiting for a reply.
    pub fn pending_count(&self) -> usize {
        lock(&self.pending).len()
    }

    /// `select`: the chosen option, or `None` when cancelled, timed out or aborted.
    pub async fn select(
        &self,
        title: impl Into<String>,
        options: Vec<String>,
        dialog: &DialogOptions,
    ) -> Option<String> {
        let kind = UiRequestKind::Select {
            title: title.into(),
            options,
            timeout: None,
        };
        text_reply(self.request(kind, dialog).await)
    }

    /// `confirm`: the answer, or `false` when cancelled, timed out or aborted.
    pub async fn confirm(
        &self,
        title: impl Into<String>,
        message: impl Into<String>,
        dialog: &DialogOptions,
    ) -> bool {
        let kind = UiRequestKind::Confirm {
            title: title.into(),
            message: message.into(),
            timeout: None,
        };
        matches!(
            self.request(kind, dialog).await,
            Some(UiReply::Confirmed(true))
        )
    }

    /// `input`: the entered text, or `None`.
    pub async fn input(
        &self,
        title: impl Into<String>,
        placeholder: Option<String>,
        dialog: &DialogOptions,
    ) -> Option<String> {
        let kind = UiRequestKind::Input {
            title: title.into(),
            placeholder,
            timeout: None,
        };
        text_reply(self.request(kind, dialog).await)
    }

    /// `editor`: the edited text, or `None`. The wire request has no `timeout` field, but a
    /// local timeout or abort still ends the wait.
    pub async fn editor(
        &self,
        title: impl Into<String>,
        prefill: Option<String>,
        dialog: &DialogOptions,
    ) -> Option<String> {
        let kind = UiRequestKind::Editor {
            title: title.into(),
            prefill,
        };
        text_reply(self.request(kind, dialog).await)
    }

    /// `notify` (severity absent means info).
    pub async fn notify(
        &self,
        message: impl Into<String>,
        notify_type: Option<NotifyType>,
    ) -> Result<(), HeadlessError> {
        self.emit(UiRequestKind::Notify {
            message: message.into(),
            notify_type,
        })
        .await
    }

    /// `setStatus`; `None` clears the entry.
    pub async fn set_status(
        &self,
        key: impl Into<String>,
        text: Option<String>,
    ) -> Result<(), HeadlessError> {
        self.emit(UiRequestKind::SetStatus {
            status_key: key.into(),
            status_text: text,
        })
        .await
    }

    /// `setWidget`; `None` lines clear the widget.
    pub async fn set_widget(
        &self,
        key: impl Into<String>,
        lines: Option<Vec<String>>,
        placement: Option<WidgetPlacement>,
    ) -> Result<(), HeadlessError> {
        self.emit(UiRequestKind::SetWidget {
            widget_key: key.into(),
            widget_lines: lines,
            widget_placement: placement,
        })
        .await
    }

    /// `setTitle`.
    pub async fn set_title(&self, title: impl Into<String>) -> Result<(), HeadlessError> {
        self.emit(UiRequestKind::SetTitle {
            title: title.into(),
        })
        .await
    }

    /// `set_editor_text` (also what `pasteToEditor` becomes in RPC mode).
    pub async fn set_editor_text(&self, text: impl Into<String>) -> Result<(), HeadlessError> {
        self.emit(UiRequestKind::SetEditorText { text: text.into() })
            .await
    }

    async fn emit(&self, kind: UiRequestKind) -> Result<(), HeadlessError> {
        let request = ExtensionUiRequest {
            id: uuid::Uuid::new_v4().to_string(),
            kind,
        };
        self.out.send(&request).await
    }
}

/// `select`, `input` and `editor` take only a text reply; anything else is the default, as in
/// the reference agent (a `confirmed` reply to a `select` reads as cancelled).
fn text_reply(reply: Option<UiReply>) -> Option<String> {
    match reply {
        Some(UiReply::Value(value)) => Some(value),
        _ => None,
    }
}

/// The session's own questions (the built-in `/undo`) over the same subprotocol. A dialog
/// waits as long as the client takes (the reference sets no timeout), and the run's abort
/// ends it.
impl knightcode_runtime::dialogs::Dialogs for UiBridge {
    fn select<'a>(
        &'a self,
        title: &'a str,
        options: Vec<String>,
        cancel: &'a CancellationToken,
    ) -> knightcode_agent::HookFuture<'a, Option<String>> {
        Box::pin(async move {
            let dialog = DialogOptions {
                timeout: None,
                signal: Some(cancel.clone()),
            };
            UiBridge::select(self, title, options, &dialog).await
        })
    }

    fn notify<'a>(
        &'a self,
        message: &'a str,
        kind: knightcode_runtime::dialogs::NoticeKind,
    ) -> knightcode_agent::HookFuture<'a, ()> {
        use knightcode_runtime::dialogs::NoticeKind;
        let kind = match kind {
            NoticeKind::Info => NotifyType::Info,
            NoticeKind::Warning => NotifyType::Warning,
            NoticeKind::Error => NotifyType::Error,
        };
        Box::pin(async move {
            // A closed output only means nobody would see it.
            let _ = UiBridge::notify(self, message, Some(kind)).await;
        })
    }

    fn set_editor_text<'a>(&'a self, text: &'a str) -> knightcode_agent::HookFuture<'a, ()> {
        Box::pin(async move {
            let _ = UiBridge::set_editor_text(self, text).await;
        })
    }

    fn has_ui(&self) -> bool {
        true
    }

    fn extension_ui(
        &self,
        request: UiRequestKind,
        timeout: Option<Duration>,
        cancel: CancellationToken,
    ) -> knightcode_agent::HookFuture<'static, Option<UiReply>> {
        let dialog = DialogOptions {
            timeout,
            signal: Some(cancel),
        };
        Box::pin(self.issue(request, dialog))
    }
}
