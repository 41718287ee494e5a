//! The web tools' state: which of `webfetch` and `websearch` are on by default, the search
//! provider and the Brave key, kept in `<agentDir>/tools.json` (owner-only, since it may hold
//! a key) and changed by `/tools`.
//!
//! ```json
//! {"webfetch": true, "websearch": false, "searchProvider": "brave", "braveApiKey": "…"}
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

pub use knightcode_tools::SearchProvider;
use knightcode_tools::SearchSettings;
use serde_json::{Map, Value};

use crate::error::RuntimeError;

/// The tools `/tools` switches.
pub const WEB_TOOL_NAMES: [&str; 2] = ["webfetch", "websearch"];

/// How a web tool is switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMode {
    Off,
    /// On for this session.
    On,
    /// On now and in every later session.
    Always,
}

impl ToolMode {
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "off" => Some(Self::Off),
            "on" => Some(Self::On),
            "always" => Some(Self::Always),
            _ => None,
        }
    }
}

/// A `/tools` change: a tool's mode, the search provider (with a Brave key), or neither
/// (just report).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebToolsChange {
    pub tool: Option<(String, ToolMode)>,
    pub provider: Option<SearchProvider>,
    pub brave_api_key: Option<String>,
}

/// One web tool as `/tools` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebToolStatus {
    pub name: String,
    /// Offered to the model in this session.
    pub active: bool,
    /// On in every new session (`tools.json`).
    pub always: bool,
}

/// What `/tools` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebToolsStatus {
    pub tools: Vec<WebToolStatus>,
    pub provider: SearchProvider,
    /// Where the Brave key comes from: `tools.json`, `BRAVE_API_KEY`, or nowhere.
    pub brave_key_source: Option<&'static str>,
    /// Set when `tools.json` could not be written (the change holds for this session).
    pub save_error: Option<String>,
}

/// `tools.json` and the live search settings the `websearch` tool reads.
#[derive(Debug, Clone)]
pub struct WebTools {
    path: PathBuf,
    file: Map<String, Value>,
    env_brave_key: Option<String>,
    search: Arc<Mutex<SearchSettings>>,
}

impl WebTools {
    /// Reads `<agent_dir>/tools.json`; a missing or unreadable file means everything off.
    pub fn load(agent_dir: &Path, env_brave_key: Option<String>) -> Self {
        let path = agent_dir.join("tools.json");
        let file = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|value| match value {
                Value::Object(map) => Some(map),
                _ => None,
            })
            .unwrap_or_default();
        let tools = Self {
            path,
            file,
            env_brave_key: env_brave_key.filter(|key| !key.is_empty()),
            search: Arc::new(Mutex::new(SearchSettings::default())),
        };
        *tools.search.lock().unwrap_or_else(PoisonError::into_inner) = tools.search_settings();
        tools
    }

    /// Whether `/tools` turned `name` off (`false` in `tools.json`).
    pub fn turned_off(&self, name: &str) -> bool {
        self.file.get(name).and_then(Value::as_bool) == Some(false)
    }

    /// Whether `name` is on in every session.
    pub fn always(&self, name: &str) -> bool {
        self.file.get(name).and_then(Value::as_bool) == Some(true)
    }

    fn file_key(&self) -> Option<String> {
        self.file
            .get("braveApiKey")
            .and_then(Value::as_str)
            .filter(|key| !key.is_empty())
            .map(str::to_owned)
    }

    fn provider(&self) -> SearchProvider {
        self.file
            .get("searchProvider")
            .and_then(Value::as_str)
            .and_then(SearchProvider::parse)
            .unwrap_or_default()
    }

    fn search_settings(&self) -> SearchSettings {
        SearchSettings {
            provider: self.provider(),
            brave_api_key: self.file_key().or_else(|| self.env_brave_key.clone()),
            ..SearchSettings::default()
        }
    }

    /// What the `websearch` tool asks at every search.
    pub fn search_source(&self) -> knightcode_tools::web::SearchSettingsSource {
        let search = Arc::clone(&self.search);
        Arc::new(move || {
            search
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        })
    }

    /// Applies `change` to the file and the live search settings; `active` is the session's
    /// active tool list, updated in place.
    pub fn apply(&mut self, change: &WebToolsChange, active: &mut Vec<String>) -> WebToolsStatus {
        let mut dirty = false;
        if let Some((name, mode)) = &change.tool {
            let on = *mode != ToolMode::Off;
            if on && !active.contains(name) {
                active.push(name.clone());
            } else if !on {
                active.retain(|tool| tool != name);
            }
            let always = *mode == ToolMode::Always;
            if self.always(name) != always {
                self.file.insert(name.clone(), Value::Bool(always));
                dirty = true;
            }
        }
        if let Some(provider) = change.provider {
            self.file.insert(
                "searchProvider".to_owned(),
                Value::String(provider.as_str().to_owned()),
            );
            dirty = true;
        }
        if let Some(key) = &change.brave_api_key {
            self.file
                .insert("braveApiKey".to_owned(), Value::String(key.clone()));
            dirty = true;
        }
        *self.search.lock().unwrap_or_else(PoisonError::into_inner) = self.search_settings();
        let save_error = if dirty {
            self.save().err().map(|error| error.to_string())
        } else {
            None
        };
        let mut status = self.status(active);
        status.save_error = save_error;
        status
    }

    /// The state without changing anything.
    pub fn status(&self, active: &[String]) -> WebToolsStatus {
        WebToolsStatus {
            tools: WEB_TOOL_NAMES
                .iter()
                .map(|name| WebToolStatus {
                    name: (*name).to_owned(),
                    active: active.iter().any(|tool| tool == name),
                    always: self.always(name),
                })
                .collect(),
            provider: self.provider(),
            brave_key_source: if self.file_key().is_some() {
                Some("tools.json")
            } else if self.env_brave_key.is_some() {
                Some("BRAVE_API_KEY")
            } else {
                None
            },
            save_error: None,
        }
    }

    /// Writes the file readable by its owner only, replacing it in one step.
    fn save(&self) -> Result<(), RuntimeError> {
        let fail = |source: std::io::Error| RuntimeError::WebToolsNotSaved {
            path: self.path.clone(),
            source,
        };
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        let text = serde_json::to_string_pretty(&Value::Object(self.file.clone()))
            .unwrap_or_else(|_| "{}".to_owned());
        crate::atomic::replace(&self.path, format!("{text}\n").as_bytes(), Some(0o600))
            .map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_on_tools_and_the_key_survive_a_restart_owner_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut tools = WebTools::load(dir.path(), None);
        let mut active = vec!["read".to_owned()];
        let status = tools.apply(
            &WebToolsChange {
                tool: Some(("webfetch".into(), ToolMode::Always)),
                provider: Some(SearchProvider::Brave),
                brave_api_key: Some("k-1".into()),
            },
            &mut active,
        );
        assert_eq!(status.save_error, None);
        assert_eq!(active, ["read", "webfetch"]);
        let reloaded = WebTools::load(dir.path(), Some("env-key".into()));
        assert!(reloaded.always("webfetch"));
        assert!(!reloaded.always("websearch"));
        let settings = (reloaded.search_source())();
        assert_eq!(settings.provider, SearchProvider::Brave);
        assert_eq!(settings.brave_api_key.as_deref(), Some("k-1"));
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.path().join("tools.json"))
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or_default();
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn on_is_for_this_session_and_off_removes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut tools = WebTools::load(dir.path(), Some("env-key".into()));
        let mut active = Vec::new();
        let on = WebToolsChange {
            tool: Some(("websearch".into(), ToolMode::On)),
            ..WebToolsChange::default()
        };
        let status = tools.apply(&on, &mut active);
        assert_eq!(active, ["websearch"]);
        assert_eq!(status.brave_key_source, Some("BRAVE_API_KEY"));
        assert!(!dir.path().join("tools.json").exists());
        let off = WebToolsChange {
            tool: Some(("websearch".into(), ToolMode::Off)),
            ..WebToolsChange::default()
        };
        tools.apply(&off, &mut active);
        assert!(active.is_empty());
    }
}
