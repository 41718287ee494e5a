//! Generic components the interactive views are built from, after the reference's
//! `pi-tui` ones: wrapped and truncated text, spacers, a spinner, a filterable select list,
//! horizontal borders and padded (optionally coloured) boxes.

mod border;
mod loader;
mod select_list;
mod text;

pub use border::{BorderedBox, DynamicBorder, Panel};
pub use loader::{Loader, SPINNER_FRAMES};
pub use select_list::{SelectItem, SelectList};
pub use text::{Spacer, Text, TruncatedText};

use crate::style::{RESET, Style};
use crate::width::{truncate_to_width, visible_width};

/// `line` padded with spaces to `width` columns with `bg` behind all of it. Spans inside
/// end with a full reset, which would also end the background, so it is restarted after
/// each one.
pub fn fill_background(line: &str, width: usize, bg: Style) -> String {
    let prefix = bg.prefix();
    let pad = width.saturating_sub(visible_width(line));
    if prefix.is_empty() {
        return format!("{line}{}", " ".repeat(pad));
    }
    let restarted = format!("{RESET}{prefix}");
    let inner = line
        .replace(RESET, &restarted)
        .replace("\x1b[m", &restarted);
    format!("{prefix}{inner}{}{RESET}", " ".repeat(pad))
}

/// Body lines framed for a card: `left` blank columns before each (cut at the width),
/// `padding_y` blank lines above and below, and with a background every line filled to
/// the full width. Without one, lines are not padded on the right (trailing spaces only
/// get in the way of copying from the terminal).
pub(crate) fn frame_lines(
    body: Vec<String>,
    width: usize,
    left: usize,
    padding_y: usize,
    background: Option<Style>,
) -> Vec<String> {
    let finish = |line: String| match background {
        Some(bg) => fill_background(&line, width, bg),
        None => line,
    };
    let blank = finish(String::new());
    let margin = " ".repeat(left);
    let mut lines = Vec::with_capacity(body.len() + 2 * padding_y);
    lines.extend(std::iter::repeat_n(blank.clone(), padding_y));
    for line in body {
        let mut line = if line.is_empty() && background.is_none() {
            line
        } else {
            format!("{margin}{line}")
        };
        if visible_width(&line) > width {
            line = truncate_to_width(&line, width, "");
        }
        lines.push(finish(line));
    }
    lines.extend(std::iter::repeat_n(blank, padding_y));
    lines
}

/// Lines kept for the width they were rendered at.
#[derive(Debug, Clone, Default)]
pub(crate) struct WidthCache(Option<(u16, Vec<String>)>);

impl WidthCache {
    pub(crate) fn get(&self, width: u16) -> Option<Vec<String>> {
        match &self.0 {
            Some((cached, lines)) if *cached == width => Some(lines.clone()),
            _ => None,
        }
    }

    pub(crate) fn store(&mut self, width: u16, lines: &[String]) {
        self.0 = Some((width, lines.to_vec()));
    }

    pub(crate) fn clear(&mut self) {
        self.0 = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::Color;

    #[test]
    fn background_survives_inner_resets() {
        let bg = Style::new().bg(Color::Ansi(4));
        let line = format!("a{}b", Style::new().bold().paint("x"));
        assert_eq!(
            fill_background(&line, 5, bg),
            "\x1b[44ma\x1b[1mx\x1b[0m\x1b[44mb  \x1b[0m"
        );
        assert_eq!(fill_background("ab", 4, Style::new()), "ab  ");
    }
}
