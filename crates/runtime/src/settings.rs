//! Settings: `<agentDir>/settings.json` merged with the project's `.knightcode/settings.json`
//! (only when the project is trusted), per `spec/settings.md`.

use std::path::Path;
use std::path::PathBuf;

use serde_json::Map;
use serde_json::Value;

/// Which file a setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsScope {
    Global,
    Project,
}

/// A settings file that could not be used; that scope reads as `{}` and is never written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsDiagnostic {
    pub scope: SettingsScope,
    pub path: PathBuf,
    pub error: String,
}

impl std::fmt::Display for SettingsDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ignoring {} settings {}: {}",
            match self.scope {
                SettingsScope::Global => "global",
                SettingsScope::Project => "project",
            },
            self.path.display(),
            self.error
        )
    }
}

/// Keys only the global file may set; a project value is ignored.
const GLOBAL_ONLY_KEYS: &[&str] = &[
    "defaultProjectTrust",
    "cacheWarming",
    "autoUpdate",
    "deviceId",
    "httpProxy",
];

/// The built-in active tools when `defaultTools` does not say otherwise.
pub const DEFAULT_TOOLS: &[&str] = &["read", "bash", "edit", "write"];

/// Loaded settings: both layers and their merge.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    global: Map<String, Value>,
    project: Map<String, Value>,
    effective: Map<String, Value>,
    diagnostics: Vec<SettingsDiagnostic>,
}

/// Path of the global settings file.
pub fn global_settings_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("settings.json")
}

/// Path of the project settings file.
pub fn project_settings_path(cwd: &Path) -> PathBuf {
    cwd.join(".knightcode").join("settings.json")
}

/// Reads one settings file: missing -> `{}`; unreadable or invalid -> `{}` plus a diagnostic.
fn read_layer(
    path: &Path,
    scope: SettingsScope,
    diagnostics: &mut Vec<SettingsDiagnostic>,
) -> Map<String, Value> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Map::new(),
        Err(error) => {
            diagnostics.push(SettingsDiagnostic {
                scope,
                path: path.to_owned(),
                error: error.to_string(),
            });
            return Map::new();
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut map)) => {
            migrate(&mut map);
            map
        }
        Ok(_) => {
            diagnostics.push(SettingsDiagnostic {
                scope,
                path: path.to_owned(),
                error: "expected a JSON object".to_owned(),
            });
            Map::new()
        }
        Err(error) => {
            diagnostics.push(SettingsDiagnostic {
                scope,
                path: path.to_owned(),
                error: error.to_string(),
            });
            Map::new()
        }
    }
}

/// Renames legacy keys (applied on load).
fn migrate(map: &mut Map<String, Value>) {
    if let Some(queue_mode) = map.remove("queueMode") {
        map.entry("steeringMode").or_insert(queue_mode);
    }
    if let Some(Value::Bool(websockets)) = map.get("websockets").cloned() {
        map.remove("websockets");
        map.entry("transport").or_insert_with(|| {
            Value::String(if websockets { "websocket" } else { "sse" }.to_owned())
        });
    }
    if let Some(Value::Object(skills)) = map.get("skills").cloned() {
        map.remove("skills");
        if let Some(enable) = skills.get("enableSkillCommands") {
            map.entry("enableSkillCommands").or_insert(enable.clone());
        }
        if let Some(Value::Array(dirs)) = skills.get("customDirectories")
            && !dirs.is_empty()
        {
            map.insert("skills".to_owned(), Value::Array(dirs.clone()));
        }
    }
    if let Some(Value::Object(retry)) = map.get_mut("retry")
        && let Some(max_delay) = retry.remove("maxDelayMs")
    {
        let provider = retry
            .entry("provider")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(provider) = provider {
            provider.entry("maxRetryDelayMs").or_insert(max_delay);
        }
    }
}

/// Deep merge: objects merge recursively; arrays and scalars from `overlay` replace, `null`
/// is skipped (an unset value). `defaultTools` made only of `+name`/`-name` entries extends
/// the base list instead of replacing it.
pub fn merge(base: &mut Map<String, Value>, overlay: &Map<String, Value>) {
    for (key, value) in overlay {
        if value.is_null() {
            continue;
        }
        if key == "defaultTools"
            && let (Some(Value::Array(existing)), Value::Array(additions)) =
                (base.get_mut(key), value)
        {
            let only_modifiers = !additions.is_empty()
                && additions.iter().all(|v| {
                    v.as_str()
                        .is_some_and(|s| s.starts_with('+') || s.starts_with('-'))
                });
            if only_modifiers {
                existing.extend(additions.iter().cloned());
                continue;
            }
        }
        match (base.get_mut(key), value) {
            (Some(Value::Object(existing)), Value::Object(nested)) => merge(existing, nested),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

impl Settings {
    /// Loads both files. The project file is read only when `project_trusted`.
    pub fn load(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> Self {
        let mut diagnostics = Vec::new();
        let global = read_layer(
            &global_settings_path(agent_dir),
            SettingsScope::Global,
            &mut diagnostics,
        );
        let project = if project_trusted {
            read_layer(
                &project_settings_path(cwd),
                SettingsScope::Project,
                &mut diagnostics,
            )
        } else {
            Map::new()
        };
        let mut settings = Self::from_layers(global, project);
        settings.diagnostics = diagnostics;
        settings
    }

    /// Builds settings from in-memory layers (SDK use, tests).
    pub fn from_layers(global: Map<String, Value>, project: Map<String, Value>) -> Self {
        let mut effective = global.clone();
        let mut project_view = project.clone();
        for key in GLOBAL_ONLY_KEYS {
            project_view.remove(*key);
        }
        merge(&mut effective, &project_view);
        Self {
            global,
            project,
            effective,
            diagnostics: Vec::new(),
        }
    }

    /// Applies runtime overrides (CLI flags) on top.
    pub fn with_overrides(mut self, overrides: &Map<String, Value>) -> Self {
        merge(&mut self.effective, overrides);
        self
    }

    pub fn diagnostics(&self) -> &[SettingsDiagnostic] {
        &self.diagnostics
    }

    /// Whether the project file contributed anything.
    pub fn has_project_settings(&self) -> bool {
        !self.project.is_empty()
    }

    /// A value by dotted path (`retry.maxRetries`).
    pub fn get(&self, dotted: &str) -> Option<&Value> {
        let mut parts = dotted.split('.');
        let mut current = self.effective.get(parts.next()?)?;
        for part in parts {
            current = current.as_object()?.get(part)?;
        }
        Some(current)
    }

    fn string(&self, dotted: &str) -> Option<&str> {
        self.get(dotted).and_then(Value::as_str)
    }

    fn number(&self, dotted: &str) -> Option<f64> {
        self.get(dotted).and_then(Value::as_f64)
    }

    fn boolean(&self, dotted: &str) -> Option<bool> {
        self.get(dotted).and_then(Value::as_bool)
    }

    pub fn default_provider(&self) -> Option<&str> {
        self.string("defaultProvider")
    }

    pub fn default_model(&self) -> Option<&str> {
        self.string("defaultModel")
    }

    /// `enabledModels`: the scope patterns for start-up and model cycling (like `--models`).
    pub fn enabled_models(&self) -> Option<Vec<String>> {
        let entries = self.get("enabledModels")?.as_array()?;
        Some(
            entries
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        )
    }

    /// `defaultThinkingLevel`, `medium` when unset.
    pub fn default_thinking_level(&self) -> &str {
        self.string("defaultThinkingLevel").unwrap_or("medium")
    }

    /// Per-model startup level (`modelThinkingLevels["provider/id"]`).
    pub fn model_thinking_level(&self, provider: &str, model_id: &str) -> Option<&str> {
        self.get("modelThinkingLevels")?
            .as_object()?
            .get(&format!("{provider}/{model_id}"))?
            .as_str()
    }

    /// `steeringMode`: `one-at-a-time` (default) or `all`.
    pub fn steering_mode(&self) -> &str {
        self.string("steeringMode").unwrap_or("one-at-a-time")
    }

    /// `followUpMode`: `one-at-a-time` (default) or `all`.
    pub fn follow_up_mode(&self) -> &str {
        self.string("followUpMode").unwrap_or("one-at-a-time")
    }

    pub fn session_dir(&self) -> Option<&str> {
        self.string("sessionDir")
    }

    /// `defaultProjectTrust` from the global file only: `ask` (default), `always`, `never`.
    pub fn default_project_trust(&self) -> &str {
        self.global
            .get("defaultProjectTrust")
            .and_then(Value::as_str)
            .unwrap_or("ask")
    }

    /// The built-in tools to activate: plain names form the base (the built-in default when
    /// there are none), then `+name` adds and `-name` removes, in order.
    pub fn default_tools(&self) -> Vec<String> {
        let Some(Value::Array(entries)) = self.get("defaultTools") else {
            return DEFAULT_TOOLS.iter().map(|s| (*s).to_owned()).collect();
        };
        let names: Vec<&str> = entries.iter().filter_map(Value::as_str).collect();
        let plain: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !n.starts_with('+') && !n.starts_with('-'))
            .collect();
        let mut tools: Vec<String> = if !plain.is_empty() || names.is_empty() {
            plain.iter().map(|s| (*s).to_owned()).collect()
        } else {
            DEFAULT_TOOLS.iter().map(|s| (*s).to_owned()).collect()
        };
        for name in names {
            if let Some(added) = name.strip_prefix('+') {
                if !tools.iter().any(|t| t == added) {
                    tools.push(added.to_owned());
                }
            } else if let Some(removed) = name.strip_prefix('-') {
                tools.retain(|t| t != removed);
            }
        }
        tools
    }

    /// Agent-level retry of failed turns.
    pub fn retry(&self) -> RetrySettings {
        RetrySettings {
            enabled: self.boolean("retry.enabled").unwrap_or(true),
            max_retries: self
                .number("retry.maxRetries")
                .map_or(3, |n| n.max(0.0) as u32),
            base_delay_ms: self
                .number("retry.baseDelayMs")
                .map_or(2000, |n| n.max(0.0) as u64),
            max_delay_ms: self
                .number("retry.maxAgentDelayMs")
                .map_or(60_000, |n| n.max(0.0) as u64),
        }
    }

    /// `shellPath` with a leading `~` expanded.
    pub fn shell_path(&self, home: Option<&Path>) -> Option<PathBuf> {
        let raw = self.string("shellPath")?;
        Some(match (raw.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(raw),
        })
    }

    pub fn shell_command_prefix(&self) -> Option<&str> {
        self.string("shellCommandPrefix")
    }
}

/// `retry.*` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySettings {
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
}

/// Reads only `sessionDir`, from the project file too, before trust is resolved: session
/// lookup happens first (the seed documents this exception).
pub fn bootstrap_session_dir(agent_dir: &Path, cwd: &Path) -> Option<String> {
    let mut ignored = Vec::new();
    let project = read_layer(
        &project_settings_path(cwd),
        SettingsScope::Project,
        &mut ignored,
    );
    let global = read_layer(
        &global_settings_path(agent_dir),
        SettingsScope::Global,
        &mut ignored,
    );
    [project, global].iter().find_map(|layer| {
        layer
            .get("sessionDir")
            .and_then(Value::as_str)
            .map(str::to_owned)
    })
}
