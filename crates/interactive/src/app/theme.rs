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

use knightcode_runtime::resources::Resources;
use knightcode_runtime::resources::ThemeFlags;
use knightcode_runtime::resources::themes::Themes;
use tokio::sync::mpsc;

use super::theme_watch::ThemeWatch;
use super::ui::Ui;

fn color(value: ThemeColor) -> Option<Color> {
    match value {
        ThemeColor::Default => None,
        ThemeColor::Index(n) => Some(Color::Indexed(n)),
        ThemeColor::Rgb(r, g, b) => Some(Color::Rgb(r, g, b)),
    }
}

/// Whether the terminal shows 24-bit colour: the `terminal.trueColor` setting when it is
/// a boolean, else the reference's guess (`COLORTERM=truecolor|24bit` or Windows Terminal
/// yes; `TERM` dumb, linux or screen, and Apple's Terminal, no; anything else yes).
pub fn truecolor(settings: &Settings, env: &dyn Fn(&str) -> Option<String>) -> bool {
    if let Some(forced) = settings
        .get("terminal.trueColor")
        .and_then(serde_json::Value::as_bool)
    {
        return forced;
    }
    let colorterm = env("COLORTERM").unwrap_or_default();
    if colorterm == "truecolor" || colorterm == "24bit" || env("WT_SESSION").is_some() {
        return true;
    }
    let term = env("TERM").unwrap_or_default();
    if matches!(term.as_str(), "dumb" | "" | "linux")
        || env("TERM_PROGRAM").as_deref() == Some("Apple_Terminal")
        || term == "screen"
        || term.starts_with("screen-")
        || term.starts_with("screen.")
    {
        return false;
    }
    true
}

/// The nearest of the 256-colour palette, as the reference picks it: the 6×6×6 cube,
/// or the grey ramp for a colour that is nearly grey and closer to it.
pub fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    const CUBE: [i32; 6] = [0, 95, 135, 175, 215, 255];
    let nearest = |v: i32, values: &mut dyn Iterator<Item = i32>| -> (usize, i32) {
        values
            .enumerate()
            .min_by_key(|(_, x)| (v - x).abs())
            .unwrap_or((0, 0))
    };
    let distance = |(r1, g1, b1): (i32, i32, i32), (r2, g2, b2): (i32, i32, i32)| {
        let (dr, dg, db) = (f64::from(r1 - r2), f64::from(g1 - g2), f64::from(b1 - b2));
        dr * dr * 0.299 + dg * dg * 0.587 + db * db * 0.114
    };
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    let (ri, rv) = nearest(r, &mut CUBE.into_iter());
    let (gi, gv) = nearest(g, &mut CUBE.into_iter());
    let (bi, bv) = nearest(b, &mut CUBE.into_iter());
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let cube_distance = distance((r, g, b), (rv, gv, bv));
    let grey = (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round() as i32;
    let (gi, grey_value) = nearest(grey, &mut (0..24).map(|i| 8 + 10 * i));
    let grey_distance = distance((r, g, b), (grey_value, grey_value, grey_value));
    let spread = r.max(g).max(b) - r.min(g).min(b);
    let index = if spread < 10 && grey_distance < cube_distance {
        232 + gi
    } else {
        cube_index
    };
    u8::try_from(index).unwrap_or(u8::MAX)
}

/// The interface's styles from `file`'s roles. The attributes (bold headings, italic
/// quotes, …) are the built-in dark theme's; the built-in dark theme itself keeps its
/// hand-tuned styles on a truecolor terminal. Without truecolor, `#rrggbb` colours become
/// their nearest of the 256-colour palette.
/// The theme as extensions' components colour with it: every role's foreground and
/// background SGR sequence (`{"name", "fg": {role: sgr}, "bg": {role: sgr}}`).
pub fn component_theme(file: &ThemeFile, truecolor: bool) -> serde_json::Value {
    let mut fg = serde_json::Map::new();
    let mut bg = serde_json::Map::new();
    for (role, value) in &file.colors {
        let value = match color(*value) {
            Some(Color::Rgb(r, g, b)) if !truecolor => Some(Color::Indexed(rgb_to_256(r, g, b))),
            other => other,
        };
        let Some(value) = value else {
            continue;
        };
        fg.insert(role.clone(), Style::new().fg(value).prefix().into());
        bg.insert(role.clone(), Style::new().bg(value).prefix().into());
    }
    serde_json::json!({ "name": file.name, "fg": fg, "bg": bg })
}

pub fn tui_theme(file: &ThemeFile, truecolor: bool) -> Theme {
    let base = Theme::dark();
    if truecolor && file.path.is_none() && file.name == "dark" {
        return base;
    }
    let color = |value: ThemeColor| match color(value) {
        Some(Color::Rgb(r, g, b)) if !truecolor => Some(Color::Indexed(rgb_to_256(r, g, b))),
        other => other,
    };
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

/// The themes found and the one drawn with, and the watch on its file.
pub struct ThemeState {
    /// `--theme`, `--no-themes`, `--use-theme`, and the themes packages and extensions add.
    flags: ThemeFlags,
    loaded: Themes,
    /// The name of the theme drawn with.
    name: String,
    /// The terminal shows 24-bit colour (else themes use the 256-colour palette).
    truecolor: bool,
    /// The theme file's export `pageBg`, `cardBg` and `infoBg` (HTML export).
    export_backgrounds: [Option<String>; 3],
    watch: ThemeWatch,
    /// The watched file changed.
    changed: mpsc::UnboundedReceiver<()>,
}

impl ThemeState {
    pub fn new(flags: ThemeFlags) -> Self {
        let (changed_tx, changed) = mpsc::unbounded_channel();
        Self {
            flags,
            loaded: Themes::default(),
            name: "dark".to_owned(),
            truecolor: true,
            export_backgrounds: [None, None, None],
            watch: ThemeWatch::start(changed_tx),
            changed,
        }
    }

    /// Takes up the themes packages and extensions bring; true when they changed.
    pub fn adopt_sources(&mut self, resources: &Resources) -> bool {
        if self.flags.packages == resources.package_themes
            && self.flags.extensions == resources.extension_themes
        {
            return false;
        }
        self.flags.packages.clone_from(&resources.package_themes);
        self.flags
            .extensions
            .clone_from(&resources.extension_themes);
        true
    }

    /// The name of the theme drawn with.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The theme file's export backgrounds (`pageBg`, `cardBg`, `infoBg`).
    pub fn export_backgrounds(&self) -> &[Option<String>; 3] {
        &self.export_backgrounds
    }

    /// Waits until the watched theme file changes. Cancel-safe.
    pub async fn changed(&mut self) {
        if self.changed.recv().await.is_none() {
            // The watcher is gone: no change will come.
            std::future::pending::<()>().await;
        }
    }
}

impl Ui {
    /// Loads the themes and switches to the one the flags or the `theme` setting name;
    /// returns the problems to show (once the transcript is loaded). `NO_COLOR` keeps the
    /// plain theme.
    pub fn load_theme(&mut self, settings: &Settings, trusted: bool) -> Vec<String> {
        let flags = self.themes.flags.clone();
        let appearance = Appearance::from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref());
        let (loaded, file, warnings) = knightcode_runtime::resources::load_themes(
            &flags,
            settings,
            self.places.cwd(),
            self.places.agent_dir(),
            self.places.home(),
            trusted,
            appearance,
        );
        self.themes.loaded = loaded;
        self.themes.truecolor = truecolor(settings, &|name| std::env::var(name).ok());
        self.themes.name.clone_from(&file.name);
        if self.screen.theme == Theme::plain() {
            return warnings;
        }
        self.apply_theme_file(&file);
        warnings
    }

    /// Draws with `file` from the next frame on, and watches its file.
    fn apply_theme_file(&mut self, file: &ThemeFile) {
        self.themes.watch.watch(file.path.as_deref());
        self.themes.name.clone_from(&file.name);
        self.themes.export_backgrounds = export_backgrounds(file);
        let theme = tui_theme(file, self.themes.truecolor);
        self.screen.border = theme.thinking_borders[0];
        self.screen.editor.set_theme(&theme);
        self.screen
            .editor
            .set_border_style(theme.thinking_borders[0]);
        self.screen.transcript.look.theme = theme.clone();
        self.screen.transcript.invalidate();
        self.screen.theme = theme;
        if let Some(channel) = self.ext_ui.channel() {
            let mut table = component_theme(file, self.themes.truecolor);
            table["names"] = self.theme_names().into();
            table["toolsExpanded"] = self.screen.transcript.look.tools_expanded.into();
            channel.theme(table);
        }
        self.request_full_redraw();
    }

    /// The active theme's file changed: read it again and redraw. A file that does not
    /// parse (an edit half done) keeps the colours in use and says why.
    pub fn reload_theme_file(&mut self) {
        let Some(path) = self.themes.watch.path() else {
            return;
        };
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| knightcode_runtime::resources::themes::parse(&text, Some(&path)));
        match parsed {
            Ok(file) => {
                if let Some(slot) = self
                    .themes
                    .loaded
                    .themes
                    .iter_mut()
                    .find(|t| t.path.as_deref() == Some(&path))
                {
                    *slot = file.clone();
                }
                self.apply_theme_file(&file);
                self.mark_urgent();
            }
            Err(error) => self.warn(&format!(
                "Theme file {} could not be read again: {error}; keeping the current colours.",
                path.display()
            )),
        }
    }

    /// The names of the themes loaded, sorted (the settings menu lists them).
    pub fn theme_names(&self) -> Vec<String> {
        self.themes
            .loaded
            .names()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// `/settings`: draws with the theme called `name` (a loaded one; others are left
    /// alone). `NO_COLOR` keeps the plain theme.
    pub fn preview_theme(&mut self, name: &str) {
        if self.screen.theme == Theme::plain() {
            return;
        }
        if let Some(file) = self.themes.loaded.get(name).cloned() {
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
        assert_eq!(tui_theme(&themes[0], true), Theme::dark());
        let light = tui_theme(&themes[1], true);
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

    #[test]
    fn without_truecolor_colours_take_the_nearest_palette_entry() {
        assert_eq!(rgb_to_256(0x12, 0x34, 0x56), 23);
        assert_eq!(
            rgb_to_256(0xb0, 0xb0, 0xb0),
            145,
            "the cube's grey is nearer"
        );
        assert_eq!(
            rgb_to_256(0x80, 0x80, 0x80),
            244,
            "the grey ramp's is nearer"
        );
        assert_eq!(rgb_to_256(255, 0, 0), 196);
        let light = tui_theme(&builtin()[1], false);
        assert!(matches!(light.accent.fg, Some(Color::Indexed(_))));
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let settings = Settings::default();
        assert!(truecolor(
            &settings,
            &env(&[("COLORTERM", "truecolor"), ("TERM", "screen")])
        ));
        assert!(!truecolor(&settings, &env(&[("TERM", "screen-256color")])));
        assert!(truecolor(&settings, &env(&[("TERM", "xterm-256color")])));
    }
}
