//! The `packages` list of one settings file, edited in place: other keys, their order and
//! unknown values are kept.

use std::path::Path;
use std::path::PathBuf;

use serde_json::Map;
use serde_json::Value;

use crate::Error;
use crate::Result;
use crate::io;
use knightcode_files as file_write;
use knightcode_files::LockFailure;

/// One settings file, read whole.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    path: PathBuf,
    root: Map<String, Value>,
}

impl SettingsFile {
    /// Reads `path`; a missing file is empty. Invalid JSON is an error so that nothing
    /// is written over a file the user is in the middle of editing.
    pub fn read(path: &Path) -> Result<Self> {
        let root = match std::fs::read_to_string(path) {
            Ok(text) if text.trim().is_empty() => Map::new(),
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => map,
                Ok(_) => {
                    return Err(Error::InvalidSettings {
                        path: path.to_path_buf(),
                        message: "not an object".to_owned(),
                    });
                }
                Err(e) => {
                    return Err(Error::InvalidSettings {
                        path: path.to_path_buf(),
                        message: e.to_string(),
                    });
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
            Err(e) => return Err(io("read", path)(e)),
        };
        Ok(Self {
            path: path.to_path_buf(),
            root,
        })
    }

    /// A file with nothing in it yet, to be written at `path`.
    pub fn empty(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            root: Map::new(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.root.get(key)
    }

    /// The string list at `key` (created when missing; anything else there is replaced).
    fn list_mut(&mut self, key: &str) -> Option<&mut Vec<Value>> {
        let entry = self
            .root
            .entry(key)
            .or_insert_with(|| Value::Array(Vec::new()));
        if !entry.is_array() {
            *entry = Value::Array(Vec::new());
        }
        entry.as_array_mut()
    }

    /// Replaces the `+p`/`-p`/`!p`/`p` entries for `pattern` in the `kind` list with `+p`
    /// (`Some(true)`), `-p` (`Some(false)`), or nothing (`None`). With `keep_plain`, a plain
    /// `p` entry stays (it is what adds the path in the first place).
    pub fn set_override(
        &mut self,
        kind: &str,
        pattern: &str,
        state: Option<bool>,
        keep_plain: bool,
    ) {
        let Some(items) = self.list_mut(kind) else {
            return;
        };
        retain_other_patterns(items, pattern, keep_plain);
        if let Some(on) = state {
            items.push(Value::String(format!(
                "{}{pattern}",
                if on { '+' } else { '-' }
            )));
        }
    }

    /// Whether the `kind` list has the plain entry `path`.
    pub fn has_entry(&self, kind: &str, path: &str) -> bool {
        matches!(self.root.get(kind), Some(Value::Array(items)) if items.iter().any(|v| v.as_str() == Some(path)))
    }

    pub fn push_entry(&mut self, kind: &str, path: &str) {
        if let Some(items) = self.list_mut(kind) {
            items.push(Value::String(path.to_owned()));
        }
    }

    /// Drops an empty `kind` list this file did not have before (keeps files tidy when an
    /// override is taken back).
    pub fn drop_empty(&mut self, kind: &str) {
        if matches!(self.root.get(kind), Some(Value::Array(items)) if items.is_empty()) {
            self.root.remove(kind);
        }
    }

    /// Sets a package resource's override in the package entry whose source `is_it`
    /// accepts (see [`Self::set_override`]): a plain string entry becomes the object form,
    /// and an object left with no lists becomes the plain string again, or, for an
    /// `autoload: false` entry (a delta), goes. With `create`, a missing entry is added as
    /// `{"source": create, "autoload": false}` first. Whether an entry was found or made.
    pub fn set_package_override(
        &mut self,
        is_it: impl Fn(&str) -> bool,
        kind: &str,
        pattern: &str,
        state: Option<bool>,
        create: Option<&str>,
    ) -> bool {
        let Some(items) = self.list_mut("packages") else {
            return false;
        };
        let source_of = |item: &Value| match item {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o.get("source").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        let index = match items
            .iter()
            .position(|i| source_of(i).is_some_and(|s| is_it(&s)))
        {
            Some(index) => index,
            None => match (create, state) {
                (Some(source), Some(_)) => {
                    let mut object = Map::new();
                    object.insert("source".to_owned(), Value::String(source.to_owned()));
                    object.insert("autoload".to_owned(), Value::Bool(false));
                    items.push(Value::Object(object));
                    items.len() - 1
                }
                _ => return false,
            },
        };
        if let Value::String(source) = &items[index] {
            let mut object = Map::new();
            object.insert("source".to_owned(), Value::String(source.clone()));
            items[index] = Value::Object(object);
        }
        let Value::Object(object) = &mut items[index] else {
            return false;
        };
        let list = object
            .entry(kind)
            .or_insert_with(|| Value::Array(Vec::new()));
        if !list.is_array() {
            *list = Value::Array(Vec::new());
        }
        if let Value::Array(list) = list {
            retain_other_patterns(list, pattern, false);
            if let Some(on) = state {
                list.push(Value::String(format!(
                    "{}{pattern}",
                    if on { '+' } else { '-' }
                )));
            }
            if list.is_empty() {
                object.remove(kind);
            }
        }
        let has_lists = crate::KINDS.iter().any(|k| object.contains_key(*k));
        if !has_lists {
            let delta = object.get("autoload") == Some(&Value::Bool(false));
            if delta {
                items.remove(index);
            } else if let Some(Value::String(source)) = object.get("source").cloned() {
                items[index] = Value::String(source);
            }
        }
        true
    }

    /// Each entry's source and whether it is the object (filtered) form; entries without
    /// a string source are skipped.
    pub fn packages(&self) -> Vec<(String, bool)> {
        let Some(Value::Array(items)) = self.root.get("packages") else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some((s.clone(), false)),
                Value::Object(o) => o
                    .get("source")
                    .and_then(Value::as_str)
                    .map(|s| (s.to_owned(), true)),
                _ => None,
            })
            .collect()
    }

    /// Each entry's source and, for the object form, the object (its filters).
    pub fn package_entries(&self) -> Vec<(String, Option<Map<String, Value>>)> {
        let Some(Value::Array(items)) = self.root.get("packages") else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some((s.clone(), None)),
                Value::Object(o) => o
                    .get("source")
                    .and_then(Value::as_str)
                    .map(|s| (s.to_owned(), Some(o.clone()))),
                _ => None,
            })
            .collect()
    }

    pub fn push_package(&mut self, source: &str) {
        let entry = self
            .root
            .entry("packages")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !entry.is_array() {
            *entry = Value::Array(Vec::new());
        }
        if let Value::Array(items) = entry {
            items.push(Value::String(source.to_owned()));
        }
    }

    /// Keeps the entries whose source passes `keep`; whether any was dropped.
    pub fn retain_packages(&mut self, mut keep: impl FnMut(&str) -> bool) -> bool {
        let Some(Value::Array(items)) = self.root.get_mut("packages") else {
            return false;
        };
        let before = items.len();
        items.retain(|item| {
            let source = match item {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("source").and_then(Value::as_str),
                _ => None,
            };
            source.is_none_or(&mut keep)
        });
        items.len() != before
    }

    /// Changes the file at `path` under its lock: reads it as it is now, lets `change` edit
    /// it, and writes it when `change` says it changed something. Whatever another process
    /// (a running session saving the model) wrote in the meantime is kept.
    pub fn update(path: &Path, change: impl FnOnce(&mut Self) -> Result<bool>) -> Result<bool> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        let _lock = file_write::lock(path, &|_| std::thread::sleep(file_write::LOCK_RETRY))
            .map_err(|failure| match failure {
                LockFailure::Busy => Error::SettingsLocked(file_write::lock_path(path)),
                LockFailure::Io(source) => io("lock", path)(source),
            })?;
        let mut file = Self::read(path)?;
        let changed = change(&mut file)?;
        if changed {
            file.write()?;
        }
        Ok(changed)
    }

    /// Writes the file (two-space indented, as the reference does), creating its folder.
    /// The old file is replaced whole, so a kill mid-write leaves it as it was.
    pub fn write(&self) -> Result<()> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        let text = serde_json::to_string_pretty(&Value::Object(self.root.clone()))
            .unwrap_or_else(|_| "{}".to_owned());
        file_write::replace(&self.path, text.as_bytes(), None).map_err(io("write", &self.path))
    }
}

/// Drops the entries of `items` that target `pattern` (`+p`, `-p`, `!p`, and unless
/// `keep_plain`, `p`).
fn retain_other_patterns(items: &mut Vec<Value>, pattern: &str, keep_plain: bool) {
    items.retain(|item| {
        let Some(text) = item.as_str() else {
            return true;
        };
        match text.strip_prefix(['+', '-', '!']) {
            Some(target) => target != pattern,
            None => keep_plain || text != pattern,
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_other_keys_and_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"theme":"dark","packages":["npm:a",{"source":"npm:b","skills":[]},3],"z":1}"#,
        )
        .unwrap();
        let mut file = SettingsFile::read(&path).unwrap();
        assert_eq!(
            file.packages(),
            vec![("npm:a".to_owned(), false), ("npm:b".to_owned(), true)]
        );
        file.push_package("./x");
        assert!(file.retain_packages(|s| s != "npm:b"));
        file.write().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\n  \"theme\": \"dark\",\n  \"packages\": [\n    \"npm:a\",\n    3,\n    \"./x\"\n  ],\n  \"z\": 1\n}"
        );
    }

    #[test]
    fn missing_is_empty_and_invalid_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        assert!(SettingsFile::read(&path).unwrap().packages().is_empty());
        std::fs::write(&path, "{ oops").unwrap();
        let error = SettingsFile::read(&path).unwrap_err().to_string();
        assert!(error.contains("is not valid JSON"), "{error}");
    }

    #[test]
    fn update_reads_the_file_as_it_is_under_the_lock_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        // What a running session saved after `install` first read the file.
        std::fs::write(&path, r#"{"defaultModel":"b"}"#).unwrap();
        let changed = SettingsFile::update(&path, |file| {
            assert!(file_write::lock_path(&path).is_dir(), "the lock is held");
            file.push_package("npm:a");
            Ok(true)
        })
        .unwrap();
        assert!(changed);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"defaultModel\": \"b\""), "{text}");
        assert!(text.contains("npm:a"), "{text}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["settings.json"], "no lock or temp file is left");
    }

    #[test]
    fn update_gives_up_on_a_lock_another_process_holds_and_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let _held = file_write::lock(&path, &|_| {}).unwrap();
        let error = SettingsFile::update(&path, |_| Ok(true)).unwrap_err();
        assert!(matches!(error, Error::SettingsLocked(_)), "{error}");
        assert!(error.to_string().contains("settings.json.lock"), "{error}");
        assert!(!path.exists(), "nothing was written");
    }
}
