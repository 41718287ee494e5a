//! [`BackgroundJobs`]: work the app starts off its loop (a clipboard image read, `/share`'s
//! upload, `/bug`'s zip) and the channels their results come back on, so a key handler never
//! blocks and every result wakes [`Ui::wait`](super::ui::Ui::wait).

use tokio::sync::mpsc;

use super::clipboard_image;
use super::clipboard_image::ClipboardEnv;
use super::clipboard_image::ClipboardRead;
use super::sharing::JobDone;
use super::ui::Wake;

pub struct BackgroundJobs {
    clipboard_env: ClipboardEnv,
    clipboard_tx: mpsc::UnboundedSender<ClipboardRead>,
    clipboard_rx: mpsc::UnboundedReceiver<ClipboardRead>,
    done_tx: mpsc::UnboundedSender<JobDone>,
    done_rx: mpsc::UnboundedReceiver<JobDone>,
}

impl BackgroundJobs {
    pub fn new() -> Self {
        let (clipboard_tx, clipboard_rx) = mpsc::unbounded_channel();
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        Self {
            clipboard_env: ClipboardEnv::from_process(),
            clipboard_tx,
            clipboard_rx,
            done_tx,
            done_rx,
        }
    }

    /// Reads an image from the system clipboard on a task of its own.
    pub fn read_clipboard_image(&self) {
        clipboard_image::spawn_read(self.clipboard_env.clone(), self.clipboard_tx.clone());
    }

    /// Where a job started elsewhere (`/share`, `/bug`) sends its result.
    pub fn reporter(&self) -> mpsc::UnboundedSender<JobDone> {
        self.done_tx.clone()
    }

    /// The next result: a clipboard read first, then other jobs. Never ends (the senders
    /// live here). Cancel-safe.
    pub async fn next(&mut self) -> Wake {
        tokio::select! {
            biased;
            Some(read) = self.clipboard_rx.recv() => Wake::Clipboard(read),
            Some(done) = self.done_rx.recv() => Wake::Job(done),
            else => std::future::pending().await,
        }
    }
}
