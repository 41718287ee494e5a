//! Raw terminal bytes to input events.
//!
//! Terminals send keys as single bytes (text, control characters) or escape sequences
//! (CSI `ESC [`, SS3 `ESC O`, ESC-prefixed alt keys, the kitty protocol's `CSI … u`), and a
//! read may end in the middle of any of them. The parser keeps an unfinished tail until
//! more bytes arrive. A lone ESC is ambiguous (the Escape key, or the start of a sequence
//! still in flight), so it stays pending until the caller, after a short quiet period,
//! calls [`InputParser::flush_pending`].

use super::{InputEvent, Key, KeyCode, KeyKind, Modifiers};

const ESC: u8 = 0x1b;
const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";
/// A CSI sequence longer than this is garbage; give up on it rather than swallow input.
const MAX_CSI_LEN: usize = 128;
/// OSC/DCS/APC strings (terminal replies) can be long, but not unboundedly.
const MAX_STRING_LEN: usize = 64 * 1024;
/// Caps Lock and Num Lock bits of a kitty/xterm modifier parameter; they never change
/// which key was meant.
const LOCK_BITS: u32 = 64 | 128;

/// Turns bytes read from the terminal into [`InputEvent`]s.
#[derive(Debug, Default)]
pub struct InputParser {
    /// Bytes not yet turned into events: an unfinished sequence or UTF-8 character.
    buf: Vec<u8>,
    /// The text of a bracketed paste whose end marker has not arrived yet.
    paste: Option<Vec<u8>>,
    kitty: bool,
    windows_terminal: bool,
    /// Some terminals send a printable key both as a kitty `CSI code u` and as plain text;
    /// the plain copy right after it is dropped.
    kitty_printable: Option<char>,
}

/// What one step of parsing found at the start of the buffer.
enum Step {
    Event(usize, InputEvent),
    /// Bytes that mean nothing (invalid UTF-8, a stray paste end marker).
    Skip(usize),
    PasteStart(usize),
    /// More bytes are needed.
    Incomplete,
}

impl InputParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Tells the parser the kitty keyboard protocol is on. Two legacy sequences then mean
    /// Shift+Enter (how kitty and Ghostty configs map it): `ESC CR` and a bare LF.
    pub fn set_kitty_active(&mut self, active: bool) {
        self.kitty = active;
    }

    pub fn kitty_active(&self) -> bool {
        self.kitty
    }

    /// Windows Terminal sends BS (0x08) for Ctrl+Backspace and DEL for Backspace; other
    /// terminals may send BS for a plain Backspace.
    pub fn set_windows_terminal(&mut self, windows_terminal: bool) {
        self.windows_terminal = windows_terminal;
    }

    /// Parses `bytes` (appended to whatever was pending) into complete events.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<InputEvent> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        self.drain(false, &mut out);
        out
    }

    /// Resolves what is pending as if no more bytes were coming: a lone ESC becomes
    /// Escape, an unfinished sequence becomes [`InputEvent::Other`]. Call it when input
    /// has been quiet for a short while (about 10 ms) and [`Self::has_pending`] is true.
    /// An unfinished bracketed paste keeps waiting for its end marker.
    pub fn flush_pending(&mut self) -> Vec<InputEvent> {
        let mut out = Vec::new();
        self.drain(true, &mut out);
        out
    }

    /// True when bytes wait for more input or for [`Self::flush_pending`].
    pub fn has_pending(&self) -> bool {
        self.paste.is_none() && !self.buf.is_empty()
    }

    /// True while inside a bracketed paste whose end marker has not arrived.
    pub fn in_paste(&self) -> bool {
        self.paste.is_some()
    }

    fn drain(&mut self, flush: bool, out: &mut Vec<InputEvent>) {
        let mut pos = 0;
        loop {
            if let Some(paste) = self.paste.as_mut() {
                let searched = paste.len().saturating_sub(PASTE_END.len() - 1);
                paste.extend_from_slice(&self.buf[pos..]);
                self.buf.clear();
                pos = 0;
                let Some(end) = find(&paste[searched..], PASTE_END).map(|i| i + searched) else {
                    return;
                };
                let rest = paste.split_off(end + PASTE_END.len());
                paste.truncate(end);
                let text = normalize_newlines(&String::from_utf8_lossy(paste));
                self.paste = None;
                self.kitty_printable = None;
                out.push(InputEvent::Paste(text));
                self.buf = rest;
                continue;
            }
            if pos >= self.buf.len() {
                break;
            }
            match self.step(&self.buf[pos..], flush) {
                Step::Event(len, event) => {
                    pos += len;
                    self.emit(event, out);
                }
                Step::Skip(len) => pos += len,
                Step::PasteStart(len) => {
                    pos += len;
                    self.paste = Some(Vec::new());
                }
                Step::Incomplete => break,
            }
        }
        self.buf.drain(..pos);
    }

    fn emit(&mut self, event: InputEvent, out: &mut Vec<InputEvent>) {
        let previous = self.kitty_printable.take();
        if let InputEvent::Key(key) = &event
            && let KeyCode::Char(c) = key.code
        {
            if previous == Some(c) && key.raw.chars().eq(std::iter::once(c)) {
                return;
            }
            if key.modifiers.is_empty()
                && key.raw.starts_with("\x1b[")
                && key.raw.ends_with('u')
                && !key.raw.contains(';')
            {
                self.kitty_printable = Some(c);
            }
        }
        out.push(event);
    }

    fn step(&self, bytes: &[u8], flush: bool) -> Step {
        let Some(&first) = bytes.first() else {
            return Step::Incomplete;
        };
        let ctrl = |c: char| key(bytes, 1, KeyCode::Char(c), Modifiers::CTRL);
        match first {
            ESC => self.escape(bytes, flush),
            0x00 => ctrl(' '),
            b'\r' => key(bytes, 1, KeyCode::Enter, Modifiers::NONE),
            b'\n' if self.kitty => key(bytes, 1, KeyCode::Enter, Modifiers::SHIFT),
            b'\t' => key(bytes, 1, KeyCode::Tab, Modifiers::NONE),
            0x7f => key(bytes, 1, KeyCode::Backspace, Modifiers::NONE),
            0x08 if self.windows_terminal => key(bytes, 1, KeyCode::Backspace, Modifiers::CTRL),
            0x08 => key(bytes, 1, KeyCode::Backspace, Modifiers::NONE),
            0x01..=0x1a => ctrl(char::from(first + 0x60)),
            0x1c => ctrl('\\'),
            0x1d => ctrl(']'),
            0x1e => ctrl('^'),
            // Ctrl+- and Ctrl+_ are the same key on most layouts; both send US (0x1f).
            0x1f => ctrl('-'),
            _ => match decode_char(bytes, flush) {
                Decoded::Char(c, len) => key(bytes, len, KeyCode::Char(c), Modifiers::NONE),
                Decoded::Invalid(len) => Step::Skip(len),
                Decoded::Incomplete => Step::Incomplete,
            },
        }
    }

    fn escape(&self, bytes: &[u8], flush: bool) -> Step {
        let Some(&second) = bytes.get(1) else {
            return if flush {
                key(bytes, 1, KeyCode::Escape, Modifiers::NONE)
            } else {
                Step::Incomplete
            };
        };
        let third = bytes.get(2).copied();
        match second {
            b'[' => self.csi(bytes, flush),
            b'O' => match third {
                Some(c) => ss3(bytes, c),
                None if flush => alt_key(bytes, 2, KeyCode::Char('O')),
                None => Step::Incomplete,
            },
            b']' if third.is_some_and(|c| c.is_ascii_digit()) => string_sequence(bytes, flush),
            b'P' if third.is_some_and(|c| b"0123456789>|!+$".contains(&c)) => {
                string_sequence(bytes, flush)
            }
            b'_' if third == Some(b'G') => string_sequence(bytes, flush),
            b']' | b'P' | b'_' if third.is_none() && !flush => Step::Incomplete,
            ESC => self.double_escape(bytes, flush),
            _ => self.alt_char(bytes, flush),
        }
    }

    /// `ESC ESC`: some terminals send Alt+arrow as ESC before the arrow's sequence;
    /// otherwise it is two Escape presses.
    fn double_escape(&self, bytes: &[u8], flush: bool) -> Step {
        match bytes.get(2) {
            None if !flush => Step::Incomplete,
            Some(b'[' | b'O') => match self.escape(&bytes[1..], flush) {
                Step::Event(len, InputEvent::Key(inner)) => {
                    let mut key = inner;
                    key.modifiers = key.modifiers | Modifiers::ALT;
                    key.raw = lossy(&bytes[..len + 1]);
                    Step::Event(len + 1, InputEvent::Key(key))
                }
                Step::Incomplete => Step::Incomplete,
                _ => key(bytes, 1, KeyCode::Escape, Modifiers::NONE),
            },
            _ => key(bytes, 1, KeyCode::Escape, Modifiers::NONE),
        }
    }

    /// ESC followed by a character: the legacy encoding of Alt+key.
    fn alt_char(&self, bytes: &[u8], flush: bool) -> Step {
        let second = bytes[1];
        let alt_ctrl = |c: char| {
            key(
                bytes,
                2,
                KeyCode::Char(c),
                Modifiers::CTRL.union(Modifiers::ALT),
            )
        };
        match second {
            b'\r' if self.kitty => key(bytes, 2, KeyCode::Enter, Modifiers::SHIFT),
            b'\r' => alt_key(bytes, 2, KeyCode::Enter),
            b'\t' => alt_key(bytes, 2, KeyCode::Tab),
            0x7f | 0x08 => alt_key(bytes, 2, KeyCode::Backspace),
            0x00 => alt_ctrl(' '),
            0x01..=0x1a => alt_ctrl(char::from(second + 0x60)),
            0x1c => alt_ctrl('\\'),
            0x1d => alt_ctrl(']'),
            0x1e => alt_ctrl('^'),
            0x1f => alt_ctrl('-'),
            _ => match decode_char(&bytes[1..], flush) {
                Decoded::Char(c, len) => alt_key(bytes, len + 1, KeyCode::Char(c)),
                Decoded::Incomplete => Step::Incomplete,
                Decoded::Invalid(_) => key(bytes, 1, KeyCode::Escape, Modifiers::NONE),
            },
        }
    }

    /// `ESC [` parameters, intermediates, final byte.
    fn csi(&self, bytes: &[u8], flush: bool) -> Step {
        let incomplete = |len: usize| {
            if flush {
                other(bytes, len)
            } else {
                Step::Incomplete
            }
        };
        // The Linux console's F1-F5: ESC [ [ A-E.
        if bytes.get(2) == Some(&b'[') {
            return match bytes.get(3) {
                Some(&c @ b'A'..=b'E') => key(bytes, 4, KeyCode::F(c - b'A' + 1), Modifiers::NONE),
                Some(_) => other(bytes, 3),
                None => incomplete(bytes.len()),
            };
        }
        // X10 mouse report: ESC [ M and three raw bytes.
        if bytes.get(2) == Some(&b'M') {
            return if bytes.len() >= 6 {
                other(bytes, 6)
            } else {
                incomplete(bytes.len())
            };
        }
        if bytes.starts_with(PASTE_START) {
            return Step::PasteStart(PASTE_START.len());
        }
        if bytes.starts_with(PASTE_END) {
            return Step::Skip(PASTE_END.len());
        }
        let mut i = 2;
        loop {
            let Some(&b) = bytes.get(i) else {
                return incomplete(bytes.len());
            };
            if i >= MAX_CSI_LEN {
                return other(bytes, i);
            }
            match b {
                0x30..=0x3f => i += 1,
                // rxvt ends Shift+Insert etc. with `$`, which is otherwise an intermediate.
                b'$' if bytes[2..i].iter().all(u8::is_ascii_digit) && i > 2 => {
                    return self.csi_final(bytes, i + 1);
                }
                0x20..=0x2f => i += 1,
                0x40..=0x7e => return self.csi_final(bytes, i + 1),
                // Not part of a CSI sequence: emit what we have and parse on from here.
                _ => return other(bytes, i),
            }
        }
    }

    fn csi_final(&self, bytes: &[u8], len: usize) -> Step {
        let seq = &bytes[..len];
        let final_byte = seq[len - 1];
        let body = &seq[2..len - 1];
        if body
            .first()
            .is_some_and(|b| matches!(b, b'<' | b'=' | b'>' | b'?'))
            || body.iter().any(|b| (0x20..=0x2f).contains(b))
        {
            return other(bytes, len);
        }
        let Some(params) = Params::parse(body) else {
            return other(bytes, len);
        };
        let (modifiers, kind) = params.modifiers(1);
        let with = |code: KeyCode, modifiers: Modifiers, kind: KeyKind| {
            Step::Event(
                len,
                InputEvent::Key(Key {
                    code,
                    modifiers,
                    kind,
                    raw: lossy(seq),
                }),
            )
        };
        match final_byte {
            b'u' => match kitty_key(&params) {
                Some((code, modifiers)) => with(code, modifiers, kind),
                None => other(bytes, len),
            },
            b'~' => {
                let number = params.get(0, 0).unwrap_or(0);
                if number == 27 {
                    // xterm modifyOtherKeys: CSI 27 ; modifiers ; codepoint ~
                    let (modifiers, _) = params.modifiers(1);
                    return match params
                        .get(2, 0)
                        .and_then(|cp| codepoint_key(cp, None, None, modifiers))
                    {
                        Some((code, modifiers)) => with(code, modifiers, KeyKind::Press),
                        None => other(bytes, len),
                    };
                }
                match tilde_key(number) {
                    Some(code) => with(code, modifiers, kind),
                    None => other(bytes, len),
                }
            }
            b'^' | b'$' => {
                let extra = if final_byte == b'^' {
                    Modifiers::CTRL
                } else {
                    Modifiers::SHIFT
                };
                match tilde_key(params.get(0, 0).unwrap_or(0)) {
                    Some(code) => with(code, modifiers | extra, kind),
                    None => other(bytes, len),
                }
            }
            b'Z' => with(KeyCode::Tab, modifiers | Modifiers::SHIFT, kind),
            b'a'..=b'e' if body.is_empty() => {
                let code = letter_key(final_byte.to_ascii_uppercase()).unwrap_or(KeyCode::Clear);
                with(code, Modifiers::SHIFT, KeyKind::Press)
            }
            _ => match letter_key(final_byte) {
                Some(code) => with(code, modifiers, kind),
                None => other(bytes, len),
            },
        }
    }
}

/// The numeric parameters of a CSI sequence: `;`-separated fields of `:`-separated values.
struct Params(Vec<Vec<Option<u32>>>);

impl Params {
    fn parse(body: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(body).ok()?;
        if text.is_empty() {
            return Some(Self(Vec::new()));
        }
        let mut fields = Vec::new();
        for field in text.split(';') {
            let mut values = Vec::new();
            for value in field.split(':') {
                if value.is_empty() {
                    values.push(None);
                } else {
                    values.push(Some(value.parse::<u32>().ok()?));
                }
            }
            fields.push(values);
        }
        Some(Self(fields))
    }

    fn get(&self, field: usize, index: usize) -> Option<u32> {
        self.0.get(field)?.get(index).copied().flatten()
    }

    /// The modifiers (`1 + bits`) and event type (`:1` press, `:2` repeat, `:3` release)
    /// of the given field.
    fn modifiers(&self, field: usize) -> (Modifiers, KeyKind) {
        let bits = self
            .get(field, 0)
            .map_or(0, |m| m.saturating_sub(1) & !LOCK_BITS);
        let kind = match self.get(field, 1) {
            Some(2) => KeyKind::Repeat,
            Some(3) => KeyKind::Release,
            _ => KeyKind::Press,
        };
        // Hyper and Meta (16, 32) have no place in bindings; the four we know are kept.
        (Modifiers::from_bits((bits & 0xf) as u8), kind)
    }
}

/// `CSI codepoint[:shifted[:base]] [; modifiers[:event] [; text]] u`
fn kitty_key(params: &Params) -> Option<(KeyCode, Modifiers)> {
    let codepoint = params.get(0, 0)?;
    let shifted = params.get(0, 1);
    let base = params.get(0, 2);
    let (modifiers, _) = params.modifiers(1);
    codepoint_key(codepoint, shifted, base, modifiers)
}

/// A key from a kitty / modifyOtherKeys codepoint. Printable keys with at most Shift held
/// become the character typed (`shift+a` is `A`, as in a legacy terminal); with Ctrl, Alt
/// or Super they keep the unshifted letter so bindings like `ctrl+shift+p` match.
fn codepoint_key(
    codepoint: u32,
    shifted: Option<u32>,
    base: Option<u32>,
    modifiers: Modifiers,
) -> Option<(KeyCode, Modifiers)> {
    let code = match codepoint {
        27 => KeyCode::Escape,
        13 | 57414 => KeyCode::Enter,
        9 => KeyCode::Tab,
        8 | 127 => KeyCode::Backspace,
        57399..=57408 => KeyCode::Char(char::from_digit(codepoint - 57399, 10)?),
        57409 => KeyCode::Char('.'),
        57410 => KeyCode::Char('/'),
        57411 => KeyCode::Char('*'),
        57412 => KeyCode::Char('-'),
        57413 => KeyCode::Char('+'),
        57415 => KeyCode::Char('='),
        57416 => KeyCode::Char(','),
        57417 => KeyCode::Left,
        57418 => KeyCode::Right,
        57419 => KeyCode::Up,
        57420 => KeyCode::Down,
        57421 => KeyCode::PageUp,
        57422 => KeyCode::PageDown,
        57423 => KeyCode::Home,
        57424 => KeyCode::End,
        57425 => KeyCode::Insert,
        57426 => KeyCode::Delete,
        57427 => KeyCode::Clear,
        57376..=57398 => KeyCode::F(u8::try_from(codepoint - 57376 + 13).ok()?),
        // The rest of the private-use area: lock keys, media keys, lone modifiers.
        57344..=63743 => return None,
        0..=31 => return None,
        _ => KeyCode::Char(char::from_u32(codepoint)?),
    };
    let KeyCode::Char(c) = code else {
        return Some((code, modifiers));
    };
    let commanding = Modifiers::CTRL
        .union(Modifiers::ALT)
        .union(Modifiers::SUPER);
    if modifiers.bits() & commanding.bits() == 0 {
        // Text: what the key types.
        let typed = if modifiers.contains(Modifiers::SHIFT) {
            match shifted.and_then(char::from_u32) {
                Some(s) => s,
                None => c.to_uppercase().next().unwrap_or(c),
            }
        } else {
            c
        };
        return Some((KeyCode::Char(typed), Modifiers::NONE));
    }
    // A shortcut: name the key the way bindings spell it.
    let mut c = c;
    if c.is_ascii_uppercase() && modifiers.contains(Modifiers::SHIFT) {
        c = c.to_ascii_lowercase();
    }
    if !c.is_ascii_graphic() {
        // Non-Latin layouts: the base-layout key says which physical key it was.
        if let Some(b) = base.and_then(char::from_u32).filter(char::is_ascii_graphic) {
            c = b;
        }
    }
    Some((KeyCode::Char(c), modifiers))
}

/// `CSI number ~` keys.
fn tilde_key(number: u32) -> Option<KeyCode> {
    Some(match number {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F(u8::try_from(number - 10).ok()?),
        17..=21 => KeyCode::F(u8::try_from(number - 11).ok()?),
        23 | 24 => KeyCode::F(u8::try_from(number - 12).ok()?),
        _ => return None,
    })
}

/// Keys named by a CSI or SS3 final letter.
fn letter_key(letter: u8) -> Option<KeyCode> {
    Some(match letter {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'E' => KeyCode::Clear,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        _ => return None,
    })
}

/// `ESC O` and one byte: cursor keys in application mode, F1-F4, the keypad.
fn ss3(bytes: &[u8], c: u8) -> Step {
    if let Some(code) = letter_key(c) {
        return key(bytes, 3, code, Modifiers::NONE);
    }
    let keypad = |ch: char| key(bytes, 3, KeyCode::Char(ch), Modifiers::NONE);
    match c {
        b'M' => key(bytes, 3, KeyCode::Enter, Modifiers::NONE),
        // rxvt: Ctrl+arrows.
        b'a'..=b'e' => key(
            bytes,
            3,
            letter_key(c.to_ascii_uppercase()).unwrap_or(KeyCode::Clear),
            Modifiers::CTRL,
        ),
        b'p'..=b'y' => keypad(char::from(b'0' + (c - b'p'))),
        b'j' => keypad('*'),
        b'k' => keypad('+'),
        b'l' => keypad(','),
        b'm' => keypad('-'),
        b'n' => keypad('.'),
        b'o' => keypad('/'),
        b'X' => keypad('='),
        _ => other(bytes, 3),
    }
}

/// OSC, DCS or APC: runs to BEL or ST (`ESC \`).
fn string_sequence(bytes: &[u8], flush: bool) -> Step {
    let mut i = 2;
    while i < bytes.len() {
        match bytes[i] {
            0x07 => return other(bytes, i + 1),
            ESC if bytes.get(i + 1) == Some(&b'\\') => return other(bytes, i + 2),
            _ => i += 1,
        }
        if i >= MAX_STRING_LEN {
            return other(bytes, i);
        }
    }
    if flush {
        other(bytes, bytes.len())
    } else {
        Step::Incomplete
    }
}

enum Decoded {
    Char(char, usize),
    Invalid(usize),
    Incomplete,
}

/// The UTF-8 character at the start of `bytes`.
fn decode_char(bytes: &[u8], flush: bool) -> Decoded {
    let Some(&lead) = bytes.first() else {
        return Decoded::Incomplete;
    };
    let len = match lead {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Decoded::Invalid(1),
    };
    if bytes.len() < len {
        // Only continuation bytes may follow; anything else means the lead was bad.
        if bytes[1..].iter().any(|b| b & 0xc0 != 0x80) {
            return Decoded::Invalid(1);
        }
        return if flush {
            Decoded::Invalid(bytes.len())
        } else {
            Decoded::Incomplete
        };
    }
    match std::str::from_utf8(&bytes[..len])
        .ok()
        .and_then(|s| s.chars().next())
    {
        Some(c) => Decoded::Char(c, len),
        None => Decoded::Invalid(1),
    }
}

fn key(bytes: &[u8], len: usize, code: KeyCode, modifiers: Modifiers) -> Step {
    Step::Event(
        len,
        InputEvent::Key(Key {
            code,
            modifiers,
            kind: KeyKind::Press,
            raw: lossy(&bytes[..len]),
        }),
    )
}

fn alt_key(bytes: &[u8], len: usize, code: KeyCode) -> Step {
    key(bytes, len, code, Modifiers::ALT)
}

fn other(bytes: &[u8], len: usize) -> Step {
    Step::Event(len, InputEvent::Other(lossy(&bytes[..len])))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `\r\n` and lone `\r` become `\n`.
pub(crate) fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}
