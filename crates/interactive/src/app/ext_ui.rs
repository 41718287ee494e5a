//! Extensions' `ctx.ui` in the terminal: dialogs in the editor's place, notices in the
//! transcript, statuses in the footer, string widgets above or below the editor, the
//! window title and the editor's text.
//!
//! The session's extension host runs on other tasks; [`TuiDialogs`] (the session's
//! [`Dialogs`]) sends each request to the app's loop and, for a dialog, waits for the
//! answer, its timeout or its abort. A dialog that times out or is aborted is taken off
//! the screen; one the user closes answers `Cancelled`.

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use knightcode_agent::HookFuture;
use knightcode_protocol::rpc::NotifyType;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use knightcode_protocol::rpc::WidgetPlacement;
use knightcode_runtime::dialogs::Dialogs;
use knightcode_runtime::dialogs::NoticeKind;
use tokio::sync::mpsc;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::input::Action;
use super::overlay::Overlay;
use super::ui::Ui;
use crate::pickers::ExtensionDialog;

/// What the session's side sends the loop.
#[derive(Debug)]
pub enum ExtUiMessage {
    Request {
        id: u64,
        request: UiRequestKind,
        /// Where a dialog's answer goes (`None` for the fire-and-forget kinds).
        reply: Option<oneshot::Sender<UiReply>>,
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

/// An extension's component in the editor's place (`ctx.ui.custom`): its last lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsPanel {
    pub id: u64,
    pub lines: Vec<String>,
}

/// An extension's overlay (`ctx.ui.custom(…, { overlay: true })`, `tui.showOverlay`):
/// drawn over the screen where the extension's layout put it, not in the editor's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloatingPanel {
    pub id: u64,
    pub lines: Vec<String>,
    /// Unknown until its first lines arrive.
    pub at: Option<Placement>,
}

/// Where a floating panel sits on the visible screen (`js/ui.js` resolves the reference's
/// overlay options: anchor, width, margins, offsets, percentages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub row: usize,
    pub col: usize,
    pub width: usize,
}

impl Placement {
    fn from_message(message: &serde_json::Value) -> Option<Self> {
        let at = message.get("at")?;
        let number = |key: &str| {
            at.get(key)
                .and_then(serde_json::Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
        };
        Some(Self {
            row: number("row")?,
            col: number("col")?,
            width: number("width")?,
        })
    }
}

/// A dialog waiting for the screen, or on it.
pub struct PendingDialog {
    pub id: u64,
    pub dialog: ExtensionDialog,
    pub reply: Option<oneshot::Sender<UiReply>>,
}

impl PendingDialog {
    /// Sends the answer (once; a dialog closed some other way answers nothing, which
    /// the waiting side reads as cancelled).
    pub fn answer(&mut self, reply: UiReply) {
        if let Some(tx) = self.reply.take() {
            let _ = tx.send(reply);
        }
    }
}

/// Widgets show at most this many lines each (as in the reference).
const MAX_WIDGET_LINES: usize = 10;

/// A widget's lines: strings an extension set (wrapped like text), or the last lines of
/// its component (shown as they are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Widget {
    pub key: String,
    pub lines: Vec<String>,
    pub below: bool,
    pub component: Option<u64>,
}

/// What extensions put on the screen, kept by the app.
pub struct ExtensionUi {
    pub rx: mpsc::UnboundedReceiver<ExtUiMessage>,
    queue: VecDeque<PendingDialog>,
    /// `ctx.ui.custom` components waiting for the editor's place.
    panels: VecDeque<JsPanel>,
    /// `setTitle`: replaces the window title the app would set.
    pub title: Option<String>,
    /// `setWorkingMessage`: the working row's text while the agent works.
    pub working_message: Option<String>,
    /// An extension listens to raw input (`onTerminalInput`): keys go to it first.
    pub input_listened: bool,
    /// Input the listeners gave back is being handled (it does not go to them again).
    pub replaying: bool,
    /// Extensions waiting for their new session or branch to be on screen.
    pub replaced: Vec<oneshot::Sender<()>>,
    /// Extensions' autocomplete providers.
    pub completion: super::ext_complete::ExtensionCompletion,
    /// Input arrived since the last extension message: the next one (a component's answer
    /// to a key) is drawn at once. Others wait for the frame slot, so a component that
    /// renders on every streamed token, or ten widgets on one timer, cost one frame per slot
    /// instead of one each.
    pub answer_due: bool,
}

impl ExtensionUi {
    pub fn new(rx: mpsc::UnboundedReceiver<ExtUiMessage>) -> Self {
        Self {
            rx,
            queue: VecDeque::new(),
            panels: VecDeque::new(),
            title: None,
            working_message: None,
            input_listened: false,
            replaying: false,
            replaced: Vec::new(),
            completion: super::ext_complete::ExtensionCompletion::default(),
            answer_due: false,
        }
    }
}

/// The strings of `message[key]` (component lines, spinner frames); `None` when absent.
fn string_list(message: &serde_json::Value, key: &str) -> Option<Vec<String>> {
    message.get(key)?.as_array().map(|items| {
        items
            .iter()
            .map(|item| item.as_str().unwrap_or("").to_owned())
            .collect()
    })
}

/// A status as the footer shows it: one line, runs of spaces collapsed.
fn status_line(text: &str) -> String {
    text.replace(['\r', '\n', '\t'], " ")
        .split(' ')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Ui {
    pub fn on_extension_ui(&mut self, message: ExtUiMessage) -> Vec<Action> {
        let mut actions = Vec::new();
        let paced = matches!(
            message,
            ExtUiMessage::Component(_) | ExtUiMessage::Request { reply: None, .. }
        );
        match message {
            ExtUiMessage::Dismiss(id) => {
                let on_screen =
                    matches!(&self.screen.overlay, Some(Overlay::Extension(p)) if p.id == id);
                if on_screen {
                    self.screen.overlay = None;
                } else {
                    self.ext_ui.queue.retain(|p| p.id != id);
                }
                self.show_queued_dialog();
            }
            ExtUiMessage::Request { id, request, reply } => self.on_ui_request(id, request, reply),
            ExtUiMessage::Component(message) => actions = self.on_component(&message),
            ExtUiMessage::Terminal { lend, done } => {
                self.lend_terminal(lend);
                let _ = done.send(());
            }
            ExtUiMessage::SessionReplaced(shown) => {
                self.ext_ui.replaced.push(shown);
                let then = super::actions::AfterReload {
                    answer_extensions: true,
                    ..super::actions::AfterReload::default()
                };
                self.send(
                    knightcode_runtime::Command::Snapshot,
                    super::actions::Pending::Snapshot { reload: true, then },
                );
            }
        }
        if std::mem::take(&mut self.ext_ui.answer_due) || !paced {
            self.mark_urgent();
        } else {
            self.mark_dirty();
        }
        actions
    }

    fn on_ui_request(
        &mut self,
        id: u64,
        request: UiRequestKind,
        reply: Option<oneshot::Sender<UiReply>>,
    ) {
        let theme = self.screen.theme.clone();
        let dialog = match request {
            UiRequestKind::Select { title, options, .. } => {
                ExtensionDialog::select(&title, options, theme, &self.bindings)
            }
            UiRequestKind::Confirm { title, message, .. } => {
                ExtensionDialog::confirm(&title, &message, theme, &self.bindings)
            }
            UiRequestKind::Input {
                title, placeholder, ..
            } => ExtensionDialog::input(&title, placeholder, theme, &self.bindings),
            UiRequestKind::Editor { title, prefill } => ExtensionDialog::editor(
                &title,
                prefill.as_deref().unwrap_or(""),
                theme,
                &self.bindings,
            ),
            UiRequestKind::Notify {
                message,
                notify_type,
            } => {
                match notify_type {
                    Some(NotifyType::Error) => self.error(&message),
                    Some(NotifyType::Warning) => self.warn(&message),
                    _ => self.info(&message),
                }
                return;
            }
            UiRequestKind::SetStatus {
                status_key,
                status_text,
            } => {
                let statuses = &mut self.screen.footer.extension_statuses;
                match status_text {
                    Some(text) => statuses.insert(status_key, status_line(&text)),
                    None => statuses.remove(&status_key),
                };
                return;
            }
            UiRequestKind::SetWidget {
                widget_key,
                widget_lines,
                widget_placement,
            } => {
                self.set_widget(widget_key, widget_lines, widget_placement);
                return;
            }
            UiRequestKind::SetTitle { title } => {
                self.ext_ui.title = Some(title);
                self.refresh_title();
                return;
            }
            UiRequestKind::SetEditorText { text } => {
                self.screen.editor.set_text(&text);
                return;
            }
        };
        self.ext_ui
            .queue
            .push_back(PendingDialog { id, dialog, reply });
        self.show_queued_dialog();
    }

    fn set_widget(
        &mut self,
        key: String,
        lines: Option<Vec<String>>,
        placement: Option<WidgetPlacement>,
    ) {
        // String widgets only: a component widget of the key comes and goes with its
        // component (`show` / `close`).
        let widgets = &mut self.screen.widgets;
        let Some(mut lines) = lines else {
            widgets.retain(|w| w.key != key || w.component.is_some());
            return;
        };
        if lines.len() > MAX_WIDGET_LINES {
            lines.truncate(MAX_WIDGET_LINES);
            lines.push(self.screen.theme.muted.paint("... (widget truncated)"));
        }
        let below = matches!(placement, Some(WidgetPlacement::BelowEditor));
        match widgets
            .iter_mut()
            .find(|w| w.key == key && w.component.is_none())
        {
            Some(widget) if widget.below == below => widget.lines = lines,
            _ => {
                widgets.retain(|w| w.key != key || w.component.is_some());
                widgets.push(Widget {
                    key,
                    lines,
                    below,
                    component: None,
                });
            }
        }
    }

    fn on_component(&mut self, message: &serde_json::Value) -> Vec<Action> {
        use serde_json::Value;
        let id = message.get("id").and_then(Value::as_u64).unwrap_or(0);
        let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or("");
        let lines = || string_list(message, "lines").unwrap_or_default();
        match text("op") {
            "show" => match text("kind") {
                "custom" if message.get("overlay").and_then(Value::as_bool) == Some(true) => {
                    // Overlays show at once, over whatever else is there; `layers` orders
                    // them and says which one takes the keys.
                    self.screen.floating.push(FloatingPanel {
                        id,
                        lines: Vec::new(),
                        at: None,
                    });
                }
                "custom" => {
                    self.ext_ui.panels.push_back(JsPanel {
                        id,
                        lines: Vec::new(),
                    });
                    self.show_queued_dialog();
                }
                "widget" => {
                    let key = text("key").to_owned();
                    let below = text("placement") == "belowEditor";
                    let widgets = &mut self.screen.widgets;
                    widgets.retain(|w| w.key != key);
                    widgets.push(Widget {
                        key,
                        lines: Vec::new(),
                        below,
                        component: Some(id),
                    });
                }
                "editor" => {
                    self.screen.custom_editor = Some((id, Vec::new()));
                    // What was typed before the extension's editor reached the screen (its
                    // `session_start` request waits for the terminal) moves into it.
                    let typed = self.screen.editor.text();
                    if !typed.is_empty()
                        && let Some(channel) = &self.components
                    {
                        channel.set_editor_text(&typed);
                        self.screen.editor.clear();
                    }
                }
                "footer" => self.screen.custom_footer = Some((id, Vec::new())),
                "header" => self.screen.custom_header = Some((id, Vec::new())),
                _ => {}
            },
            "lines" => {
                let lines = lines();
                if let Some(panel) = self.screen.floating.iter_mut().find(|p| p.id == id) {
                    panel.lines = lines;
                    panel.at = Placement::from_message(message).or(panel.at);
                    self.mark_dirty();
                    return Vec::new();
                }
                match &mut self.screen.overlay {
                    Some(Overlay::Js(panel)) if panel.id == id => panel.lines = lines,
                    _ => {
                        if let Some(panel) = self.ext_ui.panels.iter_mut().find(|p| p.id == id) {
                            panel.lines = lines;
                        } else if let Some(widget) = self
                            .screen
                            .widgets
                            .iter_mut()
                            .find(|w| w.component == Some(id))
                        {
                            widget.lines = lines;
                        } else if let Some((_, shown)) =
                            self.screen.custom_footer.as_mut().filter(|(f, _)| *f == id)
                        {
                            *shown = lines;
                        } else if let Some((_, shown)) =
                            self.screen.custom_editor.as_mut().filter(|(e, _)| *e == id)
                        {
                            *shown = lines;
                        } else if let Some((_, shown)) =
                            self.screen.custom_header.as_mut().filter(|(h, _)| *h == id)
                        {
                            *shown = lines;
                        }
                    }
                }
            }
            "tool" => {
                let custom = crate::transcript::CustomLines {
                    call: string_list(message, "call"),
                    result: string_list(message, "result"),
                    result_renderer: message.get("resultRenderer").and_then(Value::as_bool)
                        == Some(true),
                    framed: text("shell") != "self",
                };
                if self
                    .screen
                    .transcript
                    .set_custom_tool_lines(text("toolCallId"), custom)
                {
                    self.mark_dirty();
                }
            }
            "working" => {
                self.ext_ui.working_message = message
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if self.running && !self.compacting {
                    self.set_working(Some("Working…"));
                }
            }
            "workingIndicator" => {
                self.screen.spinner = string_list(message, "frames");
                self.mark_dirty();
            }
            "autocomplete" => self.extension_completion_added(),
            "completions" => self.on_extension_completions(message),
            "terminalInput" => {
                self.ext_ui.input_listened =
                    message.get("listening").and_then(Value::as_bool) == Some(true);
            }
            "reinput" => {
                let mut parser = knightcode_tui::InputParser::new();
                let mut events = parser.feed(text("data").as_bytes());
                events.extend(parser.flush_pending());
                self.ext_ui.replaying = true;
                let mut actions = Vec::new();
                for event in events {
                    actions.extend(self.on_input(event));
                }
                self.ext_ui.replaying = false;
                return actions;
            }
            "thinkingLabel" => {
                let look = &mut self.screen.transcript.look;
                look.hidden_thinking_label = message
                    .get("label")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.screen.transcript.invalidate();
                self.request_full_redraw();
            }
            "workingVisible" => {
                self.screen.working_visible =
                    message.get("visible").and_then(Value::as_bool) != Some(false);
                self.mark_dirty();
            }
            "toolsExpanded" => {
                let expanded = message.get("expanded").and_then(Value::as_bool) == Some(true);
                if self.screen.transcript.look.tools_expanded != expanded {
                    self.screen.transcript.look.tools_expanded = expanded;
                    self.screen.transcript.invalidate();
                    self.request_tool_renders(None);
                    self.request_full_redraw();
                }
            }
            "setTheme" => {
                let name = text("name").to_owned();
                self.preview_theme(&name);
            }
            "message" => {
                let key = message
                    .get("key")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                let key = usize::try_from(key).unwrap_or(usize::MAX);
                if self
                    .screen
                    .transcript
                    .set_custom_message_lines(key, lines())
                {
                    self.mark_dirty();
                }
            }
            "layers" => self.set_layers(message),
            "close" => {
                if matches!(&self.screen.overlay, Some(Overlay::Js(panel)) if panel.id == id) {
                    self.screen.overlay = None;
                }
                self.screen.floating.retain(|p| p.id != id);
                if self.screen.floating_focus == Some(id) {
                    self.screen.floating_focus = None;
                }
                if let Some(layers) = message.get("layers") {
                    self.set_layers(layers);
                }
                self.ext_ui.panels.retain(|p| p.id != id);
                self.screen.widgets.retain(|w| w.component != Some(id));
                if self
                    .screen
                    .custom_footer
                    .as_ref()
                    .is_some_and(|(f, _)| *f == id)
                {
                    self.screen.custom_footer = None;
                }
                if self
                    .screen
                    .custom_header
                    .as_ref()
                    .is_some_and(|(h, _)| *h == id)
                {
                    self.screen.custom_header = None;
                }
                if self
                    .screen
                    .custom_editor
                    .as_ref()
                    .is_some_and(|(e, _)| *e == id)
                {
                    self.screen.custom_editor = None;
                }
                self.show_queued_dialog();
            }
            "submit" => {
                let text = text("text").to_owned();
                if !text.trim().is_empty() {
                    self.screen.editor.add_to_history(&text);
                    return vec![Action::Submit(text)];
                }
            }
            "appAction" => return self.on_editor_action(text("action"), text("text")),
            _ => {}
        }
        Vec::new()
    }

    /// An app key an extension's editor handed back (its action handlers), with the
    /// editor's text at the time.
    fn on_editor_action(&mut self, action: &str, text: &str) -> Vec<Action> {
        let clear = |ui: &Ui| {
            if let Some(channel) = &ui.components {
                channel.set_editor_text("");
            }
        };
        match action {
            "app.exit" => vec![Action::Quit],
            "app.clear" if !text.is_empty() => {
                clear(self);
                Vec::new()
            }
            "app.message.followUp" => {
                if text.trim().is_empty() {
                    return Vec::new();
                }
                clear(self);
                vec![Action::FollowUp(text.to_owned())]
            }
            _ => {
                // Everything else does what its key does with our own editor empty.
                let Some(binding) = self.bindings.keys_for(action).first() else {
                    return Vec::new();
                };
                let key = knightcode_tui::Key::new(binding.code(), binding.modifiers());
                self.on_app_key(&key)
            }
        }
    }

    /// Asks extensions to draw tool call `id` (or every tool card) with their renderers,
    /// and every custom message with theirs.
    pub fn request_tool_renders(&mut self, id: Option<&str>) {
        let Some(channel) = &self.components else {
            return;
        };
        let width = self.screen_width();
        let renderers = channel.renderers();
        let requests = self
            .screen
            .transcript
            .tool_render_requests(id, width, |name| renderers.draws_tool(name));
        for request in requests {
            channel.render_tool(&request);
        }
        if id.is_none() {
            self.request_message_renders();
        }
    }

    /// Asks extensions to draw the custom messages with their message renderers.
    pub fn request_message_renders(&mut self) {
        let Some(channel) = &self.components else {
            return;
        };
        let width = self.screen_width();
        let expanded = self.screen.transcript.look.tools_expanded;
        let renderers = channel.renderers();
        let requests = self
            .screen
            .transcript
            .custom_message_requests(|custom_type| renderers.draws_message(custom_type));
        for (key, message) in requests {
            channel.render_message(key, &message, expanded, width);
        }
    }

    /// The overlays' order (`order`: ids, bottom first) and the one that takes the keys
    /// (`focus`), as `js/ui.js` keeps them.
    fn set_layers(&mut self, layers: &serde_json::Value) {
        use serde_json::Value;
        let order: Vec<u64> = layers
            .get("order")
            .and_then(Value::as_array)
            .map(|ids| ids.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        // A panel the order does not name stays below the rest.
        self.screen.floating.sort_by_key(|panel| {
            order
                .iter()
                .position(|&shown| shown == panel.id)
                .map_or(0, |at| at + 1)
        });
        self.screen.floating_focus = layers.get("focus").and_then(Value::as_u64);
        self.mark_dirty();
    }

    /// Puts the next waiting dialog on screen when nothing else is there.
    pub fn show_queued_dialog(&mut self) {
        if self.screen.overlay.is_some() {
            return;
        }
        if let Some(panel) = self.ext_ui.panels.pop_front() {
            self.screen.overlay = Some(Overlay::Js(panel));
            self.mark_urgent();
        } else if let Some(pending) = self.ext_ui.queue.pop_front() {
            self.screen.overlay = Some(Overlay::Extension(pending));
            self.mark_urgent();
        }
    }
}

/// App keys extensions' shortcuts cannot take (the reference's list): a shortcut on one of
/// them is skipped with a warning; on any other app key it wins, with a warning.
const RESERVED_ACTIONS: &[&str] = &[
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.suspend",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.editor.external",
    "app.message.followUp",
    "tui.input.submit",
    "tui.select.confirm",
    "tui.select.cancel",
    "tui.input.copy",
    "tui.editor.deleteToLineEnd",
];

/// The shortcuts that apply (key and the id to run it by), and what to warn about.
pub fn resolve_shortcuts(
    bindings: &knightcode_tui::Keybindings,
    shortcuts: &[(String, String)],
) -> (Vec<(knightcode_tui::KeyBinding, String)>, Vec<String>) {
    let mut active: Vec<(knightcode_tui::KeyBinding, String, String)> = Vec::new();
    let mut warnings = Vec::new();
    for (shortcut, path) in shortcuts {
        let Ok(binding) = knightcode_tui::KeyBinding::parse(shortcut) else {
            warnings.push(format!(
                "Extension shortcut '{shortcut}' from {path} is not a key this terminal knows. Skipping."
            ));
            continue;
        };
        let taken: Vec<&str> = bindings
            .actions()
            .filter(|(_, keys)| keys.contains(&binding))
            .map(|(action, _)| action)
            .collect();
        if taken.iter().any(|a| RESERVED_ACTIONS.contains(a)) {
            warnings.push(format!(
                "Extension shortcut '{shortcut}' from {path} conflicts with built-in shortcut. Skipping."
            ));
            continue;
        }
        if let Some(action) = taken.iter().find(|a| a.starts_with("app.")) {
            warnings.push(format!(
                "Extension shortcut conflict: '{shortcut}' is built-in shortcut for {action} and {path}. Using {path}."
            ));
        }
        if let Some(at) = active.iter().position(|(b, _, _)| *b == binding) {
            let (_, _, earlier) = active.remove(at);
            warnings.push(format!(
                "Extension shortcut conflict: '{shortcut}' registered by both {earlier} and {path}. Using {path}."
            ));
        }
        active.push((binding, shortcut.clone(), path.clone()));
    }
    (
        active.into_iter().map(|(b, s, _)| (b, s)).collect(),
        warnings,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortcuts_on_reserved_keys_are_skipped_and_others_win() {
        let bindings = knightcode_tui::Keybindings::defaults();
        let shortcuts = vec![
            ("ctrl+c".to_owned(), "a.ts".to_owned()),
            ("ctrl+alt+x".to_owned(), "a.ts".to_owned()),
            ("ctrl+alt+x".to_owned(), "b.ts".to_owned()),
            ("alt+up".to_owned(), "c.ts".to_owned()),
        ];
        let (active, warnings) = resolve_shortcuts(&bindings, &shortcuts);
        let keys: Vec<&str> = active.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(keys, ["ctrl+alt+x", "alt+up"]);
        assert!(
            warnings[0].contains("'ctrl+c' from a.ts conflicts with built-in shortcut"),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("registered by both a.ts and b.ts")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("built-in shortcut for app.message.dequeue")),
            "{warnings:?}"
        );
    }

    #[test]
    fn statuses_are_one_line() {
        assert_eq!(status_line("  a\tb\n\nc  d "), "a b c d");
    }
}
