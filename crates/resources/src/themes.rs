//! Theme files (`spec/resources.md` §5): the JSON format of the reference (`name`, `vars`,
//! `colors`, `export`), its validation, where themes are found and which one a run uses.
//! Colours come out resolved (variables followed) but not styled: the interface maps the
//! roles onto its own styles.

use std::collections::BTreeMap;
use std::collections::HashSet;
use std::path::Path;
use std::path::PathBuf;

use serde_json::Value;

use crate::DiagnosticKind;
use crate::ResourceDiagnostic;
use crate::paths;

/// Every colour role a theme file must define (the reference's schema, pi 0.73.1).
pub const COLOR_ROLES: &[&str] = &[
    "accent",
    "border",
    "borderAccent",
    "borderMuted",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "text",
    "thinkingText",
    "selectedBg",
    "userMessageBg",
    "userMessageText",
    "customMessageBg",
    "customMessageText",
    "customMessageLabel",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "toolTitle",
    "toolOutput",
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdCodeBlockBorder",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdListBullet",
    "toolDiffAdded",
    "toolDiffRemoved",
    "toolDiffContext",
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
    "thinkingOff",
    "thinkingMinimal",
    "thinkingLow",
    "thinkingMedium",
    "thinkingHigh",
    "thinkingXhigh",
    "bashMode",
];

/// A resolved colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeColor {
    /// `""`: the terminal's own colour.
    Default,
    /// `0..=255`: the 256-colour palette.
    Index(u8),
    /// `"#rrggbb"`.
    Rgb(u8, u8, u8),
}

/// A loaded theme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThemeFile {
    pub name: String,
    /// `None` for the built-in themes.
    pub path: Option<PathBuf>,
    /// Every role of [`COLOR_ROLES`], and any extra role the file names.
    pub colors: BTreeMap<String, ThemeColor>,
    /// The HTML export's `pageBg`, `cardBg` and `infoBg`, those the file sets.
    pub export: BTreeMap<String, ThemeColor>,
}

impl ThemeFile {
    /// The colour of `role` ([`ThemeColor::Default`] for a role the file lacks).
    pub fn color(&self, role: &str) -> ThemeColor {
        self.colors
            .get(role)
            .copied()
            .unwrap_or(ThemeColor::Default)
    }
}

/// The built-in themes, `dark` then `light` (the reference's own files).
pub fn builtin() -> Vec<ThemeFile> {
    [
        include_str!("../themes/dark.json"),
        include_str!("../themes/light.json"),
    ]
    .iter()
    .filter_map(|text| parse(text, None).ok())
    .collect()
}

/// Reads and validates the theme in `text`; `path` is where it came from (for messages and
/// for [`ThemeFile::path`]). The error is the reference's message.
pub fn parse(text: &str, path: Option<&Path>) -> Result<ThemeFile, String> {
    let label = path.map_or_else(|| "<built-in>".to_owned(), |p| p.display().to_string());
    let json: Value =
        serde_json::from_str(text).map_err(|e| format!("Failed to parse theme {label}: {e}"))?;
    let mut missing = Vec::new();
    let mut other = Vec::new();
    let Some(object) = json.as_object() else {
        return Err(format!(
            "Invalid theme \"{label}\":\n\nOther errors:\n  - /: must be object"
        ));
    };
    let name = match object.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(_) => {
            other.push("  - /name: must be string".to_owned());
            String::new()
        }
        None => {
            other.push("  - /: must have required property 'name'".to_owned());
            String::new()
        }
    };
    if name.contains('/') {
        other.push("  - /name: must not contain '/'".to_owned());
    }
    let empty = serde_json::Map::new();
    let vars = match object.get("vars") {
        None => &empty,
        Some(Value::Object(vars)) => vars,
        Some(_) => {
            other.push("  - /vars: must be object".to_owned());
            &empty
        }
    };
    for (key, value) in vars {
        if !is_color_value(value) {
            other.push(format!("  - /vars/{key}: must be string or integer 0-255"));
        }
    }
    let colors = match object.get("colors") {
        Some(Value::Object(colors)) => colors,
        Some(_) => {
            other.push("  - /colors: must be object".to_owned());
            &empty
        }
        None => {
            other.push("  - /: must have required property 'colors'".to_owned());
            &empty
        }
    };
    if object.get("colors").is_some_and(Value::is_object) {
        missing.extend(
            COLOR_ROLES
                .iter()
                .filter(|role| !colors.contains_key(**role))
                .map(|role| (*role).to_owned()),
        );
    }
    for (key, value) in colors {
        if !is_color_value(value) {
            other.push(format!(
                "  - /colors/{key}: must be string or integer 0-255"
            ));
        }
    }
    let export = match object.get("export") {
        None => &empty,
        Some(Value::Object(export)) => export,
        Some(_) => {
            other.push("  - /export: must be object".to_owned());
            &empty
        }
    };
    for (key, value) in export {
        if !is_color_value(value) {
            other.push(format!(
                "  - /export/{key}: must be string or integer 0-255"
            ));
        }
    }
    if !missing.is_empty() || !other.is_empty() {
        let mut message = format!("Invalid theme \"{label}\":\n");
        if !missing.is_empty() {
            missing.sort();
            message.push_str("\nMissing required color tokens:\n");
            message.push_str(
                &missing
                    .iter()
                    .map(|c| format!("  - {c}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            message.push_str("\n\nPlease add these colors to your theme's \"colors\" object.");
            message.push_str(
                "\nSee the built-in themes (dark.json, light.json) for reference values.",
            );
        }
        if !other.is_empty() {
            message.push_str("\n\nOther errors:\n");
            message.push_str(&other.join("\n"));
        }
        return Err(message);
    }
    let resolve_all = |map: &serde_json::Map<String, Value>| {
        map.iter()
            .map(|(key, value)| Ok((key.clone(), resolve(value, vars)?)))
            .collect::<Result<BTreeMap<_, _>, String>>()
    };
    let colors = resolve_all(colors).map_err(|e| format!("Invalid theme \"{label}\": {e}"))?;
    let export = resolve_all(export).map_err(|e| format!("Invalid theme \"{label}\": {e}"))?;
    Ok(ThemeFile {
        name,
        path: path.map(Path::to_path_buf),
        colors,
        export,
    })
}

fn is_color_value(value: &Value) -> bool {
    value.is_string() || value.as_u64().is_some_and(|n| n <= 255)
}

/// Follows variable references to a colour: a missing or circular reference is an error
/// with the reference's wording.
fn resolve(value: &Value, vars: &serde_json::Map<String, Value>) -> Result<ThemeColor, String> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut value = value;
    loop {
        if let Some(n) = value.as_u64() {
            return u8::try_from(n)
                .map(ThemeColor::Index)
                .map_err(|_| format!("Invalid color value: {n}"));
        }
        let Some(text) = value.as_str() else {
            return Err(format!("Invalid color value: {value}"));
        };
        if text.is_empty() {
            return Ok(ThemeColor::Default);
        }
        if text.starts_with('#') {
            return hex(text).ok_or_else(|| format!("Invalid hex color: {text}"));
        }
        if !seen.insert(text) {
            return Err(format!("Circular variable reference detected: {text}"));
        }
        value = vars
            .get(text)
            .ok_or_else(|| format!("Variable reference not found: {text}"))?;
    }
}

fn hex(text: &str) -> Option<ThemeColor> {
    let digits = text.strip_prefix('#')?;
    if digits.len() != 6 || !digits.is_ascii() {
        return None;
    }
    let part = |i: usize| u8::from_str_radix(&digits[i..i + 2], 16).ok();
    Some(ThemeColor::Rgb(part(0)?, part(2)?, part(4)?))
}

/// Where to look for themes.
#[derive(Debug, Clone, Default)]
pub struct ThemeConfig {
    pub cwd: PathBuf,
    /// `<agentDir>`: `themes/` and what user settings entries resolve against.
    pub agent_dir: PathBuf,
    pub home: Option<PathBuf>,
    /// `.knightcode/themes/` and project settings entries load only in a trusted project.
    pub trusted: bool,
    /// The `themes` lists of the user and the project settings.
    pub user_settings: Vec<String>,
    pub project_settings: Vec<String>,
    /// `--theme` paths (files or folders), kept by `--no-themes`.
    pub cli: Vec<String>,
    pub no_themes: bool,
    /// The themes of `-e` packages (first, as the reference resolves them) and the paths
    /// extensions returned from `resources_discover` (last); both kept by `--no-themes`.
    pub packages: Vec<PathBuf>,
    pub extensions: Vec<PathBuf>,
}

/// The themes a run can use (built-ins first) and the problems met finding them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Themes {
    pub themes: Vec<ThemeFile>,
    pub diagnostics: Vec<ResourceDiagnostic>,
}

impl Themes {
    /// Built-ins, then `--theme` paths, then (unless `--no-themes`) project settings
    /// entries and `.knightcode/themes/` (trusted projects), user settings entries and
    /// `<agentDir>/themes/`. The first theme of a name wins; a later one is a collision.
    pub fn load(config: &ThemeConfig) -> Self {
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut diagnostics = Vec::new();
        let files_in = |path: &Path, explicit: bool, diagnostics: &mut Vec<_>| {
            if path.is_dir() {
                let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
                    .collect();
                files.sort();
                files
            } else if path.is_file() {
                vec![path.to_path_buf()]
            } else {
                if explicit {
                    diagnostics.push(ResourceDiagnostic::warning(
                        "theme path does not exist",
                        path.to_path_buf(),
                    ));
                }
                Vec::new()
            }
        };
        let home = config.home.as_deref();
        for path in &config.packages {
            paths.extend(files_in(&config.cwd.join(path), true, &mut diagnostics));
        }
        for raw in &config.cli {
            paths.extend(files_in(
                &paths::resolve(raw, &config.cwd, home),
                true,
                &mut diagnostics,
            ));
        }
        // A scope's list: plain entries are theme files or folders; `!glob`, `+path` and
        // `-path` switch its entries' themes and its discovered folder's on and off (what
        // `knightcode config` writes). The first place a file is found decides.
        let mut found: Vec<(PathBuf, bool)> = paths.drain(..).map(|p| (p, true)).collect();
        let scope = |list: &[String],
                     base: &Path,
                     found: &mut Vec<(PathBuf, bool)>,
                     diagnostics: &mut Vec<ResourceDiagnostic>| {
            let (patterns, plain): (Vec<&String>, Vec<&String>) =
                list.iter().partition(|e| crate::loader::is_pattern(e));
            let mut listed = Vec::new();
            for raw in plain {
                listed.extend(files_in(
                    &paths::resolve(raw, base, home),
                    true,
                    diagnostics,
                ));
            }
            let on = crate::loader::apply_patterns(&listed, &patterns, base);
            for file in listed {
                let enabled = on.contains(&file);
                found.push((file, enabled));
            }
            for file in files_in(&base.join("themes"), false, diagnostics) {
                let enabled = crate::loader::enabled_by_overrides(&file, list, base);
                found.push((file, enabled));
            }
        };
        if !config.no_themes {
            let project_dir = config.cwd.join(".knightcode");
            if config.trusted {
                scope(
                    &config.project_settings,
                    &project_dir,
                    &mut found,
                    &mut diagnostics,
                );
            }
            scope(
                &config.user_settings,
                &config.agent_dir,
                &mut found,
                &mut diagnostics,
            );
        }
        let mut decided: HashSet<PathBuf> = HashSet::new();
        for (path, enabled) in found {
            if decided.insert(paths::canonical(&path)) && enabled {
                paths.push(path);
            }
        }
        for path in &config.extensions {
            paths.extend(files_in(&config.cwd.join(path), true, &mut diagnostics));
        }
        let mut themes = builtin();
        let mut seen_files: HashSet<PathBuf> = HashSet::new();
        for path in paths {
            if !seen_files.insert(paths::canonical(&path)) {
                continue;
            }
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    diagnostics.push(ResourceDiagnostic::error(
                        format!("could not read theme: {e}"),
                        path,
                    ));
                    continue;
                }
            };
            let theme = match parse(&text, Some(&path)) {
                Ok(theme) => theme,
                Err(message) => {
                    diagnostics.push(ResourceDiagnostic::error(message, path));
                    continue;
                }
            };
            if let Some(winner) = themes.iter().find(|t| t.name == theme.name) {
                let winner_path = winner
                    .path
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(format!("<built-in {}>", winner.name)));
                diagnostics.push(ResourceDiagnostic {
                    kind: DiagnosticKind::Collision {
                        resource_type: "theme",
                        name: theme.name.clone(),
                        winner_path,
                        loser_path: path.clone(),
                    },
                    message: format!("theme \"{}\" collision", theme.name),
                    path: Some(path),
                });
                continue;
            }
            themes.push(theme);
        }
        Self {
            themes,
            diagnostics,
        }
    }

    /// The theme called `name`.
    pub fn get(&self, name: &str) -> Option<&ThemeFile> {
        self.themes.iter().find(|t| t.name == name)
    }

    /// The names of every theme, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.themes.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names
    }

    /// The theme for `requested` (`--use-theme`, else the `theme` setting): a name, a
    /// `light/dark` pair or `system` (both follow `appearance`, the terminal's background
    /// when known, else dark). An unknown name gives dark and a warning that lists the
    /// themes there are.
    pub fn select(
        &self,
        requested: Option<&str>,
        appearance: Appearance,
    ) -> (ThemeFile, Option<String>) {
        let dark = || {
            self.get("dark")
                .cloned()
                .or_else(|| builtin().into_iter().next())
                .unwrap_or_else(|| ThemeFile {
                    name: "dark".to_owned(),
                    path: None,
                    colors: BTreeMap::new(),
                    export: BTreeMap::new(),
                })
        };
        let requested = requested.map(str::trim).filter(|r| !r.is_empty());
        let name = match requested {
            None | Some("system") => match appearance {
                Appearance::Light => "light",
                Appearance::Dark => "dark",
            },
            Some(pair) if pair.contains('/') => {
                let (light, dark) = pair.split_once('/').unwrap_or((pair, pair));
                match appearance {
                    Appearance::Light => light,
                    Appearance::Dark => dark,
                }
            }
            Some(name) => name,
        };
        match self.get(name) {
            Some(theme) => (theme.clone(), None),
            None => (
                dark(),
                Some(format!(
                    "Theme \"{name}\" not found; using dark. Available themes: {}",
                    self.names().join(", ")
                )),
            ),
        }
    }
}

/// Whether the terminal has a light or a dark background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Appearance {
    #[default]
    Dark,
    Light,
}

impl Appearance {
    /// From `COLORFGBG` (`fg;bg`, a background below 8 is dark), as the reference does;
    /// dark when it is unset or unreadable.
    pub fn from_colorfgbg(value: Option<&str>) -> Self {
        let bg = value
            .and_then(|v| v.split(';').nth(1))
            .and_then(|bg| bg.trim().parse::<u32>().ok());
        match bg {
            Some(bg) if bg >= 8 => Self::Light,
            _ => Self::Dark,
        }
    }
}

#[cfg(test)]
#[path = "themes_tests.rs"]
mod tests;
