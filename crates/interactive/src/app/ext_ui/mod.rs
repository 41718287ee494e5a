//! Extensions' `ctx.ui` in the terminal: dialogs in the editor's place, notices in the
//! transcript, statuses in the footer, string widgets above or below the editor, the
//! window title and the editor's text.
//!
//! The session's extension host runs on other tasks; [`TuiDialogs`] (the session's
//! [`Dialogs`](knightcode_runtime::dialogs::Dialogs)) sends each request to the app's loop
//! and, for a dialog, waits for the answer, its timeout or its abort. A dialog that times
//! out or is aborted is taken off the screen; one the user closes answers `Cancelled`.
//! Extensions' components (`components`) draw on the JS thread and send their lines here;
//! their shortcuts (`shortcuts`) and autocomplete providers (`completion`) take keys.

mod completion;
mod components;
mod dialogs;
mod markdown;
mod pending;
mod shortcuts;

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;

use knightcode_protocol::rpc::NotifyType;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use knightcode_protocol::rpc::WidgetPlacement;
use knightcode_runtime::dialogs::ComponentChannel;
use knightcode_tui::Key;
use knightcode_tui::KeyBinding;
use tokio::sync::mpsc;
use tokio::sync::oneshot;

use self::completion::ExtensionCompletion;
pub use self::dialogs::ExtUiMessage;
pub use self::dialogs::TuiDialogs;
pub use self::pending::PendingDialog;
use super::input::Action;
use super::overlay::Overlay;
use super::ui::Ui;
use crate::pickers::ExtensionDialog;
use crate::pickers::QuestionPicker;

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

/// What extensions put on the screen and where their requests arrive, kept by the app.
pub struct ExtensionUi {
    tx: mpsc::UnboundedSender<ExtUiMessage>,
    rx: mpsc::UnboundedReceiver<ExtUiMessage>,
    /// Keys, size and theme for extensions' components (when extensions are loaded).
    channel: Option<ComponentChannel>,
    /// Extensions' shortcuts that apply, by key.
    shortcuts: Vec<(KeyBinding, String)>,
    /// The editor's text for extensions (`ctx.ui.getEditorText()`).
    editor_text: Arc<Mutex<String>>,
    /// The git branch and provider count extensions' footers were last told (their
    /// `footerData`), so a change is sent once.
    footer_data_sent: Option<(Option<String>, usize)>,
    queue: VecDeque<PendingDialog>,
    /// `ctx.ui.custom` components waiting for the editor's place.
    panels: VecDeque<JsPanel>,
    /// `setTitle`: replaces the window title the app would set.
    title: Option<String>,
    /// `setWorkingMessage`: the working row's text while the agent works.
    working_message: Option<String>,
    /// An extension listens to raw input (`onTerminalInput`): keys go to it first.
    input_listened: bool,
    /// Input the listeners gave back is being handled (it does not go to them again).
    replaying: bool,
    /// Extensions waiting for their new session or branch to be on screen.
    replaced: Vec<oneshot::Sender<()>>,
    /// Extensions' autocomplete providers.
    completion: ExtensionCompletion,
    /// Input arrived since the last extension message: the next one (a component's answer
    /// to a key) is drawn at once. Others wait for the frame slot, so a component that
    /// renders on every streamed token, or ten widgets on one timer, cost one frame per slot
    /// instead of one each.
    answer_due: bool,
    /// Cards whose markdown is with the extensions' transformers.
    markdown: markdown::InFlight,
}

impl Default for ExtensionUi {
    fn default() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            tx,
            rx,
            channel: None,
            shortcuts: Vec::new(),
            editor_text: Arc::default(),
            footer_data_sent: None,
            queue: VecDeque::new(),
            panels: VecDeque::new(),
            title: None,
            working_message: None,
            input_listened: false,
            replaying: false,
            replaced: Vec::new(),
            completion: ExtensionCompletion::default(),
            answer_due: false,
            markdown: markdown::InFlight::default(),
        }
    }
}

impl ExtensionUi {
    /// The session's dialogs for extensions (`ctx.ui`), answered by this loop.
    pub fn dialogs(&self) -> TuiDialogs {
        TuiDialogs::new(self.tx.clone(), Arc::clone(&self.editor_text))
    }

    /// A started session's extensions (if it loaded any): their footers are told the
    /// footer's data afresh.
    pub fn connect(&mut self, channel: Option<ComponentChannel>) {
        self.channel = channel;
        self.footer_data_sent = None;
        self.markdown = markdown::InFlight::default();
    }

    /// The way to the extensions' components, when extensions are loaded.
    pub fn channel(&self) -> Option<&ComponentChannel> {
        self.channel.as_ref()
    }

    /// The next request or news from the extensions' side. Cancel-safe.
    pub async fn recv(&mut self) -> Option<ExtUiMessage> {
        self.rx.recv().await
    }

    /// Keeps the text extensions read (`getEditorText`) in step with the editor.
    pub fn share_editor_text(&self, text: String) {
        let mut shared = self
            .editor_text
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *shared != text {
            *shared = text;
        }
    }

    /// Tells extensions' footers the git branch and the number of providers, when they
    /// changed since they were last told.
    pub fn footer_data(&mut self, branch: Option<String>, providers: usize) {
        let data = (branch, providers);
        if self.footer_data_sent.as_ref() != Some(&data) {
            if let Some(channel) = &self.channel {
                channel.footer_data(data.0.as_deref(), data.1);
            }
            self.footer_data_sent = Some(data);
        }
    }

    /// `setTitle`: the window title an extension set, over the app's own.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// `setWorkingMessage`: the text that stands in for the agent's own "Working…".
    pub fn working_message(&self) -> Option<&str> {
        self.working_message.as_deref()
    }

    /// The extension shortcut `key` runs, if one applies.
    pub fn shortcut_for(&self, key: &Key) -> Option<&str> {
        self.shortcuts
            .iter()
            .find(|(binding, _)| binding.matches(key))
            .map(|(_, shortcut)| shortcut.as_str())
    }

    /// A key or paste arrived: the extensions' next answer is drawn at once.
    pub fn input_arrived(&mut self) {
        self.answer_due = self.channel.is_some();
    }

    /// Where raw input goes first (`onTerminalInput`), unless it is input the listeners
    /// gave back.
    pub fn raw_input_listener(&self) -> Option<&ComponentChannel> {
        self.channel
            .as_ref()
            .filter(|_| self.input_listened && !self.replaying)
    }

    /// Whether `text` runs an extension's command (no working row: the command shows
    /// what it does itself, and a turn it starts brings the row back).
    pub fn is_command(&self, text: &str) -> bool {
        let Some(name) = command_name(text) else {
            return false;
        };
        self.channel
            .as_ref()
            .is_some_and(|channel| channel.commands().iter().any(|c| c.name == name))
    }

    /// Whether an extension's command of this name runs instead of ours: for the commands
    /// only KnightCode has (`/tools`, `/undo`, `/trust`, …), so an extension written for the
    /// reference keeps the name it chose; the reference's own built-ins stay ours, as there.
    pub fn takes_command(&self, text: &str) -> bool {
        command_name(text).is_some_and(|name| !REFERENCE_BUILTINS.contains(&name))
            && self.is_command(text)
    }

    /// The new session or branch is on screen: the extensions that waited for it go on.
    pub fn answer_replaced(&mut self) {
        for shown in self.replaced.drain(..) {
            let _ = shown.send(());
        }
    }
}

/// `name` of a `/name args` line.
fn command_name(text: &str) -> Option<&str> {
    text.strip_prefix('/')?.split_whitespace().next()
}

/// The reference's built-in slash commands (pi 0.73's `BUILTIN_SLASH_COMMANDS`): these win
/// over an extension's command of the same name, as they do there.
const REFERENCE_BUILTINS: &[&str] = &[
    "settings",
    "model",
    "scoped-models",
    "export",
    "import",
    "share",
    "copy",
    "name",
    "session",
    "changelog",
    "hotkeys",
    "fork",
    "clone",
    "tree",
    "login",
    "logout",
    "new",
    "compact",
    "resume",
    "reload",
    "quit",
];

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
            ExtUiMessage::Question {
                id,
                question,
                reply,
            } => {
                let theme = self.screen.theme.clone();
                let picker = QuestionPicker::new(question, theme, self.prefs.bindings());
                self.ext_ui
                    .queue
                    .push_back(PendingDialog::question(id, picker, reply));
                self.show_queued_dialog();
            }
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
                ExtensionDialog::select(&title, options, theme, self.prefs.bindings())
            }
            UiRequestKind::Confirm { title, message, .. } => {
                ExtensionDialog::confirm(&title, &message, theme, self.prefs.bindings())
            }
            UiRequestKind::Input {
                title, placeholder, ..
            } => ExtensionDialog::input(&title, placeholder, theme, self.prefs.bindings()),
            UiRequestKind::Editor { title, prefill } => ExtensionDialog::editor(
                &title,
                prefill.as_deref().unwrap_or(""),
                theme,
                self.prefs.bindings(),
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
            .push_back(PendingDialog::extension(id, dialog, reply));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_one_line() {
        assert_eq!(status_line("  a\tb\n\nc  d "), "a b c d");
    }
}
