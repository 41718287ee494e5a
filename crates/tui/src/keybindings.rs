//! Keybindings: action ids (`app.interrupt`, `tui.editor.cursorLeft`, …) to keys, with the
//! reference agent's defaults and the user's `keybindings.json` on top.
//!
//! A key is written `mod+key` (`ctrl+shift+p`, `alt+enter`, `pageUp`, `f5`, `ctrl+-`),
//! case-insensitive, modifiers `ctrl shift alt super`. A file entry replaces the defaults
//! of its action; `[]` leaves the action unbound.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use crate::error::TuiError;
use crate::keys::{Key, KeyCode, KeyKind, Modifiers};

/// One key a binding reacts to.
#[derive(Debug, Clone)]
pub struct KeyBinding {
    code: KeyCode,
    modifiers: Modifiers,
    /// Modifiers in the order they were written, so the key displays as the user wrote it.
    written: Vec<Modifiers>,
}

impl PartialEq for KeyBinding {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.modifiers == other.modifiers
    }
}

impl Eq for KeyBinding {}

/// Symbols a binding may name (spec §2).
const SYMBOLS: &str = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?";

impl KeyBinding {
    /// Parses `ctrl+shift+p`, `escape`, `pageUp`, `ctrl+-`, `ctrl++` …
    pub fn parse(text: &str) -> Result<Self, String> {
        let lower = text.trim().to_lowercase();
        if lower.is_empty() {
            return Err("the key is empty".into());
        }
        // `+` is both the separator and a key: `+`, `ctrl++`.
        let (mods, name) = if lower == "+" {
            ("", "+")
        } else if let Some(mods) = lower.strip_suffix("++") {
            (mods, "+")
        } else {
            match lower.rfind('+') {
                Some(at) => (&lower[..at], &lower[at + 1..]),
                None => ("", lower.as_str()),
            }
        };
        let mut modifiers = Modifiers::NONE;
        let mut written = Vec::new();
        if !mods.is_empty() {
            for part in mods.split('+') {
                let modifier = match part {
                    "ctrl" => Modifiers::CTRL,
                    "shift" => Modifiers::SHIFT,
                    "alt" => Modifiers::ALT,
                    "super" => Modifiers::SUPER,
                    "" => return Err("a modifier is missing between two `+`".into()),
                    other => {
                        return Err(format!(
                            "unknown modifier \"{other}\" (use ctrl, shift, alt or super)"
                        ));
                    }
                };
                if !modifiers.contains(modifier) {
                    written.push(modifier);
                }
                modifiers = modifiers | modifier;
            }
        }
        let code = key_code(name).ok_or_else(|| format!("unknown key \"{name}\""))?;
        Ok(Self {
            code,
            modifiers,
            written,
        })
    }

    /// A binding for `code` with `modifiers` (displayed in the order shift, ctrl, alt,
    /// super, like the reference's key ids).
    pub fn new(code: KeyCode, modifiers: Modifiers) -> Self {
        let written = [
            Modifiers::SHIFT,
            Modifiers::CTRL,
            Modifiers::ALT,
            Modifiers::SUPER,
        ]
        .into_iter()
        .filter(|m| modifiers.contains(*m))
        .collect();
        Self {
            code,
            modifiers,
            written,
        }
    }

    pub fn code(&self) -> KeyCode {
        self.code
    }

    pub fn modifiers(&self) -> Modifiers {
        self.modifiers
    }

    /// True when `key` is this key. Releases never match; repeats do.
    pub fn matches(&self, key: &Key) -> bool {
        if key.kind == KeyKind::Release {
            return false;
        }
        if key.code == self.code && key.modifiers == self.modifiers {
            return true;
        }
        // Shift+letter typed in a legacy terminal arrives as the upper-case letter.
        if let KeyCode::Char(c) = self.code
            && c.is_ascii_lowercase()
            && self.modifiers.contains(Modifiers::SHIFT)
            && key.code == KeyCode::Char(c.to_ascii_uppercase())
            && key.modifiers == self.modifiers.without(Modifiers::SHIFT)
        {
            return true;
        }
        legacy_alias(&key.raw) == Some((self.code, self.modifiers))
    }
}

/// Legacy byte sequences that stand for a second key as well as the one they parse to,
/// as in the reference: BS is also Ctrl+H, ESC b / ESC f are also Alt+Left / Alt+Right
/// (macOS terminals send them for Option+arrows), and so on.
fn legacy_alias(raw: &str) -> Option<(KeyCode, Modifiers)> {
    Some(match raw {
        "\x08" => (KeyCode::Char('h'), Modifiers::CTRL),
        "\x1f" => (KeyCode::Char('_'), Modifiers::CTRL),
        "\x1b\x1f" => (KeyCode::Char('_'), Modifiers::CTRL | Modifiers::ALT),
        "\x1bb" | "\x1bB" => (KeyCode::Left, Modifiers::ALT),
        "\x1bf" | "\x1bF" => (KeyCode::Right, Modifiers::ALT),
        "\x1bp" => (KeyCode::Up, Modifiers::ALT),
        "\x1bn" => (KeyCode::Down, Modifiers::ALT),
        _ => return None,
    })
}

fn key_code(name: &str) -> Option<KeyCode> {
    Some(match name {
        "escape" | "esc" => KeyCode::Escape,
        "enter" | "return" => KeyCode::Enter,
        "tab" => KeyCode::Tab,
        "space" => KeyCode::Char(' '),
        "backspace" => KeyCode::Backspace,
        "delete" => KeyCode::Delete,
        "insert" => KeyCode::Insert,
        "clear" => KeyCode::Clear,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        _ => {
            if let Some(n) = name.strip_prefix('f')
                && let Ok(n) = n.parse::<u8>()
                && (1..=24).contains(&n)
            {
                return Some(KeyCode::F(n));
            }
            let mut chars = name.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            if c.is_ascii_lowercase() || c.is_ascii_digit() || SYMBOLS.contains(c) {
                KeyCode::Char(c)
            } else {
                return None;
            }
        }
    })
}

fn key_name(code: KeyCode) -> String {
    match code {
        KeyCode::Char(' ') => "space".into(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Enter => "enter".into(),
        KeyCode::Tab => "tab".into(),
        KeyCode::Backspace => "backspace".into(),
        KeyCode::Escape => "escape".into(),
        KeyCode::Up => "up".into(),
        KeyCode::Down => "down".into(),
        KeyCode::Left => "left".into(),
        KeyCode::Right => "right".into(),
        KeyCode::Home => "home".into(),
        KeyCode::End => "end".into(),
        KeyCode::PageUp => "pageUp".into(),
        KeyCode::PageDown => "pageDown".into(),
        KeyCode::Insert => "insert".into(),
        KeyCode::Delete => "delete".into(),
        KeyCode::Clear => "clear".into(),
        KeyCode::F(n) => format!("f{n}"),
    }
}

impl fmt::Display for KeyBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for modifier in &self.written {
            let name = match *modifier {
                Modifiers::CTRL => "ctrl",
                Modifiers::SHIFT => "shift",
                Modifiers::ALT => "alt",
                _ => "super",
            };
            write!(f, "{name}+")?;
        }
        f.write_str(&key_name(self.code))
    }
}

impl std::str::FromStr for KeyBinding {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// Which defaults apply: a few differ on Windows and WSL, where terminals do not deliver
/// some keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Unix,
    Windows,
    Wsl,
}

impl Platform {
    /// The platform this process runs on (WSL is told by its environment variables).
    pub fn detect() -> Self {
        if cfg!(windows) {
            return Self::Windows;
        }
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        if cfg!(target_os = "linux") && (set("WSL_DISTRO_NAME") || set("WSL_INTEROP")) {
            Self::Wsl
        } else {
            Self::Unix
        }
    }
}

struct Definition {
    id: &'static str,
    keys: &'static [&'static str],
    description: &'static str,
}

const fn def(
    id: &'static str,
    keys: &'static [&'static str],
    description: &'static str,
) -> Definition {
    Definition {
        id,
        keys,
        description,
    }
}

/// Every action with its default keys, in the reference's order (the order /hotkeys lists).
const DEFINITIONS: &[Definition] = &[
    def("tui.editor.cursorUp", &["up"], "Move cursor up"),
    def("tui.editor.cursorDown", &["down"], "Move cursor down"),
    def(
        "tui.editor.historyPrevious",
        &[],
        "Select previous prompt history entry",
    ),
    def(
        "tui.editor.historyNext",
        &[],
        "Select next prompt history entry",
    ),
    def(
        "tui.editor.cursorLeft",
        &["left", "ctrl+b"],
        "Move cursor left",
    ),
    def(
        "tui.editor.cursorRight",
        &["right", "ctrl+f"],
        "Move cursor right",
    ),
    def(
        "tui.editor.cursorWordLeft",
        &["alt+left", "ctrl+left", "alt+b"],
        "Move cursor word left",
    ),
    def(
        "tui.editor.cursorWordRight",
        &["alt+right", "ctrl+right", "alt+f"],
        "Move cursor word right",
    ),
    def(
        "tui.editor.cursorLineStart",
        &["home", "ctrl+a"],
        "Move to line start",
    ),
    def(
        "tui.editor.cursorLineEnd",
        &["end", "ctrl+e"],
        "Move to line end",
    ),
    def(
        "tui.editor.jumpForward",
        &["ctrl+]"],
        "Jump forward to character",
    ),
    def(
        "tui.editor.jumpBackward",
        &["ctrl+alt+]"],
        "Jump backward to character",
    ),
    def("tui.editor.pageUp", &["pageUp"], "Page up"),
    def("tui.editor.pageDown", &["pageDown"], "Page down"),
    def(
        "tui.editor.deleteCharBackward",
        &["backspace"],
        "Delete character backward",
    ),
    def(
        "tui.editor.deleteCharForward",
        &["delete", "ctrl+d"],
        "Delete character forward",
    ),
    def(
        "tui.editor.deleteWordBackward",
        &["ctrl+w", "alt+backspace"],
        "Delete word backward",
    ),
    def(
        "tui.editor.deleteWordForward",
        &["alt+d", "alt+delete"],
        "Delete word forward",
    ),
    def(
        "tui.editor.deleteToLineStart",
        &["ctrl+u"],
        "Delete to line start",
    ),
    def(
        "tui.editor.deleteToLineEnd",
        &["ctrl+k"],
        "Delete to line end",
    ),
    def("tui.editor.yank", &["ctrl+y"], "Yank"),
    def("tui.editor.yankPop", &["alt+y"], "Yank pop"),
    def("tui.editor.undo", &["ctrl+-"], "Undo"),
    def(
        "tui.input.newLine",
        &["shift+enter", "ctrl+j"],
        "Insert newline",
    ),
    def("tui.input.submit", &["enter"], "Submit input"),
    def("tui.input.tab", &["tab"], "Tab / autocomplete"),
    def("tui.input.copy", &["ctrl+c"], "Copy selection"),
    def("tui.select.up", &["up"], "Move selection up"),
    def("tui.select.down", &["down"], "Move selection down"),
    def("tui.select.pageUp", &["pageUp"], "Selection page up"),
    def("tui.select.pageDown", &["pageDown"], "Selection page down"),
    def("tui.select.confirm", &["enter"], "Confirm selection"),
    def(
        "tui.select.cancel",
        &["escape", "ctrl+c"],
        "Cancel selection",
    ),
    def(
        "tui.altScreen.pageUp",
        &["pageUp"],
        "Scroll viewport up one page",
    ),
    def(
        "tui.altScreen.pageDown",
        &["pageDown"],
        "Scroll viewport down one page",
    ),
    def(
        "tui.altScreen.halfPageUp",
        &[],
        "Scroll viewport up half a page",
    ),
    def(
        "tui.altScreen.halfPageDown",
        &[],
        "Scroll viewport down half a page",
    ),
    def("tui.altScreen.lineUp", &[], "Scroll viewport up one line"),
    def(
        "tui.altScreen.lineDown",
        &[],
        "Scroll viewport down one line",
    ),
    def(
        "tui.altScreen.previousPrompt",
        &["ctrl+shift+up"],
        "Jump to previous prompt",
    ),
    def(
        "tui.altScreen.nextPrompt",
        &["ctrl+shift+down"],
        "Jump to next prompt",
    ),
    def(
        "tui.altScreen.search",
        &["ctrl+shift+f"],
        "Search the transcript",
    ),
    def(
        "tui.altScreen.searchNext",
        &["enter", "ctrl+g"],
        "Select the next search match",
    ),
    def(
        "tui.altScreen.searchPrevious",
        &["shift+enter", "ctrl+shift+g"],
        "Select the previous search match",
    ),
    def(
        "tui.altScreen.searchClose",
        &["escape"],
        "Close transcript search",
    ),
    def("tui.altScreen.top", &["home"], "Scroll viewport to top"),
    def(
        "tui.altScreen.bottom",
        &["end"],
        "Scroll viewport to bottom",
    ),
    def("app.interrupt", &["escape"], "Cancel or abort"),
    def("app.clear", &["ctrl+c"], "Clear editor"),
    def("app.exit", &["ctrl+d"], "Exit when editor is empty"),
    def("app.suspend", &["ctrl+z"], "Suspend to background"),
    def("app.thinking.cycle", &["shift+tab"], "Cycle thinking level"),
    def(
        "app.thinking.save",
        &["ctrl+d"],
        "Save thinking level as default",
    ),
    def("app.model.cycleForward", &["ctrl+p"], "Cycle to next model"),
    def(
        "app.model.cycleBackward",
        &["shift+ctrl+p"],
        "Cycle to previous model",
    ),
    def("app.model.select", &["ctrl+l"], "Open model selector"),
    def("app.tools.expand", &["ctrl+o"], "Toggle tool output"),
    def("app.thinking.toggle", &["ctrl+t"], "Toggle thinking blocks"),
    def(
        "app.session.toggleNamedFilter",
        &["ctrl+n"],
        "Toggle named session filter",
    ),
    def("app.editor.external", &["ctrl+g"], "Open external editor"),
    def(
        "app.message.copy",
        &["ctrl+x"],
        "Copy selection or last assistant message",
    ),
    def(
        "app.message.followUp",
        &["alt+enter"],
        "Queue follow-up message",
    ),
    def(
        "app.message.dequeue",
        &["alt+up"],
        "Restore queued messages",
    ),
    def(
        "app.clipboard.pasteImage",
        &["ctrl+v"],
        "Paste image or text from clipboard",
    ),
    def("app.session.new", &[], "Start a new session"),
    def("app.session.tree", &[], "Open session tree"),
    def("app.session.fork", &[], "Fork current session"),
    def("app.session.resume", &[], "Resume a session"),
    def(
        "app.tree.foldOrUp",
        &["ctrl+left", "alt+left"],
        "Fold tree branch or move up",
    ),
    def(
        "app.tree.unfoldOrDown",
        &["ctrl+right", "alt+right"],
        "Unfold tree branch or move down",
    ),
    def("app.tree.editLabel", &["shift+l"], "Edit tree label"),
    def(
        "app.tree.toggleLabelTimestamp",
        &["shift+t"],
        "Toggle tree label timestamps",
    ),
    def(
        "app.session.togglePath",
        &["ctrl+p"],
        "Toggle session path display",
    ),
    def(
        "app.session.toggleSort",
        &["ctrl+s"],
        "Toggle session sort mode",
    ),
    def("app.session.rename", &["ctrl+r"], "Rename session"),
    def("app.session.delete", &["ctrl+d"], "Delete session"),
    def(
        "app.session.deleteNoninvasive",
        &["ctrl+backspace"],
        "Delete session when query is empty",
    ),
    def("app.models.save", &["ctrl+s"], "Save model selection"),
    def("app.models.enableAll", &["ctrl+a"], "Enable all models"),
    def("app.models.clearAll", &["ctrl+x"], "Clear all models"),
    def(
        "app.models.toggleProvider",
        &["ctrl+p"],
        "Toggle all models for provider",
    ),
    def(
        "app.models.reorderUp",
        &["alt+up"],
        "Move model up in order",
    ),
    def(
        "app.models.reorderDown",
        &["alt+down"],
        "Move model down in order",
    ),
    def(
        "app.tree.filter.default",
        &["ctrl+d"],
        "Tree filter: default view",
    ),
    def(
        "app.tree.filter.noTools",
        &["ctrl+t"],
        "Tree filter: hide tool results",
    ),
    def(
        "app.tree.filter.userOnly",
        &["ctrl+u"],
        "Tree filter: user messages only",
    ),
    def(
        "app.tree.filter.labeledOnly",
        &["ctrl+l"],
        "Tree filter: labeled entries only",
    ),
    def(
        "app.tree.filter.all",
        &["ctrl+a"],
        "Tree filter: show all entries",
    ),
    def(
        "app.tree.filter.cycleForward",
        &["ctrl+o"],
        "Tree filter: cycle forward",
    ),
    def(
        "app.tree.filter.cycleBackward",
        &["shift+ctrl+o"],
        "Tree filter: cycle backward",
    ),
];

/// Defaults that differ on Windows and WSL.
fn platform_keys(id: &str, platform: Platform) -> Option<&'static [&'static str]> {
    use Platform::{Unix, Windows, Wsl};
    Some(match (id, platform) {
        (_, Unix) => return None,
        ("tui.editor.undo", Windows) => &["ctrl+z"],
        ("tui.editor.undo", Wsl) => &["alt+z"],
        ("app.suspend", Windows) => &[],
        ("app.model.cycleBackward", _) => &["alt+p"],
        ("app.message.followUp", _) => &["ctrl+q"],
        ("app.message.dequeue", _) => &["alt+q"],
        ("app.clipboard.pasteImage", _) => &["alt+v"],
        ("tui.altScreen.search", _) => &["ctrl+f"],
        ("tui.altScreen.previousPrompt", _) => &["ctrl+shift+up", "ctrl+up"],
        ("tui.altScreen.nextPrompt", _) => &["ctrl+shift+down", "ctrl+down"],
        _ => return None,
    })
}

/// Names older versions wrote in keybindings.json, and the ids they became.
const LEGACY_NAMES: &[(&str, &str)] = &[
    ("cursorUp", "tui.editor.cursorUp"),
    ("cursorDown", "tui.editor.cursorDown"),
    ("cursorLeft", "tui.editor.cursorLeft"),
    ("cursorRight", "tui.editor.cursorRight"),
    ("cursorWordLeft", "tui.editor.cursorWordLeft"),
    ("cursorWordRight", "tui.editor.cursorWordRight"),
    ("cursorLineStart", "tui.editor.cursorLineStart"),
    ("cursorLineEnd", "tui.editor.cursorLineEnd"),
    ("jumpForward", "tui.editor.jumpForward"),
    ("jumpBackward", "tui.editor.jumpBackward"),
    ("pageUp", "tui.editor.pageUp"),
    ("pageDown", "tui.editor.pageDown"),
    ("deleteCharBackward", "tui.editor.deleteCharBackward"),
    ("deleteCharForward", "tui.editor.deleteCharForward"),
    ("deleteWordBackward", "tui.editor.deleteWordBackward"),
    ("deleteWordForward", "tui.editor.deleteWordForward"),
    ("deleteToLineStart", "tui.editor.deleteToLineStart"),
    ("deleteToLineEnd", "tui.editor.deleteToLineEnd"),
    ("yank", "tui.editor.yank"),
    ("yankPop", "tui.editor.yankPop"),
    ("undo", "tui.editor.undo"),
    ("newLine", "tui.input.newLine"),
    ("submit", "tui.input.submit"),
    ("tab", "tui.input.tab"),
    ("copy", "tui.input.copy"),
    ("selectUp", "tui.select.up"),
    ("selectDown", "tui.select.down"),
    ("selectPageUp", "tui.select.pageUp"),
    ("selectPageDown", "tui.select.pageDown"),
    ("selectConfirm", "tui.select.confirm"),
    ("selectCancel", "tui.select.cancel"),
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("selectModel", "app.model.select"),
    ("expandTools", "app.tools.expand"),
    ("toggleThinking", "app.thinking.toggle"),
    ("toggleSessionNamedFilter", "app.session.toggleNamedFilter"),
    ("externalEditor", "app.editor.external"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("newSession", "app.session.new"),
    ("tree", "app.session.tree"),
    ("fork", "app.session.fork"),
    ("resume", "app.session.resume"),
    ("treeFoldOrUp", "app.tree.foldOrUp"),
    ("treeUnfoldOrDown", "app.tree.unfoldOrDown"),
    ("treeEditLabel", "app.tree.editLabel"),
    ("treeToggleLabelTimestamp", "app.tree.toggleLabelTimestamp"),
    ("toggleSessionPath", "app.session.togglePath"),
    ("toggleSessionSort", "app.session.toggleSort"),
    ("renameSession", "app.session.rename"),
    ("deleteSession", "app.session.delete"),
    ("deleteSessionNoninvasive", "app.session.deleteNoninvasive"),
];

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
