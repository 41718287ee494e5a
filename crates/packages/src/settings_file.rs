//! The `packages` list of one settings file, edited in place: other keys, their order and
//! unknown values are kept.

use std::path::Path;
use std::path::PathBuf;

use serde_json::Map;
use serde_json::Value;

use crate::Error;
use crate::Result;
use crate::io;

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

    /// Writes the file (two-space indented, as the reference does), creating its folder.
    pub fn write(&self) -> Result<()> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        let text = serde_json::to_string_pretty(&Value::Object(self.root.clone()))
            .unwrap_or_else(|_| "{}".to_owned());
        std::fs::write(&self.path, text).map_err(io("write", &self.path))
    }
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
}
