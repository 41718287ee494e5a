//! Extensions' slash commands: they run on the JS thread beside the task, which keeps
//! serving the commands they send (`ctx.newSession()`, `ctx.waitForIdle()`, …). Steering
//! and follow-up messages that name one are refused.

use super::Command;
use super::Responder;
use super::task::Ctx;

/// Starts a prompt that names an extension command. The prompt is answered when the
/// command has finished (`Command::ExtensionCommandDone`). Anything else comes back to be
/// handled.
pub(super) fn run(
    ctx: &Ctx,
    command: Command,
    responder: Responder,
) -> Option<(Command, Responder)> {
    if let Command::Prompt { text, source, .. } = &command
        && *source != crate::hooks::InputSource::Extension
        && let Some(host) = ctx
            .extensions
            .as_ref()
            .map(|e| std::sync::Arc::clone(e.host()))
        && let Some((name, args)) = crate::extensions::command_of(text)
        && host.has_command(name)
    {
        let actions = std::sync::Arc::clone(&ctx.actions);
        // Queued on the JS thread now, in the order the commands came in.
        let command = host.start_command(name, args);
        tokio::spawn(async move {
            command.await;
            actions.command_done(responder);
        });
        return None;
    }
    Some((command, responder))
}

/// A steering or follow-up message that names an extension command: refused, as the
/// reference refuses it, rather than queued as text for the model. The built-in `/plan`
/// counts as one (the reference's plan mode is an extension).
pub(super) fn refuse_queued(ctx: &Ctx, text: &str) -> Option<super::Reply> {
    let (name, _) = crate::extensions::command_of(text)?;
    let extension = ctx
        .extensions
        .as_ref()
        .is_some_and(|extensions| extensions.host().has_command(name));
    let plan = name == "plan" && ctx.plan.enabled();
    (extension || plan)
        .then(|| super::Reply::Failed(super::CommandError::NotQueueable(name.to_owned())))
}
