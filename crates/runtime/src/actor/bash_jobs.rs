//! User shell commands (`!cmd`, RPC `bash`) running beside the session task: each streams
//! its output as `bash_execution_update` events carrying the command's id, then reports
//! back. The one job runner of every front end.

use std::collections::HashMap;

use knightcode_protocol::AgentEvent;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::Responder;
use super::SessionEvent;
use crate::agent_session::operations::BashOutcome;
use crate::agent_session::operations::UserBash;
use crate::error::RuntimeError;

/// How long process exit waits for cancelled commands to be killed and reaped.
const KILL_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// A finished command, for the task to store and answer.
pub(super) struct BashDone {
    job: u64,
    pub(super) responder: Responder,
    pub(super) result: Result<BashOutcome, RuntimeError>,
}

/// The running commands.
pub(super) struct BashJobs {
    next_job: u64,
    running: HashMap<u64, CancellationToken>,
    tasks: JoinSet<()>,
    done_tx: mpsc::UnboundedSender<BashDone>,
    done_rx: mpsc::UnboundedReceiver<BashDone>,
}

impl BashJobs {
    pub(super) fn new() -> Self {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        Self {
            next_job: 0,
            running: HashMap::new(),
            tasks: JoinSet::new(),
            done_tx,
            done_rx,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Starts `bash`; its updates (tagged `id`) go straight to `out`, ahead of the reply the
    /// task sends when [`BashJobs::next_done`] yields it.
    pub(super) fn spawn(
        &mut self,
        bash: UserBash,
        hooks: std::sync::Arc<dyn crate::hooks::SessionHooks>,
        responder: Responder,
        id: Option<String>,
        out: mpsc::Sender<SessionEvent>,
    ) {
        let job = self.next_job;
        self.next_job += 1;
        let cancel = CancellationToken::new();
        self.running.insert(job, cancel.clone());
        let done = self.done_tx.clone();
        self.tasks.spawn(async move {
            let (chunk_tx, mut chunks) = mpsc::unbounded_channel::<String>();
            let run = bash.run(hooks.as_ref(), cancel, move |text: &str| {
                // The receiver lives until the command's output has been drained.
                let _ = chunk_tx.send(text.to_owned());
            });
            tokio::pin!(run);
            let update = |delta: String| {
                SessionEvent::Agent(AgentEvent::BashExecutionUpdate {
                    id: id.clone(),
                    delta,
                })
            };
            let result = loop {
                tokio::select! {
                    biased;
                    Some(delta) = chunks.recv() => {
                        // A closed output only means nobody reads the updates any more.
                        let _ = out.send(update(delta)).await;
                    }
                    result = &mut run => break result,
                }
            };
            while let Ok(delta) = chunks.try_recv() {
                let _ = out.send(update(delta)).await;
            }
            // The task holds the receiver for as long as it runs.
            let _ = done.send(BashDone {
                job,
                responder,
                result,
            });
        });
    }

    /// The next finished command.
    pub(super) async fn next_done(&mut self) -> Option<BashDone> {
        let done = self.done_rx.recv().await?;
        self.running.remove(&done.job);
        // Reap finished tasks so the set does not grow.
        while self.tasks.try_join_next().is_some() {}
        Some(done)
    }

    /// `abort_bash`: cancels every running command (their process groups are killed); each
    /// still reports back, as cancelled.
    pub(super) fn abort_all(&self) {
        for cancel in self.running.values() {
            cancel.cancel();
        }
    }

    /// Process exit: cancels every command and waits until their tasks are gone, so no
    /// process group outlives us.
    pub(super) async fn kill_all(&mut self) {
        self.abort_all();
        // A cancelled command kills its process group and reaps its shell; aborting the
        // task at once would only send the kill, and the shell could outlive us by a
        // moment. Whatever has not finished after the grace period is aborted.
        let finished = async { while self.tasks.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(KILL_GRACE, finished).await;
        self.tasks.shutdown().await;
        self.running.clear();
    }
}
