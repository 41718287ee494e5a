//! The session actions extensions call (`SessionPort`): reads and writes of the session
//! file, the session view the actor publishes, and commands to the actor for what takes time.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use knightcode_ext::PortError;
use knightcode_ext::SessionOp;
use knightcode_ext::SessionPort;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_session::SessionManager;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::agent_session::lock;

/// The session actions extensions call, over the session file.
pub(crate) struct Port {
    pub session: Arc<Mutex<SessionManager>>,
    pub model: (String, String),
    pub thinking: String,
    pub actions: Arc<crate::extensions::ExtensionActions>,
    /// `ctx.isProjectTrusted()`: the session's decision about the project's resources.
    pub project_trusted: bool,
}

/// A failure of the session itself (a refused command, a session file that could not be
/// written), as the extension sees it.
fn failed(error: impl std::fmt::Display) -> PortError {
    PortError::Failed(error.to_string())
}

/// `sendUserMessage`'s content (a string, or text and image blocks) as prompt text and
/// images.
fn user_content(content: &Value) -> Result<(String, Vec<ContentBlock>), PortError> {
    match content {
        Value::String(text) => Ok((text.clone(), Vec::new())),
        Value::Array(_) => {
            let blocks: Vec<ContentBlock> =
                serde_json::from_value(content.clone()).map_err(|e| {
                    PortError::Invalid(format!("sendUserMessage: content blocks are invalid ({e})"))
                })?;
            let text = blocks
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect::<Vec<_>>()
                .join("\n");
            let images = blocks
                .into_iter()
                .filter(|block| matches!(block, ContentBlock::Image(_)))
                .collect();
            Ok((text, images))
        }
        _ => Err(PortError::Invalid(
            "sendUserMessage: content must be a string or content blocks".to_owned(),
        )),
    }
}

/// `{"cancelled": …}` for a session replacement's reply.
fn replaced(reply: crate::actor::Reply) -> Result<Value, PortError> {
    use crate::actor::Reply;
    match reply {
        Reply::SessionReplaced { cancelled } => Ok(json!({ "cancelled": cancelled })),
        Reply::Forked { .. } | Reply::Navigated { .. } | Reply::Done => {
            Ok(json!({ "cancelled": false }))
        }
        Reply::Failed(crate::actor::CommandError::NavigationCancelled) => {
            Ok(json!({ "cancelled": true }))
        }
        Reply::Failed(error) => Err(failed(error)),
        _ => Ok(json!({ "cancelled": false })),
    }
}

/// An extension's `ctx.ui` request: the front end's answer as JS takes it (`select`,
/// `input`, `editor` → text or `null`, `confirm` → boolean, the rest `null`). The request is
/// issued now, while the extension's call runs, so requests keep the order they were made
/// in, ahead of the events the session emits afterwards; the future only waits for the
/// answer.
fn ui_request(
    actions: &crate::extensions::ExtensionActions,
    args: Value,
    cancel: CancellationToken,
) -> knightcode_ext::PortFuture {
    use knightcode_protocol::rpc::UiReply;
    use knightcode_protocol::rpc::UiRequestKind;
    let request: UiRequestKind = match serde_json::from_value(args) {
        Ok(request) => request,
        Err(e) => {
            return Box::pin(std::future::ready(Err(PortError::Invalid(format!(
                "ctx.ui: invalid request ({e})"
            )))));
        }
    };
    let timeout = match &request {
        UiRequestKind::Select { timeout, .. }
        | UiRequestKind::Confirm { timeout, .. }
        | UiRequestKind::Input { timeout, .. } => timeout.map(std::time::Duration::from_millis),
        _ => None,
    };
    let confirm = matches!(request, UiRequestKind::Confirm { .. });
    let reply = actions.extension_ui(request, timeout, cancel);
    Box::pin(async move {
        Ok(match reply.await {
            Some(UiReply::Confirmed(yes)) if confirm => Value::Bool(yes),
            Some(UiReply::Value(text)) if !confirm => Value::String(text),
            _ if confirm => Value::Bool(false),
            _ => Value::Null,
        })
    })
}

impl SessionPort for Port {
    fn call_async(
        &self,
        op: SessionOp,
        args: Value,
        cancel: CancellationToken,
    ) -> knightcode_ext::PortFuture {
        use crate::actor::Command;
        use crate::actor::Reply;
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
        let command = match op {
            SessionOp::Ui => return ui_request(&self.actions, args, cancel),
            SessionOp::WaitForIdle => Command::WaitForIdle,
            SessionOp::NewSession => Command::NewSession {
                parent_session: text("parentSession"),
            },
            SessionOp::Fork => Command::ExtensionFork {
                entry_id: text("entryId").unwrap_or_default(),
                at: text("position").as_deref() == Some("at"),
            },
            SessionOp::SwitchSession => {
                Command::SwitchSession(PathBuf::from(text("path").unwrap_or_default()))
            }
            SessionOp::NavigateTree => Command::NavigateTree {
                entry_id: text("targetId"),
                summary: (args.get("summarize").and_then(Value::as_bool) == Some(true)).then(
                    || crate::actor::SummaryRequest {
                        custom_instructions: text("customInstructions"),
                        replace_instructions: args
                            .get("replaceInstructions")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                    },
                ),
                label: text("label"),
                restore_files: false,
            },
            SessionOp::Reload => Command::Reload,
            SessionOp::ReloadContext => Command::ReloadContext,
            SessionOp::Compact => Command::Compact {
                custom_instructions: text("customInstructions"),
            },
            other => {
                return Box::pin(std::future::ready(Err(PortError::Unsupported(
                    other.to_string(),
                ))));
            }
        };
        let what = format!("ctx.{op}");
        let reply = self.actions.request(command, &what);
        let actions = Arc::clone(&self.actions);
        Box::pin(async move {
            let reply = reply.await?;
            // Another session or branch: the front end shows it before the extension goes
            // on (its `withSession` notices and editor text belong to the new one).
            let moved = matches!(
                reply,
                Reply::SessionReplaced { cancelled: false }
                    | Reply::Forked { .. }
                    | Reply::Navigated { .. }
            );
            if moved
                && matches!(
                    op,
                    SessionOp::NewSession
                        | SessionOp::Fork
                        | SessionOp::SwitchSession
                        | SessionOp::NavigateTree
                )
            {
                actions.dialogs().session_replaced().await;
            }
            match op {
                SessionOp::Compact => match reply {
                    Reply::Compacted(result) => serde_json::to_value(result).map_err(failed),
                    Reply::Failed(error) => Err(failed(error)),
                    _ => Ok(Value::Null),
                },
                SessionOp::WaitForIdle | SessionOp::Reload | SessionOp::ReloadContext => {
                    match reply {
                        Reply::Failed(error) => Err(failed(error)),
                        _ => Ok(Value::Null),
                    }
                }
                _ => replaced(reply),
            }
        })
    }

    /// Each operation goes to its family's handler; the table names every operation, so a
    /// new one does not compile until it has a home here.
    fn call(&self, op: SessionOp, args: Value) -> Result<Value, PortError> {
        use SessionOp as Op;
        match op {
            Op::HasUi
            | Op::UiComponent
            | Op::UiTerminal
            | Op::GetEditorText
            | Op::IsProjectTrusted
            | Op::GetSystemPrompt
            | Op::GetSystemPromptOptions
            | Op::IsIdle
            | Op::HasPendingMessages
            | Op::GetContextUsage
            | Op::Abort
            | Op::Shutdown
            // Before the session reported a selection, the model the port started with.
            | Op::GetModel
            | Op::GetThinkingLevel => self
                .state_call(op, &args)
                .unwrap_or_else(|| self.session_file_call(op, &args)),
            Op::SendUserMessage
            | Op::SendMessage
            | Op::SetModel
            | Op::SetThinkingLevel
            | Op::RegisterProvider
            | Op::UnregisterProvider
            | Op::RegisterVirtualModel
            | Op::UnregisterVirtualModel
            | Op::McpServersChanged
            | Op::RefreshTools
            | Op::GetActiveTools
            | Op::SetActiveTools => self.action(op, &args),
            Op::GetEntries
            | Op::GetBranch
            | Op::GetLeafId
            | Op::GetSessionFile
            | Op::GetSessionId
            | Op::GetHeader
            | Op::GetSessionName
            | Op::SetSessionName
            | Op::SetLabel
            | Op::AppendMessage
            | Op::AppendEntry
            | Op::AppendCustomMessageEntry => self.session_file_call(op, &args),
            // Answered later: `call_async`.
            Op::Ui
            | Op::WaitForIdle
            | Op::NewSession
            | Op::SwitchSession
            | Op::Fork
            | Op::NavigateTree
            | Op::Reload
            | Op::ReloadContext
            | Op::Compact => Err(PortError::Unsupported(op.to_string())),
        }
    }
}

impl Port {
    /// The UI and run-state reads and signals (`ctx.hasUI`, `ctx.isIdle()`, `ctx.abort()`,
    /// `ctx.model`, …); `None` for other ops, and for `getModel`/`getThinkingLevel` before
    /// the session reported a selection.
    fn state_call(&self, op: SessionOp, args: &Value) -> Option<Result<Value, PortError>> {
        match op {
            SessionOp::HasUi => return Some(Ok(Value::Bool(self.actions.has_ui()))),
            SessionOp::GetEditorText => {
                return Some(Ok(Value::String(
                    self.actions.dialogs().editor_text().unwrap_or_default(),
                )));
            }
            SessionOp::UiComponent => {
                self.actions.extension_component(args.clone());
                return Some(Ok(Value::Null));
            }
            SessionOp::UiTerminal => {
                let lend = args.get("lend").and_then(Value::as_bool) == Some(true);
                self.actions.dialogs().lend_terminal(lend);
                return Some(Ok(Value::Null));
            }
            SessionOp::IsProjectTrusted => return Some(Ok(Value::Bool(self.project_trusted))),
            SessionOp::GetSystemPrompt => {
                return Some(Ok(Value::String(self.actions.system_prompt())));
            }
            SessionOp::GetSystemPromptOptions => return Some(Ok(self.actions.prompt_options())),
            SessionOp::Shutdown => {
                self.actions.request_shutdown();
                return Some(Ok(Value::Null));
            }
            SessionOp::IsIdle => {
                return Some(Ok(Value::Bool(
                    self.actions.view().is_none_or(|view| !view.is_running()),
                )));
            }
            SessionOp::HasPendingMessages => {
                return Some(Ok(Value::Bool(
                    self.actions.view().is_some_and(|view| view.has_queued()),
                )));
            }
            SessionOp::Abort => {
                if let Some(view) = self.actions.view() {
                    view.abort();
                }
                return Some(Ok(Value::Null));
            }
            SessionOp::GetContextUsage => {
                let usage = self.actions.view().and_then(|view| view.context_usage());
                return Some(serde_json::to_value(usage).map_err(failed));
            }
            // The whole model as the session last reported it (`ctx.model`), else what
            // the actor's view says.
            SessionOp::GetModel => {
                if let Some((model, _)) = self.actions.selection() {
                    return Some(Ok(model));
                }
                if let Some(view) = self.actions.view() {
                    let model = view.model();
                    return Some(Ok(json!({ "provider": model.provider, "id": model.id })));
                }
            }
            SessionOp::GetThinkingLevel => {
                if let Some((_, level)) = self.actions.selection() {
                    return Some(Ok(json!(level)));
                }
                if let Some(view) = self.actions.view() {
                    return Some(Ok(json!(view.thinking_level().as_str())));
                }
            }
            _ => {}
        }
        None
    }

    /// What extensions ask the session to do (`pi.sendUserMessage`, `pi.setModel`,
    /// `pi.registerProvider`, `pi.setActiveTools`, …).
    fn action(&self, op: SessionOp, args: &Value) -> Result<Value, PortError> {
        match op {
            SessionOp::SendUserMessage => {
                let (text, images) = user_content(args.get("content").unwrap_or(&Value::Null))?;
                let steer =
                    args.pointer("/options/deliverAs").and_then(Value::as_str) == Some("steer");
                let as_typed = args
                    .pointer("/options/expandPromptTemplates")
                    .and_then(Value::as_bool)
                    == Some(true);
                self.actions
                    .send_user_message(text, images, steer, as_typed)?;
                return Ok(Value::Null);
            }
            SessionOp::SendMessage => {
                let message = args.get("message").cloned().unwrap_or(Value::Null);
                let message = super::adapter::custom_message(&message).ok_or_else(|| {
                    PortError::Invalid(
                        "sendMessage: expected {customType, content: string or content blocks, display}"
                            .to_owned(),
                    )
                })?;
                let deliver_as = args.pointer("/options/deliverAs").and_then(Value::as_str);
                let trigger = args
                    .pointer("/options/triggerTurn")
                    .and_then(Value::as_bool)
                    == Some(true);
                self.actions
                    .send_custom_message(message, deliver_as, trigger)?;
                return Ok(Value::Null);
            }
            SessionOp::SetModel => {
                let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or("");
                self.actions.set_model(text("provider"), text("id"))?;
                return Ok(Value::Null);
            }
            SessionOp::SetThinkingLevel => {
                let name = args.get("level").and_then(Value::as_str).unwrap_or("");
                let level = knightcode_ai::ThinkingLevel::parse(name).ok_or_else(|| {
                    PortError::Invalid(format!("setThinkingLevel: unknown level \"{name}\""))
                })?;
                self.actions.set_thinking_level(level)?;
                return Ok(Value::Null);
            }
            SessionOp::RegisterProvider => {
                let spec: knightcode_ext::ProviderSpec = serde_json::from_value(args.clone())
                    .map_err(|e| PortError::Invalid(format!("registerProvider: {e}")))?;
                let name = spec.name.clone();
                self.actions.extension_provider(&name, Some(spec))?;
                return Ok(Value::Null);
            }
            SessionOp::UnregisterProvider => {
                let name = args.get("name").and_then(Value::as_str).unwrap_or("");
                self.actions.extension_provider(name, None)?;
                return Ok(Value::Null);
            }
            SessionOp::RegisterVirtualModel => {
                let spec: knightcode_ext::VirtualModelSpec =
                    serde_json::from_value(args.clone())
                        .map_err(|e| PortError::Invalid(format!("registerVirtualModel: {e}")))?;
                let (provider, id) = (spec.model.provider.clone(), spec.model.id.clone());
                self.actions
                    .extension_virtual_model(&provider, &id, Some(spec.model))?;
                return Ok(Value::Null);
            }
            SessionOp::UnregisterVirtualModel => {
                let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or("");
                self.actions
                    .extension_virtual_model(text("provider"), text("id"), None)?;
                return Ok(Value::Null);
            }
            SessionOp::McpServersChanged => {
                let servers: Vec<knightcode_ext::McpServerSpec> = args
                    .get("servers")
                    .cloned()
                    .and_then(|v| serde_json::from_value(v).ok())
                    .ok_or_else(|| {
                        PortError::Invalid(
                            "registerMcpServer: expected the list of registered servers".to_owned(),
                        )
                    })?;
                self.actions.mcp_servers_changed(servers)?;
                return Ok(Value::Null);
            }
            SessionOp::RefreshTools => {
                self.actions.refresh_tools()?;
                return Ok(Value::Null);
            }
            SessionOp::GetActiveTools => return Ok(json!(self.actions.active_tools())),
            SessionOp::SetActiveTools => {
                let names: Vec<String> = args
                    .get("names")
                    .cloned()
                    .and_then(|v| serde_json::from_value(v).ok())
                    .ok_or_else(|| {
                        PortError::Invalid(
                            "setActiveTools: expected an array of tool names".to_owned(),
                        )
                    })?;
                self.actions.set_active_tools(&names)?;
                return Ok(Value::Null);
            }
            _ => {}
        }
        Ok(Value::Null)
    }

    /// The session file's reads and writes (`ctx.sessionManager`, `pi.appendEntry`, …).
    fn session_file_call(&self, op: SessionOp, args: &Value) -> Result<Value, PortError> {
        let mut session = lock(&self.session);
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
        match op {
            SessionOp::GetEntries => serde_json::to_value(session.entries()).map_err(failed),
            SessionOp::GetBranch => {
                let leaf = text("leafId");
                let branch = session.branch(leaf.as_deref()).map_err(failed)?;
                // The host's own readers (the virtual-model router's state, before every
                // routed request) ask for one custom type, so a long branch is not copied
                // into JS each time.
                match text("customType") {
                    Some(kind) => {
                        let custom: Vec<_> = branch
                            .into_iter()
                            .filter(|entry| {
                                matches!(entry, knightcode_protocol::SessionEntry::Custom(c)
                                    if c.custom_type == kind)
                            })
                            .collect();
                        serde_json::to_value(custom).map_err(failed)
                    }
                    None => serde_json::to_value(branch).map_err(failed),
                }
            }
            SessionOp::GetLeafId => Ok(json!(session.leaf_id())),
            SessionOp::GetSessionFile => {
                Ok(json!(session.session_file().map(|p| p.to_string_lossy())))
            }
            SessionOp::GetSessionId => Ok(json!(session.session_id())),
            SessionOp::GetHeader => serde_json::to_value(session.header()).map_err(failed),
            SessionOp::GetSessionName => Ok(json!(session.session_name())),
            SessionOp::SetSessionName => {
                let name = text("name").unwrap_or_default();
                session.set_session_name(&name).map_err(failed)?;
                Ok(Value::Null)
            }
            SessionOp::SetLabel => {
                let target = text("entryId").unwrap_or_default();
                let label = text("label");
                session
                    .set_label(&target, label.as_deref())
                    .map_err(failed)?;
                Ok(Value::Null)
            }
            // `newSession`'s `setup`: a message written straight into the new session (the
            // agent takes the session's context up afterwards, `reloadContext`).
            SessionOp::AppendMessage => {
                let message: AgentMessage = args
                    .get("message")
                    .cloned()
                    .and_then(|m| serde_json::from_value(m).ok())
                    .ok_or_else(|| PortError::Invalid("appendMessage: not a message".to_owned()))?;
                let id = session.append_message(message).map_err(failed)?;
                Ok(json!(id))
            }
            SessionOp::AppendEntry => {
                let custom_type = text("customType").unwrap_or_default();
                let data = args.get("data").cloned().filter(|d| !d.is_null());
                session
                    .append_custom_entry(&custom_type, data)
                    .map_err(failed)?;
                Ok(Value::Null)
            }
            // `newSession`'s `setup`: a custom message written straight into the new session.
            SessionOp::AppendCustomMessageEntry => {
                let message = args.get("message").cloned().unwrap_or(Value::Null);
                let custom_type = message
                    .get("customType")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let content = message
                    .get("content")
                    .cloned()
                    .and_then(|c| serde_json::from_value(c).ok())
                    .ok_or_else(|| {
                        PortError::Invalid(
                            "appendCustomMessageEntry: content must be a string or content blocks"
                                .to_owned(),
                        )
                    })?;
                let display = message
                    .get("display")
                    .and_then(Value::as_bool)
                    .unwrap_or(true);
                let details = message.get("details").cloned().filter(|d| !d.is_null());
                let id = session
                    .append_custom_message(&custom_type, content, display, details)
                    .map_err(failed)?;
                Ok(json!(id))
            }
            SessionOp::GetModel => Ok(json!({ "provider": self.model.0, "id": self.model.1 })),
            SessionOp::GetThinkingLevel => Ok(json!(self.thinking)),
            other => Err(PortError::Unsupported(other.to_string())),
        }
    }
}
