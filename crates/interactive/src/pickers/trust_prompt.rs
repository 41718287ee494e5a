//! The project-trust selector: at startup when a folder has protected resources and no
//! decision applies, and for `/trust` (trust-security.md §3). The options, their order and
//! wording follow `getProjectTrustOptions`; the app writes `trust.json` for the choice.

use std::path::Path;
use std::path::PathBuf;

use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

use super::PickerOutcome;
use super::common::Hints;
use super::common::border;
use super::common::fit;
use super::common::is_release;
use super::common::strong;
use super::common::wrapped;
use super::line_input::typed_char;
use crate::footer::tilde;

/// What the user decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustChoice {
    /// Save `{<cwd>: true}`.
    Trust,
    /// Save `{<parent>: true}` and delete the folder's own entry.
    TrustParent(PathBuf),
    /// Trust for this process only; nothing is written (startup prompt only).
    TrustSessionOnly,
    /// Save `{<cwd>: false}`.
    DoNotTrust,
    /// Do not trust for this process only; nothing is written (startup prompt only).
    DoNotTrustSessionOnly,
}

/// The decision `trust.json` holds for the folder, shown by `/trust`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SavedTrust {
    None,
    /// The nearest entry for the folder or an ancestor: its value and the path it is saved
    /// under (the folder itself, or the ancestor it is inherited from).
    Saved {
        trusted: bool,
        path: PathBuf,
    },
}

/// The reference's `getProjectTrustOptions(cwd, {includeSessionOnly})`, in its order.
fn trust_options(cwd: &Path, include_session_only: bool) -> Vec<TrustChoice> {
    let mut options = vec![TrustChoice::Trust];
    if let Some(parent) = cwd.parent() {
        options.push(TrustChoice::TrustParent(parent.to_owned()));
    }
    if include_session_only {
        options.push(TrustChoice::TrustSessionOnly);
    }
    options.push(TrustChoice::DoNotTrust);
    if include_session_only {
        options.push(TrustChoice::DoNotTrustSessionOnly);
    }
    options
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Context {
    Startup {
        resources: Vec<PathBuf>,
    },
    Command {
        saved: SavedTrust,
        session_trusted: bool,
    },
}

pub struct TrustPrompt {
    theme: Theme,
    bindings: Keybindings,
    cwd: PathBuf,
    home: Option<String>,
    context: Context,
    options: Vec<TrustChoice>,
    /// The option matching the saved decision (`/trust` only).
    saved_option: Option<usize>,
    selected: usize,
    max_rows: usize,
}

impl TrustPrompt {
    /// The startup prompt: `resources` are the protected paths found (`.knightcode/settings.json`,
    /// `.agents/skills`, ...). Offers all five options.
    pub fn startup(
        cwd: &Path,
        resources: Vec<PathBuf>,
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        let options = trust_options(cwd, true);
        Self {
            theme,
            bindings: bindings.clone(),
            cwd: cwd.to_owned(),
            home: None,
            context: Context::Startup { resources },
            options,
            saved_option: None,
            selected: 0,
            max_rows: 8,
        }
    }

    /// `/trust`: shows the saved decision and this session's state, offers Trust, Trust
    /// parent folder and Do not trust, with the saved one preselected and marked ✓.
    pub fn command(
        cwd: &Path,
        saved: SavedTrust,
        session_trusted: bool,
        theme: Theme,
        bindings: &Keybindings,
    ) -> Self {
        let options = trust_options(cwd, false);
        let saved_option = match &saved {
            SavedTrust::Saved {
                trusted: true,
                path,
            } if path == cwd => Some(0),
            SavedTrust::Saved {
                trusted: true,
                path,
            } => options
                .iter()
                .position(|o| matches!(o, TrustChoice::TrustParent(p) if p == path)),
            SavedTrust::Saved {
                trusted: false,
                path,
            } if path == cwd => options.iter().position(|o| *o == TrustChoice::DoNotTrust),
            _ => None,
        };
        // An inherited decision without an exact option still starts on its value.
        let selected = saved_option.unwrap_or(match &saved {
            SavedTrust::Saved { trusted: false, .. } => options.len() - 1,
            _ => 0,
        });
        Self {
            theme,
            bindings: bindings.clone(),
            cwd: cwd.to_owned(),
            home: None,
            context: Context::Command {
                saved,
                session_trusted,
            },
            options,
            saved_option,
            selected,
            max_rows: 8,
        }
    }

    /// Shows paths under the home folder as `~/...`.
    pub fn with_home(mut self, home: Option<&str>) -> Self {
        self.home = home.map(str::to_owned);
        self
    }

    /// How many resource paths the startup prompt lists before "and N more".
    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(1);
    }

    /// The options in display order.
    pub fn options(&self) -> &[TrustChoice] {
        &self.options
    }

    pub fn selected(&self) -> &TrustChoice {
        &self.options[self.selected]
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> PickerOutcome<TrustChoice> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        let len = self.options.len();
        let typed = typed_char(key);
        if bindings.matches("tui.select.up", key) || typed == Some('k') {
            self.selected = (self.selected + len - 1) % len;
        } else if bindings.matches("tui.select.down", key) || typed == Some('j') {
            self.selected = (self.selected + 1) % len;
        } else if bindings.matches("tui.select.confirm", key) {
            return PickerOutcome::Done(self.options[self.selected].clone());
        } else if bindings.matches("tui.select.cancel", key) {
            return PickerOutcome::Cancel;
        }
        PickerOutcome::Pending
    }

    fn path(&self, path: &Path) -> String {
        tilde(&path.to_string_lossy(), self.home.as_deref())
    }

    fn option_text(&self, option: &TrustChoice) -> String {
        match option {
            TrustChoice::Trust => "Trust".to_owned(),
            TrustChoice::TrustParent(parent) => {
                format!("Trust parent folder ({})", self.path(parent))
            }
            TrustChoice::TrustSessionOnly => "Trust (this session only)".to_owned(),
            TrustChoice::DoNotTrust => "Do not trust".to_owned(),
            TrustChoice::DoNotTrustSessionOnly => "Do not trust (this session only)".to_owned(),
        }
    }

    /// A resource relative to the folder when it is inside it.
    fn resource(&self, path: &Path) -> String {
        match path.strip_prefix(&self.cwd) {
            Ok(relative) if !relative.as_os_str().is_empty() => {
                relative.to_string_lossy().into_owned()
            }
            _ => self.path(path),
        }
    }

    fn intro(&self, width: u16, lines: &mut Vec<String>) {
        let theme = &self.theme;
        let folder = self.path(&self.cwd);
        match &self.context {
            Context::Startup { resources } => {
                lines.push(fit(
                    &theme.tool_title.paint("Trust this project folder?"),
                    width,
                ));
                lines.push(fit(&format!("  {}", theme.accent.paint(&folder)), width));
                lines.push(String::new());
                lines.extend(wrapped(
                    "It has project resources that can run code or change how KnightCode works:",
                    width,
                ));
                let shown = resources.len().min(self.max_rows);
                for path in &resources[..shown] {
                    lines.push(fit(
                        &format!("  {}", theme.warning.paint(&self.resource(path))),
                        width,
                    ));
                }
                if resources.len() > shown {
                    lines.push(
                        theme
                            .muted
                            .paint(&format!("  … and {} more", resources.len() - shown)),
                    );
                }
                lines.extend(wrapped(
                    &theme.muted.paint(
                        "Untrusted, they are skipped; context files (AGENTS.md) load either way.",
                    ),
                    width,
                ));
            }
            Context::Command {
                saved,
                session_trusted,
            } => {
                lines.push(fit(&theme.tool_title.paint("Project Trust"), width));
                lines.push(fit(
                    &format!("  Folder: {}", theme.accent.paint(&folder)),
                    width,
                ));
                let saved = match saved {
                    SavedTrust::None => "none".to_owned(),
                    SavedTrust::Saved { trusted, path } => {
                        let value = if *trusted { "trusted" } else { "untrusted" };
                        if *path == self.cwd {
                            format!("{value} ({})", self.path(path))
                        } else {
                            format!("{value} (inherited from {})", self.path(path))
                        }
                    }
                };
                lines.push(fit(&format!("  Saved decision: {saved}"), width));
                let session = if *session_trusted {
                    "trusted"
                } else {
                    "untrusted"
                };
                lines.push(fit(&format!("  Current session: {session}"), width));
                lines.extend(wrapped(
                    &theme.muted.paint(
                        "  A new decision applies to new sessions; restart to apply it here.",
                    ),
                    width,
                ));
            }
        }
        lines.push(String::new());
    }
}

impl Component for TrustPrompt {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut lines = vec![border(&self.theme, width)];
        self.intro(width, &mut lines);
        let theme = &self.theme;
        for (index, option) in self.options.iter().enumerate() {
            let text = self.option_text(option);
            let check = if self.saved_option == Some(index) {
                theme.success.paint(" ✓")
            } else {
                String::new()
            };
            let line = if index == self.selected {
                format!(
                    "{}{}{check}",
                    theme.accent.paint("→ "),
                    strong(theme, theme.accent).paint(&text)
                )
            } else {
                format!("  {text}{check}")
            };
            lines.push(fit(&line, width));
        }
        lines.push(border(theme, width));
        let cancel = match self.context {
            Context::Startup { .. } => "decide later (not trusted now)",
            Context::Command { .. } => "cancel",
        };
        lines.push(
            Hints::new(theme, &self.bindings)
                .raw("↑/↓ j/k", "move")
                .action("tui.select.confirm", "select")
                .action("tui.select.cancel", cancel)
                .line(width),
        );
        lines
    }
}
