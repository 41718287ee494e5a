//! Ending a session on a signal or a quit, one way for every front end: SIGTERM exits 143,
//! SIGHUP 129, and the session gets [`EXIT_GRACE`] to abort its run and kill and reap its
//! commands, so no process group outlives us and the aborted messages are saved.

use std::time::Duration;

use tokio::signal::unix::Signal;
use tokio::signal::unix::SignalKind;
use tokio::signal::unix::signal;

use crate::actor::Command;
use crate::actor::Responder;
use crate::actor::SessionEvent;
use crate::actor::SessionEvents;
use crate::actor::SessionHandle;

/// How long an exit waits for the session to kill and reap its commands.
pub const EXIT_GRACE: Duration = Duration::from_secs(2);

/// SIGTERM and SIGHUP, installed once (early, so a signal during start-up is not fatal).
pub struct TerminationSignals {
    term: Signal,
    hup: Signal,
}

impl std::fmt::Debug for TerminationSignals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminationSignals").finish_non_exhaustive()
    }
}

impl TerminationSignals {
    /// Installs the handlers; needs a tokio runtime with signals enabled.
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// The exit code of the next signal: 143 for SIGTERM, 129 for SIGHUP.
    pub async fn recv(&mut self) -> u8 {
        tokio::select! {
            _ = self.term.recv() => 143,
            _ = self.hup.recv() => 129,
        }
    }
}

/// Stops a session: its run is aborted at once, its shell commands are killed, and the
/// task gets up to `grace` to finish. Events that arrive meanwhile go to `on_event` (a
/// front end that writes them keeps the aborted run's last events).
pub async fn stop(
    handle: SessionHandle,
    events: &mut SessionEvents,
    grace: Duration,
    mut on_event: impl FnMut(SessionEvent),
) {
    handle.abort_now();
    handle.send(Command::Terminate, Responder::Nobody);
    drop(handle);
    let drained = async {
        while let Some(event) = events.recv().await {
            on_event(event);
        }
    };
    // Whatever has not finished by then is ended with the process.
    let _ = tokio::time::timeout(grace, drained).await;
}
