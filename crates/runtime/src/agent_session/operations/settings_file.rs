//! Saving changed settings to the global `settings.json` (`spec/settings.md`, write
//! algorithm): re-read the file under a sibling `<file>.lock` directory, change only the keys
//! this process set, write it back as `JSON.stringify(obj, null, 2)` does.
//!
//! Waiting for the lock sleeps, so writes run on tokio's blocking pool, never on the caller's
//! (possibly single) async thread; [`SettingsWriter`] queues them in the order they were asked
//! for, as the reference's promise chain does.

use std::io::ErrorKind;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use serde_json::Map;
use serde_json::Value;
use tokio::sync::watch;

use crate::atomic::LOCK_RETRY;
use crate::atomic::LockFailure;
use crate::error::RuntimeError;
use crate::settings::global_settings_path;

/// What to do between two lock attempts (the argument is the attempt that failed, from 0).
type Backoff = Arc<dyn Fn(u32) + Send + Sync>;

/// Writes settings to the global file in the background, one write after another.
#[derive(Clone)]
pub(super) struct SettingsWriter {
    shared: Arc<Shared>,
}

struct Shared {
    agent_dir: PathBuf,
    backoff: Backoff,
    state: Mutex<Queue>,
    /// How many saves have reached the file (or failed).
    done: watch::Sender<u64>,
}

#[derive(Default)]
struct Queue {
    /// Values not written yet, in the order they were saved.
    pending: Vec<(String, Value)>,
    /// How many saves were asked for.
    asked: u64,
    /// A worker is draining `pending`.
    running: bool,
    /// Failures not reported yet.
    errors: Vec<RuntimeError>,
}

impl SettingsWriter {
    pub(super) fn new(agent_dir: &Path) -> Self {
        Self::with_backoff(agent_dir, Arc::new(|_| std::thread::sleep(LOCK_RETRY)))
    }

    fn with_backoff(agent_dir: &Path, backoff: Backoff) -> Self {
        Self {
            shared: Arc::new(Shared {
                agent_dir: agent_dir.to_owned(),
                backoff,
                state: Mutex::new(Queue::default()),
                done: watch::Sender::new(0),
            }),
        }
    }

    /// Queues `values` for `<agent_dir>/settings.json` and returns at once. Outside a tokio
    /// runtime the caller is synchronous anyway and the write happens before returning.
    pub(super) fn save(&self, values: &[(&str, Value)]) {
        let start = {
            let mut queue = self.shared.lock();
            queue.pending.extend(
                values
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), value.clone())),
            );
            queue.asked += 1;
            !std::mem::replace(&mut queue.running, true)
        };
        if !start {
            return;
        }
        let shared = Arc::clone(&self.shared);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                // Its handle is not needed: completion is announced through `done`.
                drop(runtime.spawn_blocking(move || shared.drain()));
            }
            Err(_) => shared.drain(),
        }
    }

    /// Waits until every save asked for so far has reached the file or failed.
    pub(super) async fn saved(&self) {
        let asked = self.shared.lock().asked;
        let mut done = self.shared.done.subscribe();
        // The sender lives in `shared`, which `self` keeps alive: this cannot fail.
        let _ = done.wait_for(|count| *count >= asked).await;
    }

    /// Failures since the last call.
    pub(super) fn take_errors(&self) -> Vec<RuntimeError> {
        std::mem::take(&mut self.shared.lock().errors)
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // The queue is only pushed to and drained whole: a panic cannot leave it half-changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes whatever is queued, again and again until the queue stays empty. Saves that
    /// queued up while a write was in progress go into one write: applied in order, they
    /// leave the file as separate writes would.
    fn drain(&self) {
        loop {
            let (values, upto) = {
                let mut queue = self.lock();
                if queue.pending.is_empty() {
                    // A save of nothing still counts as done.
                    queue.running = false;
                    let upto = queue.asked;
                    drop(queue);
                    self.done.send_modify(|count| *count = (*count).max(upto));
                    return;
                }
                (std::mem::take(&mut queue.pending), queue.asked)
            };
            let values: Vec<(&str, Value)> = values
                .iter()
                .map(|(key, value)| (key.as_str(), value.clone()))
                .collect();
            if let Err(error) = update_global(&self.agent_dir, &values, &*self.backoff) {
                self.lock().errors.push(error);
            }
            self.done.send_modify(|count| *count = (*count).max(upto));
        }
    }
}

/// Sets `dotted` (`compaction.enabled`) in `map`, creating nested objects as needed and
/// replacing non-object values on the way.
pub(super) fn insert_dotted(map: &mut Map<String, Value>, dotted: &str, value: Value) {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let Some(last) = parts.pop() else {
        return;
    };
    let mut current = map;
    for part in parts {
        let entry = current
            .entry(part.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        let Value::Object(next) = entry else {
            return;
        };
        current = next;
    }
    current.insert(last.to_owned(), value);
}

fn acquire(
    path: &Path,
    backoff: &dyn Fn(u32),
) -> Result<crate::atomic::SettingsLock, RuntimeError> {
    crate::atomic::lock(path, backoff).map_err(|failure| {
        let lock = crate::atomic::lock_path(path);
        match failure {
            LockFailure::Busy => RuntimeError::SettingsLocked { lock },
            LockFailure::Io(source) => RuntimeError::SettingsLock { lock, source },
        }
    })
}

/// Applies `values` to `<agent_dir>/settings.json`, calling `backoff` between attempts to
/// take the lock. Blocks.
fn update_global(
    agent_dir: &Path,
    values: &[(&str, Value)],
    backoff: &dyn Fn(u32),
) -> Result<(), RuntimeError> {
    let path = global_settings_path(agent_dir);
    std::fs::create_dir_all(agent_dir).map_err(RuntimeError::io("create", agent_dir))?;
    let _lock = acquire(&path, backoff)?;
    let mut current = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => map,
                Ok(_) | Err(_) if text.trim().is_empty() => Map::new(),
                Ok(_) => return Err(RuntimeError::SettingsNotAnObject { path }),
                Err(source) => return Err(RuntimeError::SettingsInvalidJson { path, source }),
            }
        }
        Err(error) if error.kind() == ErrorKind::NotFound => Map::new(),
        Err(error) => return Err(RuntimeError::io("read", path)(error)),
    };
    for (key, value) in values {
        insert_dotted(&mut current, key, value.clone());
    }
    let text = serde_json::to_string_pretty(&Value::Object(current)).map_err(|source| {
        RuntimeError::Encode {
            what: "settings",
            source,
        }
    })?;
    crate::atomic::replace(&path, text.as_bytes(), None).map_err(RuntimeError::io("write", path))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn dotted_keys_nest_and_keep_siblings() {
        let mut map: Map<String, Value> =
            serde_json::from_str(r#"{"compaction":{"keepRecentTokens":10},"x":1}"#).unwrap();
        insert_dotted(&mut map, "compaction.enabled", Value::Bool(false));
        insert_dotted(&mut map, "x.y", Value::Bool(true));
        assert_eq!(
            Value::Object(map).to_string(),
            r#"{"compaction":{"keepRecentTokens":10,"enabled":false},"x":{"y":true}}"#
        );
    }

    #[test]
    fn update_keeps_unknown_keys_and_refuses_broken_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, r#"{"theme":"dark"}"#).unwrap();
        update_global(dir.path(), &[("steeringMode", Value::from("all"))], &|_| {}).unwrap();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            saved,
            serde_json::json!({"theme":"dark","steeringMode":"all"})
        );
        assert!(!dir.path().join("settings.json.lock").exists());

        std::fs::write(&path, "{broken").unwrap();
        let error = update_global(dir.path(), &[("x", Value::Null)], &|_| {}).unwrap_err();
        assert!(error.to_string().contains("not valid JSON"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{broken");
    }

    fn read(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[tokio::test]
    async fn quick_successive_saves_all_land_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let writer = SettingsWriter::new(dir.path());
        writer.save(&[("steeringMode", Value::from("all"))]);
        writer.save(&[("compaction.enabled", Value::Bool(false))]);
        writer.save(&[("followUpMode", Value::from("all"))]);
        writer.save(&[("followUpMode", Value::from("one-at-a-time"))]);
        writer.saved().await;
        let path = dir.path().join("settings.json");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"steeringMode\": \"all\",\n  \"compaction\": {\n    \"enabled\": false\n  },\n  \"followUpMode\": \"one-at-a-time\"\n}",
            "the last of two saves of one key wins"
        );
        assert!(writer.take_errors().is_empty());
        assert!(!dir.path().join("settings.json.lock").exists());
    }

    /// Another process holds the lock and writes a key of its own while this writer waits:
    /// the write goes in after it, on top of what that process wrote.
    #[tokio::test]
    async fn a_concurrent_lock_holder_loses_no_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let lock = dir.path().join("settings.json.lock");
        std::fs::write(&path, r#"{"theme":"dark"}"#).unwrap();
        std::fs::create_dir(&lock).unwrap();

        let (waiting, mut waits) = tokio::sync::mpsc::unbounded_channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = Mutex::new(released);
        let writer = SettingsWriter::with_backoff(
            dir.path(),
            Arc::new(move |attempt| {
                let _ = waiting.send(attempt);
                let _ = released.lock().unwrap().recv();
            }),
        );
        writer.save(&[("steeringMode", Value::from("all"))]);
        writer.save(&[("defaultModel", Value::from("m"))]);

        // The writer found the lock taken and waits; the holder finishes its own write.
        assert_eq!(waits.recv().await, Some(0));
        assert_eq!(read(&path), serde_json::json!({"theme": "dark"}));
        std::fs::write(&path, r#"{"theme":"dark","holder":1}"#).unwrap();
        std::fs::remove_dir(&lock).unwrap();
        release.send(()).unwrap();

        writer.saved().await;
        assert_eq!(
            read(&path),
            serde_json::json!({"theme": "dark", "holder": 1, "steeringMode": "all", "defaultModel": "m"})
        );
        assert!(writer.take_errors().is_empty());
        assert_eq!(waits.try_recv().ok(), None, "one wait was enough");
    }

    #[tokio::test]
    async fn a_lock_that_stays_taken_is_reported_once_asked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("settings.json.lock")).unwrap();
        let writer = SettingsWriter::with_backoff(dir.path(), Arc::new(|_| {}));
        writer.save(&[("steeringMode", Value::from("all"))]);
        writer.saved().await;
        let errors = writer.take_errors();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(
            errors[0].to_string(),
            format!(
                "could not save settings: {} is locked by another process; remove it if no knightcode is running",
                dir.path().join("settings.json.lock").display()
            )
        );
        assert!(writer.take_errors().is_empty(), "reported once");
        assert!(!dir.path().join("settings.json").exists());
    }

    #[test]
    fn without_a_runtime_the_save_is_done_on_return() {
        let dir = tempfile::tempdir().unwrap();
        let writer = SettingsWriter::new(dir.path());
        writer.save(&[("steeringMode", Value::from("all"))]);
        writer.save(&[]);
        assert_eq!(
            read(&dir.path().join("settings.json")),
            serde_json::json!({"steeringMode": "all"})
        );
    }
}
