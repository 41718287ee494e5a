//! Serialises mutations of one file.
//!
//! Tool calls of one assistant message run in parallel; two edits of the same file would
//! otherwise both read the old contents and the second write would drop the first edit.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

type Slots = HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>;

/// Per-file FIFO queue shared by edit, write and anything else that mutates files (share
/// one instance between them; clones share the queue).
#[derive(Debug, Clone, Default)]
pub struct FileMutationQueue {
    slots: Arc<Mutex<Slots>>,
}

/// Removes a path's slot when its last user leaves, even if that user was cancelled.
struct SlotRelease<'a> {
    queue: &'a FileMutationQueue,
    key: PathBuf,
    slot: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for SlotRelease<'_> {
    fn drop(&mut self) {
        let mut slots = self.queue.lock();
        let unused = slots
            .get(&self.key)
            .is_some_and(|current| Arc::ptr_eq(current, &self.slot))
            && Arc::strong_count(&self.slot) == 2;
        if unused {
            slots.remove(&self.key);
        }
    }
}

impl FileMutationQueue {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Slots> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `operation` once every earlier operation on the same file has finished.
    /// The file is identified by its real path (symlinks and `..` resolved) when it
    /// exists, else by `path` as given.
    pub async fn run<F: Future>(&self, path: &Path, operation: F) -> F::Output {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let slot = self.lock().entry(key.clone()).or_default().clone();
        let release = SlotRelease {
            queue: self,
            key,
            slot,
        };
        let output = {
            let _turn = release.slot.lock().await;
            operation.await
        };
        drop(release);
        output
    }

    /// Number of files with queued or running operations.
    pub fn busy_files(&self) -> usize {
        self.lock().len()
    }
}
