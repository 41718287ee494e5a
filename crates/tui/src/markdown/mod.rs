//! Markdown to styled terminal lines, laid out like the reference's `Markdown` component:
//! headings in the heading colour (level 1 underlined, `###` prefixes from level 3), word
//! wrapped paragraphs, lists with hanging indents, quotes behind a `│` border, tables in
//! box-drawing borders, and fenced code between ```` ``` ```` lines with syntax colours.
//!
//! Partial input (a message still streaming in) renders as what it is so far: an unclosed
//! fence is a code block up to the end, an unclosed `**` is literal text.

mod parse;
mod table;

use std::cell::RefCell;

use parse::{Block, Item, Placed, Span, marks};

use crate::component::Component;
use crate::components::{WidthCache, frame_lines};
use crate::highlight::IncrementalHighlighter;
use crate::style::{Style, Theme};
use crate::width::{
    TAB_WIDTH, truncate_to_width, visible_width, wrap_text_marking_wraps, wrap_text_with_ansi,
};

/// A block of markdown text. Caches its lines for the last width; changing the text drops
/// the cache.
pub struct Markdown {
    text: String,
    theme: Theme,
    padding_left: usize,
    padding_right: usize,
    padding_y: usize,
    text_style: Style,
    background: Option<Style>,
    cache: WidthCache,
    /// Highlighted code blocks of the last render. While a message streams in only its
    /// last block changes, and a new width needs no new highlighting, so the others are
    /// taken from here.
    code_cache: Vec<CodeEntry>,
    /// Keep the highlighting of every code block rendered, not just the last render's.
    remember_code: bool,
    /// Code blocks in the plain code colour, without a grammar.
    plain_code: bool,
    /// Rows the wrap continued start with its mark (`width::SOFT_WRAP`).
    mark_wraps: bool,
}

/// One code block's highlighted lines (before wrapping), and the highlighter that made
/// them, ready to continue when the block grows.
struct CodeEntry {
    lang: String,
    code: String,
    lines: Vec<String>,
    highlighter: IncrementalHighlighter,
}

impl Markdown {
    /// `text` with no padding, in the theme's text style.
    pub fn new(text: impl Into<String>, theme: Theme) -> Self {
        let text_style = theme.text;
        Self {
            text: text.into(),
            theme,
            padding_left: 0,
            padding_right: 0,
            padding_y: 0,
            text_style,
            background: None,
            cache: WidthCache::default(),
            code_cache: Vec::new(),
            remember_code: false,
            plain_code: false,
            mark_wraps: false,
        }
    }

    /// Keeps the highlighted lines of every code block this renderer has seen, for one
    /// renderer given several texts in turn (the parts of a long message): rendering one
    /// again, at another width say, highlights nothing again.
    pub fn remembering_code(mut self) -> Self {
        self.remember_code = true;
        self
    }

    /// Code blocks in the theme's plain code colour: no grammar is loaded or run.
    /// Highlighting costs up to a millisecond a line; a long history can skip it.
    pub fn with_plain_code(mut self, plain: bool) -> Self {
        self.plain_code = plain;
        self.cache.clear();
        self
    }

    /// Rows that continue a paragraph, heading or code line the width wrapped start with
    /// [`crate::width::SOFT_WRAP`] or [`crate::width::SOFT_BREAK`] (zero-width), so that
    /// copied text can be joined again (a table's cells are not marked).
    pub fn marking_wraps(mut self, on: bool) -> Self {
        self.mark_wraps = on;
        self.cache.clear();
        self
    }

    /// The same number of blank columns on both sides and blank lines above and below.
    pub fn with_padding(mut self, x: usize, y: usize) -> Self {
        self.padding_left = x;
        self.padding_right = x;
        self.padding_y = y;
        self.cache.clear();
        self
    }

    /// Different blank columns left and right.
    pub fn with_horizontal_padding(mut self, left: usize, right: usize) -> Self {
        self.padding_left = left;
        self.padding_right = right;
        self.cache.clear();
        self
    }

    /// The style of body text (thinking blocks are grey and italic, for example).
    pub fn with_text_style(mut self, style: Style) -> Self {
        self.text_style = style;
        self.cache.clear();
        self
    }

    /// A background filling every line to the full width, padding included.
    pub fn with_background(mut self, background: Style) -> Self {
        self.background = Some(background);
        self.cache.clear();
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cache.clear();
    }

    /// Adds streamed text at the end.
    pub fn append_text(&mut self, more: &str) {
        if more.is_empty() {
            return;
        }
        self.text.push_str(more);
        self.cache.clear();
    }

    pub fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
        self.cache.clear();
        self.code_cache.clear();
    }

    fn render_uncached(&mut self, width: usize) -> Vec<String> {
        if self.text.trim().is_empty() {
            return Vec::new();
        }
        let content_width = width
            .saturating_sub(self.padding_left + self.padding_right)
            .max(1);
        // Tabs become spaces up front so widths are known (the reference uses three).
        let source = self.text.replace('\t', &" ".repeat(TAB_WIDTH));
        let blocks = parse::parse(&source);
        let renderer = Renderer {
            theme: &self.theme,
            source: &source,
            previous_code: RefCell::new(std::mem::take(&mut self.code_cache)),
            code: RefCell::new(Vec::new()),
            plain_code: self.plain_code,
            mark_wraps: self.mark_wraps,
        };
        let body = renderer.blocks(&blocks, content_width, self.text_style, true);
        self.code_cache = renderer.code.into_inner();
        if self.remember_code {
            self.code_cache.extend(renderer.previous_code.into_inner());
        }

        // Lines may only overflow the content width when a glyph is wider than it.
        let body = body
            .into_iter()
            .map(|line| {
                if visible_width(&line) > content_width {
                    truncate_to_width(&line, content_width, "")
                } else {
                    line
                }
            })
            .collect();
        frame_lines(
            body,
            width,
            self.padding_left,
            self.padding_y,
            self.background,
        )
    }
}

impl Component for Markdown {
    fn render(&mut self, width: u16) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines;
        }
        let lines = self.render_uncached(usize::from(width));
        self.cache.store(width, &lines);
        lines
    }

    fn invalidate(&mut self) {
        self.cache.clear();
        self.code_cache.clear();
    }
}

/// Renders blocks; `base` is the style text starts from (body, quote).
struct Renderer<'a> {
    theme: &'a Theme,
    source: &'a str,
    previous_code: RefCell<Vec<CodeEntry>>,
    /// The code blocks of this render, for the next one.
    code: RefCell<Vec<CodeEntry>>,
    plain_code: bool,
    mark_wraps: bool,
}

impl Renderer<'_> {
    fn wrap(&self, text: &str, width: usize) -> Vec<String> {
        if self.mark_wraps {
            wrap_text_marking_wraps(text, width)
        } else {
            wrap_text_with_ansi(text, width)
        }
    }

    /// `spans` as one styled string (`\n` where lines break).
    fn inline(&self, spans: &[Span], base: Style) -> String {
        let theme = self.theme;
        let layers = [
            (marks::STRONG, theme.md_bold),
            (marks::EMPHASIS, theme.md_italic),
            (marks::STRIKE, theme.md_strikethrough),
            (marks::CODE, theme.md_code),
            (marks::LINK, theme.md_link),
        ];
        let mut out = String::new();
        for span in spans {
            let mut style = layers
                .iter()
                .filter(|(mark, _)| span.marks & mark != 0)
                .fold(base, |style, (_, layer)| style.patch(*layer));
            if span.marks & marks::LINK_URL != 0 {
                // The URL is not part of the link text: it keeps none of the link's look.
                style = base.patch(theme.md_link_url);
            }
            out.push_str(&style.paint(&span.text));
        }
        out
    }

    /// Blocks separated by blank lines, except that a list directly under a paragraph (no
    /// blank line in the source) stays attached, and `spaced = false` (inside list items)
    /// puts no blank lines at all.
    fn blocks(&self, blocks: &[Placed], width: usize, base: Style, spaced: bool) -> Vec<String> {
        let mut lines = Vec::new();
        for (i, placed) in blocks.iter().enumerate() {
            if i > 0 && spaced {
                let prev = &blocks[i - 1].block;
                let attached = matches!(prev, Block::Paragraph(_))
                    && matches!(placed.block, Block::List { .. })
                    && !self.blank_line_before(placed.start);
                if !attached {
                    lines.push(String::new());
                }
            }
            lines.extend(self.block(&placed.block, width, base));
        }
        lines
    }

    /// Whether the source line above the one at `offset` is blank (quote markers aside).
    fn blank_line_before(&self, offset: usize) -> bool {
        let before = self.source.get(..offset).unwrap_or_default();
        let Some(line_start) = before.rfind('\n') else {
            return false;
        };
        let above = &before[..line_start];
        let previous = above.rsplit('\n').next().unwrap_or_default();
        previous
            .trim_matches(|c: char| c.is_whitespace() || c == '>')
            .is_empty()
    }

    fn block(&self, block: &Block, width: usize, base: Style) -> Vec<String> {
        let theme = self.theme;
        match block {
            Block::Paragraph(spans) => self.wrap(&self.inline(spans, base), width),
            Block::Heading(level, spans) => {
                let mut style = base.patch(theme.md_heading).patch(theme.md_bold);
                if *level == 1 {
                    style = style.patch(theme.md_underline);
                }
                let mut text = String::new();
                if *level >= 3 {
                    text.push_str(&style.paint(&format!("{} ", "#".repeat(usize::from(*level)))));
                }
                text.push_str(&self.inline(spans, style));
                self.wrap(&text, width)
            }
            Block::Code { lang, text } => self.code(lang, text, width),
            Block::List { start, items } => self.list(*start, items, width, base),
            Block::Quote(blocks) => {
                let inner_width = width.saturating_sub(2).max(1);
                let mut inner = self.blocks(blocks, inner_width, base.patch(theme.md_quote), true);
                while inner.last().is_some_and(String::is_empty) {
                    inner.pop();
                }
                let border = theme.md_quote_border.paint("│ ");
                inner
                    .into_iter()
                    .map(|line| format!("{border}{line}"))
                    .collect()
            }
            Block::Rule => vec![theme.md_hr.paint(&"─".repeat(width.min(80)))],
            Block::Table { header, rows, raw } => {
                let header: Vec<String> = header
                    .iter()
                    .map(|cell| self.inline(cell, base.patch(theme.md_bold)))
                    .collect();
                let rows: Vec<Vec<String>> = rows
                    .iter()
                    .map(|row| row.iter().map(|cell| self.inline(cell, base)).collect())
                    .collect();
                table::render(&header, &rows, width)
                    .unwrap_or_else(|| wrap_text_with_ansi(&base.paint(raw), width))
            }
            Block::Html(html) => self.wrap(&base.paint(html.trim()), width),
        }
    }

    /// ```` ```lang ````, the code indented by two (long lines wrap, still indented), ```` ``` ````.
    fn code(&self, lang: &str, text: &str, width: usize) -> Vec<String> {
        let theme = self.theme;
        let code_width = width.saturating_sub(2).max(1);
        let mut lines = vec![theme.md_code_block_border.paint(&format!("```{lang}"))];
        let code = text.strip_suffix('\n').unwrap_or(text);
        let lang = (!lang.is_empty()).then_some(lang);
        for line in self.highlight(code, lang) {
            for piece in self.wrap(&line, code_width) {
                // Blank code lines get no indent: trailing spaces only get in the way of
                // copying from the terminal.
                lines.push(if piece.is_empty() {
                    piece
                } else {
                    format!("  {piece}")
                });
            }
        }
        lines.push(theme.md_code_block_border.paint("```"));
        lines
    }

    /// Highlighted lines of a code block: the last render's when the block is unchanged,
    /// continued from them when it grew, new otherwise.
    fn highlight(&self, code: &str, lang: Option<&str>) -> Vec<String> {
        let lang = lang.filter(|_| !self.plain_code);
        let lang_key = lang.unwrap_or_default();
        let mut previous = self.previous_code.borrow_mut();
        let found = previous
            .iter()
            .position(|entry| entry.lang == lang_key && entry.code == code)
            .or_else(|| {
                previous
                    .iter()
                    .position(|entry| entry.lang == lang_key && entry.highlighter.continues(code))
            });
        let mut entry = match found {
            Some(index) => previous.swap_remove(index),
            None => CodeEntry {
                lang: lang_key.to_owned(),
                code: String::new(),
                lines: Vec::new(),
                highlighter: IncrementalHighlighter::new(lang, self.theme),
            },
        };
        if entry.lines.is_empty() || entry.code != code {
            entry.lines = entry.highlighter.highlight(code);
            entry.code = code.to_owned();
        }
        let lines = entry.lines.clone();
        self.code.borrow_mut().push(entry);
        lines
    }

    fn list(&self, start: Option<u64>, items: &[Item], width: usize, base: Style) -> Vec<String> {
        let theme = self.theme;
        let mut lines = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let mut marker = match start {
                Some(n) => format!("{}. ", n + i as u64),
                None => "- ".to_owned(),
            };
            match item.task {
                Some(true) => marker.push_str("[x] "),
                Some(false) => marker.push_str("[ ] "),
                None => {}
            }
            let indent = visible_width(&marker);
            let inner_width = width.saturating_sub(indent).max(1);
            let body = self.blocks(&item.blocks, inner_width, base, false);
            let styled_marker = theme.md_list_bullet.paint(&marker);
            let hang = " ".repeat(indent);
            if body.is_empty() {
                lines.push(theme.md_list_bullet.paint(marker.trim_end()));
                continue;
            }
            for (j, line) in body.into_iter().enumerate() {
                let prefix = if j == 0 { &styled_marker } else { &hang };
                if line.is_empty() {
                    lines.push(String::new());
                } else {
                    lines.push(format!("{prefix}{line}"));
                }
            }
        }
        lines
    }
}
