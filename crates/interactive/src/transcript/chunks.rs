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
    plain_code: bool,
    /// Byte ranges of the finished chunks.
    chunks: Vec<std::ops::Range<usize>>,
    /// Where the growing chunk starts.
    tail_start: usize,
    /// How far `cut` has read: each delta scans only the lines it completed, not the whole
    /// growing chunk again (a long code block would make that quadratic).
    scan: Scan,
    /// Lines of the finished chunks for one width (blank lines between chunks included).
    frozen: Option<(u16, Vec<String>, usize)>,
    tail: Option<Markdown>,
    /// Wrapped rows start with the wrap's mark (see [`Markdown::marking_wraps`]).
    mark_wraps: bool,
}

impl ChunkedMarkdown {
    /// `plain_code`: code blocks without syntax colours (see [`Markdown::with_plain_code`]).
    pub fn new(text: String, theme: Theme, text_style: Option<Style>, plain_code: bool) -> Self {
        let mut chunked = Self {
            text,
            theme,
            text_style,
            plain_code,
            chunks: Vec::new(),
            tail_start: 0,
            scan: Scan::default(),
            frozen: None,
            tail: None,
            mark_wraps: false,
        };
        chunked.cut();
        chunked
    }

    /// Rows the wrap continued start with its mark (see [`Markdown::marking_wraps`]).
    pub fn marking_wraps(mut self, on: bool) -> Self {
        self.mark_wraps = on;
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn append(&mut self, delta: &str) {
        self.text.push_str(delta);
        let before = self.chunks.len();
        self.cut();
        if self.chunks.len() == before
            && let Some(tail) = &mut self.tail
        {
            tail.append_text(delta);
        }
        // Otherwise the tail's text is set again at the next render: the same renderer
        // renders the finished chunks first, so their code blocks keep their highlighting.
    }

    /// Finishes every chunk that is followed by a safe cut.
    fn cut(&mut self) {
        let Scan {
            next_line: mut line_start,
            mut in_fence,
            mut after_blank,
        } = self.scan;
        let mut chunk_start = self.tail_start;
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
        self.scan = Scan {
            next_line: line_start,
            in_fence,
            after_blank,
        };
    }

    /// The one renderer of all chunks: it keeps every chunk's highlighted code, so a new
    /// width re-wraps the reply without highlighting it again.
    fn markdown(&self, text: String) -> Markdown {
        let markdown = Markdown::new(text, self.theme.clone())
            .remembering_code()
            .with_plain_code(self.plain_code)
            .marking_wraps(self.mark_wraps);
        match self.text_style {
            Some(style) => markdown.with_text_style(style),
            None => markdown,
        }
    }

    /// The whole text's lines (for a frame, [`ChunkedMarkdown::render_parts`] avoids
    /// copying the finished ones).
    pub fn render(&mut self, width: u16) -> Vec<String> {
        let (frozen, tail) = self.render_parts(width);
        let mut lines = frozen.to_vec();
        if !tail.is_empty() {
            if !lines.is_empty() {
                lines.push(String::new());
            }
            lines.extend(tail);
        }
        lines
    }

    /// The lines of the finished chunks (which only grow while the width stays the same;
    /// no blank line at either end), and those of the growing chunk (to be joined to them
    /// with one blank line when both have any).
    pub fn render_parts(&mut self, width: u16) -> (&[String], Vec<String>) {
        let stale = !matches!(&self.frozen, Some((w, _, _)) if *w == width);
        if stale {
            self.frozen = Some((width, Vec::new(), 0));
        }
        let done = self.frozen.as_ref().map_or(0, |(_, _, done)| *done);
        let total = self.chunks.len();
        if done < total {
            // One renderer for the finished chunks and the tail: a chunk that was the
            // growing tail until now finds its code blocks already highlighted.
            let mut renderer = self
                .tail
                .take()
                .unwrap_or_else(|| self.markdown(String::new()));
            let mut fresh = Vec::with_capacity(total - done);
            for range in &self.chunks[done..] {
                renderer.set_text(&self.text[range.clone()]);
                fresh.push(trim_blank(renderer.render(width)));
            }
            renderer.set_text(&self.text[self.tail_start..]);
            self.tail = Some(renderer);
            if let Some((_, lines, done)) = &mut self.frozen {
                for rendered in fresh.into_iter().filter(|r| !r.is_empty()) {
                    if !lines.is_empty() {
                        lines.push(String::new());
                    }
                    lines.extend(rendered);
                }
                *done = total;
            }
        }
        if self.tail.is_none() {
            self.tail = Some(self.markdown(self.text[self.tail_start..].to_owned()));
        }
        let tail = self
            .tail
            .as_mut()
            .map(|t| t.render(width))
            .unwrap_or_default();
        let frozen = self
            .frozen
            .as_ref()
            .map_or(&[][..], |(_, l, _)| l.as_slice());
        (frozen, trim_blank(tail))
    }
}

/// Where `ChunkedMarkdown::cut` stopped: the start of the first line not read yet (an
/// unfinished last line is read again once it ends), whether that is inside a fence, and
/// where the chunk before a blank line ends when the last line read was blank.
#[derive(Debug, Clone, Copy, Default)]
struct Scan {
    next_line: usize,
    in_fence: bool,
    after_blank: Option<usize>,
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
fn trim_blank(mut lines: Vec<String>) -> Vec<String> {
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    lines.truncate(end);
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(end);
    lines.drain(..start);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str, width: u16) -> Vec<String> {
        trim_blank(Markdown::new(text.to_owned(), Theme::plain()).render(width))
    }

    fn streamed(text: &str, width: u16, step: usize) -> Vec<String> {
        let mut chunked = ChunkedMarkdown::new(String::new(), Theme::plain(), None, false);
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
        let chunked = ChunkedMarkdown::new(SAMPLE.to_owned(), Theme::plain(), None, false);
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
