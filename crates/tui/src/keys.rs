//! Input events: keys parsed from raw terminal bytes (legacy xterm sequences and the kitty
//! keyboard protocol) and bracketed pastes. Each key keeps its raw sequence, which
//! extension components receive as `handleInput(data)`.
//!
//! [`InputParser`] turns the bytes read from the terminal into [`InputEvent`]s.

pub mod mouse;
mod parser;
#[cfg(test)]
mod tests;

pub use mouse::MouseEvent;
pub use mouse::MouseKind;
pub use parser::InputParser;

/// One input event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputEvent {
    Key(Key),
    /// Text from a bracketed paste, with `\r\n` and `\r` turned into `\n`.
    Paste(String),
    /// A complete sequence that is not a key: terminal replies (the kitty flags report
    /// `CSI ? flags u`, device attributes, colour queries), mouse reports, keys this
    /// parser does not know. The raw text, so the terminal layer and extension
    /// components can still look at it.
    Other(String),
}

impl InputEvent {
    /// The bytes as a terminal would have sent them (pastes re-wrapped in the
    /// bracketed-paste markers), which is what extension components receive.
    pub fn raw(&self) -> String {
        match self {
            Self::Key(key) => key.raw.clone(),
            Self::Paste(text) => format!("\x1b[200~{text}\x1b[201~"),
            Self::Other(raw) => raw.clone(),
        }
    }

    /// The flags of a kitty keyboard protocol report (`CSI ? flags u`), the terminal's
    /// answer to the `CSI ? u` query that tells the protocol is supported.
    pub fn kitty_flags_reply(&self) -> Option<u32> {
        let Self::Other(raw) = self else {
            return None;
        };
        let digits = raw.strip_prefix("\x1b[?")?.strip_suffix('u')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }
}

/// A key press (or repeat / release under the kitty protocol).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: Modifiers,
    pub kind: KeyKind,
    /// The bytes the terminal sent, as text.
    pub raw: String,
}

impl Key {
    /// A press of `code` with `modifiers`, with a synthetic raw sequence (tests, replays).
    pub fn new(code: KeyCode, modifiers: Modifiers) -> Self {
        Self {
            code,
            modifiers,
            kind: KeyKind::Press,
            raw: String::new(),
        }
    }

    pub fn plain(code: KeyCode) -> Self {
        Self::new(code, Modifiers::NONE)
    }

    pub fn ctrl(c: char) -> Self {
        Self::new(KeyCode::Char(c), Modifiers::CTRL)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCode {
    /// A printable character. Letters are lower case when `ctrl`/`alt` are held; shifted
    /// letters typed plainly arrive as the upper-case character without `shift`.
    Char(char),
    Enter,
    Tab,
    Backspace,
    Escape,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    Clear,
    F(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeyKind {
    #[default]
    Press,
    Repeat,
    Release,
}

/// Modifier bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Modifiers(u8);

impl Modifiers {
    pub const NONE: Self = Self(0);
    pub const SHIFT: Self = Self(1);
    pub const ALT: Self = Self(2);
    pub const CTRL: Self = Self(4);
    pub const SUPER: Self = Self(8);

    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn bits(self) -> u8 {
        self.0
    }

    pub const fn from_bits(bits: u8) -> Self {
        Self(bits & 0b1111)
    }

    /// These modifiers without the ones in `other`.
    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }
}

impl std::ops::BitOr for Modifiers {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}
