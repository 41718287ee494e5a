//! ANSI styling and the colour theme every built-in view draws with.
//!
//! Styles are plain SGR sequences so that rendered lines are ordinary strings (what the
//! component contract and extensions expect). Each styled span ends with a full reset,
//! which keeps spans independent when lines are cut or joined.

/// A terminal colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// One of the 16 basic colours (0-15).
    Ansi(u8),
    /// The 256-colour palette.
    Indexed(u8),
    Rgb(u8, u8, u8),
}

/// Foreground, background and attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub fg: Option<Color>,
    pub bg: Option<Color>,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub inverse: bool,
    pub strikethrough: bool,
}

pub const RESET: &str = "\x1b[0m";

impl Style {
    pub const fn new() -> Self {
        Self {
            fg: None,
            bg: None,
            bold: false,
            dim: false,
            italic: false,
            underline: false,
            inverse: false,
            strikethrough: false,
        }
    }

    pub const fn fg(mut self, color: Color) -> Self {
        self.fg = Some(color);
        self
    }

    pub const fn bg(mut self, color: Color) -> Self {
        self.bg = Some(color);
        self
    }

    pub const fn bold(mut self) -> Self {
        self.bold = true;
        self
    }

    pub const fn dim(mut self) -> Self {
        self.dim = true;
        self
    }

    pub const fn italic(mut self) -> Self {
        self.italic = true;
        self
    }

    pub const fn underline(mut self) -> Self {
        self.underline = true;
        self
    }

    pub const fn inverse(mut self) -> Self {
        self.inverse = true;
        self
    }

    pub const fn strikethrough(mut self) -> Self {
        self.strikethrough = true;
        self
    }

    /// `other` laid over this style: its colours win where set, attributes add up.
    pub const fn patch(self, other: Style) -> Self {
        Self {
            fg: match other.fg {
                Some(fg) => Some(fg),
                None => self.fg,
            },
            bg: match other.bg {
                Some(bg) => Some(bg),
                None => self.bg,
            },
            bold: self.bold || other.bold,
            dim: self.dim || other.dim,
            italic: self.italic || other.italic,
            underline: self.underline || other.underline,
            inverse: self.inverse || other.inverse,
            strikethrough: self.strikethrough || other.strikethrough,
        }
    }

    pub fn is_plain(&self) -> bool {
        *self == Self::new()
    }

    /// The SGR sequence that switches this style on (empty for the plain style).
    pub fn prefix(&self) -> String {
        if self.is_plain() {
            return String::new();
        }
        let mut codes: Vec<String> = Vec::new();
        if self.bold {
            codes.push("1".into());
        }
        if self.dim {
            codes.push("2".into());
        }
        if self.italic {
            codes.push("3".into());
        }
        if self.underline {
            codes.push("4".into());
        }
        if self.inverse {
            codes.push("7".into());
        }
        if self.strikethrough {
            codes.push("9".into());
        }
        if let Some(fg) = self.fg {
            codes.push(color_code(fg, false));
        }
        if let Some(bg) = self.bg {
            codes.push(color_code(bg, true));
        }
        format!("\x1b[{}m", codes.join(";"))
    }

    /// `text` in this style, followed by a reset.
    pub fn paint(&self, text: &str) -> String {
        if self.is_plain() || text.is_empty() {
            return text.to_owned();
        }
        format!("{}{text}{RESET}", self.prefix())
    }
}

/// The style a run of SGR sequences switches on, as far as [`Style`] can say it: what
/// an extension's colour function (`theme.fg("accent", …)`) puts before its text. Resets
/// clear what came before; codes `Style` has no field for are ignored.
pub fn style_of_sgr(text: &str) -> Style {
    let mut style = Style::new();
    let mut rest = text;
    while let Some(start) = rest.find("\x1b[") {
        let body = &rest[start + 2..];
        let Some(end) = body.find(|c: char| !(c.is_ascii_digit() || c == ';' || c == ':')) else {
            break;
        };
        if body.as_bytes()[end] == b'm' {
            apply_sgr(&mut style, &body[..end]);
        }
        rest = &body[end + 1..];
    }
    style
}

fn apply_sgr(style: &mut Style, params: &str) {
    let codes: Vec<u16> = params
        .split([';', ':'])
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let mut i = 0;
    while i < codes.len() {
        let code = codes[i];
        let mut extended = |background: bool, i: &mut usize| {
            let color = match codes.get(*i + 1) {
                Some(5) => codes.get(*i + 2).map(|&n| {
                    *i += 2;
                    Color::Indexed(n.min(255) as u8)
                }),
                Some(2) if *i + 4 < codes.len() => {
                    let c = |k: usize| codes[*i + k].min(255) as u8;
                    let rgb = Color::Rgb(c(2), c(3), c(4));
                    *i += 4;
                    Some(rgb)
                }
                _ => None,
            };
            if background {
                style.bg = color.or(style.bg);
            } else {
                style.fg = color.or(style.fg);
            }
        };
        match code {
            0 => *style = Style::new(),
            1 => style.bold = true,
            2 => style.dim = true,
            3 => style.italic = true,
            4 => style.underline = true,
            7 => style.inverse = true,
            9 => style.strikethrough = true,
            22 => {
                style.bold = false;
                style.dim = false;
            }
            23 => style.italic = false,
            24 => style.underline = false,
            27 => style.inverse = false,
            29 => style.strikethrough = false,
            30..=37 => style.fg = Some(Color::Ansi((code - 30) as u8)),
            38 => extended(false, &mut i),
            39 => style.fg = None,
            40..=47 => style.bg = Some(Color::Ansi((code - 40) as u8)),
            48 => extended(true, &mut i),
            49 => style.bg = None,
            90..=97 => style.fg = Some(Color::Ansi((code - 90 + 8) as u8)),
            100..=107 => style.bg = Some(Color::Ansi((code - 100 + 8) as u8)),
            _ => {}
        }
        i += 1;
    }
}

fn color_code(color: Color, background: bool) -> String {
    match color {
        Color::Ansi(n) => {
            let n = u32::from(n.min(15));
            let base = if background { 40 } else { 30 };
            if n < 8 {
                (base + n).to_string()
            } else {
                (base + 60 + n - 8).to_string()
            }
        }
        Color::Indexed(n) => format!("{};5;{n}", if background { 48 } else { 38 }),
        Color::Rgb(r, g, b) => format!("{};2;{r};{g};{b}", if background { 48 } else { 38 }),
    }
}

/// The named colours of the built-in views (names follow the reference theme's keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub accent: Style,
    pub border: Style,
    pub border_muted: Style,
    pub success: Style,
    pub error: Style,
    pub warning: Style,
    pub muted: Style,
    pub dim: Style,
    pub text: Style,
    pub thinking_text: Style,
    pub user_message_bg: Style,
    pub tool_pending_bg: Style,
    pub tool_success_bg: Style,
    pub tool_error_bg: Style,
    pub tool_title: Style,
    pub tool_output: Style,
    pub md_heading: Style,
    pub md_link: Style,
    pub md_link_url: Style,
    pub md_code: Style,
    pub md_code_block_border: Style,
    pub md_quote: Style,
    pub md_quote_border: Style,
    pub md_hr: Style,
    pub md_list_bullet: Style,
    /// Code block lines in a language that is not highlighted.
    pub md_code_block: Style,
    pub md_bold: Style,
    pub md_italic: Style,
    pub md_strikethrough: Style,
    /// Added to level-1 headings (the reference underlines them).
    pub md_underline: Style,
    pub diff_added: Style,
    pub diff_removed: Style,
    pub diff_context: Style,
    /// Laid over the changed words when a removed line pairs with an added one.
    pub diff_inline: Style,
    pub syntax: SyntaxStyles,
    pub selected: Style,
    /// Editor border per thinking level: off, minimal, low, medium, high, xhigh.
    pub thinking_borders: [Style; 6],
}

/// Colours of highlighted code, by token kind (the reference theme's `syntax*` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntaxStyles {
    pub comment: Style,
    pub keyword: Style,
    pub function: Style,
    pub variable: Style,
    pub string: Style,
    pub number: Style,
    pub r#type: Style,
    pub operator: Style,
    pub punctuation: Style,
}

impl SyntaxStyles {
    /// The reference dark theme's code colours.
    pub const fn dark() -> Self {
        Self {
            comment: Style::new().fg(Color::Rgb(0x6a, 0x99, 0x55)),
            keyword: Style::new().fg(Color::Rgb(0x56, 0x9c, 0xd6)),
            function: Style::new().fg(Color::Rgb(0xdc, 0xdc, 0xaa)),
            variable: Style::new().fg(Color::Rgb(0x9c, 0xdc, 0xfe)),
            string: Style::new().fg(Color::Rgb(0xce, 0x91, 0x78)),
            number: Style::new().fg(Color::Rgb(0xb5, 0xce, 0xa8)),
            r#type: Style::new().fg(Color::Rgb(0x4e, 0xc9, 0xb0)),
            operator: Style::new().fg(Color::Rgb(0xd4, 0xd4, 0xd4)),
            punctuation: Style::new().fg(Color::Rgb(0xd4, 0xd4, 0xd4)),
        }
    }

    pub const fn plain() -> Self {
        let p = Style::new();
        Self {
            comment: p,
            keyword: p,
            function: p,
            variable: p,
            string: p,
            number: p,
            r#type: p,
            operator: p,
            punctuation: p,
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        Self::dark()
    }
}

impl Theme {
    /// The default theme, readable on dark and light backgrounds alike.
    pub fn dark() -> Self {
        let gray = Color::Indexed(244);
        Self {
            accent: Style::new().fg(Color::Rgb(138, 190, 183)),
            border: Style::new().fg(Color::Rgb(95, 135, 255)),
            border_muted: Style::new().fg(Color::Indexed(240)),
            success: Style::new().fg(Color::Rgb(181, 189, 104)),
            error: Style::new().fg(Color::Rgb(204, 102, 102)),
            warning: Style::new().fg(Color::Rgb(255, 255, 0)),
            muted: Style::new().fg(gray),
            dim: Style::new().fg(Color::Indexed(240)),
            text: Style::new(),
            thinking_text: Style::new().fg(gray).italic(),
            user_message_bg: Style::new().bg(Color::Rgb(52, 53, 65)),
            tool_pending_bg: Style::new().bg(Color::Rgb(40, 40, 50)),
            tool_success_bg: Style::new().bg(Color::Rgb(40, 50, 40)),
            tool_error_bg: Style::new().bg(Color::Rgb(60, 40, 40)),
            tool_title: Style::new().bold(),
            tool_output: Style::new().fg(gray),
            md_heading: Style::new().fg(Color::Rgb(240, 198, 116)).bold(),
            md_link: Style::new().fg(Color::Rgb(129, 162, 190)).underline(),
            md_link_url: Style::new().fg(Color::Indexed(240)),
            md_code: Style::new().fg(Color::Rgb(138, 190, 183)),
            md_code_block_border: Style::new().fg(gray),
            md_quote: Style::new().fg(gray).italic(),
            md_quote_border: Style::new().fg(gray),
            md_hr: Style::new().fg(gray),
            md_list_bullet: Style::new().fg(Color::Rgb(138, 190, 183)),
            md_code_block: Style::new().fg(Color::Rgb(181, 189, 104)),
            md_bold: Style::new().bold(),
            md_italic: Style::new().italic(),
            md_strikethrough: Style::new().strikethrough(),
            md_underline: Style::new().underline(),
            diff_added: Style::new().fg(Color::Rgb(181, 189, 104)),
            diff_removed: Style::new().fg(Color::Rgb(204, 102, 102)),
            diff_context: Style::new().fg(gray),
            diff_inline: Style::new().inverse(),
            syntax: SyntaxStyles::dark(),
            selected: Style::new().fg(Color::Rgb(138, 190, 183)).bold(),
            thinking_borders: [
                Style::new().fg(Color::Indexed(240)),
                Style::new().fg(Color::Rgb(110, 110, 110)),
                Style::new().fg(Color::Rgb(95, 135, 175)),
                Style::new().fg(Color::Rgb(129, 162, 190)),
                Style::new().fg(Color::Rgb(178, 148, 187)),
                Style::new().fg(Color::Rgb(209, 131, 232)),
            ],
        }
    }

    /// No colours or attributes at all: `NO_COLOR`, dumb terminals, plain snapshots.
    pub fn plain() -> Self {
        let p = Style::new();
        Self {
            accent: p,
            border: p,
            border_muted: p,
            success: p,
            error: p,
            warning: p,
            muted: p,
            dim: p,
            text: p,
            thinking_text: p,
            user_message_bg: p,
            tool_pending_bg: p,
            tool_success_bg: p,
            tool_error_bg: p,
            tool_title: p,
            tool_output: p,
            md_heading: p,
            md_link: p,
            md_link_url: p,
            md_code: p,
            md_code_block_border: p,
            md_quote: p,
            md_quote_border: p,
            md_hr: p,
            md_list_bullet: p,
            md_code_block: p,
            md_bold: p,
            md_italic: p,
            md_strikethrough: p,
            md_underline: p,
            diff_added: p,
            diff_removed: p,
            diff_context: p,
            diff_inline: p,
            syntax: SyntaxStyles::plain(),
            selected: p,
            thinking_borders: [p; 6],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paint_wraps_in_sgr_and_reset() {
        let style = Style::new().fg(Color::Ansi(1)).bold();
        assert_eq!(style.paint("x"), "\x1b[1;31mx\x1b[0m");
        assert_eq!(Style::new().paint("x"), "x");
        assert_eq!(
            Style::new().bg(Color::Rgb(1, 2, 3)).paint("y"),
            "\x1b[48;2;1;2;3my\x1b[0m"
        );
    }

    #[test]
    fn sgr_runs_read_back_as_styles() {
        let style = Style::new()
            .fg(Color::Rgb(1, 2, 3))
            .bg(Color::Indexed(200))
            .bold()
            .italic();
        assert_eq!(style_of_sgr(&style.prefix()), style);
        assert_eq!(
            style_of_sgr("\x1b[31m\x1b[1m"),
            Style::new().fg(Color::Ansi(1)).bold()
        );
        assert_eq!(
            style_of_sgr("\x1b[1;92m\x1b[22m"),
            Style::new().fg(Color::Ansi(10))
        );
        assert_eq!(style_of_sgr("\x1b[4m\x1b[0m\x1b[3m"), Style::new().italic());
        assert_eq!(style_of_sgr("plain"), Style::new());
        assert_eq!(style_of_sgr("\x1b[38;5m"), Style::new());
    }
}
