//! `/export`, `/import`, `/share` and `/bug`: the session out of (and into) the terminal.
//!
//! Exports are written by the session (`Command::ExportHtml` / `ExportJsonl`); what runs
//! a process or builds a report (`gh`, the bug-report zip) runs on a task that reports
//! back through [`JobDone`], never inside a key handler.

use std::path::Path;
use std::path::PathBuf;

use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::bug_report;
use knightcode_runtime::export::ExportColors;
use knightcode_tui::Theme;
use knightcode_tui::style::Color;
use knightcode_tui::style::Style;

use super::actions::Pending;
use super::overlay::Overlay;
use super::ui::Ui;
use crate::pickers::ConfirmPrompt;

/// The viewer `/share` links to (the gist id goes after `#`).
pub const DEFAULT_VIEWER: &str = "https://knightcode.dev/session/";

/// What an export was for: its reply is handled accordingly.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportFor {
    /// `/export`: say where it went.
    Export,
    /// `/share`: upload the page from this temporary folder, then remove it.
    Share { dir: PathBuf },
    /// `/bug` with the transcript: the branch JSONL, read from this temporary folder.
    Bug {
        description: Option<String>,
        dir: PathBuf,
    },
}

/// A question a slash command asks before it acts.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// `/import`: replace the current session with this file?
    Import(String),
    /// `/bug`: include the transcript?
    BugTranscript(Option<String>),
}

/// What a task has to say when it is done.
#[derive(Debug)]
pub enum JobDone {
    Status(String),
    Error(String),
    /// News of a `/login` or `/logout` under way.
    Login(super::login::LoginEvent),
}

/// A theme colour as CSS; the 256-colour palette as xterm draws it.
pub(super) fn css(color: Color) -> String {
    const BASIC: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    let (r, g, b) = match color {
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Ansi(n) => BASIC[usize::from(n % 16)],
        Color::Indexed(n) if n < 16 => BASIC[usize::from(n)],
        Color::Indexed(n) if n < 232 => {
            let n = n - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(n / 36), level(n / 6 % 6), level(n % 6))
        }
        Color::Indexed(n) => {
            let v = 8 + (n - 232) * 10;
            (v, v, v)
        }
    };
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The page's colours from the terminal theme; what the theme leaves to the terminal's
/// defaults keeps the built-in dark page's value.
pub fn export_colors(theme: &Theme) -> ExportColors {
    let base = ExportColors::default();
    let fg = |style: &Style, default: &str| style.fg.map_or_else(|| default.to_owned(), css);
    let bg = |style: &Style, default: &str| style.bg.map_or_else(|| default.to_owned(), css);
    ExportColors {
        accent: fg(&theme.accent, &base.accent),
        border: fg(&theme.border, &base.border),
        border_muted: fg(&theme.border_muted, &base.border_muted),
        success: fg(&theme.success, &base.success),
        error: fg(&theme.error, &base.error),
        warning: fg(&theme.warning, &base.warning),
        muted: fg(&theme.muted, &base.muted),
        dim: fg(&theme.dim, &base.dim),
        text: fg(&theme.text, &base.text),
        thinking_text: fg(&theme.thinking_text, &base.thinking_text),
        user_message_bg: bg(&theme.user_message_bg, &base.user_message_bg),
        tool_pending_bg: bg(&theme.tool_pending_bg, &base.tool_pending_bg),
        tool_success_bg: bg(&theme.tool_success_bg, &base.tool_success_bg),
        tool_error_bg: bg(&theme.tool_error_bg, &base.tool_error_bg),
        md_heading: fg(&theme.md_heading, &base.md_heading),
        md_link: fg(&theme.md_link, &base.md_link),
        md_code: fg(&theme.md_code, &base.md_code),
        md_code_block: fg(&theme.md_code_block, &base.md_code_block),
        md_quote: fg(&theme.md_quote, &base.md_quote),
        diff_added: fg(&theme.diff_added, &base.diff_added),
        diff_removed: fg(&theme.diff_removed, &base.diff_removed),
        diff_context: fg(&theme.diff_context, &base.diff_context),
        syntax_comment: fg(&theme.syntax.comment, &base.syntax_comment),
        syntax_keyword: fg(&theme.syntax.keyword, &base.syntax_keyword),
        syntax_function: fg(&theme.syntax.function, &base.syntax_function),
        syntax_string: fg(&theme.syntax.string, &base.syntax_string),
        syntax_number: fg(&theme.syntax.number, &base.syntax_number),
        syntax_type: fg(&theme.syntax.r#type, &base.syntax_type),
        syntax_punctuation: fg(&theme.syntax.punctuation, &base.syntax_punctuation),
        ..base
    }
}

/// A private folder for a file that lives only while a job runs.
fn scratch_dir(purpose: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "knightcode-{purpose}-{}-{}",
        std::process::id(),
        super::overlay::now_ms()
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

impl Ui {
    fn colors(&self) -> ExportColors {
        let [page_bg, card_bg, info_bg] = self.themes.export_backgrounds().clone();
        ExportColors {
            page_bg,
            card_bg,
            info_bg,
            ..export_colors(&self.screen.theme)
        }
    }

    /// `/export [path]`: HTML, or the current branch as JSONL for a `.jsonl` path.
    pub fn export_session(&mut self, path: Option<String>) {
        let output = path.map(PathBuf::from);
        let command = if output
            .as_ref()
            .is_some_and(|p| p.extension().is_some_and(|e| e == "jsonl"))
        {
            Command::ExportJsonl { output }
        } else {
            Command::ExportHtml {
                output,
                colors: Some(self.colors()),
            }
        };
        self.send(command, Pending::Exported(ExportFor::Export));
    }

    /// `/import <path>`: asks before the current session is replaced.
    pub fn ask_import(&mut self, path: Option<String>) {
        let Some(path) = path else {
            self.error("Usage: /import <path.jsonl>");
            return;
        };
        let prompt = ConfirmPrompt::new(
            "Import session",
            format!(
                "Replace the current session with {path}? The file is copied into this project's session folder and continued there."
            ),
            vec!["Import and continue it".to_owned(), "Cancel".to_owned()],
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.screen.overlay = Some(Overlay::Choice(prompt, Question::Import(path)));
        self.mark_urgent();
    }

    /// `/bug [description]`: asks whether the transcript goes in.
    pub fn ask_bug_report(&mut self, description: Option<String>) {
        let prompt = ConfirmPrompt::new(
            "Report a bug",
            "The report holds your environment, versions, provider and model configuration (no credential values) and the errors shown in this session. Include the transcript of the current branch? Review it first: it can contain prompts, file contents and command output.",
            vec![
                "Leave the transcript out".to_owned(),
                "Include the transcript".to_owned(),
            ],
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.screen.overlay = Some(Overlay::Choice(
            prompt,
            Question::BugTranscript(description),
        ));
        self.mark_urgent();
    }

    pub fn on_choice(&mut self, question: Question, answer: usize) {
        match (question, answer) {
            (Question::Import(path), 0) => self.import_session(&path),
            (Question::Import(_), _) => self.status("Import cancelled"),
            (Question::BugTranscript(description), 0) => self.bug_report(description, None),
            (Question::BugTranscript(description), 1) => match scratch_dir("bug") {
                Ok(dir) => {
                    let output = Some(dir.join("transcript.jsonl"));
                    self.send(
                        Command::ExportJsonl { output },
                        Pending::Exported(ExportFor::Bug { description, dir }),
                    );
                }
                Err(error) => self.error(&format!("Could not prepare the bug report: {error}")),
            },
            (Question::BugTranscript(_), _) => self.status("Bug report cancelled"),
        }
    }

    fn import_session(&mut self, path: &str) {
        let Some(library) = self.session.library().cloned() else {
            return;
        };
        let dir = library
            .current_file()
            .and_then(|f| f.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| self.places.sessions_dir().to_path_buf());
        let input = if Path::new(path).is_absolute() {
            PathBuf::from(path)
        } else {
            self.places.cwd().join(path)
        };
        match library.import(&dir, &input) {
            Ok(copy) => {
                self.send(
                    Command::SwitchSession(copy),
                    Pending::Changed {
                        done: format!("Session imported from: {path}"),
                        reload: true,
                    },
                );
            }
            Err(error) => self.error(&format!("Failed to import session: {error}")),
        }
    }

    /// `/share`: the page goes to a private gist through the GitHub CLI.
    pub fn share_session(&mut self) {
        let settings = knightcode_runtime::Settings::load(
            self.places.agent_dir(),
            self.places.cwd(),
            self.session.trusted(),
        );
        let destination = settings
            .get("sessionShareDestination")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("auto");
        if destination == "radius" {
            self.error("Sharing to a Radius artifact is not available in this build of knightcode. Set \"sessionShareDestination\" to \"gist\" (or remove it) in settings.json to share through a private GitHub gist.");
            return;
        }
        match scratch_dir("share") {
            Ok(dir) => {
                let output = Some(dir.join("session.html"));
                let colors = Some(self.colors());
                self.send(
                    Command::ExportHtml { output, colors },
                    Pending::Exported(ExportFor::Share { dir }),
                );
                self.screen.hint = Some("Creating gist…".to_owned());
            }
            Err(error) => self.error(&format!("Failed to export session: {error}")),
        }
    }

    pub fn on_exported(&mut self, purpose: ExportFor, reply: Reply) {
        let path = match reply {
            Reply::Exported(path) => path,
            Reply::Failed(error) => {
                let message = error.to_string();
                if let ExportFor::Share { dir } | ExportFor::Bug { dir, .. } = &purpose {
                    let _ = std::fs::remove_dir_all(dir);
                }
                self.screen.hint = None;
                self.error(&format!("Failed to export session: {message}"));
                return;
            }
            _ => return,
        };
        match purpose {
            ExportFor::Export => self.status(&format!("Session exported to: {}", path.display())),
            ExportFor::Share { dir } => {
                let viewer = std::env::var("KNIGHTCODE_SHARE_VIEWER_URL")
                    .ok()
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| DEFAULT_VIEWER.to_owned());
                let tx = self.jobs.reporter();
                tokio::spawn(async move {
                    let done = match create_gist(&path, &viewer).await {
                        Ok(text) => JobDone::Status(text),
                        Err(text) => JobDone::Error(text),
                    };
                    let _ = tokio::fs::remove_dir_all(&dir).await;
                    let _ = tx.send(done);
                });
            }
            ExportFor::Bug { description, dir } => {
                let transcript = std::fs::read_to_string(&path).ok();
                let _ = std::fs::remove_dir_all(&dir);
                self.bug_report(description, transcript);
            }
        }
    }

    /// Builds the report and writes the zip on a blocking task.
    fn bug_report(&mut self, description: Option<String>, transcript: Option<String>) {
        let input = bug_report::BugReportInput {
            description,
            agent_dir: self.places.agent_dir().to_path_buf(),
            cwd: self.places.cwd().to_path_buf(),
            env: std::env::vars().collect(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            model: self
                .session
                .current_model()
                .map(|m| format!("{}/{}", m.provider, m.id)),
            thinking: self
                .session
                .view()
                .map(|v| v.thinking_level().as_str().to_owned()),
            session_file: self.session.library().and_then(|l| l.current_file()),
            diagnostics: self.recent_diagnostics().cloned().collect(),
            transcript,
        };
        let time = iso_now();
        let zip = bug_report::default_path(self.places.agent_dir(), &time);
        let tx = self.jobs.reporter();
        self.screen.hint = Some("Preparing the bug report…".to_owned());
        tokio::task::spawn_blocking(move || {
            let files = bug_report::build(&input);
            let done = match bug_report::write_zip(&zip, &files) {
                Ok(()) => JobDone::Status(format!(
                    "{} The report was saved as {}: review it, then send it to the KnightCode maintainers.",
                    bug_report::UPLOAD_UNAVAILABLE,
                    zip.display()
                )),
                Err(error) => JobDone::Error(format!("Could not write the bug report: {error}")),
            };
            let _ = tx.send(done);
        });
    }

    pub fn on_job_done(&mut self, done: JobDone) {
        self.screen.hint = None;
        match done {
            JobDone::Status(text) => self.status(&text),
            JobDone::Error(text) => self.error(&text),
            JobDone::Login(event) => self.on_login_event(event),
        }
    }
}

/// Now as `toISOString()` gives it, for file names.
fn iso_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `gh auth status`, then `gh gist create --public=false <page>`; the viewer link and the
/// gist on success, what went wrong and what to do otherwise.
async fn create_gist(page: &Path, viewer: &str) -> Result<String, String> {
    let not_installed = "GitHub CLI (gh) is not installed. Install it from https://cli.github.com/, run 'gh auth login', then /share again.";
    let auth = tokio::process::Command::new("gh")
        .args(["auth", "status"])
        .stdin(std::process::Stdio::null())
        .output()
        .await;
    match auth {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(not_installed.to_owned());
        }
        Err(error) => return Err(format!("Could not run the GitHub CLI (gh): {error}")),
        Ok(out) if !out.status.success() => {
            return Err(
                "GitHub CLI is not logged in. Run 'gh auth login' first, then /share again."
                    .to_owned(),
            );
        }
        Ok(_) => {}
    }
    let out = tokio::process::Command::new("gh")
        .args(["gist", "create", "--public=false"])
        .arg(page)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|error| format!("Failed to create gist: {error}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let detail = stderr.trim();
        return Err(format!(
            "Failed to create gist: {}",
            if detail.is_empty() {
                "Unknown error"
            } else {
                detail
            }
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let url = stdout.trim().lines().last().unwrap_or("").trim().to_owned();
    let id = url.rsplit('/').next().unwrap_or("").trim();
    if id.is_empty() {
        return Err("Failed to parse gist ID from gh output".to_owned());
    }
    Ok(format!("Share URL: {viewer}#{id}\nGist: {url}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_colours_become_css() {
        assert_eq!(css(Color::Rgb(52, 53, 65)), "#343541");
        assert_eq!(css(Color::Indexed(240)), "#585858");
        assert_eq!(css(Color::Indexed(244)), "#808080");
        assert_eq!(css(Color::Indexed(16)), "#000000");
        assert_eq!(css(Color::Indexed(231)), "#ffffff");
        assert_eq!(css(Color::Ansi(1)), "#cd0000");
    }

    #[test]
    fn the_dark_theme_gives_the_default_page_colours() {
        let colors = export_colors(&Theme::dark());
        let base = ExportColors::default();
        assert_eq!(colors.user_message_bg, base.user_message_bg);
        assert_eq!(colors.accent, base.accent);
        assert_eq!(colors.muted, base.muted);
        assert_eq!(colors.text, base.text, "the terminal's own text colour");
    }
}
