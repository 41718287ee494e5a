//! Saving changed settings to the global `settings.json` (`spec/settings.md`, write
//! algorithm): re-read the file under a sibling `<file>.lock` directory, change only the keys
//! this process set, write it back as `JSON.stringify(obj, null, 2)` does.

use std::io::ErrorKind;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Map;
use serde_json::Value;

use crate::settings::global_settings_path;

/// Lock attempts, 20 ms apart (the reference's synchronous lock).
const LOCK_ATTEMPTS: u32 = 10;
const LOCK_RETRY: Duration = Duration::from_millis(20);

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

/// Removes the lock directory when the write is done, however it ends.
struct LockDir(PathBuf);

impl Drop for LockDir {
    fn drop(&mut self) {
        // Nothing to do when it is already gone.
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn acquire(lock: &Path) -> Result<LockDir, String> {
    for attempt in 0..LOCK_ATTEMPTS {
        match std::fs::create_dir(lock) {
            Ok(()) => return Ok(LockDir(lock.to_path_buf())),
            Err(error) if error.kind() == ErrorKind::AlreadyExists => {
                if attempt + 1 < LOCK_ATTEMPTS {
                    std::thread::sleep(LOCK_RETRY);
                }
            }
            Err(error) => {
                return Err(format!(
                    "could not lock {} to save settings: {error}",
                    lock.display()
                ));
            }
        }
    }
    Err(format!(
        "could not save settings: {} is locked by another process; remove it if no knightcode is running",
        lock.display()
    ))
}

/// Applies `values` to `<agent_dir>/settings.json`. The error text says what failed.
pub(super) fn update_global(agent_dir: &Path, values: &[(&str, Value)]) -> Result<(), String> {
    let path = global_settings_path(agent_dir);
    std::fs::create_dir_all(agent_dir)
        .map_err(|e| format!("could not create {}: {e}", agent_dir.display()))?;
    let mut lock_name = path.file_name().unwrap_or_default().to_os_string();
    lock_name.push(".lock");
    let _lock = acquire(&path.with_file_name(lock_name))?;
    let mut current = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => map,
                Ok(_) | Err(_) if text.trim().is_empty() => Map::new(),
                Ok(_) => {
                    return Err(format!(
                        "not saving settings: {} does not hold a JSON object",
                        path.display()
                    ));
                }
                Err(error) => {
                    return Err(format!(
                        "not saving settings: {} is not valid JSON ({error})",
                        path.display()
                    ));
                }
            }
        }
        Err(error) if error.kind() == ErrorKind::NotFound => Map::new(),
        Err(error) => return Err(format!("could not read {}: {error}", path.display())),
    };
    for (key, value) in values {
        insert_dotted(&mut current, key, value.clone());
    }
    let text = serde_json::to_string_pretty(&Value::Object(current))
        .map_err(|e| format!("could not encode settings: {e}"))?;
    let temp = path.with_file_name(format!(".settings.json.{}.tmp", std::process::id()));
    std::fs::write(&temp, text.as_bytes())
        .and_then(|()| std::fs::rename(&temp, &path))
        .map_err(|e| format!("could not write {}: {e}", path.display()))
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
        update_global(dir.path(), &[("steeringMode", Value::from("all"))]).unwrap();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            saved,
            serde_json::json!({"theme":"dark","steeringMode":"all"})
        );
        assert!(!dir.path().join("settings.json.lock").exists());

        std::fs::write(&path, "{broken").unwrap();
        let error = update_global(dir.path(), &[("x", Value::Null)]).unwrap_err();
        assert!(error.contains("not valid JSON"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{broken");
    }
}
