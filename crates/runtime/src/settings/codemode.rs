//! `codemode.*`: how the built-in `codemode` tool shares the model's tools with scripts.
//! `codemode.mode` `"on"` keeps declared tools declared (codemode lists the tools only
//! scripts reach); `"only"` hides the active tools scripts can call from the model while
//! codemode is active and lists them in its description. `codemode.inlineBudget` is how many
//! estimated tokens (characters / 4) of tool declarations that description inlines; tools
//! beyond it are named by namespace (0: only namespaces).

use serde_json::Value;

use super::values::Reader;

/// `codemode.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CodemodeMode {
    /// Declared tools stay declared.
    #[default]
    On,
    /// While codemode is active, the tools scripts can call are reached through it only.
    Only,
}

const MODES: [(&str, CodemodeMode); 2] = [("on", CodemodeMode::On), ("only", CodemodeMode::Only)];

/// `codemode.*` as the two files combine them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodemodeSettings {
    pub mode: CodemodeMode,
    /// `codemode.inlineBudget`: estimated tokens of declarations in codemode's description.
    pub inline_budget: u64,
}

impl Default for CodemodeSettings {
    fn default() -> Self {
        Self {
            mode: CodemodeMode::On,
            inline_budget: knightcode_codemode::DEFAULT_INLINE_BUDGET,
        }
    }
}

impl Reader<'_> {
    pub(super) fn codemode(&mut self) -> CodemodeSettings {
        let defaults = CodemodeSettings::default();
        let instead = format!("using {}", defaults.inline_budget);
        let effective = self.layers.effective;
        CodemodeSettings {
            mode: self.choice("codemode.mode", &MODES, defaults.mode),
            // A number, not only a whole one: it is an estimate anyway.
            inline_budget: self
                .read_in(
                    effective,
                    "codemode.inlineBudget",
                    "a number ≥ 0",
                    &instead,
                    |v: &Value| v.as_f64().filter(|n| *n >= 0.0).map(|n| n as u64),
                )
                .unwrap_or(defaults.inline_budget),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::PathBuf;

    use serde_json::json;

    use super::super::SettingsDiagnostic;
    use super::super::values::LayerPaths;
    use super::super::values::Layers;
    use super::*;

    fn parse(global: Value, project: Value) -> (CodemodeSettings, Vec<SettingsDiagnostic>) {
        let global = global.as_object().unwrap().clone();
        let project = project.as_object().unwrap().clone();
        let mut effective = global.clone();
        super::super::merge(&mut effective, &project);
        let paths = LayerPaths {
            global: PathBuf::from("/agent/settings.json"),
            project: PathBuf::from("/proj/.knightcode/settings.json"),
        };
        let (values, diagnostics) = super::super::values::parse(&Layers {
            effective: &effective,
            global: &global,
            project: &project,
            paths: &paths,
        });
        (values.codemode, diagnostics)
    }

    #[test]
    fn unset_is_on_with_3000_tokens() {
        let (settings, diagnostics) = parse(json!({}), json!({}));
        assert!(diagnostics.is_empty());
        assert_eq!(settings.mode, CodemodeMode::On);
        assert_eq!(settings.inline_budget, 3000);
    }

    #[test]
    fn the_project_file_wins_and_zero_is_a_budget() {
        let (settings, diagnostics) = parse(
            json!({"codemode": {"mode": "only", "inlineBudget": 500}}),
            json!({"codemode": {"inlineBudget": 0}}),
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(settings.mode, CodemodeMode::Only);
        assert_eq!(settings.inline_budget, 0);
        let (settings, _) = parse(json!({"codemode": {"inlineBudget": 120.7}}), json!({}));
        assert_eq!(settings.inline_budget, 120);
    }

    #[test]
    fn invalid_values_read_as_the_defaults_with_a_diagnostic() {
        let (settings, diagnostics) = parse(
            json!({"codemode": {"mode": "always", "inlineBudget": -1}}),
            json!({}),
        );
        assert_eq!(settings, CodemodeSettings::default());
        let errors: Vec<&str> = diagnostics.iter().map(|d| d.error.as_str()).collect();
        assert_eq!(
            errors,
            [
                "codemode.mode is \"always\", expected \"on\" or \"only\"; using \"on\"",
                "codemode.inlineBudget is -1, expected a number ≥ 0; using 3000",
            ]
        );
        let (_, diagnostics) = parse(json!({}), json!({"codemode": {"inlineBudget": "lots"}}));
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].key.as_deref(), Some("codemode.inlineBudget"));
        assert_eq!(
            diagnostics[0].path,
            PathBuf::from("/proj/.knightcode/settings.json")
        );
    }
}
