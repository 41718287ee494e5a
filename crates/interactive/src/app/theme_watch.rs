//! The active theme file, watched: editing it redraws the screen in its new colours, as
//! the reference's file watcher does. A thread looks at the file's modification time and
//! size a few times a second (no watcher library needed for one file) and wakes the loop
//! when they change; the loop reads the file again.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;
use std::time::SystemTime;

use tokio::sync::mpsc;

/// How often the file is looked at: an edit shows within this.
const POLL: Duration = Duration::from_millis(250);

/// What identifies one version of the file.
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The file being watched and the version last seen.
type Watched = Arc<Mutex<Option<(PathBuf, Stamp)>>>;

pub struct ThemeWatch {
    watched: Watched,
    /// The watching thread, parked while there is no file (a built-in theme): an idle
    /// session with a built-in theme wakes nothing.
    thread: Option<std::thread::Thread>,
}

impl ThemeWatch {
    /// Starts the watching thread; it sends on `changed` when the file changes and ends
    /// once the receiver is gone.
    pub fn start(changed: mpsc::UnboundedSender<()>) -> Self {
        let watched: Watched = Arc::new(Mutex::new(None));
        let shared = Arc::clone(&watched);
        // Without a thread the edit just does not show: nothing else depends on it.
        let thread = std::thread::Builder::new()
            .name("theme-watch".to_owned())
            .spawn(move || {
                while !changed.is_closed() {
                    let idle = shared
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .is_none();
                    if idle {
                        // `watch` and the drop unpark it.
                        std::thread::park();
                        continue;
                    }
                    std::thread::sleep(POLL);
                    let mut guard = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    let Some((path, seen)) = guard.as_mut() else {
                        continue;
                    };
                    let now = stamp(path);
                    // A file being replaced can be missing for a moment: wait for it.
                    if now.is_some() && now != *seen {
                        *seen = now;
                        if changed.send(()).is_err() {
                            return;
                        }
                    }
                }
            });
        Self {
            watched,
            thread: thread.ok().map(|handle| handle.thread().clone()),
        }
    }

    /// Watches `path` (the active theme's file; `None` for a built-in theme) from its
    /// current version on.
    pub fn watch(&self, path: Option<&Path>) {
        let mut guard = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        *guard = path.map(|p| (p.to_path_buf(), stamp(p)));
        drop(guard);
        if let Some(thread) = &self.thread {
            thread.unpark();
        }
    }

    /// The file watched.
    pub fn path(&self) -> Option<PathBuf> {
        let guard = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        guard.as_ref().map(|(path, _)| path.clone())
    }
}

impl Drop for ThemeWatch {
    fn drop(&mut self) {
        // A parked thread looks again, finds its receiver gone and ends. (The receiver is
        // dropped with the rest of the app; a thread that looks first parks once more
        // and ends with the process.)
        if let Some(thread) = &self.thread {
            thread.unpark();
        }
    }
}
