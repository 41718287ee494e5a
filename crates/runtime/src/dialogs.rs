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

/// A question the terminal asks with its own picker (a plan's review, `ask_user`): each
/// choice with its description, an optional row for a typed answer, and notes that Tab
/// adds to a choice. Front ends without that picker ask it through `select` and `input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub title: String,
    pub choices: Vec<QuestionChoice>,
    /// The label of the row that takes a typed answer instead of a choice (`None`: none).
    pub typed_answer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionChoice {
    pub label: String,
    pub description: Option<String>,
    /// Whether Tab on it opens a note that goes with the choice.
    pub takes_note: bool,
}

impl QuestionChoice {
    pub fn new(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            description: None,
            takes_note: false,
        }
    }

    pub fn described(mut self, description: Option<String>) -> Self {
        self.description = description;
        self
    }

    pub fn with_note(mut self) -> Self {
        self.takes_note = true;
        self
    }
}

/// What the user answered a [`Question`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuestionAnswer {
    /// The choice at `index`, with the note typed after Tab (never empty).
    Choice { index: usize, note: Option<String> },
    /// The text typed in the typed-answer row (never empty).
    Typed(String),
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

    /// Asks `question` with the front end's own picker; `None` when it has none (then the
    /// caller asks through `select` and `input`). The wait ends with `None` when the user
    /// dismissed the picker or `cancel` fired.
    fn ask_question(
        &self,
        question: Question,
        cancel: CancellationToken,
    ) -> Option<HookFuture<'static, Option<QuestionAnswer>>> {
        let _ = (question, cancel);
        None
    }

    /// Whether anybody answers (`ctx.hasUI`).
    fn has_ui(&self) -> bool {
        false
    }

    /// Whether the built-in commands may open menus here (the terminal). An RPC client
    /// answers extensions' dialogs, but `/mcp` and the like report to it instead.
    fn has_menus(&self) -> bool {
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

    /// News of an extension's component (terminal UI only; see [`ComponentChannel`]):
    /// `{"op": "show", "id", "kind": "custom" | "widget" | "footer" | "header", …}`,
    /// `{"op": "lines", "id", "lines"}`, `{"op": "close", "id"}`.
    fn extension_component(&self, message: serde_json::Value) {
        let _ = message;
    }

    /// An extension moved the session to another file or branch (`ctx.newSession`,
    /// `fork`, `switchSession`, `navigateTree`): done once the front end shows it.
    fn session_replaced(&self) -> HookFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    /// `tui.stop()` (`lend`) and `tui.start()`: hands the terminal to a program an
    /// extension runs and takes it back. Blocks the calling (JS) thread until done.
    fn lend_terminal(&self, lend: bool) {
        let _ = lend;
    }

    /// What the editor holds (`ctx.ui.getEditorText()`), when there is one.
    fn editor_text(&self) -> Option<String> {
        None
    }
}

/// The way back to extensions' components: keys for the focused one, the terminal's size
/// and the theme's colours. The components render in the extension host; their lines
/// come to the front end through [`Dialogs::extension_component`].
#[derive(Clone)]
pub struct ComponentChannel {
    host: std::sync::Arc<knightcode_ext::ExtensionHost>,
}

impl std::fmt::Debug for ComponentChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentChannel").finish_non_exhaustive()
    }
}

impl ComponentChannel {
    pub(crate) fn new(host: std::sync::Arc<knightcode_ext::ExtensionHost>) -> Self {
        Self { host }
    }

    /// Raw terminal input for component `id` (its `handleInput`).
    pub fn input(&self, id: u64, data: &str) {
        self.host
            .post("uiInput", &serde_json::json!({ "id": id, "data": data }));
    }

    /// Raw terminal input for the `onTerminalInput` listeners; what they leave comes back
    /// as a `reinput` component message.
    pub fn terminal_input(&self, data: &str) {
        self.host
            .post("uiTerminalInput", &serde_json::json!({ "data": data }));
    }

    pub fn resize(&self, columns: u16, rows: u16) {
        self.host.post(
            "uiResize",
            &serde_json::json!({ "columns": columns, "rows": rows }),
        );
    }

    /// Which tool calls and custom messages the extensions draw.
    pub fn renderers(&self) -> knightcode_ext::RendererSpec {
        self.host.renderers()
    }

    /// A tool call to draw with an extension's renderers, if its tool has any (the
    /// lines come back as a `{"op": "tool"}` component message).
    pub fn render_tool(&self, request: &serde_json::Value) {
        self.host.post("uiRenderTool", request);
    }

    /// A custom message to draw with an extension's message renderer, if its type has
    /// one (the lines come back as `{"op": "message", "key", "lines"}`).
    pub fn render_message(
        &self,
        key: usize,
        message: &serde_json::Value,
        expanded: bool,
        width: u16,
    ) {
        self.host.post(
            "uiRenderMessage",
            &serde_json::json!({ "key": key, "message": message, "expanded": expanded, "width": width }),
        );
    }

    /// A custom entry to draw with an extension's entry renderer, if its type has one (the
    /// lines come back as a `{"op": "message", "key", "lines"}` as for custom messages).
    pub fn render_entry(&self, key: usize, entry: &serde_json::Value, expanded: bool, width: u16) {
        self.host.post(
            "uiRenderEntry",
            &serde_json::json!({ "key": key, "entry": entry, "expanded": expanded, "width": width }),
        );
    }

    /// Markdown for the extensions' markdown transformers (`registerMarkdownTransformer`):
    /// `parts` are `{index, messageType, markdown}`; the results come back as a
    /// `{"op": "markdown", "key", "parts": [{index, markdown}]}` component message.
    pub fn transform_markdown(
        &self,
        key: usize,
        parts: &[serde_json::Value],
        is_streaming: bool,
        available_width: usize,
    ) {
        self.host.post(
            "uiTransformMarkdown",
            &serde_json::json!({
                "key": key,
                "parts": parts,
                "isStreaming": is_streaming,
                "availableWidth": available_width,
            }),
        );
    }

    /// Asks the extensions' autocomplete providers about the editor's text (`col` in
    /// UTF-16 units, as JS counts); the answer comes back as a `{"op": "completions"}`
    /// component message with the same `id`.
    pub fn complete(&self, id: u64, lines: &[String], line: usize, col: usize) {
        self.host.post(
            "uiAutocomplete",
            &serde_json::json!({ "id": id, "lines": lines, "cursorLine": line, "cursorCol": col }),
        );
    }

    /// Sets the text of an extension's replacement editor (`setEditorComponent`).
    pub fn set_editor_text(&self, text: &str) {
        self.host
            .post("uiSetEditorText", &serde_json::json!({ "text": text }));
    }

    /// Runs the handler of the shortcut registered for `shortcut` (its key id).
    pub fn run_shortcut(&self, shortcut: &str) {
        self.host
            .post("shortcut", &serde_json::json!({ "shortcut": shortcut }));
    }

    /// The extensions' keyboard shortcuts: key id and the extension's file.
    pub fn shortcuts(&self) -> Vec<(String, String)> {
        self.host
            .registry()
            .shortcuts
            .into_iter()
            .map(|s| (s.shortcut, s.extension_path))
            .collect()
    }

    /// The extensions' slash commands, for completion and to tell them from prompts.
    pub fn commands(&self) -> Vec<crate::resources::CompletionCommand> {
        self.host
            .registry()
            .commands
            .into_iter()
            .map(|command| crate::resources::CompletionCommand {
                name: command.name,
                hint: None,
                description: command.description.unwrap_or_default(),
            })
            .collect()
    }

    /// What extensions' footers read from their `footerData`: the git branch (`None`
    /// outside a repository) and how many providers have models.
    pub fn footer_data(&self, git_branch: Option<&str>, providers: usize) {
        self.host.post(
            "uiFooterData",
            &serde_json::json!({ "gitBranch": git_branch, "providers": providers }),
        );
    }

    /// The active theme as `{"name", "fg": {role: sgr}, "bg": {role: sgr}}`.
    pub fn theme(&self, table: serde_json::Value) {
        self.host.post("uiTheme", &table);
    }
}

/// Nobody to ask: dialogs answer `None`, notices go nowhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoDialogs;

impl Dialogs for NoDialogs {}
