//! Plain text views: wrapped text in a padded (optionally coloured) card, a single
//! truncated line, and blank lines.

use super::{WidthCache, frame_lines};
use crate::component::Component;
use crate::style::Style;
use crate::width::{TAB_WIDTH, truncate_to_width, wrap_text_with_ansi};

/// Word-wrapped (possibly styled) text with blank columns left and right and blank lines
/// above and below. With a background every line, padding included, is filled to the full
/// width (user message cards, tool cards).
#[derive(Debug, Clone, Default)]
pub struct Text {
    text: String,
    padding_x: usize,
    padding_y: usize,
    background: Option<Style>,
    cache: WidthCache,
}

impl Text {
    /// `text` without padding or background.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    pub fn with_padding(mut self, x: usize, y: usize) -> Self {
        self.padding_x = x;
        self.padding_y = y;
        self.cache.clear();
        self
    }

    pub fn with_background(mut self, background: Style) -> Self {
        self.set_background(Some(background));
        self
    }

    pub fn set_background(&mut self, background: Option<Style>) {
        self.background = background;
        self.cache.clear();
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cache.clear();
    }

    fn render_uncached(&self, width: usize) -> Vec<String> {
        // Whitespace alone would only draw an empty card.
        if self.text.trim().is_empty() {
            return Vec::new();
        }
        let text = self.text.replace('\t', &" ".repeat(TAB_WIDTH));
        let content_width = width.saturating_sub(2 * self.padding_x).max(1);
        frame_lines(
            wrap_text_with_ansi(&text, content_width),
            width,
            self.padding_x,
            self.padding_y,
            self.background,
        )
    }
}

impl Component for Text {
    fn render(&mut self, width: u16) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines;
        }
        let lines = self.render_uncached(usize::from(width));
        self.cache.store(width, &lines);
        lines
    }

    fn invalidate(&mut self) {
        self.cache.clear();
    }
}

/// The first line of a text, cut to the width with `…`.
#[derive(Debug, Clone, Default)]
pub struct TruncatedText {
    text: String,
    padding_x: usize,
    padding_y: usize,
}

impl TruncatedText {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    pub fn with_padding(mut self, x: usize, y: usize) -> Self {
        self.padding_x = x;
        self.padding_y = y;
        self
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
    }
}

impl Component for TruncatedText {
    fn render(&mut self, width: u16) -> Vec<String> {
        let width = usize::from(width);
        let available = width.saturating_sub(2 * self.padding_x).max(1);
        let first = self.text.split('\n').next().unwrap_or_default();
        let first = first.replace('\t', &" ".repeat(TAB_WIDTH));
        let line = truncate_to_width(
            &format!(
                "{}{}",
                " ".repeat(self.padding_x),
                truncate_to_width(&first, available, "…")
            ),
            width,
            "",
        );
        let mut lines = vec![String::new(); self.padding_y];
        lines.push(line);
        lines.extend(std::iter::repeat_n(String::new(), self.padding_y));
        lines
    }
}

/// Blank lines.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spacer(pub usize);

impl Component for Spacer {
    fn render(&mut self, _width: u16) -> Vec<String> {
        vec![String::new(); self.0]
    }
}
