//! What every transcript card needs to draw itself.

use knightcode_tui::Theme;

/// Shared drawing settings; a change to any of them redraws the transcript.
#[derive(Debug, Clone)]
pub struct Look {
    pub theme: Theme,
    pub cwd: String,
    pub home: Option<String>,
    /// Ctrl+O: tool output shown whole instead of a preview.
    pub tools_expanded: bool,
    /// Ctrl+T: thinking blocks shown as a one-line label.
    pub thinking_hidden: bool,
    /// What a hidden thinking block says instead of the default (an extension's
    /// `setHiddenThinkingLabel`).
    pub hidden_thinking_label: Option<String>,
    /// Rows that continue a wrapped line of a reply or a prompt start with the wrap's mark
    /// (`knightcode_tui::width::SOFT_WRAP`), so the fullscreen selection copies the line
    /// whole.
    pub mark_wraps: bool,
}

/// Markdown for `text` at `width` (assistant replies, thinking, summaries).
pub fn markdown(text: &str, width: usize, theme: &Theme) -> Vec<String> {
    let mut md = knightcode_tui::markdown::Markdown::new(text, theme.clone());
    knightcode_tui::Component::render(&mut md, u16::try_from(width).unwrap_or(u16::MAX))
}

/// [`markdown`] in `look`'s theme, its wrapped rows marked when `look` asks for it.
pub fn marked_markdown(text: &str, width: usize, look: &Look) -> Vec<String> {
    let mut md = knightcode_tui::markdown::Markdown::new(text, look.theme.clone())
        .marking_wraps(look.mark_wraps);
    knightcode_tui::Component::render(&mut md, u16::try_from(width).unwrap_or(u16::MAX))
}
