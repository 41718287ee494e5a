//! The page's colours, as CSS colour strings. Front ends fill them from their theme (the
//! interactive mode from its active theme); [`ExportColors::default`] is the built-in dark
//! theme's, for exports made without a terminal theme (`--export`, RPC).

use std::fmt::Write as _;

/// Colours of an exported page. Every field is a CSS colour (`#rrggbb` or `rgb(…)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportColors {
    pub accent: String,
    pub border: String,
    pub border_muted: String,
    pub success: String,
    pub error: String,
    pub warning: String,
    pub muted: String,
    pub dim: String,
    pub text: String,
    pub thinking_text: String,
    pub user_message_bg: String,
    pub custom_message_bg: String,
    pub tool_pending_bg: String,
    pub tool_success_bg: String,
    pub tool_error_bg: String,
    pub md_heading: String,
    pub md_link: String,
    pub md_code: String,
    pub md_code_block: String,
    pub md_quote: String,
    pub diff_added: String,
    pub diff_removed: String,
    pub diff_context: String,
    pub syntax_comment: String,
    pub syntax_keyword: String,
    pub syntax_function: String,
    pub syntax_string: String,
    pub syntax_number: String,
    pub syntax_type: String,
    pub syntax_punctuation: String,
    /// The page, card and info backgrounds; `None` derives them from `user_message_bg`
    /// (a theme may name its own export colours).
    pub page_bg: Option<String>,
    pub card_bg: Option<String>,
    pub info_bg: Option<String>,
}

impl Default for ExportColors {
    fn default() -> Self {
        let s = |v: &str| v.to_owned();
        Self {
            accent: s("#8abeb7"),
            border: s("#5f87ff"),
            border_muted: s("#585858"),
            success: s("#b5bd68"),
            error: s("#cc6666"),
            warning: s("#ffff00"),
            muted: s("#808080"),
            dim: s("#585858"),
            text: s("#e5e5e7"),
            thinking_text: s("#808080"),
            user_message_bg: s("#343541"),
            custom_message_bg: s("#2d2838"),
            tool_pending_bg: s("#282832"),
            tool_success_bg: s("#283228"),
            tool_error_bg: s("#3c2828"),
            md_heading: s("#f0c674"),
            md_link: s("#81a2be"),
            md_code: s("#8abeb7"),
            md_code_block: s("#b5bd68"),
            md_quote: s("#808080"),
            diff_added: s("#b5bd68"),
            diff_removed: s("#cc6666"),
            diff_context: s("#808080"),
            syntax_comment: s("#6a9955"),
            syntax_keyword: s("#569cd6"),
            syntax_function: s("#dcdcaa"),
            syntax_string: s("#ce9178"),
            syntax_number: s("#b5cea8"),
            syntax_type: s("#4ec9b0"),
            syntax_punctuation: s("#d4d4d4"),
            page_bg: None,
            card_bg: None,
            info_bg: None,
        }
    }
}

fn parse_hex(color: &str) -> Option<(u8, u8, u8)> {
    let hex = color.strip_prefix('#')?;
    if hex.len() != 6 || !hex.is_ascii() {
        return None;
    }
    let part = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some((part(0)?, part(2)?, part(4)?))
}

fn scale((r, g, b): (u8, u8, u8), factor: f32) -> String {
    let f = |c: u8| (f32::from(c) * factor).round().clamp(0.0, 255.0) as u8;
    format!("rgb({}, {}, {})", f(r), f(g), f(b))
}

impl ExportColors {
    /// Page, card and info backgrounds: the theme's own, else derived from the user
    /// message background (darker for a dark theme, a touch darker for a light one).
    fn backgrounds(&self) -> (String, String, String) {
        let base = parse_hex(&self.user_message_bg).unwrap_or((52, 53, 65));
        let (r, g, b) = base;
        let luminance = 0.2126 * f32::from(r) + 0.7152 * f32::from(g) + 0.0722 * f32::from(b);
        let light = luminance > 128.0;
        let (page, card) = if light {
            (scale(base, 0.96), scale(base, 1.0))
        } else {
            (scale(base, 0.62), scale(base, 0.8))
        };
        let info = format!(
            "rgb({}, {}, {})",
            r.saturating_add(20),
            g.saturating_add(15),
            b
        );
        (
            self.page_bg.clone().unwrap_or(page),
            self.card_bg.clone().unwrap_or(card),
            self.info_bg.clone().unwrap_or(info),
        )
    }

    /// The `:root { --name: value; }` block the page's CSS reads.
    pub(crate) fn css_variables(&self) -> String {
        let (page, card, info) = self.backgrounds();
        let pairs: [(&str, &str); 33] = [
            ("accent", &self.accent),
            ("border", &self.border),
            ("border-muted", &self.border_muted),
            ("success", &self.success),
            ("error", &self.error),
            ("warning", &self.warning),
            ("muted", &self.muted),
            ("dim", &self.dim),
            ("text", &self.text),
            ("thinking-text", &self.thinking_text),
            ("user-bg", &self.user_message_bg),
            ("custom-bg", &self.custom_message_bg),
            ("tool-pending-bg", &self.tool_pending_bg),
            ("tool-success-bg", &self.tool_success_bg),
            ("tool-error-bg", &self.tool_error_bg),
            ("md-heading", &self.md_heading),
            ("md-link", &self.md_link),
            ("md-code", &self.md_code),
            ("md-code-block", &self.md_code_block),
            ("md-quote", &self.md_quote),
            ("diff-added", &self.diff_added),
            ("diff-removed", &self.diff_removed),
            ("diff-context", &self.diff_context),
            ("syn-comment", &self.syntax_comment),
            ("syn-keyword", &self.syntax_keyword),
            ("syn-function", &self.syntax_function),
            ("syn-string", &self.syntax_string),
            ("syn-number", &self.syntax_number),
            ("syn-type", &self.syntax_type),
            ("syn-punct", &self.syntax_punctuation),
            ("page-bg", &page),
            ("card-bg", &card),
            ("info-bg", &info),
        ];
        let mut out = String::from(":root {\n");
        for (name, value) in pairs {
            // A colour never needs these; dropping them keeps a theme value from closing the
            // style element or the declaration.
            let value: String = value
                .chars()
                .filter(|c| !matches!(c, '<' | '>' | ';' | '{' | '}'))
                .collect();
            let _ = writeln!(out, "  --{name}: {value};");
        }
        out.push('}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dark_backgrounds_are_derived_darker_than_the_user_background() {
        let css = ExportColors::default().css_variables();
        assert!(css.contains("--page-bg: rgb(32, 33, 40);"), "{css}");
        assert!(css.contains("--user-bg: #343541;"));
    }

    #[test]
    fn theme_values_cannot_break_out_of_the_style_element() {
        let colors = ExportColors {
            accent: "red;}</style><script>".to_owned(),
            ..ExportColors::default()
        };
        let css = colors.css_variables();
        assert!(!css.contains("</style"));
        assert!(css.contains("--accent: red/stylescript;"));
    }
}
