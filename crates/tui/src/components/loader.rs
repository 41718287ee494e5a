//! A spinner with a message. It has no timer of its own: the app calls [`Loader::tick`] on
//! its render clock (the reference advances every 80 ms) so tests and replays stay
//! deterministic.

use super::Text;
use crate::component::Component;
use crate::style::{Style, Theme};

/// The reference's braille spinner.
pub const SPINNER_FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// `⠋ Working...` under a blank line, one column in from the left.
#[derive(Debug, Clone)]
pub struct Loader {
    message: String,
    frame: usize,
    spinner_style: Style,
    message_style: Style,
    text: Text,
}

impl Loader {
    /// A loader in the theme's colours (accent spinner, muted message).
    pub fn new(message: impl Into<String>, theme: &Theme) -> Self {
        Self::with_styles(message, theme.accent, theme.muted)
    }

    pub fn with_styles(message: impl Into<String>, spinner: Style, message_style: Style) -> Self {
        let mut loader = Self {
            message: message.into(),
            frame: 0,
            spinner_style: spinner,
            message_style,
            text: Text::new("").with_padding(1, 0),
        };
        loader.update();
        loader
    }

    /// Advances the spinner by one frame.
    pub fn tick(&mut self) {
        self.frame = (self.frame + 1) % SPINNER_FRAMES.len();
        self.update();
    }

    pub fn frame(&self) -> usize {
        self.frame
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn set_message(&mut self, message: impl Into<String>) {
        self.message = message.into();
        self.update();
    }

    fn update(&mut self) {
        let frame = SPINNER_FRAMES[self.frame % SPINNER_FRAMES.len()];
        self.text.set_text(format!(
            "{} {}",
            self.spinner_style.paint(frame),
            self.message_style.paint(&self.message)
        ));
    }
}

impl Component for Loader {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut lines = vec![String::new()];
        lines.extend(self.text.render(width));
        lines
    }

    fn invalidate(&mut self) {
        self.text.invalidate();
    }
}
