//! The theme the interface draws with: the theme file's colour roles mapped onto the
//! styles of `knightcode_tui::Theme`, chosen once the session knows whether the project is
//! trusted (project themes load only then).

use knightcode_runtime::Settings;
use knightcode_runtime::resources::themes::Appearance;
use knightcode_runtime::resources::themes::ThemeColor;
use knightcode_runtime::resources::themes::ThemeFile;
use knightcode_tui::Style;
use knightcode_tui::SyntaxStyles;
use knightcode_tui::Theme;
use knightcode_tui::style::Color;

use super::ui::Ui;

fn color(value: ThemeColor) -> Option<Color> {
    match value {
        ThemeColor::Default => None,
        ThemeColor::Index(n) => Some(Color::Indexed(n)),
        ThemeColor::Rgb(r, g, b) => Some(Color::Rgb(r, g, b)),
    }
}

/// The interface's styles from `file`'s roles. The attributes (bold headings, italic
/// quotes, …) are the built-in dark theme's; the built-in dark theme itself keeps its
/// hand-tuned styles.
pub fn tui_theme(file: &ThemeFile) -> Theme {
    let base = Theme::dark();
    if file.path.is_none() && file.name == "dark" {
        return base;
    }
    let fg = |role: &str| Style {
        fg: color(file.color(role)),
        ..Style::new()
    };
    let bg = |role: &str| Style {
        bg: color(file.color(role)),
        ..Style::new()
    };
    Theme {
        accent: fg("accent"),
        border: fg("border"),
        border_muted: fg("borderMuted"),
        success: fg("success"),
        error: fg("error"),
        warning: fg("warning"),
        muted: fg("muted"),
        dim: fg("dim"),
        text: fg("text"),
        thinking_text: fg("thinkingText").italic(),
        user_message_bg: Style {
            fg: color(file.color("userMessageText")),
            ..bg("userMessageBg")
        },
        tool_pending_bg: bg("toolPendingBg"),
        tool_success_bg: bg("toolSuccessBg"),
        tool_error_bg: bg("toolErrorBg"),
        tool_title: fg("toolTitle").bold(),
        tool_output: fg("toolOutput"),
        md_heading: fg("mdHeading").bold(),
        md_link: fg("mdLink").underline(),
        md_link_url: fg("mdLinkUrl"),
        md_code: fg("mdCode"),
        md_code_block_border: fg("mdCodeBlockBorder"),
        md_quote: fg("mdQuote").italic(),
        md_quote_border: fg("mdQuoteBorder"),
        md_hr: fg("mdHr"),
        md_list_bullet: fg("mdListBullet"),
        md_code_block: fg("mdCodeBlock"),
        diff_added: fg("toolDiffAdded"),
        diff_removed: fg("toolDiffRemoved"),
        diff_context: fg("toolDiffContext"),
        syntax: SyntaxStyles {
            comment: fg("syntaxComment"),
            keyword: fg("syntaxKeyword"),
            function: fg("syntaxFunction"),
            variable: fg("syntaxVariable"),
            string: fg("syntaxString"),
            number: fg("syntaxNumber"),
            r#type: fg("syntaxType"),
            operator: fg("syntaxOperator"),
            punctuation: fg("syntaxPunctuation"),
        },
        selected: fg("accent").bold(),
        thinking_borders: [
            fg("thinkingOff"),
            fg("thinkingMinimal"),
            fg("thinkingLow"),
            fg("thinkingMedium"),
            fg("thinkingHigh"),
            fg("thinkingXhigh"),
        ],
        ..base
    }
}

/// The export page's `pageBg`, `cardBg` and `infoBg` the theme file names.
fn export_backgrounds(file: &ThemeFile) -> [Option<String>; 3] {
    ["pageBg", "cardBg", "infoBg"].map(|key| {
        file.export
            .get(key)
            .copied()
            .and_then(color)
            .map(super::sharing::css)
    })
}

impl Ui {
    /// Loads the themes and switches to the one the flags or the `theme` setting name;
    /// returns the problems to show (once the transcript is loaded). `NO_COLOR` keeps the
    /// plain theme.
    pub fn load_theme(&mut self, settings: &Settings, trusted: bool) -> Vec<String> {
        let flags = self.theme_flags.clone();
        let appearance = Appearance::from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref());
        let (loaded, file, warnings) = knightcode_runtime::resources::load_themes(
            &flags,
            settings,
            &self.cwd,
            &self.agent_dir,
            self.home.as_deref(),
            trusted,
            appearance,
        );
        self.themes = loaded;
        self.theme_name.clone_from(&file.name);
        if self.screen.theme == Theme::plain() {
            return warnings;
        }
        self.apply_theme_file(&file);
        warnings
    }

    /// Draws with `file` from the next frame on.
    fn apply_theme_file(&mut self, file: &ThemeFile) {
        self.theme_name.clone_from(&file.name);
        self.export_backgrounds = export_backgrounds(file);
        let theme = tui_theme(file);
        self.screen.border = theme.thinking_borders[0];
        self.screen.editor.set_theme(&theme);
        self.screen
            .editor
            .set_border_style(theme.thinking_borders[0]);
        self.screen.transcript.look.theme = theme.clone();
        self.screen.transcript.invalidate();
        self.screen.theme = theme;
        self.request_full_redraw();
    }

    /// The names of the themes loaded, sorted (the settings menu lists them).
    pub fn theme_names(&self) -> Vec<String> {
        self.themes.names().into_iter().map(str::to_owned).collect()
    }

    /// `/settings`: draws with the theme called `name` (a loaded one; others are left
    /// alone). `NO_COLOR` keeps the plain theme.
    pub fn preview_theme(&mut self, name: &str) {
        if self.screen.theme == Theme::plain() {
            return;
        }
        if let Some(file) = self.themes.get(name).cloned() {
            self.apply_theme_file(&file);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use knightcode_runtime::resources::themes::builtin;

    #[test]
    fn light_maps_its_roles_and_dark_stays_hand_tuned() {
        let themes = builtin();
        assert_eq!(tui_theme(&themes[0]), Theme::dark());
        let light = tui_theme(&themes[1]);
        assert_eq!(light.accent.fg, Some(Color::Rgb(0x5a, 0x80, 0x80)));
        assert!(light.md_heading.bold);
        assert_eq!(
            export_backgrounds(&themes[1]),
            [
                Some("#f8f8f8".to_owned()),
                Some("#ffffff".to_owned()),
                Some("#fffae6".to_owned())
            ]
        );
    }
}
