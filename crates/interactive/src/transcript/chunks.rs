//! Markdown that grows at its end (a streaming reply), rendered in chunks: the text is cut at
//! blank lines outside code fences, each finished chunk is rendered once per width and kept,
//! and only the last, growing chunk is rendered again on each frame. Rendering a 40,000-
//! character reply from scratch on every frame cost a third of a core at 1,000 tokens/s.
//!
//! Cuts are made only where rendering the parts separately looks like rendering the whole:
//! between top-level blocks (the line after the blank line starts in column 0), never inside
//! a fence.

use knightcode_tui::Component as _;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::markdown::Markdown;

pub struct ChunkedMarkdown {
    text: String,
    theme: Theme,
    text_style: Option<Style>,
    /// Byte ranges of the finished chunks.
    chunks: Vec<std::ops::Range<usize>>,
    /// Where the growing chunk starts.
    tail_start: usize,
    /// Lines of the finished chunks for one width (blank lines between chunks included).
    frozen: Option<(u16, Vec<String>, usize)>,
    tail: Option<Markdown>,
}

impl ChunkedMarkdown {
    pub fn new(text: String, theme: Theme, text_style: Option<Style>) -> Self {
        let mut chunked = Self {
            text,
            theme,
            text_style,
            chunks: Vec::new(),
            tail_start: 0,
            frozen: None,
            tail: None,
        };
        chunked.cut();
        chunked
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn append(&mut self, delta: &str) {
        self.text.push_str(delta);
        let before = self.chunks.len();
        self.cut();
        if self.chunks.len() == before {
            if let Some(tail) = &mut self.tail {
                tail.append_text(delta);
            }
        } else {
            self.tail = None;
        }
    }

    /// Finishes every chunk that is followed by a safe cut.
    fn cut(&mut self) {
        let mut in_fence = false;
        let mut line_start = self.tail_start;
        let mut chunk_start = self.tail_start;
        let mut after_blank: Option<usize> = None;
        while let Some(len) = self.text[line_start..].find('\n') {
            let line = &self.text[line_start..line_start + len];
            let next = line_start + len + 1;
            let trimmed = line.trim_start();
            if let Some(blank_at) = after_blank.take()
                && !in_fence
                && !line.is_empty()
                && !line.starts_with([' ', '\t'])
                && !starts_list_item(line)
                && blank_at > chunk_start
            {
                self.chunks.push(chunk_start..blank_at);
                chunk_start = line_start;
            }
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
            }
            if !in_fence && line.trim().is_empty() {
                // Where the chunk before this blank line (run) ends.
                let end = self.text[..line_start]
                    .trim_end_matches(['\n', ' ', '\t'])
                    .len();
                after_blank = Some(end.max(chunk_start));
            }
            line_start = next;
        }
        self.tail_start = chunk_start;
    }

    fn markdown(&self, text: &str) -> Markdown {
        let markdown = Markdown::new(text.to_owned(), self.theme.clone());
        match self.text_style {
            Some(style) => markdown.with_text_style(style),
            None => markdown,
        }
    }

    pub fn render(&mut self, width: u16) -> Vec<String> {
        let stale = !matches!(&self.frozen, Some((w, _, _)) if *w == width);
        if stale {
            self.frozen = Some((width, Vec::new(), 0));
        }
        let done = self.frozen.as_ref().map_or(0, |(_, _, done)| *done);
        let fresh: Vec<Vec<String>> = self.chunks[done..]
            .iter()
            .map(|range| trim_blank(self.markdown(&self.text[range.clone()]).render(width)))
            .collect();
        let total = self.chunks.len();
        if let Some((_, lines, done)) = &mut self.frozen {
            for rendered in fresh.into_iter().filter(|r| !r.is_empty()) {
                if !lines.is_empty() {
                    lines.push(String::new());
                }
                lines.extend(rendered);
            }
            *done = total;
        }
        if self.tail.is_none() {
            self.tail = Some(self.markdown(&self.text[self.tail_start..]));
        }
        let tail_lines = match &mut self.tail {
            Some(tail) => trim_blank(tail.render(width)),
            None => Vec::new(),
        };
        let mut lines = self
            .frozen
            .as_ref()
            .map(|(_, l, _)| l.clone())
            .unwrap_or_default();
        if !tail_lines.is_empty() {
            if !lines.is_empty() {
                lines.push(String::new());
            }
            lines.extend(tail_lines);
        }
        lines
    }

    /// Drops rendered lines (theme change); the next render starts over.
    pub fn reset(&mut self, theme: Theme) {
        self.theme = theme;
        self.frozen = None;
        self.tail = None;
    }
}

/// A list item's first line: cutting before it would split a loose list, which renders
/// differently from the list as a whole.
fn starts_list_item(line: &str) -> bool {
    if line.starts_with(['-', '*', '+']) {
        return line[1..].starts_with(' ') || line.len() == 1;
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && line[digits..].starts_with(['.', ')'])
}

/// Without blank lines at the start and the end.
fn trim_blank(lines: Vec<String>) -> Vec<String> {
    let start = lines.iter().position(|l| !l.trim().is_empty());
    let Some(start) = start else {
        return Vec::new();
    };
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |i| i + 1);
    lines[start..end].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str, width: u16) -> Vec<String> {
        trim_blank(Markdown::new(text.to_owned(), Theme::plain()).render(width))
    }

    fn streamed(text: &str, width: u16, step: usize) -> Vec<String> {
        let mut chunked = ChunkedMarkdown::new(String::new(), Theme::plain(), None);
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(step) {
            chunked.append(&piece.iter().collect::<String>());
            // Render between deltas, as frames do.
            chunked.render(width);
        }
        chunked.render(width)
    }

    const SAMPLE: &str = "# Title\n\nFirst paragraph with **bold** text that wraps around at a narrow width.\n\n- one\n- two\n\n  continued item paragraph\n\n1. first\n\n2. second\n\n```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nLast line.";

    #[test]
    fn streaming_in_chunks_renders_like_the_whole_text() {
        for width in [30u16, 80] {
            let expected = whole(SAMPLE, width);
            for step in [1, 3, 17, 1000] {
                assert_eq!(
                    streamed(SAMPLE, width, step),
                    expected,
                    "width {width}, step {step}"
                );
            }
        }
    }

    #[test]
    fn cuts_only_between_top_level_blocks_outside_fences() {
        let chunked = ChunkedMarkdown::new(SAMPLE.to_owned(), Theme::plain(), None);
        for range in &chunked.chunks {
            let chunk = &SAMPLE[range.clone()];
            assert_eq!(
                chunk.matches("```").count() % 2,
                0,
                "fence split: {chunk:?}"
            );
        }
        assert!(chunked.chunks.len() >= 4, "{:?}", chunked.chunks);
    }
}
