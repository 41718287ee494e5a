//! How extensions act on the session from their own thread: commands into the session's
//! inbox (`pi.sendUserMessage`, `pi.setModel`, …), what the session last reported (model,
//! tools, system prompt) and the front end's dialogs. The actor binds it when it spawns.

use tokio::sync::mpsc;
use tokio::sync::oneshot;

use knightcode_ai::ThinkingLevel;
use knightcode_ext::PortError;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;

use crate::actor::Command;
use crate::actor::Envelope;
use crate::actor::Queueing;
use crate::actor::Reply;
use crate::actor::Responder;
use crate::agent_session::operations::SessionView;

/// How extensions act on the session from their thread (`pi.sendUserMessage`,
/// `pi.setActiveTools`): commands into the session's own inbox, bound when the session is
/// spawned, and the active tool list as last set. It holds the inbox weakly, so it never
/// keeps a session alive whose front ends have all gone.
pub(crate) struct ExtensionActions {
    inbox: std::sync::OnceLock<mpsc::WeakUnboundedSender<Envelope>>,
    active_tools: std::sync::Mutex<Vec<String>>,
    /// Every tool the session has, so `setActiveTools` can leave unknown names out at once.
    registered: std::sync::Mutex<Option<Vec<String>>>,
    /// The model (as JSON) and thinking level, as the session last reported them.
    selection: std::sync::Mutex<Option<(serde_json::Value, String)>>,
    /// Model and level changes made before the session was spawned (from `session_start`
    /// at start-up), sent when it is.
    pending: std::sync::Mutex<Vec<Command>>,
    /// Who answers `ctx.ui` (the front end sets it after the extensions loaded).
    dialogs: std::sync::Mutex<std::sync::Arc<dyn crate::dialogs::Dialogs>>,
    /// The session as the actor last saw it (`ctx.isIdle`, `ctx.getContextUsage`, …), so
    /// those synchronous reads never wait for the actor, which may be waiting for them.
    view: std::sync::Mutex<Option<SessionView>>,
    /// `ctx.shutdown()`: the front end ends the process in order (RPC mode).
    shutdown: std::sync::Arc<tokio::sync::Notify>,
    /// Early UI (RPC mode): `session_start` at startup runs before the front end set its
    /// dialogs. `hasUI` is already true then, and the fire-and-forget requests made wait here
    /// until the dialogs are set, which issues them before any later request.
    early_ui: std::sync::Mutex<EarlyUi>,
    /// The system prompt of the current (or last) run (`ctx.getSystemPrompt()`).
    system_prompt: std::sync::Mutex<String>,
    /// What the base system prompt is built from (`ctx.getSystemPromptOptions()`).
    prompt_options: std::sync::Mutex<serde_json::Value>,
    /// `sendMessage(…, {deliverAs: "nextTurn"})`: context for the next prompt.
    next_turn: std::sync::Mutex<Vec<AgentMessage>>,
    /// `setActiveTools` before the session runs (from `session_start`), for its start.
    early_active_tools: std::sync::Mutex<Option<Vec<String>>>,
    /// The registry extensions see (`ctx.modelRegistry`).
    models: std::sync::OnceLock<crate::extensions::models::SharedModels>,
}

impl Default for ExtensionActions {
    fn default() -> Self {
        Self {
            inbox: std::sync::OnceLock::new(),
            active_tools: std::sync::Mutex::default(),
            registered: std::sync::Mutex::new(None),
            dialogs: std::sync::Mutex::new(std::sync::Arc::new(crate::dialogs::NoDialogs)),
            view: std::sync::Mutex::new(None),
            shutdown: std::sync::Arc::default(),
            early_ui: std::sync::Mutex::default(),
            system_prompt: std::sync::Mutex::default(),
            prompt_options: std::sync::Mutex::default(),
            next_turn: std::sync::Mutex::default(),
            early_active_tools: std::sync::Mutex::default(),
            models: std::sync::OnceLock::new(),
            selection: std::sync::Mutex::default(),
            pending: std::sync::Mutex::default(),
        }
    }
}

/// See [`ExtensionActions::expect_ui`].
#[derive(Default)]
struct EarlyUi {
    expected: bool,
    set: bool,
    queued: Vec<knightcode_protocol::rpc::UiRequestKind>,
    /// Component news (`show`, `lines`, `close`) from before the dialogs were set.
    components: Vec<serde_json::Value>,
}

impl std::fmt::Debug for ExtensionActions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionActions").finish_non_exhaustive()
    }
}

impl ExtensionActions {
    pub(crate) fn bind(&self, inbox: &mpsc::UnboundedSender<Envelope>) {
        // A session is spawned once; a second bind has nothing to add.
        let _ = self.inbox.set(inbox.downgrade());
        let pending = std::mem::take(
            &mut *self
                .pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for command in pending {
            let _ = inbox.send(Envelope {
                command,
                responder: Responder::Nobody,
            });
        }
    }

    /// The model and thinking level extensions see (`ctx.model`, `getThinkingLevel`).
    pub(crate) fn selection(&self) -> Option<(serde_json::Value, String)> {
        self.selection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn note_selection(&self, model: serde_json::Value, thinking: &str) {
        *self
            .selection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((model, thinking.to_owned()));
    }

    /// `pi.setModel`: switches once a running prompt has finished.
    pub(crate) fn set_model(&self, provider: &str, model_id: &str) -> Result<(), PortError> {
        let command = Command::SetModelForSession {
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
        };
        self.command_or_pending(command, "setModel")
    }

    /// `pi.setThinkingLevel` (clamped to the model by the session).
    pub(crate) fn set_thinking_level(&self, level: ThinkingLevel) -> Result<(), PortError> {
        self.command_or_pending(
            Command::SetThinkingLevelForSession(level),
            "setThinkingLevel",
        )
    }

    /// As [`Self::command`]; before the session is spawned the command waits for it.
    fn command_or_pending(&self, command: Command, what: &str) -> Result<(), PortError> {
        if self.inbox.get().is_none() {
            self.pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(command);
            return Ok(());
        }
        self.command(command, what)
    }

    /// `ctx.shutdown()`: a permit is kept until the front end asks.
    pub(crate) fn request_shutdown(&self) {
        self.shutdown.notify_one();
    }

    pub(crate) fn shutdown_signal(&self) -> std::sync::Arc<tokio::sync::Notify> {
        std::sync::Arc::clone(&self.shutdown)
    }

    pub(crate) fn note_system_prompt(&self, prompt: &str) {
        prompt.clone_into(
            &mut self
                .system_prompt
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
    }

    pub(crate) fn note_prompt_options(&self, options: serde_json::Value) {
        *self
            .prompt_options
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = options;
    }

    pub(crate) fn prompt_options(&self) -> serde_json::Value {
        self.prompt_options
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn system_prompt(&self) -> String {
        self.system_prompt
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// A front end with a UI will set its dialogs once the session has started (RPC mode).
    pub(crate) fn expect_ui(&self) {
        self.early_ui
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .expected = true;
    }

    pub(crate) fn set_dialogs(&self, dialogs: std::sync::Arc<dyn crate::dialogs::Dialogs>) {
        *self
            .dialogs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = std::sync::Arc::clone(&dialogs);
        // The queued requests are issued in order while the lock is held, so no later request
        // (which must take the lock to see `set`) can be written before them. Fire-and-forget
        // requests are written when issued; the wait only matters when the output is full.
        let mut early = self
            .early_ui
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        early.set = true;
        for message in std::mem::take(&mut early.components) {
            dialogs.extension_component(message);
        }
        let never = tokio_util::sync::CancellationToken::new();
        for request in std::mem::take(&mut early.queued) {
            let written = dialogs.extension_ui(request, None, never.clone());
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(written);
            }
        }
    }

    /// An extension component's news: to the dialogs, or kept until an expected front
    /// end has set them (components made in `session_start`).
    pub(crate) fn extension_component(&self, message: serde_json::Value) {
        {
            let mut early = self
                .early_ui
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if early.expected && !early.set {
                early.components.push(message);
                return;
            }
        }
        self.dialogs().extension_component(message);
    }

    /// Whether `ctx.hasUI` (also before an expected front end set its dialogs).
    pub(crate) fn has_ui(&self) -> bool {
        let early = self
            .early_ui
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (early.expected && !early.set) || self.dialogs().has_ui()
    }

    /// A `ctx.ui` request: to the dialogs, or queued while an expected front end has not set
    /// them yet (a dialog then gets its default: nobody could answer before the session
    /// started).
    pub(crate) fn extension_ui(
        &self,
        request: knightcode_protocol::rpc::UiRequestKind,
        timeout: Option<std::time::Duration>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> knightcode_agent::HookFuture<'static, Option<knightcode_protocol::rpc::UiReply>> {
        {
            let mut early = self
                .early_ui
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if early.expected && !early.set {
                if !request.expects_response() {
                    early.queued.push(request);
                }
                return Box::pin(std::future::ready(None));
            }
        }
        // Issued now (see `Dialogs::extension_ui`): the caller's order is the client's order.
        self.dialogs().extension_ui(request, timeout, cancel)
    }

    pub(crate) fn dialogs(&self) -> std::sync::Arc<dyn crate::dialogs::Dialogs> {
        std::sync::Arc::clone(
            &self
                .dialogs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    pub(crate) fn note_view(&self, view: &SessionView) {
        *self
            .view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(view.clone());
    }

    pub(crate) fn view(&self) -> Option<SessionView> {
        self.view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Sends `command` and waits for its reply (`ctx.newSession`, `ctx.waitForIdle`, …).
    pub(crate) fn request(
        &self,
        command: Command,
        what: &str,
    ) -> impl std::future::Future<Output = Result<Reply, PortError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let sent = self
            .inbox
            .get()
            .and_then(mpsc::WeakUnboundedSender::upgrade)
            .ok_or_else(|| PortError::NotRunning {
                what: what.to_owned(),
            })
            .and_then(|inbox| {
                inbox
                    .send(Envelope {
                        command,
                        responder: Responder::Oneshot(tx),
                    })
                    .map_err(|_| PortError::Ended {
                        what: what.to_owned(),
                    })
            });
        let what = what.to_owned();
        async move {
            sent?;
            rx.await.map_err(|_| PortError::Ended {
                what: what.to_owned(),
            })
        }
    }

    /// A new session (its header naming `parent_session`), then `text` as its first prompt:
    /// queued behind what runs now (`/plan approve fresh`).
    pub(crate) fn new_session_with_prompt(
        &self,
        parent_session: Option<String>,
        text: String,
    ) -> Result<(), PortError> {
        self.command(Command::NewSession { parent_session }, "newSession")?;
        let prompt = Command::Prompt {
            text,
            images: Vec::new(),
            queueing: None,
            source: crate::hooks::InputSource::Extension,
        };
        self.command(prompt, "newSession")
    }

    /// An extension command finished: its prompt is answered in order with the events.
    pub(crate) fn command_done(&self, responder: Responder) {
        if let Some(inbox) = self
            .inbox
            .get()
            .and_then(mpsc::WeakUnboundedSender::upgrade)
        {
            let _ = inbox.send(Envelope {
                command: Command::ExtensionCommandDone,
                responder,
            });
        }
    }

    fn command(&self, command: Command, what: &str) -> Result<(), PortError> {
        let inbox = self
            .inbox
            .get()
            .and_then(mpsc::WeakUnboundedSender::upgrade)
            .ok_or_else(|| PortError::NotRunning {
                what: what.to_owned(),
            })?;
        inbox
            .send(Envelope {
                command,
                responder: Responder::Nobody,
            })
            .map_err(|_| PortError::Ended {
                what: what.to_owned(),
            })
    }

    /// `registerProvider`/`unregisterProvider` after loading.
    /// The registry extensions see takes it at once (so `ctx.modelRegistry` and
    /// `pi.setModel` find the models right after); the session's follows in order.
    pub(crate) fn extension_provider(
        &self,
        name: &str,
        spec: Option<knightcode_ext::ProviderSpec>,
    ) -> Result<(), PortError> {
        if let Some(models) = self.models.get() {
            match &spec {
                Some(spec) => models
                    .register(spec)
                    .map_err(|e| PortError::Invalid(e.to_string()))?,
                None => models.unregister(name),
            }
        }
        let command = Command::ExtensionProvider {
            name: name.to_owned(),
            spec: spec.map(Box::new),
        };
        // From `session_start` the session is not spawned yet: the change waits for it.
        self.command_or_pending(command, "registerProvider")
    }

    /// `registerVirtualModel`/`unregisterVirtualModel` after loading, as providers are (and
    /// from `session_start` too).
    pub(crate) fn extension_virtual_model(
        &self,
        provider: &str,
        id: &str,
        model: Option<knightcode_ai::Model>,
    ) -> Result<(), PortError> {
        if let Some(models) = self.models.get() {
            models.virtual_model(provider, id, model.clone());
        }
        let command = Command::ExtensionVirtualModel {
            provider: provider.to_owned(),
            id: id.to_owned(),
            model: model.map(Box::new),
        };
        // `session_start` handlers register before the session takes commands.
        self.command_or_pending(command, "registerVirtualModel")
    }

    /// `registerMcpServer`/`unregisterMcpServer` after loading: the whole list, which the
    /// session reconciles (connecting new servers, stopping gone ones) and announces.
    pub(crate) fn mcp_servers_changed(
        &self,
        servers: Vec<knightcode_ext::McpServerSpec>,
    ) -> Result<(), PortError> {
        self.command_or_pending(Command::ExtensionMcpServers(servers), "registerMcpServer")
    }

    pub(crate) fn set_models(&self, models: crate::extensions::models::SharedModels) {
        let _ = self.models.set(models);
    }

    /// `registerTool` after `session_start`: the session takes up the new tools.
    pub(crate) fn refresh_tools(&self) -> Result<(), PortError> {
        self.command(Command::RefreshExtensionTools, "refreshTools")
    }

    /// The tools the model is offered, as the session last reported them.
    pub(crate) fn active_tools(&self) -> Vec<String> {
        self.active_tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Called by the session whenever its active tool list changes.
    pub(crate) fn note_active_tools(&self, names: &[String]) {
        *self
            .active_tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = names.to_vec();
    }

    pub(crate) fn note_registered_tools(&self, names: Vec<String>) {
        *self
            .registered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(names);
    }

    /// Offers exactly these tools (the registered ones among them) from the next request
    /// on (after a running prompt); `active_tools` says so at once.
    pub(crate) fn set_active_tools(&self, names: &[String]) -> Result<(), PortError> {
        let registered = self
            .registered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let known: Vec<String> = match registered {
            Some(registered) => names
                .iter()
                .filter(|name| registered.contains(name))
                .cloned()
                .collect(),
            None => names.to_vec(),
        };
        self.note_active_tools(&known);
        if self.inbox.get().is_none() {
            // The session is still starting (`session_start`): it takes the list up
            // when it builds its tools.
            *self
                .early_active_tools
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(known);
            return Ok(());
        }
        self.command(Command::SetActiveTools(known), "setActiveTools")
    }

    pub(crate) fn take_early_active_tools(&self) -> Option<Vec<String>> {
        self.early_active_tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// `pi.sendMessage`: see [`Command::SendCustomMessage`]; `nextTurn` messages wait
    /// here for the next prompt.
    pub(crate) fn send_custom_message(
        &self,
        message: AgentMessage,
        deliver_as: Option<&str>,
        trigger_turn: bool,
    ) -> Result<(), PortError> {
        if deliver_as == Some("nextTurn") {
            self.next_turn
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(message);
            return Ok(());
        }
        let command = Command::SendCustomMessage {
            message: Box::new(message),
            trigger_turn,
            follow_up: deliver_as == Some("followUp"),
        };
        self.command(command, "sendMessage")
    }

    /// The `nextTurn` messages, taken by the prompt that starts next.
    pub(crate) fn take_next_turn(&self) -> Vec<AgentMessage> {
        std::mem::take(
            &mut *self
                .next_turn
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Runs `text` as a prompt now, or queues it (steering or a follow-up) while a run
    /// goes on. `Err` with the reason when the session is not running.
    pub(crate) fn send_user_message(
        &self,
        text: String,
        images: Vec<ContentBlock>,
        steer: bool,
        as_typed: bool,
    ) -> Result<(), PortError> {
        let queueing = if steer {
            Queueing::Steer
        } else {
            Queueing::FollowUp
        };
        let command = Command::Prompt {
            text,
            images,
            queueing: Some(queueing),
            source: if as_typed {
                crate::hooks::InputSource::ExtensionTyped
            } else {
                crate::hooks::InputSource::Extension
            },
        };
        self.command(command, "sendUserMessage")
    }
}
