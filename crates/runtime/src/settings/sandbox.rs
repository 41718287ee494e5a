//! The `sandbox` setting: the OS sandbox of the commands tools start.
//!
//! `"sandbox": "workspace-write"` or `"sandbox": {"mode", "network", "writableRoots",
//! "userCommands"}`. The user's file decides; a (trusted) project's file may only tighten
//! it: a stricter mode, the network off, user `!` commands sandboxed too. A project cannot
//! open the sandbox up, since the sandbox exists to contain what the project's own contents
//! might get the model to run.

use knightcode_sandbox::SandboxMode;
use serde_json::{Map, Value};

use super::values::{Reader, SettingsScope, lookup};

/// `sandbox.*` as the two files combine them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// `sandbox.network`: TCP and UDP allowed in the sandbox (default false).
    pub network: bool,
    /// `sandbox.writableRoots`: more folders writable under `workspace-write` (`~` expanded
    /// when used; relative ones are relative to the project).
    pub writable_roots: Vec<String>,
    /// `sandbox.userCommands`: the user's own `!` commands run sandboxed too (default false).
    pub user_commands: bool,
}

const MODES: &str = "\"off\", \"read-only\" or \"workspace-write\"";

/// How strict a mode is: a project may move only up this order.
fn strictness(mode: SandboxMode) -> u8 {
    match mode {
        SandboxMode::Off => 0,
        SandboxMode::WorkspaceWrite => 1,
        SandboxMode::ReadOnly => 2,
    }
}

impl Reader<'_> {
    pub(super) fn sandbox(&mut self) -> SandboxSettings {
        let global = self.layers.global;
        let project = self.layers.project;
        let mut settings = SandboxSettings::default();
        if let Some(mode) = self.sandbox_mode(global, SettingsScope::Global) {
            settings.mode = mode;
        }
        settings.network =
            self.sandbox_flag(global, SettingsScope::Global, "network") == Some(true);
        settings.user_commands =
            self.sandbox_flag(global, SettingsScope::Global, "userCommands") == Some(true);
        if let Some(roots) = lookup(global, "sandbox.writableRoots") {
            match roots.as_array().and_then(|items| {
                items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            }) {
                Some(roots) => settings.writable_roots = roots,
                None => self.push(
                    SettingsScope::Global,
                    "sandbox.writableRoots",
                    roots,
                    "an array of folder paths",
                    "ignoring it",
                ),
            }
        }

        if let Some(mode) = self.sandbox_mode(project, SettingsScope::Project) {
            if strictness(mode) >= strictness(settings.mode) {
                settings.mode = mode;
            } else {
                self.widening("sandbox.mode", Value::String(mode.as_str().to_owned()));
            }
        }
        match self.sandbox_flag(project, SettingsScope::Project, "network") {
            Some(false) => settings.network = false,
            Some(true) if !settings.network => self.widening("sandbox.network", Value::Bool(true)),
            _ => {}
        }
        match self.sandbox_flag(project, SettingsScope::Project, "userCommands") {
            Some(true) => settings.user_commands = true,
            Some(false) if settings.user_commands => {
                self.widening("sandbox.userCommands", Value::Bool(false));
            }
            _ => {}
        }
        if let Some(roots) = lookup(project, "sandbox.writableRoots") {
            self.push(
                SettingsScope::Project,
                "sandbox.writableRoots",
                roots,
                "to be set in the user's settings",
                "ignoring it: a project cannot widen the sandbox",
            );
        }
        settings
    }

    /// `sandbox` as a string, or `sandbox.mode`.
    fn sandbox_mode(
        &mut self,
        layer: &Map<String, Value>,
        scope: SettingsScope,
    ) -> Option<SandboxMode> {
        let (key, value) = match lookup(layer, "sandbox")? {
            Value::Object(_) => ("sandbox.mode", lookup(layer, "sandbox.mode")?),
            other => ("sandbox", other),
        };
        let mode = value.as_str().and_then(|text| text.parse().ok());
        if mode.is_none() {
            self.push(scope, key, value, MODES, "leaving the sandbox as it was");
        }
        mode
    }

    fn sandbox_flag(
        &mut self,
        layer: &Map<String, Value>,
        scope: SettingsScope,
        field: &str,
    ) -> Option<bool> {
        let key = format!("sandbox.{field}");
        let value = lookup(layer, &key)?;
        let flag = value.as_bool();
        if flag.is_none() {
            self.push(scope, &key, value, "true or false", "ignoring it");
        }
        flag
    }

    /// A project value that would open the user's sandbox up.
    fn widening(&mut self, key: &str, found: Value) {
        self.push(
            SettingsScope::Project,
            key,
            &found,
            "a setting at least as strict as the user's",
            "ignoring it: a project can tighten the sandbox, never widen it",
        );
    }
}
