//! Tool call cards: the call's arguments as a title, then its output (streaming for bash),
//! collapsed to a preview until the user expands tool output (Ctrl+O).

use knightcode_protocol::ContentBlock;
use knightcode_protocol::ToolResultPayload;
use knightcode_tui::Theme;
use knightcode_tui::width::wrap_text_with_ansi;
use serde_json::Value;

use super::card::LineCache;
use super::card::Timing;
use super::card::boxed;
use super::card::display_path;
use super::card::inner_width;
use super::render::Look;

/// Output lines shown while collapsed: the tail for bash (newest output matters), the head
/// for everything else.
const BASH_PREVIEW_LINES: usize = 5;
const PREVIEW_LINES: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// The model is still writing the call.
    Streaming,
    Running,
    Done,
    Failed,
}

#[derive(Debug, Clone)]
pub struct ToolCard {
    pub id: String,
    pub name: String,
    pub args: Value,
    pub status: ToolStatus,
    output: Option<ToolResultPayload>,
    /// Written files shown without syntax colours (old history).
    plain_code: bool,
    /// How long the call has run (shown for bash).
    timing: Timing,
    /// Lines an extension's renderers drew for it (`renderCall`/`renderResult`).
    custom: Option<CustomLines>,
    cache: LineCache,
}

/// What an extension's tool renderers drew: the call's lines and the result's, each in
/// place of ours when present, inside our frame unless the tool draws its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomLines {
    pub call: Option<Vec<String>>,
    pub result: Option<Vec<String>>,
    /// The extension draws the result: until it has, the card shows no output (ours
    /// would flash up and collapse when its lines arrive).
    pub result_renderer: bool,
    pub framed: bool,
}

impl ToolCard {
    pub fn new(id: String, name: String, args: Value) -> Self {
        Self {
            id,
            name,
            args,
            status: ToolStatus::Streaming,
            output: None,
            plain_code: false,
            timing: Timing::default(),
            custom: None,
            cache: LineCache::default(),
        }
    }

    pub fn set_custom(&mut self, custom: CustomLines) {
        if self.custom.as_ref() != Some(&custom) {
            self.custom = Some(custom);
            self.cache.clear();
        }
    }

    /// What an extension's renderers need to draw this call at `inner` columns.
    pub fn render_request(&self, inner: usize, expanded: bool) -> Value {
        serde_json::json!({
            "toolCallId": self.id,
            "toolName": self.name,
            "args": self.args,
            "result": self.output,
            "isPartial": !self.is_finished(),
            "isError": self.status == ToolStatus::Failed,
            "executionStarted": self.status != ToolStatus::Streaming,
            "argsComplete": self.status != ToolStatus::Streaming,
            "expanded": expanded,
            "width": inner,
        })
    }

    /// Whether the running time the card shows has moved on (it is redrawn then).
    pub fn tick(&mut self) -> bool {
        let changed = self.status == ToolStatus::Running && self.timing.tick();
        if changed {
            self.cache.clear();
        }
        changed
    }

    /// See `AssistantCard::set_plain_code`.
    pub fn set_plain_code(&mut self, plain: bool) {
        if self.plain_code != plain {
            self.plain_code = plain;
            self.cache.clear();
        }
    }

    /// Lines a collapsed render highlights.
    pub fn code_lines(&self) -> usize {
        match self.name.as_str() {
            "write" => self
                .arg("content")
                .map_or(0, |content| content.lines().count().min(PREVIEW_LINES)),
            "read" if self.status == ToolStatus::Done && self.read_language().is_some() => self
                .output
                .as_ref()
                .map_or(0, |_| self.output_text().lines().count().min(PREVIEW_LINES)),
            _ => 0,
        }
    }

    /// The language a read file is highlighted in (by its name), if any.
    pub fn read_language(&self) -> Option<&'static str> {
        if self.name != "read" {
            return None;
        }
        let path = self.arg("path").or_else(|| self.arg("file_path"))?;
        knightcode_tui::highlight::language_for_path(std::path::Path::new(path))
    }

    pub fn set_args(&mut self, args: Value) {
        if self.args != args {
            self.args = args;
            self.cache.clear();
        }
    }

    pub fn start(&mut self, args: Value) {
        self.args = args;
        self.status = ToolStatus::Running;
        self.timing.start();
        self.cache.clear();
    }

    pub fn update(&mut self, partial: ToolResultPayload) {
        self.output = Some(partial);
        self.cache.clear();
    }

    /// The result arrived; `took` is how long the tool ran, as it measured it.
    pub fn finish(
        &mut self,
        result: ToolResultPayload,
        is_error: bool,
        took: Option<std::time::Duration>,
    ) {
        self.output = Some(result);
        self.timing.finish_measured(took);
        self.status = if is_error {
            ToolStatus::Failed
        } else {
            ToolStatus::Done
        };
        self.cache.clear();
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.status, ToolStatus::Done | ToolStatus::Failed)
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
        if let Some(custom) = self.custom.clone() {
            let lines = self.render_custom(&custom, width, look);
            return self.cache.put(width, lines);
        }
        let mut body = Vec::new();
        let mut title = self.title(theme, look);
        if self.name == "bash"
            && let Some(time) = self.timing.label()
        {
            title.push_str(&theme.muted.paint(&format!(" · {time}")));
        }
        for line in wrap_text_with_ansi(&title, inner) {
            body.push(line);
        }
        body.extend(self.output_lines(inner, look));
        let bg = self.background(theme);
        let lines = boxed(&body, width, bg);
        self.cache.put(width, lines)
    }

    fn render_custom(&self, custom: &CustomLines, width: u16, look: &Look) -> Vec<String> {
        let theme = &look.theme;
        let inner = inner_width(width);
        let room = if custom.framed {
            inner
        } else {
            usize::from(width)
        };
        let fit = |lines: &[String]| -> Vec<String> {
            lines
                .iter()
                .map(|l| knightcode_tui::width::truncate_to_width(l, room, ""))
                .collect()
        };
        let mut body = match &custom.call {
            Some(lines) => fit(lines),
            None => wrap_text_with_ansi(&self.title(theme, look), inner),
        };
        match &custom.result {
            Some(lines) => body.extend(fit(lines)),
            None if custom.result_renderer => {}
            None => body.extend(self.output_lines(inner, look)),
        }
        if !custom.framed {
            return body;
        }
        let bg = self.background(theme);
        boxed(&body, width, bg)
    }

    /// The card's background: pending, done or failed.
    fn background(&self, theme: &Theme) -> knightcode_tui::Style {
        match self.status {
            ToolStatus::Streaming | ToolStatus::Running => theme.tool_pending_bg,
            ToolStatus::Done => theme.tool_success_bg,
            ToolStatus::Failed => theme.tool_error_bg,
        }
    }

    fn arg(&self, key: &str) -> Option<&str> {
        self.args.get(key).and_then(Value::as_str)
    }

    fn path_arg(&self, look: &Look) -> String {
        let path = self
            .arg("path")
            .or_else(|| self.arg("file_path"))
            .unwrap_or(".");
        display_path(path, &look.cwd, look.home.as_deref())
    }

    fn title(&self, theme: &Theme, look: &Look) -> String {
        let bold = |s: &str| theme.tool_title.paint(s);
        let accent = |s: &str| theme.accent.paint(s);
        let muted = |s: &str| theme.muted.paint(s);
        match self.name.as_str() {
            "bash" => {
                let command = self.arg("command").unwrap_or("...");
                let mut title = bold(&format!("$ {command}"));
                if let Some(timeout) = self.args.get("timeout").and_then(Value::as_f64) {
                    title.push_str(&muted(&format!(" (timeout {timeout}s)")));
                }
                title
            }
            "read" => {
                let mut title = format!("{} {}", bold("read"), accent(&self.path_arg(look)));
                let offset = self.args.get("offset").and_then(Value::as_u64);
                let limit = self.args.get("limit").and_then(Value::as_u64);
                match (offset, limit) {
                    (Some(o), Some(l)) => title.push_str(&muted(&format!(":{o}-{}", o + l - 1))),
                    (Some(o), None) => title.push_str(&muted(&format!(":{o}-"))),
                    (None, Some(l)) => title.push_str(&muted(&format!(":1-{l}"))),
                    (None, None) => {}
                }
                title
            }
            "edit" | "write" => format!("{} {}", bold(&self.name), accent(&self.path_arg(look))),
            "ls" => format!("{} {}", bold("ls"), accent(&self.path_arg(look))),
            "grep" => {
                let pattern = self.arg("pattern").unwrap_or("");
                let mut title = format!(
                    "{} {} {}",
                    bold("grep"),
                    accent(&format!("/{pattern}/")),
                    muted(&format!("in {}", self.path_arg(look)))
                );
                if let Some(glob) = self.arg("glob") {
                    title.push_str(&muted(&format!(" ({glob})")));
                }
                title
            }
            "find" => format!(
                "{} {} {}",
                bold("find"),
                accent(self.arg("pattern").unwrap_or("")),
                muted(&format!("in {}", self.path_arg(look)))
            ),
            other => {
                let args = serde_json::to_string(&self.args).unwrap_or_default();
                format!("{} {}", bold(other), muted(&args))
            }
        }
    }

    fn output_text(&self) -> String {
        let Some(output) = &self.output else {
            return String::new();
        };
        let mut text = String::new();
        for block in &output.content {
            match block {
                ContentBlock::Text(t) => {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&t.text);
                }
                ContentBlock::Image(image) => {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&format!("[image {}]", image.mime_type));
                }
                _ => {}
            }
        }
        text
    }

    fn output_lines(&self, inner: usize, look: &Look) -> Vec<String> {
        let mut lines = self.output_body(inner, look);
        // The limit a read hit shows collapsed too, as in pi: the preview hides the note
        // the tool ends its text with.
        if let Some(notice) = self.read_truncation_notice() {
            lines.extend(wrap_text_with_ansi(
                &look.theme.warning.paint(&notice),
                inner,
            ));
        }
        lines
    }

    /// `[Truncated: 775 lines shown (50.0KB limit)]` for a read that hit a limit.
    fn read_truncation_notice(&self) -> Option<String> {
        if self.name != "read" || self.status != ToolStatus::Done {
            return None;
        }
        let truncation = self.output.as_ref()?.details.get("truncation")?;
        if truncation.get("truncated").and_then(Value::as_bool) != Some(true) {
            return None;
        }
        let number = |key: &str| truncation.get(key).and_then(Value::as_u64).unwrap_or(0);
        let size = knightcode_runtime::format_size(number("maxBytes"));
        Some(
            if truncation
                .get("firstLineExceedsLimit")
                .and_then(Value::as_bool)
                == Some(true)
            {
                format!("[First line exceeds {size} limit]")
            } else if truncation.get("truncatedBy").and_then(Value::as_str) == Some("lines") {
                format!(
                    "[Truncated: showing {} of {} lines ({} line limit)]",
                    number("outputLines"),
                    number("totalLines"),
                    number("maxLines")
                )
            } else {
                format!(
                    "[Truncated: {} lines shown ({size} limit)]",
                    number("outputLines")
                )
            },
        )
    }

    fn output_body(&self, inner: usize, look: &Look) -> Vec<String> {
        let theme = &look.theme;
        let expanded = look.tools_expanded;
        // Successful edits show their diff; the text result only says "Successfully replaced".
        if self.name == "edit"
            && self.status == ToolStatus::Done
            && let Some(diff) = self
                .output
                .as_ref()
                .and_then(|o| o.details.get("diff"))
                .and_then(Value::as_str)
        {
            let mut lines = vec![String::new()];
            lines.extend(knightcode_tui::diff::render_diff(diff, theme));
            return lines;
        }
        // A write shows what it wrote, highlighted, even before the result arrives.
        if self.name == "write" && self.status != ToolStatus::Failed {
            // A file's last newline ends its last line; it is not another, empty one.
            let content = self.arg("content").unwrap_or("").trim_end_matches('\n');
            if content.is_empty() {
                return Vec::new();
            }
            let path = self.arg("path").unwrap_or("");
            let language = knightcode_tui::highlight::language_for_path(std::path::Path::new(path))
                .filter(|_| !self.plain_code);
            // Collapsed, only the first lines show: highlighting the rest of a long file
            // would cost a millisecond a line for nothing.
            let shown = if expanded {
                content.len()
            } else {
                content
                    .match_indices('\n')
                    .nth(PREVIEW_LINES - 1)
                    .map_or(content.len(), |(at, _)| at)
            };
            let lines =
                knightcode_tui::highlight::highlight_code_with(&content[..shown], language, theme);
            if expanded {
                return preview(lines, inner, expanded, false, theme, PREVIEW_LINES);
            }
            // As pi: the file's lines are counted, not the rows they wrap to, and the
            // total is said ("… 20 more lines, 30 total").
            let total = content.split('\n').count();
            let mut out = preview(lines, inner, true, false, theme, PREVIEW_LINES);
            if total > PREVIEW_LINES {
                out.push(theme.muted.paint(&format!(
                    "… {} more lines, {total} total (ctrl+o to expand)",
                    total - PREVIEW_LINES
                )));
            }
            return out;
        }
        let text = self.output_text();
        if text.is_empty() {
            return Vec::new();
        }
        // A file read shows in its language's colours, as code in replies does.
        if self.status == ToolStatus::Done
            && !self.plain_code
            && let Some(language) = self.read_language()
        {
            return read_lines(&text, language, inner, expanded, theme);
        }
        let failed = self.status == ToolStatus::Failed;
        // A failed command's output is still its output: only the status line the bash
        // tool adds ("Command exited with code 1") is the error. Other tools' failures are
        // all error text.
        let status_line = (failed && self.name == "bash")
            .then(|| {
                text.lines()
                    .enumerate()
                    .filter(|(_, l)| is_bash_status(l))
                    .last()
            })
            .flatten()
            .map(|(index, _)| index);
        let raw: Vec<String> = text
            .lines()
            .enumerate()
            .map(|(index, l)| {
                let style = if failed && (self.name != "bash" || Some(index) == status_line) {
                    theme.error
                } else {
                    theme.tool_output
                };
                style.paint(&l.replace('\t', "   "))
            })
            .collect();
        let (tail, limit) = if self.name == "bash" {
            (true, BASH_PREVIEW_LINES)
        } else {
            (false, PREVIEW_LINES)
        };
        // Errors are short and always matter: never collapse them.
        let expanded = expanded || self.status == ToolStatus::Failed;
        preview(raw, inner, expanded, tail, theme, limit)
    }
}

/// Source lines of one read highlighted at most (expanded); the rest shows in the output
/// colour. Highlighting costs a third of a millisecond or more a line, and a read can
/// bring 2,000.
const READ_HIGHLIGHT_MAX: usize = 400;

/// A read file's text highlighted: collapsed, only the lines the preview shows; the read
/// tool's closing note (`[Showing lines 1-2000 of 5000. …]`) stays plain.
fn read_lines(
    text: &str,
    language: &str,
    inner: usize,
    expanded: bool,
    theme: &Theme,
) -> Vec<String> {
    let text = text.replace('\t', "   ");
    let (content, note) = match text.rsplit_once("\n\n[") {
        Some((content, note)) if note.ends_with(']') && !note.contains('\n') => {
            (content, Some(format!("[{note}")))
        }
        _ => (text.as_str(), None),
    };
    // A file's last newline ends its last line; it is not another, empty one.
    let content = content.strip_suffix('\n').unwrap_or(content);
    let lines: Vec<&str> = content.split('\n').collect();
    let limit = if expanded {
        READ_HIGHLIGHT_MAX
    } else {
        PREVIEW_LINES
    };
    let shown = lines.len().min(limit);
    let mut out = knightcode_tui::highlight::highlight_code_with(
        &lines[..shown].join("\n"),
        Some(language),
        theme,
    );
    out.extend(lines[shown..].iter().map(|l| theme.tool_output.paint(l)));
    if let Some(note) = note {
        out.push(String::new());
        out.push(theme.muted.paint(&note));
    }
    preview(out, inner, expanded, false, theme, PREVIEW_LINES)
}

/// The line the bash tool ends a failed command's output with.
fn is_bash_status(line: &str) -> bool {
    [
        "Command exited with code",
        "Command timed out",
        "Command aborted",
    ]
    .iter()
    .any(|prefix| line.starts_with(prefix))
}

/// Wraps `lines` and, unless expanded, keeps `limit` of them (head or tail) with a notice
/// of what is hidden and how to see it.
fn preview(
    lines: Vec<String>,
    inner: usize,
    expanded: bool,
    tail: bool,
    theme: &Theme,
    limit: usize,
) -> Vec<String> {
    let mut wrapped = Vec::new();
    for line in &lines {
        wrapped.extend(wrap_text_with_ansi(line, inner));
    }
    let mut out = vec![String::new()];
    if expanded || wrapped.len() <= limit {
        out.extend(wrapped);
        return out;
    }
    let hidden = wrapped.len() - limit;
    let notice = theme
        .muted
        .paint(&format!("… {hidden} more lines (ctrl+o to expand)"));
    if tail {
        out.push(notice);
        out.extend(wrapped.into_iter().skip(hidden));
    } else {
        out.extend(wrapped.into_iter().take(limit));
        out.push(notice);
    }
    out
}
