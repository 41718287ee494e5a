//! What print/JSON and RPC mode do the same way before they serve: the async runtime, the
//! signal handlers (installed first, so an early SIGTERM is not fatal) and the session, with
//! its start-up notices reported as warnings.

use knightcode_agent::EventReceiver;
use knightcode_runtime::AgentSession;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::shutdown::TerminationSignals;

/// The runtime of the headless modes: two workers, the session's and the I/O's. `None`
/// after reporting why it could not start.
pub(crate) fn runtime(report: &dyn Fn(&str)) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => Some(runtime),
        Err(error) => {
            report(&format!(
                "Error: could not start the async runtime: {error}"
            ));
            None
        }
    }
}

/// Installs the signal handlers and starts the session. `None` after reporting a failure
/// (the mode then exits 1).
pub(crate) async fn session(
    setup: SessionSetup,
    report: &dyn Fn(&str),
) -> Option<(TerminationSignals, AgentSession, EventReceiver)> {
    let signals = match TerminationSignals::install() {
        Ok(signals) => signals,
        Err(error) => {
            report(&format!(
                "Error: could not install SIGTERM/SIGHUP handlers: {error}"
            ));
            return None;
        }
    };
    let (session, events) = match AgentSession::start(setup).await {
        Ok(started) => started,
        Err(error) => {
            report(&format!("Error: {error}"));
            return None;
        }
    };
    for notice in session.notices() {
        report(&format!("Warning: {notice}"));
    }
    Some((signals, session, events))
}
