//! Keybindings: action ids (`app.interrupt`, `tui.editor.cursorLeft`, …) to keys, with the
//! reference agent's defaults and the user's `keybindings.json` on top.
//!
//! A key is written `mod+key` (`ctrl+shift+p`, `alt+enter`, `pageUp`, `f5`, `ctrl+-`),
//! case-insensitive, modifiers `ctrl shift alt super`. A file entry replaces the defaults
//! of its action; `[]` leaves the action unbound.
//!
//! `key_binding` parses and shows one key, `defaults` holds the built-in table (with its
//! per-platform differences and the names older versions wrote); [`Keybindings`] is the
//! map from action to keys built from both.

mod defaults;
mod key_binding;

use std::collections::HashMap;
use std::path::Path;

pub use defaults::Platform;
pub use key_binding::KeyBinding;

use defaults::DEFINITIONS;
use defaults::LEGACY_NAMES;
use defaults::platform_keys;

use crate::error::TuiError;
use crate::keys::Key;

/// Action id to keys.
#[derive(Debug, Clone)]
pub struct Keybindings {
    actions: Vec<(String, Vec<KeyBinding>)>,
    index: HashMap<String, usize>,
}

impl Default for Keybindings {
    fn default() -> Self {
        Self::defaults()
    }
}

impl Keybindings {
    /// The defaults on Linux and macOS.
    pub fn defaults() -> Self {
        Self::defaults_for(Platform::Unix)
    }

    pub fn defaults_for(platform: Platform) -> Self {
        let mut bindings = Self {
            actions: Vec::with_capacity(DEFINITIONS.len()),
            index: HashMap::with_capacity(DEFINITIONS.len()),
        };
        for definition in DEFINITIONS {
            let keys = platform_keys(definition.id, platform).unwrap_or(definition.keys);
            let keys = keys
                .iter()
                .filter_map(|k| KeyBinding::parse(k).ok())
                .collect();
            bindings.set(definition.id, keys);
        }
        bindings
    }

    /// The Unix defaults with `path` on top; see [`Self::load_for`].
    pub fn load(path: &Path) -> Result<(Self, Vec<String>), TuiError> {
        Self::load_for(path, Platform::Unix)
    }

    /// The platform's defaults with the user's `keybindings.json` on top. A missing file
    /// means the defaults; a file that is not a JSON object is an error; unknown actions
    /// and keys that do not parse are skipped with a warning each.
    pub fn load_for(path: &Path, platform: Platform) -> Result<(Self, Vec<String>), TuiError> {
        let mut bindings = Self::defaults_for(platform);
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((bindings, Vec::new()));
            }
            Err(e) => {
                return Err(TuiError::Keybindings {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                });
            }
        };
        let invalid = |reason: String| TuiError::Keybindings {
            path: path.display().to_string(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        let serde_json::Value::Object(object) = value else {
            return Err(invalid(
                "expected a JSON object mapping action ids to keys".into(),
            ));
        };
        let warnings = bindings.apply_user(&object);
        Ok((bindings, warnings))
    }

    /// Applies user bindings (the object of a `keybindings.json`); returns warnings.
    pub fn apply_user(
        &mut self,
        object: &serde_json::Map<String, serde_json::Value>,
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        let mut claims: Vec<(KeyBinding, Vec<String>)> = Vec::new();
        for (name, value) in object {
            let id = match LEGACY_NAMES.iter().find(|(old, _)| old == name) {
                // The new id wins when the file has both.
                Some((_, new)) if object.contains_key(*new) => continue,
                Some((_, new)) => *new,
                None => name.as_str(),
            };
            if !self.index.contains_key(id) {
                warnings.push(format!("unknown action \"{name}\" ignored"));
                continue;
            }
            let texts: Vec<&str> = match value {
                serde_json::Value::String(s) => vec![s.as_str()],
                serde_json::Value::Array(items) => {
                    let texts: Vec<&str> = items.iter().filter_map(|v| v.as_str()).collect();
                    if texts.len() != items.len() {
                        warnings.push(format!(
                            "\"{name}\" must be a key or a list of keys (strings); ignored"
                        ));
                        continue;
                    }
                    texts
                }
                _ => {
                    warnings.push(format!(
                        "\"{name}\" must be a key or a list of keys (strings); ignored"
                    ));
                    continue;
                }
            };
            let mut keys: Vec<KeyBinding> = Vec::new();
            for text in texts {
                match KeyBinding::parse(text) {
                    Ok(key) if keys.contains(&key) => {}
                    Ok(key) => keys.push(key),
                    Err(reason) => {
                        warnings.push(format!("\"{text}\" for \"{name}\" is not a key: {reason}"));
                    }
                }
            }
            for key in &keys {
                match claims.iter_mut().find(|(k, _)| k == key) {
                    Some((_, ids)) => ids.push(id.to_owned()),
                    None => claims.push((key.clone(), vec![id.to_owned()])),
                }
            }
            self.set(id, keys);
        }
        for (key, ids) in claims {
            if ids.len() > 1 {
                warnings.push(format!(
                    "\"{key}\" is bound to more than one action: {}",
                    ids.join(", ")
                ));
            }
        }
        warnings
    }

    /// Replaces the keys of `action` (adding the action if it is new, as extension
    /// shortcuts do).
    pub fn set(&mut self, action: &str, keys: Vec<KeyBinding>) {
        match self.index.get(action) {
            Some(&at) => self.actions[at].1 = keys,
            None => {
                self.index.insert(action.to_owned(), self.actions.len());
                self.actions.push((action.to_owned(), keys));
            }
        }
    }

    /// True when `key` is one of the keys of `action`.
    pub fn matches(&self, action: &str, key: &Key) -> bool {
        self.keys_for(action).iter().any(|k| k.matches(key))
    }

    /// The keys of `action` (empty for unbound and unknown actions).
    pub fn keys_for(&self, action: &str) -> &[KeyBinding] {
        self.index
            .get(action)
            .and_then(|&at| self.actions.get(at))
            .map_or(&[], |(_, keys)| keys.as_slice())
    }

    /// Every action with its keys, built-in actions first in the reference's order.
    pub fn actions(&self) -> impl Iterator<Item = (&str, &[KeyBinding])> {
        self.actions
            .iter()
            .map(|(id, keys)| (id.as_str(), keys.as_slice()))
    }

    /// What a built-in action does, for /hotkeys.
    pub fn description(action: &str) -> Option<&'static str> {
        DEFINITIONS
            .iter()
            .find(|d| d.id == action)
            .map(|d| d.description)
    }

    /// True for the actions this crate and the app define (not extension shortcuts).
    pub fn is_builtin(action: &str) -> bool {
        DEFINITIONS.iter().any(|d| d.id == action)
    }
}

#[cfg(test)]
mod tests;
