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
use crate::width::visible_width;

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
