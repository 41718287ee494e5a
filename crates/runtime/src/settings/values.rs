//! The typed view of the settings the runtime reads, parsed once from the merged layers.
//!
//! The spec gives each key a type and a default but does not say what happens to a value of
//! the wrong type or outside the enumeration. Here such a value reads as the key's default
//! (what the string getters did before) and produces a [`SettingsDiagnostic`] that names the
//! key, what was found and what is accepted, so a typo does not go unnoticed.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use knightcode_agent::QueueMode;
use knightcode_ai::RetryPolicy;
use knightcode_ai::ThinkingLevel;
use serde_json::Map;
use serde_json::Value;

use super::CompactionOverride;
use super::DEFAULT_TOOLS;
use super::SettingsDiagnostic;
pub(super) use super::SettingsScope;

/// `defaultProjectTrust`: what to do with a folder that has protected resources and no
/// saved decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultProjectTrust {
    /// Prompt when a UI can; otherwise do not trust.
    #[default]
    Ask,
    Always,
    Never,
}

impl DefaultProjectTrust {
    /// The settings spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ask => "ask",
            Self::Always => "always",
            Self::Never => "never",
        }
    }
}

/// Every setting the runtime acts on, with the spec's defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsValues {
    pub default_provider: Option<String>,
    pub default_model: Option<String>,
    /// `enabledModels`: the scope patterns for start-up and model cycling (like `--models`).
    pub enabled_models: Option<Vec<String>>,
    /// `defaultThinkingLevel`, `medium` when unset.
    pub default_thinking_level: ThinkingLevel,
    /// `modelThinkingLevels`, keyed `provider/modelId`.
    pub model_thinking_levels: BTreeMap<String, ThinkingLevel>,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    pub session_dir: Option<String>,
    /// From the global file only: a project cannot vouch for itself.
    pub default_project_trust: DefaultProjectTrust,
    /// The built-in tools to activate, `+name`/`-name` entries applied.
    pub default_tools: Vec<String>,
    pub compaction_enabled: bool,
    /// `compaction.reserveTokens`: the threshold reserve and the summaries' output budget.
    pub compaction_reserve_tokens: u64,
    /// `compaction.keepRecentTokens`: recent context kept verbatim by a compaction.
    pub compaction_keep_recent_tokens: u64,
    /// `compaction.modelOverrides`, keyed `provider/modelId` (exact, case-sensitive).
    pub compaction_model_overrides: BTreeMap<String, CompactionOverride>,
    /// The reference's error for the first invalid `compaction.*` token value: compaction
    /// refuses to run with it (see `settings::compaction`).
    pub compaction_invalid: Option<String>,
    /// `branchSummary.reserveTokens`: a branch summary's input is the window less this.
    pub branch_summary_reserve_tokens: u64,
    /// `branchSummary.skipPrompt`: `/tree` leaves branches without asking for a summary.
    pub branch_summary_skip_prompt: bool,
    /// `images.autoResize`: fit images to the model's limits before sending them.
    pub images_auto_resize: bool,
    /// `images.blockImages`: no image reaches the provider.
    pub images_block_images: bool,
    /// `retry.*`: the agent-level retry of failed turns.
    pub retry: RetryPolicy,
    /// `shellPath` as written; see [`SettingsValues::shell_path`].
    pub shell_path: Option<String>,
    pub shell_command_prefix: Option<String>,
    /// `thinkingBudgets`: tokens per level for budget-based providers.
    pub thinking_budgets: knightcode_ai::ThinkingBudgets,
    /// `httpIdleTimeoutMs` and `retry.provider.*`: the provider-level retry and timeout.
    pub provider_retry: knightcode_ai::ProviderRetry,
    /// `sandbox`: the OS sandbox of tool commands (a project may only tighten it).
    pub sandbox: super::SandboxSettings,
    /// `localModels`: the local model servers to probe (none when off).
    pub local_models: Vec<knightcode_ai::local::LocalServer>,
    /// `cacheWarming`, from the global file only (it spends the user's money).
    pub cache_warming: crate::cache_warming::CacheWarmingMode,
    /// `codemode.mode` and `codemode.inlineBudget`.
    pub codemode: super::CodemodeSettings,
}

impl Default for SettingsValues {
    fn default() -> Self {
        Self {
            default_provider: None,
            default_model: None,
            enabled_models: None,
            default_thinking_level: ThinkingLevel::Medium,
            model_thinking_levels: BTreeMap::new(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            session_dir: None,
            default_project_trust: DefaultProjectTrust::Ask,
            default_tools: DEFAULT_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
            compaction_enabled: true,
            compaction_reserve_tokens: 16384,
            compaction_keep_recent_tokens: 20000,
            compaction_model_overrides: BTreeMap::new(),
            compaction_invalid: None,
            branch_summary_reserve_tokens: 16384,
            branch_summary_skip_prompt: false,
            images_auto_resize: true,
            images_block_images: false,
            retry: RetryPolicy::default(),
            shell_path: None,
            shell_command_prefix: None,
            thinking_budgets: knightcode_ai::ThinkingBudgets::default(),
            provider_retry: knightcode_ai::ProviderRetry::default(),
            sandbox: super::SandboxSettings::default(),
            local_models: knightcode_ai::local::LocalServer::defaults(),
            cache_warming: crate::cache_warming::CacheWarmingMode::Streaming,
            codemode: super::CodemodeSettings::default(),
        }
    }
}

impl SettingsValues {
    /// Per-model startup level (`modelThinkingLevels["provider/id"]`).
    pub fn model_thinking_level(&self, provider: &str, model_id: &str) -> Option<ThinkingLevel> {
        self.model_thinking_levels
            .get(&format!("{provider}/{model_id}"))
            .copied()
    }

    /// `shellPath` with a leading `~` expanded.
    pub fn shell_path(&self, home: Option<&Path>) -> Option<PathBuf> {
        let raw = self.shell_path.as_deref()?;
        Some(match (raw.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(raw),
        })
    }
}

/// Every level, by its settings spelling.
fn thinking_levels() -> [(&'static str, ThinkingLevel); ThinkingLevel::ALL.len()] {
    ThinkingLevel::ALL.map(|level| (level.as_str(), level))
}

const QUEUE_MODES: [(&str, QueueMode); 2] = [
    ("all", QueueMode::All),
    ("one-at-a-time", QueueMode::OneAtATime),
];

const PROJECT_TRUST: [(&str, DefaultProjectTrust); 3] = [
    ("ask", DefaultProjectTrust::Ask),
    ("always", DefaultProjectTrust::Always),
    ("never", DefaultProjectTrust::Never),
];

/// Where the layers came from, for diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LayerPaths {
    pub(super) global: PathBuf,
    pub(super) project: PathBuf,
}

/// The layers a value can come from: `effective` for lookups, `project` to tell which
/// file an invalid value is in, `global` for the keys only that file may set.
pub(super) struct Layers<'a> {
    pub(super) effective: &'a Map<String, Value>,
    pub(super) global: &'a Map<String, Value>,
    pub(super) project: &'a Map<String, Value>,
    pub(super) paths: &'a LayerPaths,
}

/// Parses every known setting; invalid values become diagnostics and read as the default.
pub(super) fn parse(layers: &Layers<'_>) -> (SettingsValues, Vec<SettingsDiagnostic>) {
    let mut reader = Reader {
        layers,
        diagnostics: Vec::new(),
    };
    let defaults = SettingsValues::default();
    let compaction = super::compaction::parse(layers.effective);
    let values = SettingsValues {
        default_provider: reader.string("defaultProvider"),
        default_model: reader.string("defaultModel"),
        enabled_models: reader.strings("enabledModels"),
        default_thinking_level: reader.choice(
            "defaultThinkingLevel",
            &thinking_levels(),
            defaults.default_thinking_level,
        ),
        model_thinking_levels: reader.model_thinking_levels(),
        steering_mode: reader.choice("steeringMode", &QUEUE_MODES, defaults.steering_mode),
        follow_up_mode: reader.choice("followUpMode", &QUEUE_MODES, defaults.follow_up_mode),
        session_dir: reader.string("sessionDir"),
        default_project_trust: reader.choice_in(
            layers.global,
            "defaultProjectTrust",
            &PROJECT_TRUST,
            defaults.default_project_trust,
        ),
        default_tools: reader
            .strings("defaultTools")
            .map_or(defaults.default_tools, |names| resolve_tools(&names)),
        compaction_enabled: reader.boolean("compaction.enabled", defaults.compaction_enabled),
        compaction_reserve_tokens: reader.count(
            "compaction.reserveTokens",
            defaults.compaction_reserve_tokens,
        ),
        compaction_keep_recent_tokens: reader.count(
            "compaction.keepRecentTokens",
            defaults.compaction_keep_recent_tokens,
        ),
        compaction_model_overrides: compaction.overrides,
        compaction_invalid: compaction.invalid,
        branch_summary_reserve_tokens: reader.count(
            "branchSummary.reserveTokens",
            defaults.branch_summary_reserve_tokens,
        ),
        branch_summary_skip_prompt: reader.boolean(
            "branchSummary.skipPrompt",
            defaults.branch_summary_skip_prompt,
        ),
        images_auto_resize: reader.boolean("images.autoResize", defaults.images_auto_resize),
        images_block_images: reader.boolean("images.blockImages", defaults.images_block_images),
        // Negative counts and delays clamp to zero, as before the typed view.
        retry: RetryPolicy {
            enabled: reader.boolean("retry.enabled", defaults.retry.enabled),
            max_retries: reader
                .number("retry.maxRetries", defaults.retry.max_retries.into())
                .max(0.0) as u32,
            base_delay_ms: reader
                .number("retry.baseDelayMs", defaults.retry.base_delay_ms as f64)
                .max(0.0) as u64,
            max_agent_delay_ms: reader
                .number(
                    "retry.maxAgentDelayMs",
                    defaults.retry.max_agent_delay_ms as f64,
                )
                .max(0.0) as u64,
        },
        shell_path: reader.string("shellPath"),
        shell_command_prefix: reader.string("shellCommandPrefix"),
        thinking_budgets: knightcode_ai::ThinkingBudgets {
            minimal: reader.optional_count("thinkingBudgets.minimal"),
            low: reader.optional_count("thinkingBudgets.low"),
            medium: reader.optional_count("thinkingBudgets.medium"),
            high: reader.optional_count("thinkingBudgets.high"),
        },
        provider_retry: reader.provider_retry(),
        sandbox: reader.sandbox(),
        local_models: super::local_models::parse(layers.effective, layers.global),
        cache_warming: reader.choice_in(
            layers.global,
            "cacheWarming",
            &crate::cache_warming::CacheWarmingMode::ALL.map(|mode| (mode.as_str(), mode)),
            defaults.cache_warming,
        ),
        codemode: reader.codemode(),
    };
    (values, reader.diagnostics)
}

/// Plain names form the base (the built-in default when there are none), then `+name` adds
/// and `-name` removes, in order.
fn resolve_tools(names: &[String]) -> Vec<String> {
    let is_modifier = |n: &str| n.starts_with('+') || n.starts_with('-');
    let plain: Vec<String> = names.iter().filter(|n| !is_modifier(n)).cloned().collect();
    let mut tools = if !plain.is_empty() || names.is_empty() {
        plain
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

/// A value by dotted path; `null` counts as unset.
pub(super) fn lookup<'a>(map: &'a Map<String, Value>, dotted: &str) -> Option<&'a Value> {
    let mut parts = dotted.split('.');
    let mut current = map.get(parts.next()?)?;
    for part in parts {
        current = current.as_object()?.get(part)?;
    }
    (!current.is_null()).then_some(current)
}

/// A found value as the message shows it: JSON, shortened when long.
fn shown(value: &Value) -> String {
    const LIMIT: usize = 60;
    let text = value.to_string();
    if text.chars().count() <= LIMIT {
        return text;
    }
    let mut short: String = text.chars().take(LIMIT).collect();
    short.push('…');
    short
}

/// `"a", "b" or "c"`.
fn alternatives<T>(options: &[(&str, T)]) -> String {
    let quoted: Vec<String> = options
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

pub(super) struct Reader<'a> {
    pub(super) layers: &'a Layers<'a>,
    diagnostics: Vec<SettingsDiagnostic>,
}

impl<'a> Reader<'a> {
    /// The file the effective value of `key` came from.
    fn blame(&self, key: &str) -> SettingsScope {
        if lookup(self.layers.project, key).is_some() {
            SettingsScope::Project
        } else {
            SettingsScope::Global
        }
    }

    pub(super) fn push(
        &mut self,
        scope: SettingsScope,
        key: &str,
        found: &Value,
        expected: &str,
        instead: &str,
    ) {
        let path = match scope {
            SettingsScope::Global => self.layers.paths.global.clone(),
            SettingsScope::Project => self.layers.paths.project.clone(),
        };
        self.diagnostics.push(SettingsDiagnostic {
            scope,
            path,
            key: Some(key.to_owned()),
            error: format!("{key} is {}, expected {expected}; {instead}", shown(found)),
        });
    }

    /// The merged value of `key` as `read` takes it; see [`Self::read_in`].
    fn read<T>(
        &mut self,
        key: &str,
        expected: &str,
        instead: &str,
        read: impl Fn(&'a Value) -> Option<T>,
    ) -> Option<T> {
        self.read_in(self.layers.effective, key, expected, instead, read)
    }

    /// The value of `key` in `layer` as `read` takes it; a value it does not take is
    /// diagnosed (saying what happens `instead`) and reads as unset.
    pub(super) fn read_in<T>(
        &mut self,
        layer: &'a Map<String, Value>,
        key: &str,
        expected: &str,
        instead: &str,
        read: impl Fn(&'a Value) -> Option<T>,
    ) -> Option<T> {
        let value = lookup(layer, key)?;
        let taken = read(value);
        if taken.is_none() {
            self.push(self.blame(key), key, value, expected, instead);
        }
        taken
    }

    fn string(&mut self, key: &str) -> Option<String> {
        self.read(key, "a string", "ignoring it", |v| {
            v.as_str().map(str::to_owned)
        })
    }

    fn boolean(&mut self, key: &str, default: bool) -> bool {
        let instead = format!("using {default}");
        self.read(key, "true or false", &instead, Value::as_bool)
            .unwrap_or(default)
    }

    /// A token count: a non-negative whole number.
    fn count(&mut self, key: &str, default: u64) -> u64 {
        let instead = format!("using {default}");
        self.read(key, "a non-negative whole number", &instead, Value::as_u64)
            .unwrap_or(default)
    }

    /// A whole number ≥ 0 that has no default of its own (unset: `None`).
    fn optional_count(&mut self, key: &str) -> Option<u64> {
        self.read(
            key,
            "a non-negative whole number",
            "using the built-in value",
            Value::as_u64,
        )
    }

    /// A timeout in milliseconds: a number ≥ 0 or `"disabled"` (0 = none).
    fn timeout(&mut self, key: &str, default: u64) -> u64 {
        let instead = format!("using {default}");
        self.read(key, "a number ≥ 0 or \"disabled\"", &instead, |v| match v {
            Value::String(s) if s == "disabled" => Some(0),
            Value::Number(n) => n.as_f64().filter(|n| *n >= 0.0).map(|n| n as u64),
            _ => None,
        })
        .unwrap_or(default)
    }

    /// `httpIdleTimeoutMs` (default 300000) is the provider timeout unless
    /// `retry.provider.timeoutMs` says otherwise; `retry.provider.maxRetries` (0) and
    /// `maxRetryDelayMs` (60000, 0 = no limit).
    fn provider_retry(&mut self) -> knightcode_ai::ProviderRetry {
        let defaults = knightcode_ai::ProviderRetry::default();
        let idle = self.timeout("httpIdleTimeoutMs", defaults.timeout_ms);
        knightcode_ai::ProviderRetry {
            timeout_ms: self.timeout("retry.provider.timeoutMs", idle),
            max_retries: self
                .number("retry.provider.maxRetries", defaults.max_retries.into())
                .max(0.0) as u32,
            max_retry_delay_ms: self
                .number(
                    "retry.provider.maxRetryDelayMs",
                    defaults.max_retry_delay_ms as f64,
                )
                .max(0.0) as u64,
        }
    }

    fn number(&mut self, key: &str, default: f64) -> f64 {
        let instead = format!("using {default}");
        self.read(key, "a number", &instead, Value::as_f64)
            .unwrap_or(default)
    }

    pub(super) fn choice<T: Copy + PartialEq>(
        &mut self,
        key: &str,
        options: &[(&str, T)],
        default: T,
    ) -> T {
        self.choice_in(self.layers.effective, key, options, default)
    }

    fn choice_in<T: Copy + PartialEq>(
        &mut self,
        layer: &'a Map<String, Value>,
        key: &str,
        options: &[(&str, T)],
        default: T,
    ) -> T {
        let expected = alternatives(options);
        let instead = using(options, default);
        self.read_in(layer, key, &expected, &instead, |v| pick(v, options))
            .unwrap_or(default)
    }

    /// An array of strings; entries that are not strings are diagnosed and left out.
    fn strings(&mut self, key: &str) -> Option<Vec<String>> {
        let entries = self.read(key, "an array of strings", "ignoring it", Value::as_array)?;
        let mut names = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            match entry.as_str() {
                Some(name) => names.push(name.to_owned()),
                None => {
                    let scope = self.blame(key);
                    self.push(
                        scope,
                        &format!("{key}[{index}]"),
                        entry,
                        "a string",
                        "ignoring it",
                    );
                }
            }
        }
        Some(names)
    }

    fn model_thinking_levels(&mut self) -> BTreeMap<String, ThinkingLevel> {
        const KEY: &str = "modelThinkingLevels";
        let expected = "an object of \"provider/model\": level";
        let Some(entries) = self.read(KEY, expected, "ignoring it", Value::as_object) else {
            return BTreeMap::new();
        };
        let mut levels = BTreeMap::new();
        for (model, level) in entries {
            if level.is_null() {
                continue;
            }
            if let Some(parsed) = pick(level, &thinking_levels()) {
                levels.insert(model.clone(), parsed);
                continue;
            }
            let from_project = lookup(self.layers.project, KEY)
                .and_then(|p| p.get(model))
                .is_some_and(|v| !v.is_null());
            let scope = if from_project {
                SettingsScope::Project
            } else {
                SettingsScope::Global
            };
            // The model name holds dots and slashes: quote it rather than dot it on.
            let key = format!("{KEY}[\"{model}\"]");
            self.push(
                scope,
                &key,
                level,
                &alternatives(&thinking_levels()),
                "ignoring it",
            );
        }
        levels
    }
}

fn pick<T: Copy>(value: &Value, options: &[(&str, T)]) -> Option<T> {
    let text = value.as_str()?;
    options
        .iter()
        .find(|(name, _)| *name == text)
        .map(|(_, choice)| *choice)
}

fn using<T: Copy + PartialEq>(options: &[(&str, T)], default: T) -> String {
    options
        .iter()
        .find(|(_, choice)| *choice == default)
        .map_or_else(
            || "using the default".to_owned(),
            |(name, _)| format!("using \"{name}\""),
        )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn parse_layers(global: Value, project: Value) -> (SettingsValues, Vec<SettingsDiagnostic>) {
        let global = global.as_object().unwrap().clone();
        let project = project.as_object().unwrap().clone();
        let mut effective = global.clone();
        super::super::merge(&mut effective, &project);
        let paths = LayerPaths {
            global: PathBuf::from("/agent/settings.json"),
            project: PathBuf::from("/proj/.knightcode/settings.json"),
        };
        parse(&Layers {
            effective: &effective,
            global: &global,
            project: &project,
            paths: &paths,
        })
    }

    #[test]
    fn empty_layers_give_the_spec_defaults() {
        let (values, diagnostics) = parse_layers(json!({}), json!({}));
        assert!(diagnostics.is_empty());
        assert_eq!(values, SettingsValues::default());
        assert_eq!(values.default_thinking_level, ThinkingLevel::Medium);
        assert_eq!(values.steering_mode, QueueMode::OneAtATime);
        assert_eq!(values.follow_up_mode, QueueMode::OneAtATime);
        assert_eq!(values.default_project_trust, DefaultProjectTrust::Ask);
        assert_eq!(values.default_tools, ["read", "bash", "edit", "write"]);
        assert!(values.compaction_enabled);
        assert_eq!(values.compaction_reserve_tokens, 16384);
        assert_eq!(values.compaction_keep_recent_tokens, 20000);
        assert_eq!(
            values.retry,
            RetryPolicy {
                enabled: true,
                max_retries: 3,
                base_delay_ms: 2000,
                max_agent_delay_ms: 60_000
            }
        );
    }

    #[test]
    fn valid_values_parse_into_their_types() {
        let (values, diagnostics) = parse_layers(
            json!({
                "defaultProvider": "anthropic",
                "defaultModel": "claude",
                "enabledModels": ["a/*", "b"],
                "defaultThinkingLevel": "xhigh",
                "modelThinkingLevels": {"openai/gpt-5.1": "low", "x/y": null},
                "steeringMode": "all",
                "followUpMode": "all",
                "sessionDir": "sessions",
                "defaultProjectTrust": "never",
                "defaultTools": ["read", "+grep"],
                "compaction": {"enabled": false, "reserveTokens": 100, "keepRecentTokens": 0},
                "retry": {"enabled": false, "maxRetries": 7, "baseDelayMs": 10, "maxAgentDelayMs": -5},
                "shellPath": "~/bin/zsh",
                "shellCommandPrefix": "set -e"
            }),
            json!({}),
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(values.default_provider.as_deref(), Some("anthropic"));
        assert_eq!(values.default_model.as_deref(), Some("claude"));
        assert_eq!(
            values.enabled_models,
            Some(vec!["a/*".to_owned(), "b".to_owned()])
        );
        assert_eq!(values.default_thinking_level, ThinkingLevel::Xhigh);
        assert_eq!(
            values.model_thinking_level("openai", "gpt-5.1"),
            Some(ThinkingLevel::Low)
        );
        assert_eq!(values.model_thinking_level("x", "y"), None);
        assert_eq!(values.steering_mode, QueueMode::All);
        assert_eq!(values.follow_up_mode, QueueMode::All);
        assert_eq!(values.session_dir.as_deref(), Some("sessions"));
        assert_eq!(values.default_project_trust, DefaultProjectTrust::Never);
        assert_eq!(values.default_tools, ["read", "grep"]);
        assert_eq!(values.compaction_reserve_tokens, 100);
        assert_eq!(values.compaction_keep_recent_tokens, 0);
        assert!(!values.compaction_enabled);
        assert_eq!(
            values.retry,
            RetryPolicy {
                enabled: false,
                max_retries: 7,
                base_delay_ms: 10,
                max_agent_delay_ms: 0
            },
            "negative delays clamp to zero"
        );
        assert_eq!(
            values.shell_path(Some(Path::new("/home/u"))),
            Some(PathBuf::from("/home/u/bin/zsh"))
        );
        assert_eq!(values.shell_command_prefix.as_deref(), Some("set -e"));
    }

    #[test]
    fn an_invalid_enumerated_value_reads_as_the_default_and_names_the_choices() {
        let (values, diagnostics) = parse_layers(
            json!({"steeringMode": "sometimes", "defaultThinkingLevel": "extreme"}),
            json!({"followUpMode": 1}),
        );
        assert_eq!(values.steering_mode, QueueMode::OneAtATime);
        assert_eq!(values.follow_up_mode, QueueMode::OneAtATime);
        assert_eq!(values.default_thinking_level, ThinkingLevel::Medium);
        let texts: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "global settings /agent/settings.json: defaultThinkingLevel is \"extreme\", expected \"off\", \"minimal\", \"low\", \"medium\", \"high\", \"xhigh\" or \"max\"; using \"medium\"",
                "global settings /agent/settings.json: steeringMode is \"sometimes\", expected \"all\" or \"one-at-a-time\"; using \"one-at-a-time\"",
                "project settings /proj/.knightcode/settings.json: followUpMode is 1, expected \"all\" or \"one-at-a-time\"; using \"one-at-a-time\"",
            ]
        );
        assert_eq!(diagnostics[1].key.as_deref(), Some("steeringMode"));
        assert_eq!(diagnostics[2].scope, SettingsScope::Project);
    }

    #[test]
    fn values_of_the_wrong_type_are_diagnosed_and_ignored() {
        let (values, diagnostics) = parse_layers(
            json!({
                "defaultModel": 5,
                "enabledModels": "a",
                "defaultTools": ["read", 3],
                "compaction": {"enabled": "no"},
                "retry": {"maxRetries": "7"},
                "modelThinkingLevels": {"p/m": "huge"},
                "defaultProjectTrust": true
            }),
            json!({}),
        );
        assert_eq!(values.default_model, None);
        assert_eq!(values.enabled_models, None);
        assert_eq!(values.default_tools, ["read"], "string entries still count");
        assert!(values.compaction_enabled);
        assert_eq!(values.retry.max_retries, 3);
        assert!(values.model_thinking_levels.is_empty());
        assert_eq!(values.default_project_trust, DefaultProjectTrust::Ask);
        let keys: Vec<&str> = diagnostics
            .iter()
            .filter_map(|d| d.key.as_deref())
            .collect();
        assert_eq!(
            keys,
            [
                "defaultModel",
                "enabledModels",
                "modelThinkingLevels[\"p/m\"]",
                "defaultProjectTrust",
                "defaultTools[1]",
                "compaction.enabled",
                "retry.maxRetries",
            ]
        );
        let retry = diagnostics[6].to_string();
        assert!(
            retry.ends_with("retry.maxRetries is \"7\", expected a number; using 3"),
            "{retry}"
        );
    }

    #[test]
    fn default_project_trust_comes_from_the_global_layer_only() {
        let (values, diagnostics) =
            parse_layers(json!({}), json!({"defaultProjectTrust": "bogus"}));
        assert_eq!(values.default_project_trust, DefaultProjectTrust::Ask);
        assert!(
            diagnostics.is_empty(),
            "a project value is not even looked at"
        );
        let (values, _) = parse_layers(json!({"defaultProjectTrust": "always"}), json!({}));
        assert_eq!(values.default_project_trust, DefaultProjectTrust::Always);
    }

    #[test]
    fn budgets_and_the_provider_retry_come_from_their_settings() {
        let (values, diagnostics) = parse_layers(
            json!({
                "thinkingBudgets": {"low": 100, "high": 9000},
                "httpIdleTimeoutMs": "disabled",
                "retry": {"provider": {"maxRetries": 2, "maxRetryDelayMs": 0}}
            }),
            json!({}),
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(values.thinking_budgets.low, Some(100));
        assert_eq!(values.thinking_budgets.medium, None);
        assert_eq!(values.thinking_budgets.for_level(ThinkingLevel::High), 9000);
        assert_eq!(
            values.provider_retry,
            knightcode_ai::ProviderRetry {
                max_retries: 2,
                max_retry_delay_ms: 0,
                timeout_ms: 0
            }
        );
        let (values, diagnostics) = parse_layers(
            json!({"httpIdleTimeoutMs": 5000, "retry": {"provider": {"timeoutMs": -1}}}),
            json!({}),
        );
        assert_eq!(
            values.provider_retry.timeout_ms, 5000,
            "an invalid override keeps the idle timeout"
        );
        assert_eq!(diagnostics.len(), 1);
        assert!(
            diagnostics[0]
                .to_string()
                .contains("retry.provider.timeoutMs")
        );
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        let long = "x".repeat(200);
        let (_, diagnostics) = parse_layers(json!({"steeringMode": long}), json!({}));
        let text = diagnostics[0].to_string();
        assert!(text.contains('…'), "{text}");
        assert!(text.len() < 200, "{text}");
    }
}
