//! The card of an assistant reply: its text and thinking blocks as markdown.
//!
//! A reply that streams in changes only at its end, so the card keeps the lines that can no
//! longer change (earlier blocks, and the finished chunks of the open one) and reports
//! through [`AssistantCard::render_update`] how many of the lines it gave last time are
//! still right. A frame then copies the lines of the growing end only, not the whole reply.

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_tui::width::wrap_text_with_ansi;

use super::CardUpdate;
use super::card::inner_width;
use super::chunks::ChunkedMarkdown;
use super::message::indent_one;
use super::render::Look;

/// One text or thinking block of an assistant reply. Its markdown renderer lives as long
/// as the block, so a streaming reply re-renders incrementally (highlighted code is kept).
pub struct ReplyBlock {
    pub thinking: bool,
    text: String,
    /// What extensions' markdown transformers made of `text` (display only): drawn instead
    /// of it until the next transform arrives.
    shown: Option<String>,
    /// Code blocks without syntax colours (old history, see `AssistantCard::set_plain_code`).
    plain_code: bool,
    /// Made on the first render (it needs the theme); rendered in chunks so that a
    /// streaming reply re-renders only its last block.
    rendered: Option<ChunkedMarkdown>,
}

impl ReplyBlock {
    fn new(thinking: bool, text: String) -> Self {
        Self {
            thinking,
            text,
            shown: None,
            plain_code: false,
            rendered: None,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    fn append(&mut self, delta: &str) {
        self.text.push_str(delta);
        // A transformed block shows its last transform until the next one arrives.
        if self.shown.is_none()
            && let Some(rendered) = &mut self.rendered
        {
            rendered.append(delta);
        }
    }

    fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// The lines of the finished chunks and of the growing one (see
    /// [`ChunkedMarkdown::render_parts`]), not yet indented.
    fn render_parts(&mut self, width: usize, look: &Look) -> (&[String], Vec<String>) {
        let theme = &look.theme;
        let thinking = self.thinking;
        let plain_code = self.plain_code;
        let shown = self.shown.as_ref().unwrap_or(&self.text);
        let rendered = self.rendered.get_or_insert_with(|| {
            let style = thinking.then_some(theme.thinking_text);
            ChunkedMarkdown::new(shown.clone(), theme.clone(), style, plain_code)
                .marking_wraps(look.mark_wraps)
        });
        rendered.render_parts(u16::try_from(width).unwrap_or(u16::MAX))
    }
}

impl Clone for ReplyBlock {
    fn clone(&self) -> Self {
        Self {
            plain_code: self.plain_code,
            shown: self.shown.clone(),
            ..Self::new(self.thinking, self.text.clone())
        }
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
    /// Draws nothing: a failed attempt that was retried, or a reply with nothing in it.
    pub hidden: bool,
    /// The lines that can no longer change, for one width; dropped by any change other
    /// than text added to the open block.
    settled: Option<Settled>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Aborted,
    Error(String),
}

/// The start of the card's lines that later text cannot change.
#[derive(Debug, Clone)]
struct Settled {
    width: u16,
    /// Every block before the open one, then the open block's finished chunks (indented,
    /// with the blank lines between blocks).
    lines: Vec<String>,
    /// The block still growing: the last one with text. `None` when there is none or it
    /// is a hidden thinking block (its one-line placeholder is settled).
    open: Option<usize>,
    /// How many of the open block's finished-chunk lines are in `lines`.
    open_lines: usize,
    /// `lines.len()` at the last render: the lines the caller has that are still right.
    reported: usize,
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
        if !unchanged {
            self.settled = None;
        }
    }

    fn slot(&mut self, index: usize) -> &mut Option<ReplyBlock> {
        if self.blocks.len() <= index {
            self.blocks.resize(index + 1, None);
        }
        &mut self.blocks[index]
    }

    pub fn start_block(&mut self, index: usize, thinking: bool) {
        *self.slot(index) = Some(ReplyBlock::new(thinking, String::new()));
        self.settled = None;
    }

    /// Adds streamed text; returns the language of a code fence this delta completed the
    /// opening line of (so its grammar can be compiled before the code arrives).
    pub fn append(&mut self, index: usize, delta: &str, thinking: bool) -> Option<String> {
        // Text added to the open block only grows its end; anything else (a block before
        // it, a new block, the first text of a blank one) may move lines that were settled.
        let grows_open_block = self.settled.as_ref().is_some_and(|s| s.open == Some(index))
            && self.open_block() == Some(index);
        if !grows_open_block {
            self.settled = None;
        }
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

    /// The last block with text.
    fn open_block(&self) -> Option<usize> {
        self.blocks
            .iter()
            .rposition(|b| b.as_ref().is_some_and(|block| !block.is_blank()))
    }

    /// The text and thinking blocks (content index, thinking, markdown), for extensions'
    /// markdown transformers.
    pub fn markdown_parts(&self) -> Vec<(usize, bool, &str)> {
        self.blocks
            .iter()
            .enumerate()
            .filter_map(|(index, block)| {
                let block = block.as_ref()?;
                Some((index, block.thinking, block.text.as_str()))
            })
            .collect()
    }

    /// Shows `markdown` for block `index` instead of its text (a markdown transformer's
    /// result). Returns whether anything changed.
    pub fn set_shown(&mut self, index: usize, markdown: String) -> bool {
        let Some(Some(block)) = self.blocks.get_mut(index) else {
            return false;
        };
        let shown = (markdown != block.text).then_some(markdown);
        if block.shown == shown {
            return false;
        }
        block.shown = shown;
        block.rendered = None;
        self.settled = None;
        true
    }

    /// Replaces an error ending's text (the provider's raw text, told in words).
    pub fn set_error_text(&mut self, text: String) {
        if matches!(&self.ending, Some(Ending::Error(old)) if *old != text) {
            self.ending = Some(Ending::Error(text));
            self.settled = None;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ending.is_none() && self.open_block().is_none()
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

    /// Drops the card's lines (a toggle changed how it looks); the blocks keep their
    /// rendered markdown, which no toggle changes.
    pub fn invalidate(&mut self) {
        self.settled = None;
    }

    /// Code blocks in the plain code colour instead of highlighted: history far up the
    /// scrollback is not worth the milliseconds per line that highlighting costs.
    pub fn set_plain_code(&mut self, plain: bool) {
        for block in self.blocks.iter_mut().flatten() {
            if block.plain_code != plain {
                block.plain_code = plain;
                block.rendered = None;
            }
        }
        self.settled = None;
    }

    /// Lines inside code fences of the reply's text (what highlighting it would cost).
    pub fn code_lines(&self) -> usize {
        self.blocks
            .iter()
            .flatten()
            .map(|block| fenced_lines(&block.text))
            .sum()
    }

    /// Every line of the card.
    pub fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        let (_, rest) = self.refresh(width, look);
        let mut lines = self
            .settled
            .as_ref()
            .map(|s| s.lines.clone())
            .unwrap_or_default();
        lines.extend(rest);
        lines
    }

    /// The card's lines as the first `keep` lines of what the last `render_update` gave
    /// (or any render since), followed by `lines`.
    pub fn render_update(&mut self, width: u16, look: &Look) -> CardUpdate {
        let (kept, rest) = self.refresh(width, look);
        let Some(settled) = self.settled.as_mut() else {
            return CardUpdate {
                keep: 0,
                lines: rest,
            };
        };
        let keep = kept.unwrap_or(0).min(settled.lines.len());
        let mut lines = settled.lines[keep..].to_vec();
        lines.extend(rest);
        settled.reported = settled.lines.len();
        CardUpdate { keep, lines }
    }

    /// Brings the settled lines up to date and returns the lines after them (the open
    /// block's growing chunk and the ending), with how many lines the last
    /// `render_update` reported settled when they are still settled (same width, no
    /// change but text added to the open block).
    fn refresh(&mut self, width: u16, look: &Look) -> (Option<usize>, Vec<String>) {
        let kept = self
            .settled
            .as_ref()
            .filter(|s| s.width == width)
            .map(|s| s.reported);
        if kept.is_none() {
            self.settled = Some(self.settle_closed_blocks(width, look));
        }
        let inner = inner_width(width);
        let mut rest = Vec::new();
        let Some(settled) = self.settled.as_mut() else {
            return (None, rest);
        };
        if let Some(index) = settled.open
            && let Some(Some(block)) = self.blocks.get_mut(index)
        {
            let (finished, growing) = block.render_parts(inner, look);
            if finished.len() > settled.open_lines {
                if settled.open_lines == 0 && !settled.lines.is_empty() {
                    settled.lines.push(String::new());
                }
                settled
                    .lines
                    .extend(finished[settled.open_lines..].iter().map(|l| indent_one(l)));
                settled.open_lines = finished.len();
            }
            if !growing.is_empty() {
                if !settled.lines.is_empty() {
                    rest.push(String::new());
                }
                rest.extend(growing.iter().map(|l| indent_one(l)));
            }
        }
        if let Some(ending) = &self.ending {
            if !settled.lines.is_empty() || !rest.is_empty() {
                rest.push(String::new());
            }
            let text = match ending {
                Ending::Aborted => "Operation aborted".to_owned(),
                Ending::Error(message) => format!("Error: {message}"),
            };
            // What happened in the error colour; what to do about it (later lines) muted.
            for (index, paragraph) in text.split('\n').enumerate() {
                let style = if index == 0 {
                    look.theme.error
                } else {
                    look.theme.muted
                };
                for line in wrap_text_with_ansi(paragraph, inner) {
                    rest.push(indent_one(&style.paint(&line)));
                }
            }
        }
        (kept, rest)
    }

    /// The settled lines of a fresh render: every block before the open one.
    fn settle_closed_blocks(&mut self, width: u16, look: &Look) -> Settled {
        let theme = &look.theme;
        let inner = inner_width(width);
        let mut open = self.open_block();
        let mut lines: Vec<String> = Vec::new();
        for (index, slot) in self.blocks.iter_mut().enumerate() {
            let Some(block) = slot else { continue };
            if block.is_blank() {
                continue;
            }
            let hidden = block.thinking && look.thinking_hidden;
            if open == Some(index) && !hidden {
                break;
            }
            if !lines.is_empty() {
                lines.push(String::new());
            }
            if hidden {
                let label = look
                    .hidden_thinking_label
                    .as_deref()
                    .unwrap_or("Thinking… (ctrl+t to show)");
                for line in wrap_text_with_ansi(label, inner) {
                    lines.push(indent_one(&theme.thinking_text.paint(&line)));
                }
                if open == Some(index) {
                    open = None;
                }
                continue;
            }
            let (finished, growing) = block.render_parts(inner, look);
            lines.extend(finished.iter().map(|l| indent_one(l)));
            if !growing.is_empty() {
                if !finished.is_empty() {
                    lines.push(String::new());
                }
                lines.extend(growing.iter().map(|l| indent_one(l)));
            }
        }
        Settled {
            width,
            lines,
            open,
            open_lines: 0,
            reported: 0,
        }
    }
}

/// How many lines of `text` are inside code fences.
fn fenced_lines(text: &str) -> usize {
    let mut inside = false;
    let mut count = 0;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            inside = !inside;
        } else if inside {
            count += 1;
        }
    }
    count
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
