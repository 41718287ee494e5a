//! User shell commands (`!cmd`, `!!cmd`): each runs in its own task and streams its output
//! into its transcript card; Escape cancels (killing the process group).

use knightcode_runtime::agent_session::operations::BashOutcome;
use knightcode_runtime::agent_session::operations::UserBash;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// News from a running command, for the card at `card`.
pub enum BashUpdate {
    Output {
        card: usize,
        text: String,
    },
    Done {
        card: usize,
        result: Result<BashOutcome, String>,
    },
}

pub struct BashJobs {
    tx: mpsc::UnboundedSender<BashUpdate>,
    rx: mpsc::UnboundedReceiver<BashUpdate>,
    running: Vec<(usize, CancellationToken)>,
}

impl BashJobs {
    pub fn new() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            tx,
            rx,
            running: Vec::new(),
        }
    }

    pub fn spawn(&mut self, card: usize, command: UserBash) {
        let cancel = CancellationToken::new();
        self.running.push((card, cancel.clone()));
        let tx = self.tx.clone();
        let chunks = self.tx.clone();
        tokio::spawn(async move {
            let result = command
                .run(cancel, move |text: &str| {
                    let _ = chunks.send(BashUpdate::Output {
                        card,
                        text: text.to_owned(),
                    });
                })
                .await
                .map_err(|e| e.to_string());
            let _ = tx.send(BashUpdate::Done { card, result });
        });
    }

    /// Cancels every running command; false when none runs.
    pub fn cancel_running(&mut self) -> bool {
        if self.running.is_empty() {
            return false;
        }
        for (_, cancel) in &self.running {
            cancel.cancel();
        }
        true
    }

    pub fn is_running(&self) -> bool {
        !self.running.is_empty()
    }

    pub fn finished(&mut self, card: usize) {
        self.running.retain(|(c, _)| *c != card);
    }

    /// On exit: cancels every running command and waits (up to `grace`) until each has
    /// killed and reaped its process group, so no command outlives the app.
    pub async fn shutdown(&mut self, grace: std::time::Duration) {
        if !self.cancel_running() {
            return;
        }
        let finished = async {
            while !self.running.is_empty() {
                match self.rx.recv().await {
                    Some(BashUpdate::Done { card, .. }) => self.finished(card),
                    Some(_) => {}
                    None => break,
                }
            }
        };
        let _ = tokio::time::timeout(grace, finished).await;
    }

    pub async fn recv(&mut self) -> Option<BashUpdate> {
        self.rx.recv().await
    }
}
