//! Shared drawing of transcript cards: background fills that survive embedded resets, and
//! line caching per width.

use knightcode_tui::Style;
use knightcode_tui::style::RESET;
use knightcode_tui::width::pad_to_width;
use knightcode_tui::width::visible_width;

/// Horizontal padding inside cards.
pub const PAD_X: usize = 1;

/// Pads `lines` by [`PAD_X`] on each side and fills every line to `width` with `bg`, adding
/// a blank padded line above and below. Resets inside a line would end the background, so
/// the background is restarted after each one.
pub fn boxed(lines: &[String], width: u16, bg: Style) -> Vec<String> {
    let width = usize::from(width);
    let mut out = Vec::with_capacity(lines.len() + 2);
    out.push(fill("", width, bg));
    for line in lines {
        let padded = format!("{}{line}", " ".repeat(PAD_X));
        out.push(fill(&padded, width, bg));
    }
    out.push(fill("", width, bg));
    out
}

/// One line filled to `width` in `bg`.
pub fn fill(line: &str, width: usize, bg: Style) -> String {
    let padded = pad_to_width(line, width);
    if bg.is_plain() {
        return padded.trim_end().to_owned();
    }
    let prefix = bg.prefix();
    let restarted = padded.replace(RESET, &format!("{RESET}{prefix}"));
    format!("{prefix}{restarted}{RESET}")
}

/// The width left for card content.
pub fn inner_width(width: u16) -> usize {
    usize::from(width).saturating_sub(2 * PAD_X).max(1)
}

/// Lines cached for one width; dropped on any change.
#[derive(Default, Debug, Clone)]
pub struct LineCache {
    cached: Option<(u16, Vec<String>)>,
}

impl LineCache {
    pub fn get(&self, width: u16) -> Option<&[String]> {
        match &self.cached {
            Some((w, lines)) if *w == width => Some(lines),
            _ => None,
        }
    }

    pub fn put(&mut self, width: u16, lines: Vec<String>) -> Vec<String> {
        self.cached = Some((width, lines.clone()));
        lines
    }

    pub fn clear(&mut self) {
        self.cached = None;
    }
}

/// `~` for the home directory, and paths inside `cwd` shown relative to it.
pub fn display_path(path: &str, cwd: &str, home: Option<&str>) -> String {
    if let Some(rest) = path.strip_prefix(cwd)
        && let Some(rest) = rest.strip_prefix('/')
        && !rest.is_empty()
    {
        return rest.to_owned();
    }
    crate::footer::tilde(path, home)
}

/// A finished command's duration as its card shows it: `40ms`, `1.2s`, `12s`, `2m 05s`.
pub fn format_duration(duration: std::time::Duration) -> String {
    let ms = duration.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if ms < 10_000 {
        return format!("{:.1}s", duration.as_secs_f64());
    }
    format_seconds(duration.as_secs())
}

/// Whole seconds of a command still running: `3s`, `2m 05s`.
pub fn format_seconds(secs: u64) -> String {
    if secs >= 60 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

/// How long a command has run (live while it runs, fixed once it is done), for its title.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    started: Option<std::time::Instant>,
    took: Option<std::time::Duration>,
    /// The whole seconds the card last showed, so a tick redraws it only when they change.
    shown: u64,
}

impl Timing {
    pub fn start(&mut self) {
        if self.started.is_none() {
            self.started = Some(std::time::Instant::now());
        }
    }

    pub fn finish(&mut self) {
        if self.took.is_none() {
            self.took = self.started.map(|at| at.elapsed());
        }
    }

    /// Ends with the time the work itself measured: the card's own clock starts when the
    /// start event is handled, which can be as late as the end event (both drained in one
    /// frame), and then says `0ms` for a 130 ms command.
    pub fn finish_measured(&mut self, took: Option<std::time::Duration>) {
        match took {
            Some(took) if self.took.is_none() => self.took = Some(took),
            _ => self.finish(),
        }
    }

    /// Whether the running time shown has changed since the last [`Timing::label`].
    pub fn tick(&self) -> bool {
        match (self.started, self.took) {
            (Some(at), None) => at.elapsed().as_secs() != self.shown,
            _ => false,
        }
    }

    /// ` · 3s` while running (from the first second), ` · 1.2s` when done, or nothing
    /// when unknown (history).
    pub fn label(&mut self) -> Option<String> {
        if let Some(took) = self.took {
            return Some(format_duration(took));
        }
        let secs = self.started?.elapsed().as_secs();
        self.shown = secs;
        (secs > 0).then(|| format_seconds(secs))
    }
}

/// Visible width check used by tests and debug assertions.
pub fn fits(lines: &[String], width: u16) -> bool {
    lines.iter().all(|l| visible_width(l) <= usize::from(width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_shortened() {
        assert_eq!(
            display_path("/w/p/src/a.rs", "/w/p", Some("/h")),
            "src/a.rs"
        );
        assert_eq!(display_path("/h/x/y", "/w/p", Some("/h")), "~/x/y");
        assert_eq!(display_path("/hx/y", "/w/p", Some("/h")), "/hx/y");
        assert_eq!(display_path("/w/p", "/w/p", None), "/w/p");
    }

    #[test]
    fn fills_keep_background_across_resets() {
        let bg = Style::new().bg(knightcode_tui::style::Color::Ansi(4));
        let line = fill("\x1b[1mab\x1b[0mc", 6, bg);
        assert_eq!(line, "\x1b[44m\x1b[1mab\x1b[0m\x1b[44mc   \x1b[0m");
        assert_eq!(visible_width(&line), 6);
    }
}
