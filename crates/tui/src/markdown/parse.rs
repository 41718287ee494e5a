//! Markdown source to a small block tree. pulldown-cmark's event stream is flat; tables,
//! list items and block quotes need their children as a whole before they can be laid out
//! (column widths, hanging indents), so the events are gathered into blocks first.

use std::iter::Peekable;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, OffsetIter, Options, Parser, Tag, TagEnd};

/// Inline marks a span of text carries (several may combine).
pub(super) mod marks {
    pub const STRONG: u8 = 1;
    pub const EMPHASIS: u8 = 2;
    pub const STRIKE: u8 = 4;
    pub const CODE: u8 = 8;
    pub const LINK: u8 = 16;
    pub const LINK_URL: u8 = 32;
}

/// Text with inline marks; `\n` inside is a line break.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Span {
    pub text: String,
    pub marks: u8,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    Paragraph(Vec<Span>),
    Heading(u8, Vec<Span>),
    Code {
        lang: String,
        text: String,
    },
    List {
        start: Option<u64>,
        items: Vec<Item>,
    },
    Quote(Vec<Placed>),
    Rule,
    Table {
        header: Vec<Vec<Span>>,
        rows: Vec<Vec<Vec<Span>>>,
        /// The table's source, shown instead when the width is too small for columns.
        raw: String,
    },
    Html(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Item {
    /// `Some(checked)` for task list items.
    pub task: Option<bool>,
    pub blocks: Vec<Placed>,
}

/// A block and where its source starts (for deciding blank lines between blocks).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Placed {
    pub block: Block,
    pub start: usize,
}

pub(super) fn parse(source: &str) -> Vec<Placed> {
    // Single tildes parse as subscript, which is shown with its tildes: only `~~` strikes
    // through (the reference does the same so "~5 min to ~10 min" stays readable).
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_SUBSCRIPT;
    let mut builder = Builder {
        events: Parser::new_ext(source, options)
            .into_offset_iter()
            .peekable(),
        source,
        task: None,
    };
    builder.blocks()
}

struct Builder<'a> {
    events: Peekable<OffsetIter<'a>>,
    source: &'a str,
    /// A task marker seen since the current list item started.
    task: Option<bool>,
}

fn is_inline(event: &Event<'_>) -> bool {
    match event {
        Event::Text(_)
        | Event::Code(_)
        | Event::InlineMath(_)
        | Event::DisplayMath(_)
        | Event::InlineHtml(_)
        | Event::FootnoteReference(_)
        | Event::SoftBreak
        | Event::HardBreak
        | Event::TaskListMarker(_) => true,
        Event::Start(tag) => matches!(
            tag,
            Tag::Emphasis
                | Tag::Strong
                | Tag::Strikethrough
                | Tag::Subscript
                | Tag::Superscript
                | Tag::Link { .. }
                | Tag::Image { .. }
        ),
        Event::End(tag) => matches!(
            tag,
            TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Subscript
                | TagEnd::Superscript
                | TagEnd::Link
                | TagEnd::Image
        ),
        Event::Html(_) | Event::Rule => false,
    }
}

impl Builder<'_> {
    /// Blocks until the end of the enclosing container (its `End` event is consumed).
    fn blocks(&mut self) -> Vec<Placed> {
        let mut blocks = Vec::new();
        while let Some((event, range)) = self.events.peek().cloned() {
            if is_inline(&event) {
                // Tight list items hold their text without a paragraph around it.
                let spans = self.inlines();
                if !spans.is_empty() {
                    blocks.push(Placed {
                        block: Block::Paragraph(spans),
                        start: range.start,
                    });
                }
                continue;
            }
            self.events.next();
            let block = match event {
                Event::End(_) => break,
                Event::Rule => Block::Rule,
                Event::Html(html) => Block::Html(html.into_string()),
                Event::Start(tag) => match self.block(tag, range.clone()) {
                    Some(block) => block,
                    None => continue,
                },
                _ => continue,
            };
            blocks.push(Placed {
                block,
                start: range.start,
            });
        }
        blocks
    }

    fn block(&mut self, tag: Tag<'_>, range: Range<usize>) -> Option<Block> {
        Some(match tag {
            Tag::Paragraph => {
                let spans = self.inlines();
                self.events.next();
                Block::Paragraph(spans)
            }
            Tag::Heading { level, .. } => {
                let spans = self.inlines();
                self.events.next();
                Block::Heading(level as u8, spans)
            }
            Tag::BlockQuote(_) => Block::Quote(self.blocks()),
            Tag::CodeBlock(kind) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .next()
                        .unwrap_or("")
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                Block::Code {
                    lang,
                    text: self.raw_text(),
                }
            }
            Tag::HtmlBlock => Block::Html(self.raw_text()),
            Tag::List(start) => Block::List {
                start,
                items: self.items(),
            },
            Tag::Table(_) => self.table(range),
            // Footnotes, definition lists and metadata are not enabled; keep any text.
            _ => {
                let inner = self.blocks();
                return inner.into_iter().next().map(|placed| placed.block);
            }
        })
    }

    /// Text up to the end of the current block (code and HTML blocks).
    fn raw_text(&mut self) -> String {
        let mut text = String::new();
        for (event, _) in self.events.by_ref() {
            match event {
                Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) | Event::Code(t) => {
                    text.push_str(&t);
                }
                Event::End(_) => break,
                _ => {}
            }
        }
        text
    }

    fn items(&mut self) -> Vec<Item> {
        let mut items = Vec::new();
        while let Some((event, _)) = self.events.next() {
            match event {
                Event::Start(Tag::Item) => {
                    let outer_task = self.task.take();
                    let blocks = self.blocks();
                    let task = self.task.take();
                    self.task = outer_task;
                    items.push(Item { task, blocks });
                }
                Event::End(_) => break,
                _ => {}
            }
        }
        items
    }

    fn table(&mut self, range: Range<usize>) -> Block {
        let mut header = Vec::new();
        let mut rows: Vec<Vec<Vec<Span>>> = Vec::new();
        let mut in_head = false;
        while let Some((event, _)) = self.events.next() {
            match event {
                Event::Start(Tag::TableHead) => in_head = true,
                Event::End(TagEnd::TableHead) => in_head = false,
                Event::Start(Tag::TableRow) => rows.push(Vec::new()),
                Event::Start(Tag::TableCell) => {
                    let cell = self.inlines();
                    self.events.next();
                    if in_head {
                        header.push(cell);
                    } else if let Some(row) = rows.last_mut() {
                        row.push(cell);
                    }
                }
                Event::End(TagEnd::Table) => break,
                _ => {}
            }
        }
        let raw = self
            .source
            .get(range)
            .unwrap_or_default()
            .trim_end()
            .to_owned();
        Block::Table { header, rows, raw }
    }

    /// Inline content up to (not including) the next block-level event.
    fn inlines(&mut self) -> Vec<Span> {
        let mut spans: Vec<Span> = Vec::new();
        let mut stack: Vec<u8> = Vec::new();
        // (url, index of the link's first span)
        let mut links: Vec<(String, usize)> = Vec::new();
        let push = |spans: &mut Vec<Span>, text: &str, marks: u8| {
            if text.is_empty() {
                return;
            }
            match spans.last_mut() {
                Some(last) if last.marks == marks => last.text.push_str(text),
                _ => spans.push(Span {
                    text: text.to_owned(),
                    marks,
                }),
            }
        };
        while let Some((event, _)) = self.events.peek() {
            if !is_inline(event) {
                break;
            }
            let Some((event, _)) = self.events.next() else {
                break;
            };
            let current = stack.iter().fold(0, |all, m| all | m);
            match event {
                Event::Text(text) | Event::InlineHtml(text) | Event::Html(text) => {
                    push(&mut spans, &text, current);
                }
                Event::Code(code) => push(&mut spans, &code, current | marks::CODE),
                Event::InlineMath(math) | Event::DisplayMath(math) => {
                    push(&mut spans, &math, current);
                }
                Event::FootnoteReference(name) => push(&mut spans, &format!("[^{name}]"), current),
                Event::SoftBreak | Event::HardBreak => push(&mut spans, "\n", current),
                Event::TaskListMarker(checked) => self.task = Some(checked),
                Event::Start(tag) => {
                    let mark = match tag {
                        Tag::Strong => marks::STRONG,
                        Tag::Emphasis => marks::EMPHASIS,
                        Tag::Strikethrough => marks::STRIKE,
                        Tag::Link { dest_url, .. } => {
                            links.push((dest_url.into_string(), spans.len()));
                            marks::LINK
                        }
                        Tag::Subscript => {
                            push(&mut spans, "~", current);
                            0
                        }
                        Tag::Superscript => {
                            push(&mut spans, "^", current);
                            0
                        }
                        _ => 0,
                    };
                    stack.push(mark);
                }
                Event::End(tag) => {
                    stack.pop();
                    let current = stack.iter().fold(0, |all, m| all | m);
                    match tag {
                        TagEnd::Link => {
                            if let Some((url, first)) = links.pop() {
                                let text: String = spans[first.min(spans.len())..]
                                    .iter()
                                    .map(|s| s.text.as_str())
                                    .collect();
                                let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                                if text != url && text != bare {
                                    push(
                                        &mut spans,
                                        &format!(" ({url})"),
                                        current | marks::LINK_URL,
                                    );
                                }
                            }
                        }
                        TagEnd::Subscript => push(&mut spans, "~", current),
                        TagEnd::Superscript => push(&mut spans, "^", current),
                        _ => {}
                    }
                }
                Event::Rule => {}
            }
        }
        spans
    }
}
