//! The configuration files: `models.json`, `settings.json` (global and project),
//! `keybindings.json` and theme files, each read by the function that reads the real file.

use std::path::Path;

use knightcode_ai::Api;
use knightcode_ai::Model;
use knightcode_ai::ModelRegistry;
use knightcode_resources::themes;
use knightcode_runtime::Settings;
use knightcode_tui::Keybindings;
use knightcode_tui::keybindings::Platform;
use serde_json::Value;

use crate::texts;

/// Parses the file, then merges it over a small built-in list as the registry does.
pub(crate) fn models_json(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(config) = knightcode_ai::models::parse_models_json(&text, Path::new("models.json"))
    else {
        return;
    };
    let base = Api::ALL
        .into_iter()
        .map(|api| Model::new("anthropic", api.as_str(), api, "https://example.invalid"))
        .collect();
    let registry = ModelRegistry::new(base, Some(&config));
    let _ = registry.error();
    for model in registry.models() {
        let _ = registry.find(&model.provider, &model.id);
        let _ = model.supported_thinking_levels();
        let _ = registry.provider_config(&model.provider);
    }
}

/// The global file's text, a NUL, then the project file's text.
pub(crate) fn settings(data: &[u8]) {
    let texts = texts(data);
    let global = texts.first().map_or("", String::as_str);
    let project = texts.get(1).map_or("", String::as_str);
    let settings = Settings::from_texts(global, project);
    let _ = settings.values();
    let _ = settings.diagnostics();
    let _ = settings.get("compaction.reserveTokens");
    let _ = settings.layer_strings("packages", true);
    let _ = settings.enable_skill_commands();
}

/// What [`Keybindings::load_for`] does with the text once it is read.
pub(crate) fn keybindings(data: &[u8]) {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let platform = match control % 3 {
        0 => Platform::Unix,
        1 => Platform::Windows,
        _ => Platform::Wsl,
    };
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let mut bindings = Keybindings::defaults_for(platform);
    let _ = bindings.apply_user(&object);
    for (action, keys) in bindings.actions() {
        for key in keys {
            let _ = format!("{action} {key:?}");
        }
    }
}

pub(crate) fn theme(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(theme) = themes::parse(&text, Some(Path::new("theme.json"))) else {
        return;
    };
    for role in themes::COLOR_ROLES {
        let _ = theme.color(role);
    }
}
