//! One key of a binding: `mod+key` parsed and displayed as written, and matched against
//! what the terminal sent (legacy sequences included).

use std::fmt;

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
pub(super) const SYMBOLS: &str = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?";

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
