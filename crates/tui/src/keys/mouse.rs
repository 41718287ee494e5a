//! Mouse reports in the SGR encoding (`CSI < button ; column ; row M|m`), which the
//! terminal sends once mouse reporting is on (see `terminal::Terminal::enter_with`). The
//! key parser hands them on as [`InputEvent::Other`]; [`MouseEvent::parse`] reads one.

use super::InputEvent;

/// What the mouse did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    /// A button went down (0 left, 1 middle, 2 right).
    Press(u8),
    Release(u8),
    /// The mouse moved with a button held.
    Drag(u8),
    WheelUp,
    WheelDown,
    /// Anything else (a motion without buttons, extra buttons).
    Other,
}

/// One mouse report: what happened and where (0-based column and row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseEvent {
    pub kind: MouseKind,
    pub column: u16,
    pub row: u16,
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
}

impl MouseEvent {
    /// Reads an SGR mouse report (`ESC [ < b ; x ; y M` or `m`), if `event` is one.
    pub fn parse(event: &InputEvent) -> Option<Self> {
        let InputEvent::Other(raw) = event else {
            return None;
        };
        Self::parse_raw(raw)
    }

    /// Reads the report from its raw text.
    pub fn parse_raw(raw: &str) -> Option<Self> {
        let body = raw.strip_prefix("\x1b[<")?;
        let (body, released) = match body.strip_suffix('M') {
            Some(body) => (body, false),
            None => (body.strip_suffix('m')?, true),
        };
        let mut parts = body.split(';').map(str::parse::<u16>);
        let button = parts.next()?.ok()?;
        let column = parts.next()?.ok()?;
        let row = parts.next()?.ok()?;
        if parts.next().is_some() {
            return None;
        }
        let base = button & 0b11;
        let kind = if button & 64 != 0 {
            match base {
                0 => MouseKind::WheelUp,
                1 => MouseKind::WheelDown,
                _ => MouseKind::Other,
            }
        } else if button & 128 != 0 || base == 3 {
            MouseKind::Other
        } else if button & 32 != 0 {
            MouseKind::Drag(base as u8)
        } else if released {
            MouseKind::Release(base as u8)
        } else {
            MouseKind::Press(base as u8)
        };
        Some(Self {
            kind,
            column: column.saturating_sub(1),
            row: row.saturating_sub(1),
            shift: button & 4 != 0,
            alt: button & 8 != 0,
            ctrl: button & 16 != 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::InputParser;

    fn parsed(bytes: &[u8]) -> Vec<Option<MouseEvent>> {
        InputParser::new()
            .feed(bytes)
            .iter()
            .map(MouseEvent::parse)
            .collect()
    }

    #[test]
    fn wheel_reports_come_through_the_key_parser() {
        let events = parsed(b"\x1b[<64;10;5M\x1b[<65;1;1M");
        assert_eq!(events.len(), 2);
        let up = events[0].expect("a mouse report");
        assert_eq!(up.kind, MouseKind::WheelUp);
        assert_eq!((up.column, up.row), (9, 4));
        assert_eq!(events[1].map(|e| e.kind), Some(MouseKind::WheelDown));
    }

    #[test]
    fn buttons_drags_and_modifiers() {
        let press = MouseEvent::parse_raw("\x1b[<0;3;4M").expect("press");
        assert_eq!(press.kind, MouseKind::Press(0));
        let release = MouseEvent::parse_raw("\x1b[<0;3;4m").expect("release");
        assert_eq!(release.kind, MouseKind::Release(0));
        let drag = MouseEvent::parse_raw("\x1b[<32;5;4M").expect("drag");
        assert_eq!(drag.kind, MouseKind::Drag(0));
        let shifted = MouseEvent::parse_raw("\x1b[<68;1;1M").expect("shift+wheel");
        assert!(shifted.shift);
        assert_eq!(shifted.kind, MouseKind::WheelUp);
        assert_eq!(MouseEvent::parse_raw("\x1b[<64;1M"), None);
        assert_eq!(MouseEvent::parse_raw("\x1b[A"), None);
        assert_eq!(MouseEvent::parse(&InputEvent::Paste("x".into())), None);
    }
}
