//! `/settings`: the menu's items from the settings as they are now, and what a change does.
//! Each change applies at once (the screen, the session) and is saved to the global
//! `settings.json` through the session, which writes only the keys changed and keeps the
//! rest of the file (`spec/settings.md`: setters write to the global file).

use knightcode_runtime::Command;
use knightcode_runtime::Settings;
use knightcode_tui::keybindings::Keybindings;
use serde_json::Value;

use super::actions::Pending;
use super::overlay::Overlay;
use super::ui::Ui;
use crate::pickers::SettingItem;
use crate::pickers::SettingKind;
use crate::pickers::SettingsMenu;
use crate::pickers::SettingsRequest;
use crate::pickers::TreeFilter;

/// What a second Escape on an empty editor does (`doubleEscapeAction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DoubleEscape {
    #[default]
    Tree,
    Fork,
    None,
}

impl DoubleEscape {
    pub fn parse(value: Option<&str>) -> Self {
        match value {
            Some("fork") => Self::Fork,
            Some("none") => Self::None,
            _ => Self::Tree,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Tree => "tree",
            Self::Fork => "fork",
            Self::None => "none",
        }
    }
}

/// The interface's own settings, read at start and changed by `/settings` and Ctrl+T.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisplaySettings {
    pub double_escape: DoubleEscape,
    pub tree_filter: TreeFilter,
    pub editor_padding: usize,
    pub autocomplete_max_visible: usize,
    pub hardware_cursor: bool,
    /// `terminal.showTerminalProgress`: OSC 9;4 while working.
    pub terminal_progress: bool,
}

impl Default for DisplaySettings {
    fn default() -> Self {
        Self {
            double_escape: DoubleEscape::Tree,
            tree_filter: TreeFilter::Default,
            editor_padding: 0,
            autocomplete_max_visible: 5,
            hardware_cursor: false,
            terminal_progress: false,
        }
    }
}

/// The keybindings and interface settings in effect, and the settings this process
/// changed (`/settings`, Ctrl+T) on top of the file's until the session has written them.
pub struct Preferences {
    bindings: Keybindings,
    display: DisplaySettings,
    changes: serde_json::Map<String, Value>,
    /// `enableSkillCommands`: skills are offered as `/skill:name` in completion.
    skill_commands: bool,
}

impl Preferences {
    pub fn new(bindings: Keybindings) -> Self {
        Self {
            bindings,
            display: DisplaySettings::default(),
            changes: serde_json::Map::new(),
            skill_commands: true,
        }
    }

    pub fn bindings(&self) -> &Keybindings {
        &self.bindings
    }

    /// `/reload` read `keybindings.json` again.
    pub fn set_bindings(&mut self, bindings: Keybindings) {
        self.bindings = bindings;
    }

    pub fn display(&self) -> &DisplaySettings {
        &self.display
    }

    pub fn skill_commands(&self) -> bool {
        self.skill_commands
    }

    pub fn set_skill_commands(&mut self, on: bool) {
        self.skill_commands = on;
    }
}

fn number(settings: &Settings, key: &str) -> Option<f64> {
    settings.get(key).and_then(Value::as_f64)
}

fn boolean(settings: &Settings, key: &str, default: bool) -> bool {
    settings
        .get(key)
        .and_then(Value::as_bool)
        .unwrap_or(default)
}

fn text<'a>(settings: &'a Settings, key: &str) -> Option<&'a str> {
    settings.get(key).and_then(Value::as_str)
}

fn tree_filter(value: Option<&str>) -> TreeFilter {
    match value {
        Some("no-tools") => TreeFilter::NoTools,
        Some("user-only") => TreeFilter::UserOnly,
        Some("labeled-only") => TreeFilter::LabeledOnly,
        Some("all") => TreeFilter::All,
        _ => TreeFilter::Default,
    }
}

fn tree_filter_name(filter: TreeFilter) -> &'static str {
    match filter {
        TreeFilter::Default => "default",
        TreeFilter::NoTools => "no-tools",
        TreeFilter::UserOnly => "user-only",
        TreeFilter::LabeledOnly => "labeled-only",
        TreeFilter::All => "all",
    }
}

impl DisplaySettings {
    /// The values with the reference's clamps (padding 0..3, autocomplete 3..20) and env
    /// overrides (`KNIGHTCODE_HARDWARE_CURSOR=1`).
    pub fn from_settings(settings: &Settings) -> Self {
        let defaults = Self::default();
        let hardware_env = std::env::var("KNIGHTCODE_HARDWARE_CURSOR").is_ok_and(|v| v == "1");
        Self {
            double_escape: DoubleEscape::parse(text(settings, "doubleEscapeAction")),
            tree_filter: tree_filter(text(settings, "treeFilterMode")),
            editor_padding: number(settings, "editorPaddingX")
                .map_or(defaults.editor_padding, |n| n.clamp(0.0, 3.0) as usize),
            autocomplete_max_visible: number(settings, "autocompleteMaxVisible")
                .map_or(defaults.autocomplete_max_visible, |n| {
                    n.clamp(3.0, 20.0) as usize
                }),
            hardware_cursor: settings
                .get("showHardwareCursor")
                .and_then(Value::as_bool)
                .unwrap_or(hardware_env),
            terminal_progress: boolean(settings, "terminal.showTerminalProgress", false),
        }
    }
}

fn on_off(value: bool) -> String {
    if value { "true" } else { "false" }.to_owned()
}

fn cycle(values: &[&str]) -> SettingKind {
    SettingKind::Cycle(values.iter().map(|v| (*v).to_owned()).collect())
}

fn toggle() -> SettingKind {
    cycle(&["true", "false"])
}

/// The reference's thinking level descriptions.
fn thinking_description(level: knightcode_ai::ThinkingLevel) -> &'static str {
    use knightcode_ai::ThinkingLevel as L;
    match level {
        L::Off => "No reasoning",
        L::Minimal => "Very brief reasoning (~1k tokens)",
        L::Low => "Light reasoning (~2k tokens)",
        L::Medium => "Moderate reasoning (~8k tokens)",
        L::High => "Deep reasoning (~16k tokens)",
        L::Xhigh => "Maximum reasoning (~32k tokens)",
        L::Max => "The provider's highest effort",
    }
}

impl Ui {
    /// The settings as the file has them, with this process's changes on top (a save may
    /// still be on its way to the file).
    pub fn current_settings(&self) -> Settings {
        Settings::load(
            self.places.agent_dir(),
            self.places.cwd(),
            self.session.trusted(),
        )
        .with_overrides(&self.prefs.changes)
    }

    /// Takes up the interface's settings: at start, and after `/reload`.
    pub fn apply_display_settings(&mut self, settings: &Settings) {
        self.prefs.display = DisplaySettings::from_settings(settings);
        self.screen.transcript.look.thinking_hidden = boolean(settings, "hideThinkingBlock", false);
        self.screen.transcript.invalidate();
        self.screen
            .editor
            .set_padding_x(self.prefs.display.editor_padding);
        self.screen
            .editor
            .set_autocomplete_max_visible(self.prefs.display.autocomplete_max_visible);
        self.set_hardware_cursor(self.prefs.display.hardware_cursor);
        self.request_full_redraw();
    }

    pub fn open_settings_menu(&mut self) {
        let settings = self.current_settings();
        let values = settings.values();
        let thinking = self
            .session
            .view()
            .map_or(values.default_thinking_level, |v| v.thinking_level());
        let themes: Vec<(String, String)> = self
            .theme_names()
            .into_iter()
            .map(|name| (name, String::new()))
            .collect();
        let current_theme = self.themes.name().to_owned();
        let mut items = vec![
            SettingItem {
                id: "autocompact",
                label: "Auto-compact",
                description: "Automatically compact context when it gets too large".to_owned(),
                value: on_off(values.compaction_enabled),
                kind: toggle(),
            },
            SettingItem {
                id: "auto-resize-images",
                label: "Auto-resize images",
                description: "Resize large images to 2000x2000 max for better model compatibility"
                    .to_owned(),
                value: on_off(values.images_auto_resize),
                kind: toggle(),
            },
            SettingItem {
                id: "block-images",
                label: "Block images",
                description: "Prevent images from being sent to LLM providers".to_owned(),
                value: on_off(values.images_block_images),
                kind: toggle(),
            },
            SettingItem {
                id: "skill-commands",
                label: "Skill commands",
                description: "Register skills as /skill:name commands".to_owned(),
                value: on_off(self.prefs.skill_commands),
                kind: toggle(),
            },
            SettingItem {
                id: "show-hardware-cursor",
                label: "Show hardware cursor",
                description: "Show the terminal cursor while still positioning it for IME support"
                    .to_owned(),
                value: on_off(self.prefs.display.hardware_cursor),
                kind: toggle(),
            },
            SettingItem {
                id: "editor-padding",
                label: "Editor padding",
                description: "Horizontal padding for input editor (0-3)".to_owned(),
                value: self.prefs.display.editor_padding.to_string(),
                kind: cycle(&["0", "1", "2", "3"]),
            },
            SettingItem {
                id: "autocomplete-max-visible",
                label: "Autocomplete max items",
                description: "Max visible items in autocomplete dropdown (3-20)".to_owned(),
                value: self.prefs.display.autocomplete_max_visible.to_string(),
                kind: cycle(&["3", "5", "7", "10", "15", "20"]),
            },
            SettingItem {
                id: "clear-on-shrink",
                label: "Clear on shrink",
                description: "Clear empty rows when content shrinks (knightcode always clears them; the value is kept for pi)".to_owned(),
                value: on_off(boolean(&settings, "terminal.clearOnShrink", false)),
                kind: toggle(),
            },
            SettingItem {
                id: "terminal-progress",
                label: "Terminal progress",
                description: "Show OSC 9;4 progress indicators in the terminal tab bar"
                    .to_owned(),
                value: on_off(self.prefs.display.terminal_progress),
                kind: toggle(),
            },
            SettingItem {
                id: "steering-mode",
                label: "Steering mode",
                description: "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once.".to_owned(),
                value: values.steering_mode.as_str().to_owned(),
                kind: cycle(&["one-at-a-time", "all"]),
            },
            SettingItem {
                id: "follow-up-mode",
                label: "Follow-up mode",
                description: "Alt+Enter queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once.".to_owned(),
                value: values.follow_up_mode.as_str().to_owned(),
                kind: cycle(&["one-at-a-time", "all"]),
            },
            SettingItem {
                id: "transport",
                label: "Transport",
                description: "Preferred transport for providers that support multiple transports (knightcode streams over SSE; WebSocket is not built)".to_owned(),
                value: text(&settings, "transport").unwrap_or("auto").to_owned(),
                kind: cycle(&["sse", "websocket", "websocket-cached", "auto"]),
            },
            SettingItem {
                id: "hide-thinking",
                label: "Hide thinking",
                description: "Hide thinking blocks in assistant responses".to_owned(),
                value: on_off(self.screen.transcript.look.thinking_hidden),
                kind: toggle(),
            },
            SettingItem {
                id: "collapse-changelog",
                label: "Collapse changelog",
                description: "Show condensed changelog after updates".to_owned(),
                value: on_off(boolean(&settings, "collapseChangelog", false)),
                kind: toggle(),
            },
            SettingItem {
                id: "quiet-startup",
                label: "Quiet startup",
                description: "Disable verbose printing at startup".to_owned(),
                value: on_off(matches!(settings.get("quietStartup"), Some(Value::Bool(true)))),
                kind: toggle(),
            },
            SettingItem {
                id: "double-escape-action",
                label: "Double-escape action",
                description: "Action when pressing Escape twice with empty editor".to_owned(),
                value: self.prefs.display.double_escape.as_str().to_owned(),
                kind: cycle(&["tree", "fork", "none"]),
            },
            SettingItem {
                id: "tree-filter-mode",
                label: "Tree filter mode",
                description: "Default filter when opening /tree".to_owned(),
                value: tree_filter_name(self.prefs.display.tree_filter).to_owned(),
                kind: cycle(&["default", "no-tools", "user-only", "labeled-only", "all"]),
            },
        ];
        if self.session.thinking_levels().len() > 1 {
            items.push(SettingItem {
                id: "thinking",
                label: "Thinking level",
                description: "Reasoning depth for thinking-capable models".to_owned(),
                value: thinking.as_str().to_owned(),
                kind: SettingKind::Pick {
                    title: "Thinking Level".to_owned(),
                    description: "Select reasoning depth for thinking-capable models".to_owned(),
                    options: self
                        .session
                        .thinking_levels()
                        .iter()
                        .map(|l| (l.as_str().to_owned(), thinking_description(*l).to_owned()))
                        .collect(),
                    preview: false,
                },
            });
        }
        items.push(SettingItem {
            id: "theme",
            label: "Theme",
            description: "Color theme for the interface".to_owned(),
            value: current_theme,
            kind: SettingKind::Pick {
                title: "Theme".to_owned(),
                description: "Select color theme".to_owned(),
                options: themes,
                preview: true,
            },
        });
        let menu = SettingsMenu::new(items, self.screen.theme.clone());
        self.screen.overlay = Some(Overlay::Settings(menu));
        self.mark_urgent();
    }

    /// Remembers and saves settings (dotted keys) to the global file through the session.
    pub fn save_settings(&mut self, values: Vec<(String, Value)>) {
        for (key, value) in &values {
            insert_dotted(&mut self.prefs.changes, key, value.clone());
        }
        self.send(Command::SaveSettings(values), Pending::Quiet);
    }

    /// A change or preview the settings menu asked for.
    pub fn settings_request(&mut self, request: SettingsRequest) {
        match request {
            SettingsRequest::Preview { id: "theme", value } => {
                self.preview_theme(&value);
            }
            SettingsRequest::Preview { .. } => {}
            SettingsRequest::Change { id, value } => self.change_setting(id, &value),
        }
        if let Some(Overlay::Settings(menu)) = &mut self.screen.overlay {
            menu.set_theme(self.screen.theme.clone());
        }
        self.mark_urgent();
    }

    fn change_setting(&mut self, id: &str, value: &str) {
        let on = value == "true";
        let count = || value.parse::<u64>().unwrap_or(0);
        match id {
            "autocompact" => {
                insert_dotted(&mut self.prefs.changes, "compaction.enabled", on.into());
                self.send(Command::SetAutoCompaction(on), Pending::Quiet);
                // The footer's "(auto)" follows.
                self.request_snapshot();
            }
            "steering-mode" | "follow-up-mode" => {
                let mode = if value == "all" {
                    knightcode_agent::QueueMode::All
                } else {
                    knightcode_agent::QueueMode::OneAtATime
                };
                let (key, command) = if id == "steering-mode" {
                    ("steeringMode", Command::SetSteeringMode(mode))
                } else {
                    ("followUpMode", Command::SetFollowUpMode(mode))
                };
                insert_dotted(&mut self.prefs.changes, key, value.into());
                self.send(command, Pending::Quiet);
            }
            "thinking" => {
                if let Some(level) = knightcode_ai::ThinkingLevel::parse(value) {
                    self.send(Command::SetThinkingLevel(level), Pending::Thinking);
                }
            }
            "block-images" => {
                self.save_settings(vec![("images.blockImages".into(), on.into())]);
            }
            "auto-resize-images" => {
                self.save_settings(vec![("images.autoResize".into(), on.into())])
            }
            "skill-commands" => {
                self.prefs.skill_commands = on;
                self.save_settings(vec![("enableSkillCommands".into(), on.into())]);
                self.refresh_resource_commands();
            }
            "show-hardware-cursor" => {
                self.prefs.display.hardware_cursor = on;
                self.set_hardware_cursor(on);
                self.save_settings(vec![("showHardwareCursor".into(), on.into())]);
            }
            "editor-padding" => {
                self.prefs.display.editor_padding = count().min(3) as usize;
                self.screen
                    .editor
                    .set_padding_x(self.prefs.display.editor_padding);
                self.save_settings(vec![("editorPaddingX".into(), count().min(3).into())]);
            }
            "autocomplete-max-visible" => {
                let n = count().clamp(3, 20);
                self.prefs.display.autocomplete_max_visible = n as usize;
                self.screen.editor.set_autocomplete_max_visible(n as usize);
                self.save_settings(vec![("autocompleteMaxVisible".into(), n.into())]);
            }
            "terminal-progress" => {
                self.prefs.display.terminal_progress = on;
                if !on {
                    self.clear_progress();
                }
                self.save_settings(vec![("terminal.showTerminalProgress".into(), on.into())]);
            }
            "hide-thinking" => self.set_thinking_hidden(on),
            "quiet-startup" => self.save_settings(vec![("quietStartup".into(), on.into())]),
            // Kept for pi and read at start: nothing to change on screen now.
            "transport" => self.save_settings(vec![("transport".into(), value.into())]),
            "collapse-changelog" => {
                self.save_settings(vec![("collapseChangelog".into(), on.into())]);
            }
            "clear-on-shrink" => {
                self.save_settings(vec![("terminal.clearOnShrink".into(), on.into())]);
            }
            "double-escape-action" => {
                self.prefs.display.double_escape = DoubleEscape::parse(Some(value));
                self.save_settings(vec![("doubleEscapeAction".into(), value.into())]);
            }
            "tree-filter-mode" => {
                self.prefs.display.tree_filter = tree_filter(Some(value));
                self.save_settings(vec![("treeFilterMode".into(), value.into())]);
            }
            "theme" => {
                self.preview_theme(value);
                self.save_settings(vec![("theme".into(), value.into())]);
            }
            _ => {}
        }
        if let Some(key) = setting_key(id) {
            self.note_project_override(key);
        }
        self.request_full_redraw();
    }

    /// Changes go to the global file; a project file that sets the same key wins at the
    /// next start, so say so.
    fn note_project_override(&mut self, key: &str) {
        let project = Settings::load(
            self.places.agent_dir(),
            self.places.cwd(),
            self.session.trusted(),
        );
        if project.project_value(key).is_some() {
            self.info(&format!(
                "Saved {key} to {}; {} sets it too, and wins when knightcode starts here.",
                self.places.agent_dir().join("settings.json").display(),
                knightcode_runtime::settings::project_settings_path(self.places.cwd()).display()
            ));
        }
    }

    /// Ctrl+T and `/settings`: shows or hides thinking blocks, and remembers it
    /// (`hideThinkingBlock`), as the reference does.
    pub fn set_thinking_hidden(&mut self, hidden: bool) {
        self.screen.transcript.look.thinking_hidden = hidden;
        self.screen.transcript.invalidate();
        self.request_full_redraw();
        self.save_settings(vec![("hideThinkingBlock".into(), hidden.into())]);
    }
}

/// The settings key an item writes.
fn setting_key(id: &str) -> Option<&'static str> {
    Some(match id {
        "autocompact" => "compaction.enabled",
        "auto-resize-images" => "images.autoResize",
        "block-images" => "images.blockImages",
        "skill-commands" => "enableSkillCommands",
        "show-hardware-cursor" => "showHardwareCursor",
        "editor-padding" => "editorPaddingX",
        "autocomplete-max-visible" => "autocompleteMaxVisible",
        "steering-mode" => "steeringMode",
        "follow-up-mode" => "followUpMode",
        "hide-thinking" => "hideThinkingBlock",
        "terminal-progress" => "terminal.showTerminalProgress",
        "quiet-startup" => "quietStartup",
        "transport" => "transport",
        "collapse-changelog" => "collapseChangelog",
        "clear-on-shrink" => "terminal.clearOnShrink",
        "double-escape-action" => "doubleEscapeAction",
        "tree-filter-mode" => "treeFilterMode",
        "thinking" => "defaultThinkingLevel",
        "theme" => "theme",
        _ => return None,
    })
}

/// Sets `dotted` (`images.autoResize`) in `map`, creating nested objects on the way.
fn insert_dotted(map: &mut serde_json::Map<String, Value>, dotted: &str, value: Value) {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let Some(last) = parts.pop() else {
        return;
    };
    let mut current = map;
    for part in parts {
        let entry = current
            .entry(part.to_owned())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(serde_json::Map::new());
        }
        let Value::Object(next) = entry else {
            return;
        };
        current = next;
    }
    current.insert(last.to_owned(), value);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn display_settings_clamp_like_the_reference() {
        let settings = Settings::from_layers(
            json!({"editorPaddingX": 9, "autocompleteMaxVisible": 1, "doubleEscapeAction": "fork", "treeFilterMode": "user-only", "showHardwareCursor": true})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            serde_json::Map::new(),
        );
        let display = DisplaySettings::from_settings(&settings);
        assert_eq!(display.editor_padding, 3);
        assert_eq!(display.autocomplete_max_visible, 3);
        assert_eq!(display.double_escape, DoubleEscape::Fork);
        assert_eq!(display.tree_filter, TreeFilter::UserOnly);
        assert!(display.hardware_cursor);
    }
}
