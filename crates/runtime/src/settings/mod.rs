//! Settings: `<agentDir>/settings.json` merged with the project's `.knightcode/settings.json`
//! (only when the project is trusted), per `spec/settings.md`.

use std::path::Path;
use std::path::PathBuf;

use serde_json::Map;
use serde_json::Value;

mod codemode;
mod compaction;
mod local_models;
mod sandbox;
pub mod unsupported;
mod values;

pub use self::codemode::CodemodeMode;
pub use self::codemode::CodemodeSettings;
pub use self::compaction::CompactionOverride;
pub use self::sandbox::SandboxSettings;
pub use self::values::DefaultProjectTrust;
use self::values::LayerPaths;
pub use self::values::SettingsValues;

/// Which file a setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsScope {
    Global,
    Project,
}

/// A settings problem. Without a `key`, the whole file could not be used: that scope reads
/// as `{}` and is never written. With one, that key's value was invalid and reads as its
/// default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsDiagnostic {
    pub scope: SettingsScope,
    pub path: PathBuf,
    /// The dotted key whose value was invalid.
    pub key: Option<String>,
    pub error: String,
}

impl std::fmt::Display for SettingsDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scope = match self.scope {
            SettingsScope::Global => "global",
            SettingsScope::Project => "project",
        };
        let ignoring = if self.key.is_none() { "ignoring " } else { "" };
        write!(
            f,
            "{ignoring}{scope} settings {}: {}",
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

/// The built-in active tools when `defaultTools` does not say otherwise (the tools crate
/// owns the list).
pub const DEFAULT_TOOLS: &[&str] = &knightcode_tools::DEFAULT_ACTIVE_TOOLS;

/// Loaded settings: the typed values, and the raw layers and their merge for what the typed
/// view does not cover.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    global: Map<String, Value>,
    /// The project layer without the keys only the global file may set.
    project: Map<String, Value>,
    has_project_settings: bool,
    effective: Map<String, Value>,
    paths: LayerPaths,
    values: SettingsValues,
    diagnostics: Vec<SettingsDiagnostic>,
}

impl Default for Settings {
    fn default() -> Self {
        Self::from_layers(Map::new(), Map::new())
    }
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
        Err(error) => return unusable_layer(path, scope, diagnostics, error.to_string()),
    };
    parse_layer(&text, path, scope, diagnostics)
}

/// Parses the text of one settings file (a leading BOM allowed, legacy keys renamed);
/// anything but a JSON object -> `{}` plus a diagnostic naming `path`.
fn parse_layer(
    text: &str,
    path: &Path,
    scope: SettingsScope,
    diagnostics: &mut Vec<SettingsDiagnostic>,
) -> Map<String, Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut map)) => {
            migrate(&mut map);
            map
        }
        Ok(_) => unusable_layer(
            path,
            scope,
            diagnostics,
            "expected a JSON object".to_owned(),
        ),
        Err(error) => unusable_layer(path, scope, diagnostics, error.to_string()),
    }
}

fn unusable_layer(
    path: &Path,
    scope: SettingsScope,
    diagnostics: &mut Vec<SettingsDiagnostic>,
    error: String,
) -> Map<String, Value> {
    diagnostics.push(SettingsDiagnostic {
        scope,
        path: path.to_owned(),
        key: None,
        error,
    });
    Map::new()
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
        let paths = LayerPaths {
            global: global_settings_path(agent_dir),
            project: project_settings_path(cwd),
        };
        let mut diagnostics = Vec::new();
        let global = read_layer(&paths.global, SettingsScope::Global, &mut diagnostics);
        let project = if project_trusted {
            read_layer(&paths.project, SettingsScope::Project, &mut diagnostics)
        } else {
            Map::new()
        };
        Self::build(global, project, paths, diagnostics)
    }

    /// Builds settings from in-memory layers (SDK use, tests). Diagnostics name the files
    /// by their paths relative to the agent and project folders.
    pub fn from_layers(global: Map<String, Value>, project: Map<String, Value>) -> Self {
        let paths = LayerPaths {
            global: PathBuf::from("settings.json"),
            project: project_settings_path(Path::new("")),
        };
        Self::build(global, project, paths, Vec::new())
    }

    /// Builds settings from the texts of the two files, read as [`Settings::load`] reads
    /// them (both trusted), without touching the disk: the fuzzing entry point.
    pub fn from_texts(global: &str, project: &str) -> Self {
        let paths = LayerPaths {
            global: PathBuf::from("settings.json"),
            project: project_settings_path(Path::new("")),
        };
        let mut diagnostics = Vec::new();
        let global = parse_layer(
            global,
            &paths.global,
            SettingsScope::Global,
            &mut diagnostics,
        );
        let project = parse_layer(
            project,
            &paths.project,
            SettingsScope::Project,
            &mut diagnostics,
        );
        Self::build(global, project, paths, diagnostics)
    }

    fn build(
        global: Map<String, Value>,
        mut project: Map<String, Value>,
        paths: LayerPaths,
        diagnostics: Vec<SettingsDiagnostic>,
    ) -> Self {
        let has_project_settings = !project.is_empty();
        for key in GLOBAL_ONLY_KEYS {
            project.remove(*key);
        }
        let mut effective = global.clone();
        merge(&mut effective, &project);
        let mut settings = Self {
            global,
            project,
            has_project_settings,
            effective,
            paths,
            values: SettingsValues::default(),
            diagnostics,
        };
        settings.parse_values();
        settings
    }

    /// Re-reads the typed view from the layers; value diagnostics are replaced, those of
    /// unusable files stay.
    fn parse_values(&mut self) {
        let (values, problems) = values::parse(&values::Layers {
            effective: &self.effective,
            global: &self.global,
            project: &self.project,
            paths: &self.paths,
        });
        self.values = values;
        self.diagnostics.retain(|d| d.key.is_none());
        self.diagnostics.extend(problems);
    }

    /// Applies runtime overrides (CLI flags, values saved by this process) on top.
    pub fn with_overrides(mut self, overrides: &Map<String, Value>) -> Self {
        merge(&mut self.effective, overrides);
        self.parse_values();
        self
    }

    /// The settings the runtime acts on, typed, with defaults filled in.
    pub fn values(&self) -> &SettingsValues {
        &self.values
    }

    /// Files that could not be used, then values that were invalid (they read as defaults).
    pub fn diagnostics(&self) -> &[SettingsDiagnostic] {
        &self.diagnostics
    }

    /// The global file could not be read: writing it would lose its content.
    pub fn global_file_unusable(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.scope == SettingsScope::Global && d.key.is_none())
    }

    /// Whether the project file contributed anything.
    pub fn has_project_settings(&self) -> bool {
        self.has_project_settings
    }

    /// A string list of one layer (`skills`, `prompts`, ...): resource entries resolve
    /// against their own file's folder, so the layers are not merged. Non-strings are
    /// left out.
    pub fn layer_strings(&self, key: &str, project: bool) -> Vec<String> {
        let layer = if project { &self.project } else { &self.global };
        match layer.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// `enableSkillCommands` (default true): whether `/skill:name` commands are offered
    /// in autocomplete (a typed one expands either way, as in the reference).
    pub fn enable_skill_commands(&self) -> bool {
        self.get("enableSkillCommands")
            .and_then(Value::as_bool)
            .unwrap_or(true)
    }

    /// The project file's own value by dotted path (`None` when it does not set it, or the
    /// project is not trusted).
    pub fn project_value(&self, dotted: &str) -> Option<&Value> {
        values::lookup(&self.project, dotted)
    }

    /// The merged raw value by dotted path (`retry.maxRetries`), for keys the typed view
    /// does not cover (extensions, keys of later features). `null` reads as unset.
    pub fn get(&self, dotted: &str) -> Option<&Value> {
        values::lookup(&self.effective, dotted)
    }
}

/// `sessionDir` as session lookup needs it, before the rest of the settings load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootstrapSessionDir {
    /// The setting that applies: the project's when the project is already trusted, else the
    /// global file's.
    pub dir: Option<String>,
    /// The project file's value when it was not used (the project is not trusted, or its
    /// trust is still to be asked).
    pub ignored_project_dir: Option<String>,
}

/// Reads `sessionDir` before the session starts. The project file's value counts only when
/// the project is trusted without a question (`--approve`, a saved decision,
/// `defaultProjectTrust: "always"`): an untrusted repository must not choose where its
/// transcripts, secrets included, are written. (The reference reads the project's value
/// before trust; its security notes call that a gap.)
pub fn bootstrap_session_dir(
    agent_dir: &Path,
    cwd: &Path,
    home: Option<&Path>,
    cli_override: Option<bool>,
) -> BootstrapSessionDir {
    let mut ignored = Vec::new();
    let session_dir = |layer: &Map<String, Value>| {
        layer
            .get("sessionDir")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let project = session_dir(&read_layer(
        &project_settings_path(cwd),
        SettingsScope::Project,
        &mut ignored,
    ));
    let global = session_dir(&read_layer(
        &global_settings_path(agent_dir),
        SettingsScope::Global,
        &mut ignored,
    ));
    if project.is_none() {
        return BootstrapSessionDir {
            dir: global,
            ignored_project_dir: None,
        };
    }
    let store = crate::trust::TrustStore::load(agent_dir).unwrap_or_default();
    let default_trust = Settings::load(agent_dir, cwd, false)
        .values()
        .default_project_trust;
    let trusted = matches!(
        crate::trust::resolve(cwd, home, cli_override, &store, default_trust),
        crate::trust::TrustResolution::Decided(crate::trust::TrustDecision { trusted: true, .. })
    );
    if trusted {
        BootstrapSessionDir {
            dir: project,
            ignored_project_dir: None,
        }
    } else {
        BootstrapSessionDir {
            dir: global,
            ignored_project_dir: project,
        }
    }
}
