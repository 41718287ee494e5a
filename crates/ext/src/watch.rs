//! `fs.watch` for extensions: file-system change notifications (inotify on Linux, through
//! the `notify` crate), delivered to JS as `change` events of an `FSWatcher`.
//!
//! The watcher's own thread pushes events into a per-watch queue; JS pulls them with one
//! pending `watchNext` promise per watcher, so an idle watcher costs nothing on the JS thread
//! and a burst of changes arrives as one batch. The queue is bounded: past [`QUEUE_LIMIT`]
//! events the oldest are dropped (Node's watcher coalesces under load too).

use std::collections::HashMap;
use std::collections::VecDeque;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use notify::EventKind;
use notify::RecursiveMode;
use notify::Watcher as _;
use notify::event::ModifyKind;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use rquickjs::Promise;
use serde_json::Value;
use serde_json::json;

use crate::providers_ops::async_op;

/// Events a watcher keeps while JS is busy; older ones are dropped beyond this.
const QUEUE_LIMIT: usize = 1024;

/// The open watchers of one JS runtime, by the id JS holds.
#[derive(Default)]
pub(crate) struct Watches {
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, OpenWatch>>,
}

struct OpenWatch {
    /// Dropping it stops the notifications.
    _watcher: notify::RecommendedWatcher,
    queue: Arc<Queue>,
}

/// Events waiting for JS, and the wake-up of the pending `watchNext`.
#[derive(Default)]
struct Queue {
    events: Mutex<VecDeque<Value>>,
    ready: tokio::sync::Notify,
    closed: AtomicBool,
}

impl Queue {
    fn push(&self, event: Value) {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        if events.len() == QUEUE_LIMIT {
            events.pop_front();
        }
        events.push_back(event);
        drop(events);
        self.ready.notify_one();
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.ready.notify_one();
    }

    /// The next batch of events, or `{closed: true}` once the watcher is closed.
    async fn next(&self) -> Value {
        loop {
            let batch: Vec<Value> = self
                .events
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .drain(..)
                .collect();
            if self.closed.load(Ordering::SeqCst) {
                return json!({ "ok": { "closed": true } });
            }
            if !batch.is_empty() {
                return json!({ "ok": { "events": batch } });
            }
            self.ready.notified().await;
        }
    }
}

/// Node's event type for a notification: `rename` when an entry appeared, went away or
/// moved, `change` when its content or metadata changed; reads are not reported.
fn event_type(kind: &EventKind) -> Option<&'static str> {
    match kind {
        EventKind::Access(_) => None,
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_)) => {
            Some("rename")
        }
        EventKind::Modify(_) | EventKind::Any | EventKind::Other => Some("change"),
    }
}

/// Node's `filename`: the watched file's own name, or the changed entry's path relative to
/// the watched directory.
fn filename(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.to_string_lossy().into_owned(),
        _ => path
            .file_name()
            .or_else(|| root.file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

fn watch_error(error: &notify::Error, path: &str) -> Value {
    let io = match &error.kind {
        notify::ErrorKind::Io(io) => std::io::Error::new(io.kind(), io.to_string()),
        notify::ErrorKind::PathNotFound | notify::ErrorKind::WatchNotFound => {
            std::io::Error::from(std::io::ErrorKind::NotFound)
        }
        _ => std::io::Error::other(error.to_string()),
    };
    crate::ops::io_error(&io, "watch", path)
}

impl Watches {
    /// Starts watching `path`; `{ok: id}`, or Node's error (`ENOENT: no such file or
    /// directory, watch '<path>'`).
    fn open(&self, path: &str, recursive: bool) -> Value {
        let root = PathBuf::from(path);
        // notify reports a missing path only on some platforms; Node always does.
        if let Err(error) = std::fs::metadata(&root) {
            return crate::ops::io_error(&error, "watch", path);
        }
        let queue = Arc::new(Queue::default());
        let sink = Arc::clone(&queue);
        let handler_root = root.clone();
        let handler = move |result: notify::Result<notify::Event>| match result {
            Ok(event) => {
                let Some(kind) = event_type(&event.kind) else {
                    return;
                };
                for changed in &event.paths {
                    sink.push(json!({
                        "eventType": kind,
                        "filename": filename(&handler_root, changed),
                    }));
                }
            }
            Err(error) => sink.push(json!({ "error": error.to_string() })),
        };
        let mut watcher = match notify::recommended_watcher(handler) {
            Ok(watcher) => watcher,
            Err(error) => return watch_error(&error, path),
        };
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        if let Err(error) = watcher.watch(&root, mode) {
            return watch_error(&error, path);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                id,
                OpenWatch {
                    _watcher: watcher,
                    queue,
                },
            );
        json!({ "ok": id })
    }

    fn queue(&self, id: u64) -> Option<Arc<Queue>> {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .map(|watch| Arc::clone(&watch.queue))
    }

    fn close(&self, id: u64) {
        let closed = self
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        if let Some(watch) = closed {
            watch.queue.close();
        }
    }
}

/// The `__kc.watchOpen/watchNext/watchClose` ops of `fs.watch` (`js/fs.js`).
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    kc: &Object<'js>,
    watches: &Arc<Watches>,
) -> rquickjs::Result<()> {
    let w = Arc::clone(watches);
    kc.set(
        "watchOpen",
        Function::new(ctx.clone(), move |path: String, recursive: bool| {
            w.open(&path, recursive).to_string()
        })?,
    )?;
    let w = Arc::clone(watches);
    kc.set(
        "watchNext",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id: f64| -> rquickjs::Result<Promise<'js>> {
                let queue = w.queue(id as u64);
                async_op(&ctx, async move {
                    match queue {
                        Some(queue) => queue.next().await.to_string(),
                        None => json!({ "ok": { "closed": true } }).to_string(),
                    }
                })
            },
        )?,
    )?;
    let w = Arc::clone(watches);
    kc.set(
        "watchClose",
        Function::new(ctx.clone(), move |id: f64| w.close(id as u64))?,
    )?;
    Ok(())
}
