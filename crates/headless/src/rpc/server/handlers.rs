//! Command handlers: [`idle`] with the whole session at hand, [`busy`] while a prompt runs
//! (only the handle, the session view and the output), and the read-only commands both share.

use std::path::Path;

use knightcode_ai::ThinkingLevel;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::rpc::CancelledResult;
use knightcode_protocol::rpc::CommandsResult;
use knightcode_protocol::rpc::CycleModelResult;
use knightcode_protocol::rpc::ForkMessagesResult;
use knightcode_protocol::rpc::ForkResult;
use knightcode_protocol::rpc::LastAssistantTextResult;
use knightcode_protocol::rpc::MessagesResult;
use knightcode_protocol::rpc::ModelsResult;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_protocol::rpc::PromptResult;
use knightcode_protocol::rpc::QueueContents;
use knightcode_protocol::rpc::QueueMode;
use knightcode_protocol::rpc::RpcCommand;
use knightcode_protocol::rpc::RpcCommandBody as Cmd;
use knightcode_protocol::rpc::RpcOutcome;
use knightcode_protocol::rpc::RpcResponse;
use knightcode_protocol::rpc::StreamingBehavior;
use knightcode_protocol::rpc::ThinkingLevelResult;
use knightcode_protocol::rpc::ThinkingLevelsResult;
use knightcode_runtime::AgentSession;
use knightcode_runtime::agent_session::operations::PromptStart;
use knightcode_runtime::agent_session::operations::model_info;
use knightcode_runtime::agent_session::operations::user_message;
use knightcode_runtime::hooks::InputSource;
use knightcode_runtime::hooks::PromptInput;
use serde::Serialize;

use super::Ctx;
use super::Deferred;
use super::Flow;

/// While a prompt is running and `prompt` has no `streamingBehavior`.
const ALREADY_PROCESSING: &str = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

/// `compact`: there is no compaction engine in this build yet.
const COMPACTION_UNAVAILABLE: &str =
    "Compaction is not available yet in this build of knightcode; the session is unchanged.";

/// `export_html`: there is no HTML exporter in this build yet.
const EXPORT_UNAVAILABLE: &str =
    "Export to HTML is not available yet in this build of knightcode; nothing was written.";

/// A success response with `data`; a value that cannot be encoded becomes a failure.
pub(super) fn data<T: Serialize + ?Sized>(
    id: Option<String>,
    command: &str,
    value: &T,
) -> RpcResponse {
    RpcResponse::with_data(id.clone(), command, value).unwrap_or_else(|error| {
        RpcResponse::error(id, command, format!("could not encode the result: {error}"))
    })
}

fn ok(command: &RpcCommand) -> RpcResponse {
    RpcResponse::ok(command.id.clone(), command.command_type())
}

fn fail(command: &RpcCommand, message: impl Into<String>) -> RpcResponse {
    RpcResponse::error(command.id.clone(), command.command_type(), message)
}

fn reply<T: Serialize + ?Sized>(command: &RpcCommand, value: &T) -> RpcResponse {
    data(command.id.clone(), command.command_type(), value)
}

fn disposition(command: &RpcCommand, disposition: PromptDisposition) -> RpcResponse {
    reply(
        command,
        &PromptResult {
            disposition: Some(disposition),
            ..PromptResult::default()
        },
    )
}

/// The image blocks of a prompt, steer or follow-up.
fn images(body: &Cmd) -> Vec<ContentBlock> {
    body.images()
        .map(|image| ContentBlock::Image(image.clone()))
        .collect()
}

fn agent_mode(mode: QueueMode) -> knightcode_agent::QueueMode {
    match mode {
        QueueMode::All => knightcode_agent::QueueMode::All,
        QueueMode::OneAtATime => knightcode_agent::QueueMode::OneAtATime,
    }
}

fn parse_level(level: &str) -> Result<ThinkingLevel, String> {
    ThinkingLevel::parse(level).ok_or_else(|| {
        format!(
            "Invalid thinking level: {level}. Use one of off, minimal, low, medium, high, xhigh, max."
        )
    })
}

/// Queues a steering or follow-up message (also `prompt` with `streamingBehavior`).
fn queue(ctx: &Ctx, command: &RpcCommand, message: &str, steer: bool) -> RpcResponse {
    let user = user_message(message, images(&command.body));
    if steer {
        ctx.handle.steer(user);
    } else {
        ctx.handle.follow_up(user);
    }
    disposition(command, PromptDisposition::Queued)
}

/// Commands that only read the session (or touch it through the view), the same whether or
/// not a prompt runs. `None` when `command` is not one of them.
fn shared(ctx: &Ctx, command: &RpcCommand, streaming: bool) -> Option<RpcResponse> {
    let view = &ctx.view;
    let response = match &command.body {
        Cmd::Steer { message, .. } => queue(ctx, command, message, true),
        Cmd::FollowUp { message, .. } => queue(ctx, command, message, false),
        Cmd::ClearQueue => {
            let cleared = ctx.handle.clear_queue();
            reply(
                command,
                &QueueContents {
                    steering: cleared.steering_texts(),
                    follow_up: cleared.follow_up_texts(),
                    ..QueueContents::default()
                },
            )
        }
        Cmd::GetState => reply(command, &view.state(streaming)),
        Cmd::GetMessages => reply(
            command,
            &MessagesResult {
                messages: view.messages(),
                ..MessagesResult::default()
            },
        ),
        Cmd::GetAvailableModels => {
            let models = ctx.models.clone()?;
            reply(
                command,
                &ModelsResult {
                    models,
                    ..ModelsResult::default()
                },
            )
        }
        Cmd::GetAvailableThinkingLevels => {
            let levels = view
                .model()
                .supported_thinking_levels()
                .into_iter()
                .map(|level| level.as_str().to_owned())
                .collect();
            reply(
                command,
                &ThinkingLevelsResult {
                    levels,
                    ..ThinkingLevelsResult::default()
                },
            )
        }
        Cmd::Compact { .. } => fail(command, COMPACTION_UNAVAILABLE),
        Cmd::AbortRetry => {
            if ctx.retrying {
                ctx.handle.abort();
            }
            ok(command)
        }
        Cmd::AbortBash => {
            ctx.bash.abort_all();
            ok(command)
        }
        Cmd::GetSessionStats => reply(command, &view.stats()),
        Cmd::ExportHtml { .. } => {
            let state = view.state(streaming);
            match state.session_file {
                None => fail(command, "Cannot export in-memory session to HTML"),
                Some(file) if !Path::new(&file).exists() => fail(
                    command,
                    "Nothing to export yet - start a conversation first",
                ),
                Some(_) => fail(command, EXPORT_UNAVAILABLE),
            }
        }
        Cmd::GetForkMessages => reply(
            command,
            &ForkMessagesResult {
                messages: view.fork_messages(),
                ..ForkMessagesResult::default()
            },
        ),
        Cmd::GetEntries { since } => match view.entries(since.as_deref()) {
            Ok(entries) => reply(command, &entries),
            Err(error) => fail(command, error.to_string()),
        },
        Cmd::GetTree => match view
            .tree_json()
            .map_err(|e| e.to_string())
            .and_then(|json| {
                serde_json::value::RawValue::from_string(json).map_err(|e| e.to_string())
            }) {
            Ok(raw) => RpcResponse {
                id: command.id.clone(),
                command: command.command_type().to_owned(),
                outcome: RpcOutcome::Success(Some(raw)),
                extra: Vec::new(),
            },
            Err(error) => fail(command, error),
        },
        Cmd::GetLastAssistantText => reply(
            command,
            &LastAssistantTextResult {
                text: view.last_assistant_text(),
                ..LastAssistantTextResult::default()
            },
        ),
        Cmd::GetCommands => reply(command, &CommandsResult::default()),
        _ => return None,
    };
    Some(response)
}

/// `set_session_name`: the event goes out before the response.
async fn set_session_name(ctx: &mut Ctx, command: &RpcCommand, name: &str) -> RpcResponse {
    match ctx.view.set_session_name(name) {
        Ok(name) => {
            ctx.drain_events().await;
            ctx.write(&AgentEvent::SessionInfoChanged { name }).await;
            ok(command)
        }
        Err(error) => fail(command, error.to_string()),
    }
}

/// A command while a prompt runs. Queueing, abort and reads answer at once; the rest waits
/// for the run to end (the session-replacing ones abort it first).
pub(super) async fn busy(ctx: &mut Ctx, command: RpcCommand) {
    if let Cmd::SetSessionName { name } = &command.body {
        let response = set_session_name(ctx, &command, name).await;
        ctx.reply(response).await;
        return;
    }
    if let Some(response) = shared(ctx, &command, true) {
        ctx.reply(response).await;
        return;
    }
    let response = match &command.body {
        Cmd::Prompt {
            message,
            streaming_behavior,
            ..
        } => match streaming_behavior {
            Some(StreamingBehavior::Steer) => queue(ctx, &command, message, true),
            Some(StreamingBehavior::FollowUp) => queue(ctx, &command, message, false),
            None => fail(&command, ALREADY_PROCESSING),
        },
        Cmd::Abort => {
            ctx.handle.abort();
            ctx.deferred.push(Deferred::AbortDone(command));
            return;
        }
        Cmd::SetSteeringMode { mode } => {
            ctx.handle.set_steering_mode(agent_mode(*mode));
            let response = ok(&command);
            ctx.deferred.push(Deferred::Silent(command));
            response
        }
        Cmd::SetFollowUpMode { mode } => {
            ctx.handle.set_follow_up_mode(agent_mode(*mode));
            let response = ok(&command);
            ctx.deferred.push(Deferred::Silent(command));
            response
        }
        Cmd::SetAutoCompaction { .. } | Cmd::SetAutoRetry { .. } => {
            let response = ok(&command);
            ctx.deferred.push(Deferred::Silent(command));
            response
        }
        Cmd::Bash {
            command: line,
            exclude_from_context,
        } => {
            let mut bash = ctx.bash_template.clone();
            bash.command.clone_from(line);
            bash.exclude_from_context = exclude_from_context.unwrap_or(false);
            ctx.bash.spawn(bash, command.id.clone(), ctx.out.clone());
            return;
        }
        Cmd::NewSession { .. } | Cmd::SwitchSession { .. } | Cmd::Fork { .. } | Cmd::Clone => {
            ctx.handle.abort();
            ctx.deferred.push(Deferred::Command(command));
            return;
        }
        _ => {
            ctx.deferred.push(Deferred::Command(command));
            return;
        }
    };
    ctx.reply(response).await;
}

/// A command with the session idle. With `respond` false the response is dropped (a
/// deferred settings write that was answered already). A prompt returns [`Flow::Run`] after
/// its acceptance was written.
pub(super) async fn idle(
    session: &mut AgentSession,
    ctx: &mut Ctx,
    command: RpcCommand,
    respond: bool,
) -> Flow {
    let mut flow = Flow::Continue;
    let response = match &command.body {
        Cmd::SetSessionName { name } => Some(set_session_name(ctx, &command, name).await),
        Cmd::Prompt {
            message, images: _, ..
        } => match session
            .begin_prompt(PromptInput {
                text: message.clone(),
                images: images(&command.body),
                source: InputSource::Rpc,
            })
            .await
        {
            Ok(PromptStart::Handled) => Some(disposition(&command, PromptDisposition::Handled)),
            Ok(PromptStart::Run(messages)) => {
                flow = Flow::Run(messages);
                Some(disposition(&command, PromptDisposition::Started))
            }
            Err(error) => Some(fail(&command, error.to_string())),
        },
        Cmd::Abort => Some(ok(&command)),
        Cmd::Bash {
            command: line,
            exclude_from_context,
        } => {
            let bash = session.user_bash(line, exclude_from_context.unwrap_or(false));
            ctx.bash.spawn(bash, command.id.clone(), ctx.out.clone());
            None
        }
        _ => match changing(session, ctx, &command).await {
            Some(response) => Some(response),
            None => shared(ctx, &command, false),
        },
    };
    if let Some(response) = response
        && respond
    {
        ctx.reply(response).await;
    }
    flow
}

/// Commands that change the session (model, thinking, settings, the session itself).
/// `None` when `command` is not one of them.
async fn changing(
    session: &mut AgentSession,
    ctx: &mut Ctx,
    command: &RpcCommand,
) -> Option<RpcResponse> {
    let response = match &command.body {
        Cmd::NewSession { parent_session } => {
            match session.new_session(parent_session.clone()).await {
                Ok(change) => {
                    thinking_event(ctx, change.changed, change.level).await;
                    cancelled_false(command)
                }
                Err(error) => fail(command, error.to_string()),
            }
        }
        Cmd::SwitchSession { session_path } => {
            let path = Path::new(session_path);
            match session.switch_session(path).await {
                Ok(change) => {
                    thinking_event(ctx, change.changed, change.level).await;
                    cancelled_false(command)
                }
                Err(error) => fail(command, error.to_string()),
            }
        }
        Cmd::Fork { entry_id } => match session.fork(entry_id).await {
            Ok((text, change)) => {
                thinking_event(ctx, change.changed, change.level).await;
                reply(
                    command,
                    &ForkResult {
                        text: Some(text),
                        cancelled: false,
                        ..ForkResult::default()
                    },
                )
            }
            Err(error) => fail(command, error.to_string()),
        },
        Cmd::Clone => match session.clone_session().await {
            Ok(change) => {
                thinking_event(ctx, change.changed, change.level).await;
                cancelled_false(command)
            }
            Err(error) => fail(command, error.to_string()),
        },
        Cmd::SetModel { provider, model_id } => match session.set_model(provider, model_id).await {
            Ok(switch) => {
                thinking_event(ctx, switch.thinking_changed, switch.thinking).await;
                reply(command, &model_info(&switch.model))
            }
            Err(error) => fail(command, error.to_string()),
        },
        Cmd::CycleModel => match session.cycle_model().await {
            Ok(Some(switch)) => {
                thinking_event(ctx, switch.thinking_changed, switch.thinking).await;
                reply(
                    command,
                    &CycleModelResult {
                        model: model_info(&switch.model),
                        thinking_level: switch.thinking.as_str().to_owned(),
                        is_scoped: switch.scoped,
                        ..CycleModelResult::default()
                    },
                )
            }
            Ok(None) => reply(command, &()),
            Err(error) => fail(command, error.to_string()),
        },
        Cmd::GetAvailableModels => {
            if ctx.models.is_none() {
                ctx.models = Some(session.available_models().iter().map(model_info).collect());
            }
            return None;
        }
        Cmd::SetThinkingLevel { level } => match parse_level(level) {
            Ok(level) => match session.set_thinking_level(level) {
                Ok(change) => {
                    thinking_event(ctx, change.changed, change.level).await;
                    ok(command)
                }
                Err(error) => fail(command, error.to_string()),
            },
            Err(message) => fail(command, message),
        },
        Cmd::CycleThinkingLevel => match session.cycle_thinking_level() {
            Ok(Some(change)) => {
                thinking_event(ctx, change.changed, change.level).await;
                reply(
                    command,
                    &ThinkingLevelResult {
                        level: change.level.as_str().to_owned(),
                        ..ThinkingLevelResult::default()
                    },
                )
            }
            Ok(None) => reply(command, &()),
            Err(error) => fail(command, error.to_string()),
        },
        Cmd::SetSteeringMode { mode } => {
            session.set_steering_mode(agent_mode(*mode));
            ok(command)
        }
        Cmd::SetFollowUpMode { mode } => {
            session.set_follow_up_mode(agent_mode(*mode));
            ok(command)
        }
        Cmd::SetAutoCompaction { enabled } => {
            session.set_auto_compaction(*enabled);
            ok(command)
        }
        Cmd::SetAutoRetry { enabled } => {
            session.set_auto_retry(*enabled);
            ok(command)
        }
        _ => return None,
    };
    ctx.refresh(session);
    if matches!(
        command.body,
        Cmd::NewSession { .. } | Cmd::SwitchSession { .. } | Cmd::Fork { .. } | Cmd::Clone
    ) {
        ctx.forget_entries();
    }
    Some(response)
}

fn cancelled_false(command: &RpcCommand) -> RpcResponse {
    reply(
        command,
        &CancelledResult {
            cancelled: false,
            ..CancelledResult::default()
        },
    )
}

async fn thinking_event(ctx: &mut Ctx, changed: bool, level: ThinkingLevel) {
    if changed {
        ctx.drain_events().await;
        ctx.write(&AgentEvent::ThinkingLevelChanged {
            level: level.as_str().to_owned(),
        })
        .await;
    }
}
