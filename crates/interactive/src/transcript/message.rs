//! Cards for user prompts, assistant replies (text and thinking), user shell commands and
//! notices.

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::BashExecutionMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_tui::width::wrap_text_with_ansi;

use super::card::LineCache;
use super::card::boxed;
use super::card::inner_width;
use super::chunks::ChunkedMarkdown;
use super::render::Look;
use super::render::markdown;

/// A user prompt.
#[derive(Debug, Clone)]
pub struct UserCard {
    pub text: String,
    pub images: usize,
    cache: LineCache,
}

impl UserCard {
    pub fn new(text: String, images: usize) -> Self {
        Self {
            text,
            images,
            cache: LineCache::default(),
        }
    }

    pub fn invalidate(&mut self) {
        self.cache.clear();
    }

    pub fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines.to_vec();
        }
        let inner = inner_width(width);
        // Like the reference, prompts render as markdown (code spans, lists, emphasis).
        let mut body = markdown(&self.text, inner, &look.theme);
        if self.images > 0 {
            let label = if self.images == 1 {
                "[1 image]".to_owned()
            } else {
                format!("[{} images]", self.images)
            };
            body.push(look.theme.muted.paint(&label));
        }
        let lines = boxed(&body, width, look.theme.user_message_bg);
        self.cache.put(width, lines)
    }
}

/// One text or thinking block of an assistant reply. Its markdown renderer lives as long
/// as the block, so a streaming reply re-renders incrementally (highlighted code is kept).
pub struct ReplyBlock {
    pub thinking: bool,
    text: String,
    /// Made on the first render (it needs the theme); rendered in chunks so that a
    /// streaming reply re-renders only its last block.
    rendered: Option<ChunkedMarkdown>,
}

impl ReplyBlock {
    fn new(thinking: bool, text: String) -> Self {
        Self {
            thinking,
            text,
            rendered: None,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    fn append(&mut self, delta: &str) {
        self.text.push_str(delta);
        if let Some(rendered) = &mut self.rendered {
            rendered.append(delta);
        }
    }

    fn render(&mut self, width: usize, look: &Look) -> Vec<String> {
        let theme = &look.theme;
        let thinking = self.thinking;
        let rendered = self.rendered.get_or_insert_with(|| {
            let style = thinking.then_some(theme.thinking_text);
            ChunkedMarkdown::new(self.text.clone(), theme.clone(), style)
        });
        rendered.render(u16::try_from(width).unwrap_or(u16::MAX))
    }

    /// Drops the renderer (theme change); the next render makes a new one.
    fn reset(&mut self) {
        self.rendered = None;
    }
}

impl Clone for ReplyBlock {
    fn clone(&self) -> Self {
        Self::new(self.thinking, self.text.clone())
    }
}

impl std::fmt::Debug for ReplyBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyBlock")
            .field("thinking", &self.thinking)
            .field("text", &self.text)
            .finish()
    }
}

/// An assistant reply: its text and thinking blocks (tool calls get their own cards).
#[derive(Debug, Clone, Default)]
pub struct AssistantCard {
    /// Blocks by content index (tool-call slots stay `None`).
    blocks: Vec<Option<ReplyBlock>>,
    /// Set when the reply ended in an error or was aborted.
    pub ending: Option<Ending>,
    cache: LineCache,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Aborted,
    Error(String),
}

impl AssistantCard {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn from_message(message: &AssistantMessage) -> Self {
        let mut card = Self::new();
        card.set_message(message);
        card
    }

    /// Replaces the content with the final message. Blocks whose text did not change keep
    /// their renderers.
    pub fn set_message(&mut self, message: &AssistantMessage) {
        let fresh: Vec<Option<ReplyBlock>> = message
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::Text(t) => Some(ReplyBlock::new(false, t.text.clone())),
                ContentBlock::Thinking(t) => Some(ReplyBlock::new(true, t.thinking.clone())),
                _ => None,
            })
            .collect();
        let unchanged = fresh.len() == self.blocks.len()
            && fresh.iter().zip(&self.blocks).all(|(a, b)| match (a, b) {
                (Some(a), Some(b)) => a.thinking == b.thinking && a.text == b.text,
                (None, None) => true,
                _ => false,
            });
        if !unchanged {
            self.blocks = fresh;
        }
        self.ending = match message.stop_reason.known() {
            Some(StopReason::Aborted) => Some(Ending::Aborted),
            Some(StopReason::Error) => Some(Ending::Error(
                message
                    .error_message
                    .clone()
                    .unwrap_or_else(|| "the request failed".to_owned()),
            )),
            _ => None,
        };
        self.cache.clear();
    }

    fn slot(&mut self, index: usize) -> &mut Option<ReplyBlock> {
        if self.blocks.len() <= index {
            self.blocks.resize(index + 1, None);
        }
        &mut self.blocks[index]
    }

    pub fn start_block(&mut self, index: usize, thinking: bool) {
        *self.slot(index) = Some(ReplyBlock::new(thinking, String::new()));
        self.cache.clear();
    }

    /// Adds streamed text; returns the language of a code fence this delta completed the
    /// opening line of (so its grammar can be compiled before the code arrives).
    pub fn append(&mut self, index: usize, delta: &str, thinking: bool) -> Option<String> {
        self.cache.clear();
        let slot = self.slot(index);
        let block = match slot {
            Some(block) => {
                block.append(delta);
                block
            }
            None => slot.insert(ReplyBlock::new(thinking, delta.to_owned())),
        };
        if thinking || !delta.contains('\n') {
            return None;
        }
        fence_language(&block.text, delta.len())
    }

    pub fn is_empty(&self) -> bool {
        self.ending.is_none()
            && self.blocks.iter().all(|b| match b {
                None => true,
                Some(block) => block.text.trim().is_empty(),
            })
    }

    /// The reply's text blocks joined (for `/copy`).
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Some(block) if !block.thinking => Some(block.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn invalidate(&mut self) {
        self.cache.clear();
        for block in self.blocks.iter_mut().flatten() {
            block.reset();
        }
    }

    pub fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines.to_vec();
        }
        let theme = &look.theme;
        let inner = inner_width(width);
        let mut lines: Vec<String> = Vec::new();
        for block in self.blocks.iter_mut().flatten() {
            if block.text.trim().is_empty() {
                continue;
            }
            if !lines.is_empty() {
                lines.push(String::new());
            }
            if block.thinking && look.thinking_hidden {
                for line in wrap_text_with_ansi("Thinking… (ctrl+t to show)", inner) {
                    lines.push(indent_one(&theme.thinking_text.paint(&line)));
                }
                continue;
            }
            let rendered = block.render(inner, look);
            // Leading and trailing blank lines of the text would double the card's spacing.
            let start = rendered
                .iter()
                .position(|l| !l.trim().is_empty())
                .unwrap_or(0);
            let end = rendered
                .iter()
                .rposition(|l| !l.trim().is_empty())
                .map_or(0, |i| i + 1);
            lines.extend(indent(rendered[start..end.max(start)].to_vec()));
        }
        match &self.ending {
            Some(Ending::Aborted) => {
                if !lines.is_empty() {
                    lines.push(String::new());
                }
                for line in wrap_text_with_ansi("Operation aborted", inner) {
                    lines.push(indent_one(&theme.error.paint(&line)));
                }
            }
            Some(Ending::Error(message)) => {
                if !lines.is_empty() {
                    lines.push(String::new());
                }
                for line in wrap_text_with_ansi(&format!("Error: {message}"), inner) {
                    lines.push(indent_one(&theme.error.paint(&line)));
                }
            }
            None => {}
        }
        self.cache.put(width, lines)
    }
}

/// The language of a fence opening line (```` ```rust ````) among the lines the last
/// `added` bytes of `text` completed.
fn fence_language(text: &str, added: usize) -> Option<String> {
    let start = text.len().saturating_sub(added);
    let start = text[..start].rfind('\n').map_or(0, |at| at + 1);
    let complete = &text[start..text.rfind('\n')?];
    complete.lines().rev().find_map(|line| {
        let lang = line.trim_start().strip_prefix("```")?.trim();
        let lang = lang.split([' ', ',', '{']).next()?;
        (!lang.is_empty()).then(|| lang.to_ascii_lowercase())
    })
}

fn indent_one(line: &str) -> String {
    if line.is_empty() {
        return String::new();
    }
    format!(" {line}")
}

fn indent(lines: Vec<String>) -> Vec<String> {
    lines.into_iter().map(|l| indent_one(&l)).collect()
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
            cache: LineCache::default(),
        }
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

    pub fn invalidate(&mut self) {
        self.cache.clear();
    }

    pub fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines.to_vec();
        }
        let theme = &look.theme;
        let inner = inner_width(width);
        let mut body = wrap_text_with_ansi(
            &theme.tool_title.paint(&format!("$ {}", self.command)),
            inner,
        );
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
    cache: LineCache,
}

impl Notice {
    pub fn new(kind: NoticeKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            cache: LineCache::default(),
        }
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
        let lines = wrap_text_with_ansi(&self.text, inner_width(width))
            .into_iter()
            .map(|l| indent_one(&style.paint(&l)))
            .collect();
        self.cache.put(width, lines)
    }
}

#[cfg(test)]
mod tests {
    use super::fence_language;

    #[test]
    fn fence_openers_are_found_in_completed_lines_only() {
        assert_eq!(fence_language("text\n```rust\n", 8), Some("rust".into()));
        assert_eq!(
            fence_language("```TypeScript title=\"a\"\nconst", 30),
            Some("typescript".into())
        );
        assert_eq!(
            fence_language("```py", 5),
            None,
            "the line is not complete yet"
        );
        assert_eq!(fence_language("```\ncode\n", 9), None, "no language");
        assert_eq!(
            fence_language("```rust\nfn main\n", 8),
            None,
            "the fence came earlier"
        );
    }
}
