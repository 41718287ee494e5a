//! Extensions' slash commands: they run on the JS thread beside the task, which keeps
//! serving the commands they send (`ctx.newSession()`, `ctx.waitForIdle()`, …).

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
