//! Cards for user prompts, user shell commands and notices (assistant replies are in
//! `reply.rs`).

use knightcode_protocol::BashExecutionMessage;
use knightcode_protocol::rpc::BashResult;
use knightcode_tui::width::wrap_text_with_ansi;

use super::card::LineCache;
use super::card::Timing;
use super::card::boxed;
use super::card::inner_width;
use super::render::Look;
use super::render::markdown;
use super::render::marked_markdown;

/// A user prompt.
#[derive(Debug, Clone)]
pub struct UserCard {
    pub text: String,
    pub images: usize,
    /// What extensions' markdown transformers made of `text` (display only).
    shown: Option<String>,
    cache: LineCache,
}

impl UserCard {
    pub fn new(text: String, images: usize) -> Self {
        Self {
            text,
            images,
            shown: None,
            cache: LineCache::default(),
        }
    }

    /// Shows `markdown` instead of the text (a markdown transformer's result). Returns
    /// whether anything changed.
    pub fn set_shown(&mut self, markdown: String) -> bool {
        let shown = (markdown != self.text).then_some(markdown);
        if self.shown == shown {
            return false;
        }
        self.shown = shown;
        self.cache.clear();
        true
    }

    pub fn invalidate(&mut self) {
        self.cache.clear();
    }

    pub fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines.to_vec();
        }
        let inner = inner_width(width);
        // A `/skill:name` prompt: the skill's block folds to one line (ctrl+o shows it),
        // then what the user typed, as the reference shows it.
        let shown = self.shown.as_deref().unwrap_or(&self.text);
        let (mut lines, text) = match skill_block(shown) {
            Some(block) => {
                let theme = &look.theme;
                let label = theme.accent.bold().paint("[skill]");
                let body = if look.tools_expanded {
                    let mut body = vec![label];
                    body.extend(markdown(
                        &format!("**{}**\n\n{}", block.name, block.content),
                        inner,
                        theme,
                    ));
                    body
                } else {
                    wrap_text_with_ansi(
                        &format!(
                            "{label} {}{}",
                            theme.text.paint(block.name),
                            theme.dim.paint(" (ctrl+o to expand)")
                        ),
                        inner,
                    )
                };
                let lines = boxed(&body, width, theme.tool_success_bg);
                match block.user_message {
                    Some(message) => (lines, message),
                    None => return self.cache.put(width, lines),
                }
            }
            None => (Vec::new(), shown),
        };
        // Like the reference, prompts render as markdown (code spans, lists, emphasis).
        let mut body = marked_markdown(text, inner, look);
        if self.images > 0 {
            let label = if self.images == 1 {
                "[1 image]".to_owned()
            } else {
                format!("[{} images]", self.images)
            };
            body.push(look.theme.muted.paint(&label));
        }
        lines.extend(boxed(&body, width, look.theme.user_message_bg));
        self.cache.put(width, lines)
    }
}

/// A `/skill:name` prompt's parts.
struct SkillBlock<'a> {
    name: &'a str,
    content: &'a str,
    user_message: Option<&'a str>,
}

/// `<skill name="N" location="L">\n…\n</skill>` and, after a blank line, what the user
/// typed: the text `/skill:name args` expands to (`knightcode_resources::skills`).
fn skill_block(text: &str) -> Option<SkillBlock<'_>> {
    let rest = text.strip_prefix("<skill name=\"")?;
    let (name, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(" location=\"")?;
    let (location, rest) = rest.split_once("\">\n")?;
    if name.is_empty() || location.is_empty() || name.contains('"') || location.contains('"') {
        return None;
    }
    // The first `\n</skill>` after which only the user's message (or nothing) follows.
    for (at, _) in rest.match_indices("\n</skill>") {
        let after = &rest[at + "\n</skill>".len()..];
        if after.is_empty() {
            return Some(SkillBlock {
                name,
                content: &rest[..at],
                user_message: None,
            });
        }
        if let Some(message) = after.strip_prefix("\n\n")
            && !message.is_empty()
        {
            let message = message.trim();
            return Some(SkillBlock {
                name,
                content: &rest[..at],
                user_message: (!message.is_empty()).then_some(message),
            });
        }
    }
    None
}

/// One column of indent (blank lines stay empty).
pub(super) fn indent_one(line: &str) -> String {
    if line.is_empty() {
        return String::new();
    }
    format!(" {line}")
}

/// A shell command the user ran with `!` / `!!`.
#[derive(Debug, Clone)]
pub struct BashCard {
    pub command: String,
    pub output: String,
    pub exit_code: Option<i64>,
    pub running: bool,
    pub cancelled: bool,
    pub excluded: bool,
    pub truncated_path: Option<String>,
    timing: Timing,
    cache: LineCache,
}

impl BashCard {
    pub fn running(command: String, excluded: bool) -> Self {
        Self {
            command,
            output: String::new(),
            exit_code: None,
            running: true,
            cancelled: false,
            excluded,
            truncated_path: None,
            timing: Timing::default(),
            cache: LineCache::default(),
        }
    }

    /// Whether the running time the card shows has moved on (it is redrawn then).
    pub fn tick(&mut self) -> bool {
        let changed = self.running && self.timing.tick();
        if changed {
            self.cache.clear();
        }
        changed
    }

    /// A command run from the editor: its time runs from now.
    pub fn started(command: String, excluded: bool) -> Self {
        let mut card = Self::running(command, excluded);
        card.timing.start();
        card
    }

    pub fn from_message(message: &BashExecutionMessage) -> Self {
        let mut card = Self::running(
            message.command.clone(),
            message.exclude_from_context.unwrap_or(false),
        );
        card.finish(message);
        card
    }

    pub fn append_output(&mut self, text: &str) {
        self.output.push_str(text);
        self.cache.clear();
    }

    pub fn finish(&mut self, message: &BashExecutionMessage) {
        self.output = message.output.clone();
        self.exit_code = message.exit_code;
        self.cancelled = message.cancelled;
        self.running = false;
        self.truncated_path = message.full_output_path.clone();
        self.cache.clear();
    }

    /// Finishes from the result a running command reported.
    pub fn finish_result(&mut self, result: &BashResult) {
        self.output = result.output.clone();
        self.exit_code = result.exit_code;
        self.cancelled = result.cancelled;
        self.running = false;
        self.truncated_path = result.full_output_path.clone();
        self.timing.finish();
        self.cache.clear();
    }

    pub fn invalidate(&mut self) {
        self.cache.clear();
    }

    pub fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines.to_vec();
        }
        let theme = &look.theme;
        let inner = inner_width(width);
        let mut title = theme.tool_title.paint(&format!("$ {}", self.command));
        if let Some(time) = self.timing.label() {
            title.push_str(&theme.muted.paint(&format!(" · {time}")));
        }
        let mut body = wrap_text_with_ansi(&title, inner);
        if self.excluded {
            body.push(theme.muted.paint("(not sent to the model)"));
        }
        let lines: Vec<&str> = self.output.lines().collect();
        let limit = if look.tools_expanded { usize::MAX } else { 10 };
        if !lines.is_empty() {
            body.push(String::new());
            let hidden = lines.len().saturating_sub(limit);
            if hidden > 0 {
                body.push(
                    theme
                        .muted
                        .paint(&format!("… {hidden} more lines (ctrl+o to expand)")),
                );
            }
            for line in &lines[hidden..] {
                body.extend(wrap_text_with_ansi(&theme.tool_output.paint(line), inner));
            }
        }
        if !self.running {
            let status = if self.cancelled {
                theme.warning.paint("cancelled")
            } else {
                match self.exit_code {
                    Some(0) => String::new(),
                    Some(code) => theme.error.paint(&format!("exit code {code}")),
                    None => theme.error.paint("killed"),
                }
            };
            if !status.is_empty() {
                body.push(status);
            }
            if let Some(path) = &self.truncated_path {
                body.push(theme.muted.paint(&format!("Full output: {path}")));
            }
        }
        let bg = if self.running {
            theme.tool_pending_bg
        } else if self.exit_code == Some(0) {
            theme.tool_success_bg
        } else {
            theme.tool_error_bg
        };
        let lines = boxed(&body, width, bg);
        self.cache.put(width, lines)
    }
}

/// Kinds of one-off lines in the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone)]
pub struct Notice {
    pub kind: NoticeKind,
    pub text: String,
    /// Labelled values under the text (`/session`), each value wrapped beside its label.
    pub rows: Vec<(String, String)>,
    /// A status line (`Model: …`): the next status replaces it while nothing came between.
    pub status: bool,
    /// Draws nothing (a retry line once the retry worked).
    pub hidden: bool,
    /// The text under the title is markdown (`/changelog`).
    pub markdown: Option<String>,
    cache: LineCache,
}

impl Notice {
    pub fn new(kind: NoticeKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            rows: Vec::new(),
            status: false,
            hidden: false,
            markdown: None,
            cache: LineCache::default(),
        }
    }

    /// A title over markdown (`/changelog`'s "What's New").
    pub fn markdown(title: impl Into<String>, text: impl Into<String>) -> Self {
        let mut notice = Self::new(NoticeKind::Info, title);
        notice.markdown = Some(text.into());
        notice
    }

    /// A title over labelled values.
    pub fn table(title: impl Into<String>, rows: Vec<(String, String)>) -> Self {
        let mut notice = Self::new(NoticeKind::Info, title);
        notice.rows = rows;
        notice
    }

    pub fn set_text(&mut self, text: String) {
        self.text = text;
        self.cache.clear();
    }

    pub fn invalidate(&mut self) {
        self.cache.clear();
    }

    pub fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines.to_vec();
        }
        let style = match self.kind {
            NoticeKind::Info => look.theme.muted,
            NoticeKind::Warning => look.theme.warning,
            NoticeKind::Error => look.theme.error,
        };
        let inner = inner_width(width);
        // A table's title is its heading.
        let style = if self.rows.is_empty() && self.markdown.is_none() {
            style
        } else {
            look.theme.tool_title
        };
        let mut lines: Vec<String> = wrap_text_with_ansi(&self.text, inner)
            .into_iter()
            .map(|l| indent_one(&style.paint(&l)))
            .collect();
        let label_width = self
            .rows
            .iter()
            .map(|(label, _)| label.chars().count() + 2)
            .max()
            .unwrap_or(0);
        for (label, value) in &self.rows {
            // Values wrap in their own column, paths at a `/`: a long session path keeps
            // its name together instead of leaving `.jsonl` alone on a line.
            let indent = 2 + label_width;
            let room = inner.saturating_sub(indent).max(10);
            for (index, part) in wrap_value(value, room).into_iter().enumerate() {
                let head = if index == 0 {
                    format!("  {label:<label_width$}")
                } else {
                    " ".repeat(indent)
                };
                lines.push(indent_one(&format!(
                    "{}{}",
                    look.theme.muted.paint(&head),
                    look.theme.text.paint(&part)
                )));
            }
        }
        if let Some(text) = &self.markdown {
            lines.push(String::new());
            lines.extend(
                super::render::markdown(text, inner, &look.theme)
                    .into_iter()
                    .map(|l| indent_one(&l)),
            );
        }
        self.cache.put(width, lines)
    }
}

/// Splits `value` into lines of at most `width` characters, breaking after a space or a
/// `/` where it can and mid-word only when a piece is longer than a line.
fn wrap_value(value: &str, width: usize) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut piece = String::new();
    for ch in value.chars() {
        piece.push(ch);
        if ch == ' ' || ch == '/' {
            pieces.push(std::mem::take(&mut piece));
        }
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    for piece in pieces {
        if !line.is_empty() && line.chars().count() + piece.trim_end().chars().count() > width {
            lines.push(std::mem::take(&mut line).trim_end().to_owned());
        }
        line.push_str(&piece);
        while line.chars().count() > width {
            let head: String = line.chars().take(width).collect();
            line = line.chars().skip(width).collect();
            lines.push(head);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_owned());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap_value;

    #[test]
    fn skill_prompts_fold_the_skill_and_keep_the_message() {
        let look = |expanded| super::Look {
            theme: knightcode_tui::Theme::plain(),
            cwd: String::new(),
            home: None,
            tools_expanded: expanded,
            thinking_hidden: false,
            hidden_thinking_label: None,
            mark_wraps: false,
        };
        let text = "<skill name=\"lint\" location=\"/s/lint/SKILL.md\">\nReferences are relative to /s/lint.\n\nRun the linter.\n</skill>\n\nfix src/";
        let mut card = super::UserCard::new(text.to_owned(), 0);
        let folded = card.render(40, &look(false)).join("\n");
        assert!(folded.contains("[skill]"), "{folded}");
        assert!(folded.contains(" lint (ctrl+o to expand)"), "{folded}");
        assert!(folded.contains("fix src/"), "{folded}");
        assert!(!folded.contains("Run the linter."), "{folded}");
        card.invalidate();
        let open = card.render(40, &look(true)).join("\n");
        assert!(open.contains("Run the linter."), "{open}");
        let alone = text.split("\n\nfix").next().unwrap();
        assert_eq!(
            super::skill_block(alone).map(|b| (b.name, b.user_message)),
            Some(("lint", None))
        );
        assert!(super::skill_block("<skill name=\"x\">\nno location\n</skill>").is_none());
        assert!(super::skill_block("plain text").is_none());
    }

    #[test]
    fn paths_wrap_at_slashes() {
        assert_eq!(
            wrap_value("/home/me/.knightcode/sessions/2026-12-01_abc.jsonl", 30),
            ["/home/me/.knightcode/sessions/", "2026-12-01_abc.jsonl"]
        );
        assert_eq!(wrap_value("short", 30), ["short"]);
        assert_eq!(wrap_value("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(
            wrap_value("1 user, 2 assistant", 10),
            ["1 user, 2", "assistant"]
        );
    }
}
