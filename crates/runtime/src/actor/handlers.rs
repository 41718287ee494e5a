//! Command handlers: [`idle`] with the whole session at hand, [`busy`] while a prompt runs
//! (only the agent handle, the session view and the output), and the reads both share.
//! Refusals use the reference's texts (`spec/rpc.md` §2): RPC clients see them verbatim.

use knightcode_ai::ThinkingLevel;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::rpc::PromptDisposition;

use super::Command;
use super::CommandError;
use super::Envelope;
use super::Queueing;
use super::Reply;
use super::Responder;
use super::policy::WhileRunning;
use super::policy::while_running;
use super::task::Ctx;
use super::task::Deferred;
use super::task::Flow;
use crate::AgentSession;
use crate::agent_session::operations::PromptStart;
use crate::agent_session::operations::model_info;
use crate::agent_session::operations::user_message;
use crate::hooks::PromptInput;

/// A prompt without a queueing mode while a run goes on.
pub const ALREADY_PROCESSING: &str = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

/// A navigation while another one waits for the aborted run to end (`spec/seed/sessions.md`).
pub const NAVIGATION_BUSY: &str = "Navigation cannot proceed while compaction or another tree navigation is still running; wait for it to finish and retry.";

/// A prompt while the built-in `/undo` waits for an answer.
pub const UNDO_BUSY: &str =
    "Cannot submit a prompt while /undo is waiting for an answer. Answer or cancel it and retry.";
/// A prompt while a manual compaction runs.
/// A prompt (or `compact`) while `/tree` writes the summary of the branch it leaves.
pub const BRANCH_SUMMARY_BUSY: &str = "Cannot submit a prompt while the branch you left is being summarized. Wait for the summary to finish (or press Escape to cancel it) and retry.";
pub const COMPACTION_BUSY: &str = "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry.";

fn exported(result: crate::Result<std::path::PathBuf>) -> Reply {
    match result {
        Ok(path) => Reply::Exported(path),
        Err(error) => Reply::Failed(error.into()),
    }
}

/// Queues a steering or follow-up message (also a prompt with a queueing mode).
/// Skill commands and templates expand first (when `expand`), as for a prompt.
fn queue(ctx: &Ctx, text: &str, images: &[ContentBlock], steer: bool, expand: bool) -> Reply {
    let text = if expand {
        ctx.view.resources().expand(text).text
    } else {
        text.to_owned()
    };
    let user = user_message(&text, images.to_vec());
    if steer {
        ctx.handle.steer(user);
    } else {
        ctx.handle.follow_up(user);
    }
    Reply::Prompt(PromptDisposition::Queued)
}

/// Commands that only read the session (or touch it through the view), the same whether or
/// not a prompt runs. `None` when `command` is not one of them.
fn shared(ctx: &Ctx, command: &Command, streaming: bool) -> Option<Reply> {
    let view = &ctx.view;
    let reply = match command {
        Command::Steer { text, images } => super::extension_commands::refuse_queued(ctx, text)
            .unwrap_or_else(|| queue(ctx, text, images, true, true)),
        Command::FollowUp { text, images } => super::extension_commands::refuse_queued(ctx, text)
            .unwrap_or_else(|| queue(ctx, text, images, false, true)),
        Command::ClearQueue => Reply::Cleared(ctx.handle.clear_queue()),
        Command::GetState => Reply::State(view.state(streaming)),
        Command::GetMessages => Reply::Messages(view.messages()),
        Command::GetAvailableModels => Reply::Models(ctx.models.clone()?),
        Command::GetAvailableThinkingLevels => {
            Reply::ThinkingLevels(view.model().supported_thinking_levels())
        }
        Command::AbortRetry => {
            if ctx.retrying {
                ctx.handle.abort();
            }
            Reply::Done
        }
        Command::AbortBash => {
            ctx.bash.abort_all();
            Reply::Done
        }
        Command::GetSessionStats => Reply::Stats(view.stats()),
        Command::ExportJsonl { output } => {
            let prepared = view
                .with_session(|session| crate::export::session_jsonl(session, output.as_deref()));
            exported(crate::export::finish(prepared))
        }
        Command::GetForkMessages => Reply::ForkMessages(view.fork_messages()),
        Command::GetEntries { since } => match view.entries(since.as_deref()) {
            Ok(entries) => Reply::Entries(entries),
            Err(error) => Reply::Failed(error.into()),
        },
        Command::GetTree => match view.tree_json() {
            Ok(json) => Reply::Tree(json),
            Err(error) => Reply::Failed(error.into()),
        },
        Command::GetLastAssistantText => Reply::LastAssistantText(view.last_assistant_text()),
        Command::GetCommands => Reply::Commands(view.commands()),
        Command::Ping => Reply::Done,
        Command::Report(_) => Reply::Done,
        // A turn the command started (`sendUserMessage`) is this prompt's run.
        Command::ExtensionCommandDone => Reply::Prompt(if streaming {
            PromptDisposition::Started
        } else {
            PromptDisposition::Handled
        }),
        _ => return None,
    };
    Some(reply)
}

/// Begins a prompt; what plan mode said with no dialogs to say it through (print mode)
/// goes out as diagnostics, before the prompt's reply.
async fn begin_prompt(
    session: &mut AgentSession,
    ctx: &mut Ctx,
    input: PromptInput,
) -> crate::Result<PromptStart> {
    let started = session.begin_prompt(input).await;
    emit_plan_notices(ctx, session.take_plan_notices()).await;
    started
}

/// What plan mode said with no dialogs to say it through, as diagnostics.
async fn emit_plan_notices(ctx: &mut Ctx, notices: Vec<(crate::dialogs::NoticeKind, String)>) {
    use crate::diagnostics::Diagnostic;
    use crate::diagnostics::DiagnosticLevel;
    use crate::dialogs::NoticeKind;
    for (kind, message) in notices {
        let level = match kind {
            NoticeKind::Info => DiagnosticLevel::Info,
            NoticeKind::Warning => DiagnosticLevel::Warning,
            NoticeKind::Error => DiagnosticLevel::Error,
        };
        ctx.emit(super::SessionEvent::Diagnostic(Diagnostic {
            level,
            source: "plan".to_owned(),
            message,
        }))
        .await;
    }
}

/// `Report`: the diagnostic goes into the stream where the command stood (then `Done`).
async fn report(ctx: &mut Ctx, command: &Command) {
    if let Command::Report(diagnostic) = command {
        ctx.emit(super::SessionEvent::Diagnostic(diagnostic.clone()))
            .await;
    }
}

/// `set_session_name`: the event goes out before the reply.
async fn set_session_name(ctx: &mut Ctx, name: &str) -> Reply {
    match ctx.view.set_session_name(name) {
        Ok(name) => {
            ctx.drain_events().await;
            ctx.emit_agent(AgentEvent::SessionInfoChanged { name })
                .await;
            Reply::Done
        }
        Err(error) => Reply::Failed(error.into()),
    }
}

/// A cache refresh's usage: recorded and reported at once, during a run too (a `usage`
/// entry never enters context, so it may land between a tool call and its result).
async fn record_cache_warm(
    ctx: &mut Ctx,
    warm: &crate::cache_warming::CacheWarmUsage,
    streaming: bool,
) -> Reply {
    match ctx.view.record_cache_warm(warm) {
        Ok(()) => {
            ctx.report_new_entries(streaming).await;
            Reply::Done
        }
        Err(error) => {
            ctx.emit(super::SessionEvent::Diagnostic(
                crate::diagnostics::Diagnostic::error(
                    "session",
                    format!("could not record a cache refresh: {error}"),
                ),
            ))
            .await;
            Reply::Failed(error.into())
        }
    }
}

/// A command while a prompt runs. Queueing, abort and reads answer at once; the rest waits
/// for the run to end (the session-replacing ones abort it first).
pub(super) async fn busy(ctx: &mut Ctx, envelope: Envelope) {
    let Envelope { command, responder } = envelope;
    report(ctx, &command).await;
    // Extension commands run at once, during a run too (as in the reference).
    let Some((command, responder)) = super::extension_commands::run(ctx, command, responder) else {
        return;
    };
    // `/plan` needs an idle session, as the reference's command does: refused at once rather
    // than queued as text for the model.
    if let Command::Prompt { text, source, .. } = &command
        && ctx.plan.answers(text, *source)
    {
        let plan = std::sync::Arc::clone(&ctx.plan);
        plan.refuse_busy().await;
        emit_plan_notices(ctx, plan.take_notices()).await;
        ctx.reply(responder, Reply::Prompt(PromptDisposition::Handled))
            .await;
        return;
    }
    if let Command::ExportHtml { output, colors } = &command {
        let reply = super::export::html(ctx, output.as_ref(), colors.as_ref()).await;
        ctx.reply(responder, reply).await;
        return;
    }
    let reply = match while_running(&command) {
        WhileRunning::ServeNow => shared(ctx, &command, true).unwrap_or_else(|| {
            Reply::Failed(CommandError::Failed(format!(
                "{command:?} has no shared handler; this is a bug."
            )))
        }),
        WhileRunning::OwnRule => match busy_own_rule(ctx, &command, responder).await {
            Some((reply, responder)) => {
                ctx.reply(responder, reply).await;
                return;
            }
            None => return,
        },
        WhileRunning::ChangeNowSaveAfter => {
            match &command {
                Command::SetSteeringMode(mode) => ctx.handle.set_steering_mode(*mode),
                Command::SetFollowUpMode(mode) => ctx.handle.set_follow_up_mode(*mode),
                _ => {}
            }
            defer_silently(ctx, command);
            Reply::Done
        }
        WhileRunning::SaveAfterRun => {
            defer_silently(ctx, command);
            Reply::Done
        }
        WhileRunning::AbortThenRun => {
            let waiting_navigation = ctx.deferred.iter().any(|d| {
                matches!(
                    d,
                    Deferred::Command(Envelope {
                        command: Command::NavigateTree { .. },
                        ..
                    })
                )
            });
            if matches!(command, Command::NavigateTree { .. }) && waiting_navigation {
                Reply::Failed(CommandError::NavigationBusy)
            } else {
                ctx.handle.abort();
                ctx.deferred
                    .push(Deferred::Command(Envelope { command, responder }));
                return;
            }
        }
        WhileRunning::AfterRun => {
            ctx.deferred
                .push(Deferred::Command(Envelope { command, responder }));
            return;
        }
    };
    ctx.reply(responder, reply).await;
}

/// The commands with a rule of their own while a prompt runs ([`WhileRunning::OwnRule`]):
/// the reply to send now, or `None` when the responder was handed on (answered later).
async fn busy_own_rule(
    ctx: &mut Ctx,
    command: &Command,
    responder: Responder,
) -> Option<(Reply, Responder)> {
    let reply = match command {
        Command::SetSessionName(name) => set_session_name(ctx, name).await,
        Command::RecordCacheWarm(warm) => record_cache_warm(ctx, warm, true).await,
        Command::EndOfInput => {
            ctx.end_of_input();
            return None;
        }
        Command::Terminate => {
            ctx.terminate().await;
            Reply::Done
        }
        Command::Prompt {
            text,
            images,
            queueing,
            source,
        } => {
            // An extension's own message is queued as written unless it asked otherwise.
            let expand = *source != crate::hooks::InputSource::Extension;
            match queueing {
                Some(Queueing::Steer) => queue(ctx, text, images, true, expand),
                Some(Queueing::FollowUp) => queue(ctx, text, images, false, expand),
                None => Reply::Failed(CommandError::AlreadyProcessing),
            }
        }
        Command::Abort => {
            ctx.handle.abort();
            ctx.deferred.push(Deferred::AbortDone(responder));
            return None;
        }
        Command::SendCustomMessage {
            message,
            follow_up,
            trigger_turn,
        } => {
            if !*trigger_turn && ctx.handle.run_ending() {
                // Sent while the run delivers `agent_end` (its handlers): the run is over,
                // so, as in the reference, the message joins the conversation once the run
                // has returned instead of starting another one.
                ctx.deferred.push(Deferred::Command(Envelope {
                    command: command.clone(),
                    responder,
                }));
                return None;
            }
            if *follow_up {
                ctx.handle.follow_up((**message).clone());
            } else {
                ctx.handle.steer((**message).clone());
            }
            Reply::Done
        }
        Command::Bash {
            command: line,
            exclude_from_context,
            id,
        } => {
            ctx.view.mark_shell();
            let mut bash = ctx.bash_template.clone();
            bash.command.clone_from(line);
            bash.exclude_from_context = *exclude_from_context;
            ctx.spawn_bash(bash, responder, id.clone());
            return None;
        }
        other => Reply::Failed(CommandError::Failed(format!(
            "{other:?} has no rule while a prompt runs; this is a bug."
        ))),
    };
    Some((reply, responder))
}

/// A settings change answered at once whose lasting effect (the settings file) is made when
/// the run has ended.
fn defer_silently(ctx: &mut Ctx, command: Command) {
    ctx.deferred.push(Deferred::Command(Envelope {
        command,
        responder: Responder::Nobody,
    }));
}

/// A command with the session idle. A prompt returns [`Flow::Run`] after its acceptance was
/// replied.
pub(super) async fn idle(session: &mut AgentSession, ctx: &mut Ctx, envelope: Envelope) -> Flow {
    let Envelope { command, responder } = envelope;
    let mut flow = Flow::Continue;
    report(ctx, &command).await;
    let Some((command, responder)) = super::extension_commands::run(ctx, command, responder) else {
        return flow;
    };
    let reply = match command {
        Command::WaitForIdle => Reply::Done,
        Command::SetSessionName(name) => set_session_name(ctx, &name).await,
        Command::RecordCacheWarm(warm) => record_cache_warm(ctx, &warm, false).await,
        Command::ExportHtml { output, colors } => {
            super::export::html(ctx, output.as_ref(), colors.as_ref()).await
        }
        Command::Prompt { text, .. } if crate::agent_session::is_undo_command(&text) => {
            return Flow::Undo { responder };
        }
        Command::Prompt { text, .. }
            if crate::agent_session::parse_mcp_command(&text).is_some() =>
        {
            let command = crate::agent_session::parse_mcp_command(&text)
                .unwrap_or(crate::agent_session::McpCommand::Usage);
            if let Some(said) = session.run_mcp_command(command).await {
                ctx.emit(super::SessionEvent::Diagnostic(said)).await;
            }
            Reply::Prompt(PromptDisposition::Handled)
        }
        Command::Prompt {
            text,
            images,
            source,
            ..
        } => match begin_prompt(
            session,
            ctx,
            PromptInput {
                text,
                images,
                source,
            },
        )
        .await
        {
            Ok(PromptStart::Handled) => Reply::Prompt(PromptDisposition::Handled),
            Ok(PromptStart::Run(messages)) => {
                flow = Flow::Run(messages);
                Reply::Prompt(PromptDisposition::Started)
            }
            Err(error) => Reply::Failed(error.into()),
        },
        Command::Abort => Reply::Done,
        Command::ExtensionMcpServers(servers) => {
            ctx.extension_mcp_servers(session, &servers);
            Reply::Done
        }
        Command::SendCustomMessage {
            message,
            trigger_turn,
            ..
        } => match session.send_custom_message(*message, trigger_turn).await {
            Ok(PromptStart::Run(messages)) => {
                flow = Flow::Run(messages);
                Reply::Prompt(PromptDisposition::Started)
            }
            Ok(PromptStart::Handled) => Reply::Done,
            Err(error) => Reply::Failed(error.into()),
        },
        Command::Compact {
            custom_instructions,
        } => {
            return Flow::Compact {
                custom_instructions,
                responder,
            };
        }
        Command::NavigateTree {
            entry_id: Some(entry_id),
            summary: Some(request),
            label,
            restore_files,
        } => {
            return Flow::NavigateSummarized {
                entry_id,
                request,
                label,
                restore_files,
                responder,
            };
        }
        Command::Snapshot => {
            // A first run without a model takes one configured since (a login elsewhere,
            // a local server that came up); a failure shows again when a prompt asks.
            if !session.has_model() {
                let _ = session.pick_up_model().await;
            }
            Reply::Snapshot(Box::new(session.snapshot()))
        }
        Command::EndOfInput => {
            ctx.end_of_input();
            return flow;
        }
        Command::Terminate => {
            ctx.terminate().await;
            Reply::Done
        }
        Command::Bash {
            command: line,
            exclude_from_context,
            id,
        } => {
            ctx.view.mark_shell();
            let bash = session.user_bash(&line, exclude_from_context);
            ctx.spawn_bash(bash, responder, id);
            return flow;
        }
        // What the command appended (`appendEntry`) is reported before its reply.
        Command::ExtensionCommandDone => {
            ctx.report_new_entries(false).await;
            Reply::Prompt(PromptDisposition::Handled)
        }
        other => match changing(session, ctx, &other).await {
            Some(reply) => reply,
            None => shared(ctx, &other, false).unwrap_or(Reply::Failed(CommandError::NotAvailable)),
        },
    };
    ctx.reply(responder, reply).await;
    flow
}

/// Commands that change the session (model, thinking, settings, the session itself).
/// `None` when `command` is not one of them.
async fn changing(session: &mut AgentSession, ctx: &mut Ctx, command: &Command) -> Option<Reply> {
    if let Command::GetAvailableModels = command {
        // Listed once per task; `shared` answers from it.
        if ctx.models.is_none() {
            ctx.models = Some(session.available_models().iter().map(model_info).collect());
        }
        return None;
    }
    ctx.selection_source(match command {
        Command::CycleModel { .. } => "cycle",
        Command::NewSession { .. }
        | Command::SwitchSession(_)
        | Command::ForkSessionFile(_)
        | Command::Fork(_)
        | Command::Clone => "restore",
        _ => "set",
    });
    if let Some(cancelled) = before_replacement(session, command).await {
        return Some(cancelled);
    }
    ctx.forget_models_if_changed(command);
    let reply = match replacing(session, ctx, command).await {
        Some(reply) => reply,
        None => match selecting(session, ctx, command).await {
            Some(reply) => reply,
            None => configuring(session, command).await?,
        },
    };
    ctx.refresh(session).await;
    if matches!(
        command,
        Command::NewSession { .. }
            | Command::SwitchSession(_)
            | Command::ForkSessionFile(_)
            | Command::Fork(_)
            | Command::ExtensionFork { .. }
            | Command::Clone
    ) {
        ctx.forget_entries();
    }
    Some(reply)
}

/// The commands that replace the conversation or move within it: new, switched, forked and
/// cloned sessions, tree navigation.
async fn replacing(session: &mut AgentSession, ctx: &mut Ctx, command: &Command) -> Option<Reply> {
    let reply = match command {
        Command::ExtensionFork {
            entry_id,
            at: false,
        } => match session.fork(entry_id).await {
            Ok((text, change)) => {
                thinking_event(ctx, change.changed, change.level).await;
                Reply::Forked { text }
            }
            Err(error) => Reply::Failed(error.into()),
        },
        Command::ExtensionFork { entry_id, at: true } => {
            match session.clone_session_at(Some(entry_id)).await {
                Ok(change) => {
                    thinking_event(ctx, change.changed, change.level).await;
                    Reply::SessionReplaced { cancelled: false }
                }
                Err(error) => Reply::Failed(error.into()),
            }
        }
        Command::NewSession { parent_session } => {
            match session.new_session(parent_session.clone()).await {
                Ok(change) => {
                    thinking_event(ctx, change.changed, change.level).await;
                    Reply::SessionReplaced { cancelled: false }
                }
                Err(error) => Reply::Failed(error.into()),
            }
        }
        Command::SwitchSession(path) => match session.switch_session(path).await {
            Ok(change) => {
                thinking_event(ctx, change.changed, change.level).await;
                Reply::SessionReplaced { cancelled: false }
            }
            Err(error) => Reply::Failed(error.into()),
        },
        Command::ForkSessionFile(path) => match session.fork_session_file(path).await {
            Ok(change) => {
                thinking_event(ctx, change.changed, change.level).await;
                Reply::SessionReplaced { cancelled: false }
            }
            Err(error) => Reply::Failed(error.into()),
        },
        Command::Fork(entry_id) => match session.fork(entry_id).await {
            Ok((text, change)) => {
                thinking_event(ctx, change.changed, change.level).await;
                Reply::Forked { text }
            }
            Err(error) => Reply::Failed(error.into()),
        },
        Command::NavigateTree {
            entry_id,
            label,
            restore_files,
            ..
        } => match session
            .navigate_tree_announced(entry_id.as_deref(), label.as_deref(), *restore_files)
            .await
        {
            Ok(navigated) => Reply::Navigated {
                text: navigated.text,
                restored: navigated.restored,
            },
            Err(error) => Reply::Failed(error.into()),
        },
        Command::Clone => match session.clone_session().await {
            Ok(change) => {
                thinking_event(ctx, change.changed, change.level).await;
                Reply::SessionReplaced { cancelled: false }
            }
            Err(error) => Reply::Failed(error.into()),
        },
        _ => return None,
    };
    Some(reply)
}

/// The commands that choose the model, its thinking level or the model scope.
async fn selecting(session: &mut AgentSession, ctx: &mut Ctx, command: &Command) -> Option<Reply> {
    let reply = match command {
        Command::SetModel { provider, model_id } => {
            match session.set_model(provider, model_id).await {
                Ok(switch) => {
                    thinking_event(ctx, switch.thinking_changed, switch.thinking).await;
                    Reply::ModelSet(switch)
                }
                Err(error) => Reply::Failed(error.into()),
            }
        }
        Command::CycleModel { forward } => match session.cycle_model_towards(*forward).await {
            Ok(Some(switch)) => {
                thinking_event(ctx, switch.thinking_changed, switch.thinking).await;
                Reply::ModelCycled(Some(switch))
            }
            Ok(None) => Reply::ModelCycled(None),
            Err(error) => Reply::Failed(error.into()),
        },
        Command::SetModelForSession { provider, model_id } => {
            match session.set_model_for_session(provider, model_id).await {
                Ok(switch) => {
                    thinking_event(ctx, switch.thinking_changed, switch.thinking).await;
                    Reply::ModelSet(switch)
                }
                Err(error) => Reply::Failed(error.into()),
            }
        }
        Command::SetThinkingLevelForSession(level) => {
            match session.set_thinking_level_for_session(*level) {
                Ok(change) => {
                    thinking_event(ctx, change.changed, change.level).await;
                    Reply::Done
                }
                Err(error) => Reply::Failed(error.into()),
            }
        }
        Command::SetThinkingLevel(level) => match session.set_thinking_level(*level) {
            Ok(change) => {
                thinking_event(ctx, change.changed, change.level).await;
                Reply::Done
            }
            Err(error) => Reply::Failed(error.into()),
        },
        Command::CycleThinkingLevel => match session.cycle_thinking_level() {
            Ok(Some(change)) => {
                thinking_event(ctx, change.changed, change.level).await;
                Reply::ThinkingCycled(Some(change))
            }
            Ok(None) => Reply::ThinkingCycled(None),
            Err(error) => Reply::Failed(error.into()),
        },
        Command::ReloadCredentials { provider } => {
            match session.reload_credentials(provider.as_deref()).await {
                Ok(switch) => Reply::CredentialsReloaded(switch),
                Err(error) => Reply::Failed(error.into()),
            }
        }
        Command::SetScopedModels { models, save } => {
            match session.set_scoped_models(models, *save) {
                Ok(()) => Reply::Done,
                Err(error) => Reply::Failed(error.into()),
            }
        }
        _ => return None,
    };
    Some(reply)
}

/// The commands that change settings, tools, providers or what the session has read.
async fn configuring(session: &mut AgentSession, command: &Command) -> Option<Reply> {
    let reply = match command {
        Command::SetSteeringMode(mode) => {
            session.set_steering_mode(*mode);
            Reply::Done
        }
        Command::SetFollowUpMode(mode) => {
            session.set_follow_up_mode(*mode);
            Reply::Done
        }
        Command::SetAutoCompaction(enabled) => {
            session.set_auto_compaction(*enabled);
            Reply::Done
        }
        Command::SetAutoRetry(enabled) => {
            session.set_auto_retry(*enabled);
            Reply::Done
        }
        Command::SaveSettings(values) => {
            session.save_settings(values);
            Reply::Done
        }
        Command::ConfigureWebTools(change) => Reply::WebTools(session.configure_web_tools(change)),
        Command::SetActiveTools(names) => {
            session.set_active_tools(names);
            Reply::Done
        }
        Command::RefreshExtensionTools => {
            session.refresh_extension_tools().await;
            Reply::Done
        }
        Command::ExtensionProvider { name, spec } => {
            session.extension_provider(name, spec.as_deref());
            Reply::Done
        }
        Command::ExtensionVirtualModel {
            provider,
            id,
            model,
        } => {
            session.extension_virtual_model(provider, id, model.as_deref().cloned());
            Reply::Done
        }
        Command::ReloadContext => {
            session.reload_context();
            Reply::Done
        }
        Command::Reload => {
            // Extensions first: what their `resources_discover` names loads with the rest.
            session.reload_extensions().await;
            let resources = std::sync::Arc::clone(session.reload_resources());
            Reply::Reloaded(resources)
        }
        _ => return None,
    };
    Some(reply)
}

async fn thinking_event(ctx: &mut Ctx, changed: bool, level: ThinkingLevel) {
    if changed {
        ctx.drain_events().await;
        ctx.emit_agent(AgentEvent::ThinkingLevelChanged {
            level: level.as_str().to_owned(),
        })
        .await;
    }
}

/// `session_before_switch` / `session_before_fork` for a replacing command: the reply when an
/// extension cancelled it, `None` to go on.
async fn before_replacement(session: &mut AgentSession, command: &Command) -> Option<Reply> {
    let host = session.extension_host()?;
    let (event, payload) = match command {
        Command::NewSession { .. } => (
            "session_before_switch",
            serde_json::json!({ "reason": "new" }),
        ),
        Command::SwitchSession(path) => (
            "session_before_switch",
            serde_json::json!({ "reason": "resume", "targetSessionFile": path.to_string_lossy() }),
        ),
        Command::Fork(entry_id) => (
            "session_before_fork",
            serde_json::json!({ "entryId": entry_id, "position": "before" }),
        ),
        Command::ExtensionFork { entry_id, at } => (
            "session_before_fork",
            serde_json::json!({ "entryId": entry_id, "position": if *at { "at" } else { "before" } }),
        ),
        Command::Clone => {
            let leaf = session
                .view()
                .with_session(|s| s.leaf_id().map(str::to_owned));
            (
                "session_before_fork",
                serde_json::json!({ "entryId": leaf, "position": "at" }),
            )
        }
        _ => return None,
    };
    let result = host.dispatch(event, payload).await?;
    (result.get("cancel").and_then(serde_json::Value::as_bool) == Some(true))
        .then_some(Reply::SessionReplaced { cancelled: true })
}
