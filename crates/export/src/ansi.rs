//! Terminal lines (SGR colours and styles, OSC 8 links) as HTML: how extensions' tool
//! renderers, which draw for the terminal, are shown in the exported page.

use std::fmt::Write as _;

/// The 16 basic terminal colours (xterm's defaults), by SGR index.
const BASIC: [&str; 16] = [
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Style {
    fg: Option<String>,
    bg: Option<String>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    strike: bool,
}

impl Style {
    fn css(&self) -> String {
        let mut css = String::new();
        if let Some(fg) = &self.fg {
            let _ = write!(css, "color:{fg};");
        }
        if let Some(bg) = &self.bg {
            let _ = write!(css, "background-color:{bg};");
        }
        if self.bold {
            css.push_str("font-weight:bold;");
        }
        if self.dim {
            css.push_str("opacity:0.6;");
        }
        if self.italic {
            css.push_str("font-style:italic;");
        }
        match (self.underline, self.strike) {
            (true, true) => css.push_str("text-decoration:underline line-through;"),
            (true, false) => css.push_str("text-decoration:underline;"),
            (false, true) => css.push_str("text-decoration:line-through;"),
            (false, false) => {}
        }
        css
    }

    /// Applies one SGR sequence's parameters (`1;38;5;208`).
    fn apply(&mut self, params: &str) {
        let codes: Vec<u16> = params
            .split([';', ':'])
            .map(|p| p.parse().unwrap_or(0))
            .collect();
        let mut i = 0;
        while i < codes.len() {
            match codes[i] {
                0 => *self = Self::default(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => self.underline = true,
                9 => self.strike = true,
                22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = false,
                29 => self.strike = false,
                code @ 30..=37 => self.fg = Some(BASIC[usize::from(code - 30)].to_owned()),
                code @ 90..=97 => self.fg = Some(BASIC[usize::from(code - 90 + 8)].to_owned()),
                code @ 40..=47 => self.bg = Some(BASIC[usize::from(code - 40)].to_owned()),
                code @ 100..=107 => self.bg = Some(BASIC[usize::from(code - 100 + 8)].to_owned()),
                39 => self.fg = None,
                49 => self.bg = None,
                code @ (38 | 48) => {
                    let (colour, used) = extended_colour(&codes[i + 1..]);
                    i += used;
                    if code == 38 {
                        self.fg = colour;
                    } else {
                        self.bg = colour;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// `5;n` (256 colours) or `2;r;g;b`: the colour and how many parameters it took.
fn extended_colour(rest: &[u16]) -> (Option<String>, usize) {
    match rest {
        [5, n, ..] => (Some(palette_256(*n)), 2),
        [2, r, g, b, ..] => (
            Some(format!(
                "#{:02x}{:02x}{:02x}",
                (*r).min(255),
                (*g).min(255),
                (*b).min(255)
            )),
            4,
        ),
        _ => (None, rest.len()),
    }
}

fn palette_256(n: u16) -> String {
    match n {
        0..=15 => BASIC[usize::from(n)].to_owned(),
        16..=231 => {
            let n = n - 16;
            let level = |v: u16| if v == 0 { 0 } else { 55 + v * 40 };
            format!(
                "#{:02x}{:02x}{:02x}",
                level(n / 36),
                level((n / 6) % 6),
                level(n % 6)
            )
        }
        232..=255 => {
            let grey = 8 + (n - 232) * 10;
            format!("#{grey:02x}{grey:02x}{grey:02x}")
        }
        _ => BASIC[7].to_owned(),
    }
}

fn escape_into(out: &mut String, c: char) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '"' => out.push_str("&quot;"),
        '\'' => out.push_str("&#39;"),
        c if c.is_control() => {}
        c => out.push(c),
    }
}

/// One terminal line as HTML: styled runs in `<span style>`, OSC 8 links as `<a>` (http
/// and https only), every other escape sequence dropped, the text escaped.
pub fn ansi_to_html(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut style = Style::default();
    let mut open_span = false;
    let mut open_link = false;
    let mut chars = line.chars().peekable();
    let mut run_style = Style::default();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            if !open_span && style != Style::default() || open_span && style != run_style {
                if open_span {
                    out.push_str("</span>");
                    open_span = false;
                }
                let css = style.css();
                if !css.is_empty() {
                    let _ = write!(out, "<span style=\"{css}\">");
                    open_span = true;
                }
                run_style = style.clone();
            }
            escape_into(&mut out, c);
            continue;
        }
        match chars.next() {
            // CSI: parameters, then a final byte; only `m` (SGR) means anything here.
            Some('[') => {
                let mut params = String::new();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        if c == 'm' {
                            style.apply(&params);
                        }
                        break;
                    }
                    params.push(c);
                }
            }
            // OSC: up to BEL or ST (ESC \).
            Some(']') => {
                let mut body = String::new();
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' {
                        chars.next_if_eq(&'\\');
                        break;
                    }
                    body.push(c);
                }
                if let Some(link) = body.strip_prefix("8;") {
                    let target = link.split_once(';').map_or("", |(_, url)| url);
                    if open_span {
                        out.push_str("</span>");
                        open_span = false;
                    }
                    if open_link {
                        out.push_str("</a>");
                        open_link = false;
                    }
                    if target.starts_with("https://") || target.starts_with("http://") {
                        out.push_str("<a href=\"");
                        target.chars().for_each(|c| escape_into(&mut out, c));
                        out.push_str("\">");
                        open_link = true;
                    }
                }
            }
            _ => {}
        }
    }
    if open_span {
        out.push_str("</span>");
    }
    if open_link {
        out.push_str("</a>");
    }
    out
}

/// Terminal lines as `<div class="ansi-line">` rows (an empty line keeps its height).
pub fn ansi_lines_to_html(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        let html = ansi_to_html(line);
        out.push_str("<div class=\"ansi-line\">");
        out.push_str(if html.is_empty() { "&nbsp;" } else { &html });
        out.push_str("</div>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::ansi_lines_to_html;
    use super::ansi_to_html;

    #[test]
    fn colours_and_styles_become_spans_and_text_is_escaped() {
        assert_eq!(ansi_to_html("plain <b>&"), "plain &lt;b&gt;&amp;");
        assert_eq!(
            ansi_to_html("\x1b[1;31mred\x1b[0m done"),
            "<span style=\"color:#cd0000;font-weight:bold;\">red</span> done"
        );
        assert_eq!(
            ansi_to_html("\x1b[38;5;208mo\x1b[38;2;1;2;3mr\x1b[39m"),
            "<span style=\"color:#ff8700;\">o</span><span style=\"color:#010203;\">r</span>"
        );
        assert_eq!(
            ansi_to_html("\x1b[48;5;240m \x1b[49m"),
            "<span style=\"background-color:#585858;\"> </span>"
        );
    }

    #[test]
    fn links_other_escapes_and_empty_lines() {
        assert_eq!(
            ansi_to_html("\x1b]8;;https://x.dev/?a=1&b\x1b\\site\x1b]8;;\x1b\\ \x1b[2Kend"),
            "<a href=\"https://x.dev/?a=1&amp;b\">site</a> end"
        );
        assert_eq!(
            ansi_to_html("\x1b]8;;javascript:alert(1)\x07x\x1b]8;;\x07"),
            "x",
            "only web links become links"
        );
        assert_eq!(
            ansi_lines_to_html(&["".to_owned(), "a".to_owned()]),
            "<div class=\"ansi-line\">&nbsp;</div><div class=\"ansi-line\">a</div>"
        );
        // A truncated sequence at the end loses nothing before it.
        assert_eq!(ansi_to_html("ok\x1b[31"), "ok");
    }
}
