//! The transcript: every card of the conversation in order, built from session history and
//! kept current from agent events. Cards cache their lines, so a frame costs little more
//! than copying the cached lines of finished cards.

pub mod card;
pub mod chunks;
mod custom;
pub mod errors;
mod events;
pub mod message;
pub mod render;
pub mod reply;
pub mod summary;
pub mod tool;

use std::collections::HashMap;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::ToolResultPayload;
use knightcode_runtime::TranscriptItem;

pub use self::custom::CustomCard;
pub use self::custom::EntryCard;
pub use self::message::BashCard;
pub use self::message::Notice;
pub use self::message::NoticeKind;
pub use self::message::UserCard;
pub use self::render::Look;
pub use self::reply::AssistantCard;
pub use self::summary::SummaryCard;
pub use self::summary::SummaryKind;
pub use self::tool::CustomLines;
pub use self::tool::ToolCard;

/// Lines of code in a loaded session's history that are highlighted, newest first. The
/// pure-Rust grammars take a third of a millisecond or more per line: a session with
/// thousands of code lines would take seconds to open, for colours far up the scrollback.
/// Older code shows in the plain code colour.
pub const HISTORY_HIGHLIGHT_LINES: usize = 400;

/// One card of the transcript.
#[derive(Debug, Clone)]
pub enum Card {
    User(UserCard),
    Assistant(AssistantCard),
    Tool(ToolCard),
    Bash(BashCard),
    Notice(Notice),
    Summary(SummaryCard),
    /// A custom message (`sendMessage` with `display: true`).
    Custom(CustomCard),
    /// A custom entry (`appendEntry`): drawn only by an extension's entry renderer.
    Entry(EntryCard),
}

impl Card {
    fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        if self.is_hidden() {
            return Vec::new();
        }
        match self {
            Self::User(c) => c.render(width, look),
            Self::Assistant(c) => c.render(width, look),
            Self::Tool(c) => c.render(width, look),
            Self::Bash(c) => c.render(width, look),
            Self::Notice(c) => c.render(width, look),
            Self::Custom(c) => c.render(width, look),
            Self::Entry(c) => c.render(width),
            Self::Summary(c) => c.render(width, look),
        }
    }

    /// Like `render`, as the first `keep` lines of the last render plus `lines`; only a
    /// streaming reply keeps any.
    fn render_update(&mut self, width: u16, look: &Look) -> CardUpdate {
        if self.is_hidden() {
            return CardUpdate::default();
        }
        match self {
            Self::Assistant(c) => c.render_update(width, look),
            other => CardUpdate {
                keep: 0,
                lines: other.render(width, look),
            },
        }
    }

    /// A card that stands for nothing any more (a failed attempt that was retried, a retry
    /// line after the retry worked) draws no lines; it stays in place so the indexes other
    /// cards are known by do not move.
    fn is_hidden(&self) -> bool {
        match self {
            Self::Assistant(c) => c.hidden,
            Self::Notice(c) => c.hidden,
            _ => false,
        }
    }

    /// Lines of code this card highlights when rendered collapsed.
    fn code_lines(&self) -> usize {
        match self {
            Self::Assistant(c) => c.code_lines(),
            Self::Tool(c) => c.code_lines(),
            _ => 0,
        }
    }

    fn set_plain_code(&mut self, plain: bool) {
        match self {
            Self::Assistant(c) => c.set_plain_code(plain),
            Self::Tool(c) => c.set_plain_code(plain),
            _ => {}
        }
    }

    fn invalidate(&mut self) {
        match self {
            Self::User(c) => c.invalidate(),
            Self::Assistant(c) => c.invalidate(),
            Self::Tool(c) => c.invalidate(),
            Self::Bash(c) => c.invalidate(),
            Self::Notice(c) => c.invalidate(),
            Self::Custom(c) => c.invalidate(),
            // Its lines come from the extension, asked again when they may change.
            Self::Entry(_) => {}
            Self::Summary(c) => c.invalidate(),
        }
    }
}

/// A card's lines relative to its last render: the first `keep` lines of that render are
/// unchanged and `lines` follow them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CardUpdate {
    pub keep: usize,
    pub lines: Vec<String>,
}

/// A failed reply's ending in words rather than the provider's raw text.
fn describe_error(card: &mut AssistantCard, provider: &str) {
    if let Some(reply::Ending::Error(raw)) = &card.ending {
        let text = errors::final_text(raw, provider, None);
        card.set_error_text(text);
    }
}

/// A card's markdown for extensions' markdown transformers (`registerMarkdownTransformer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownRequest {
    /// The card's index.
    pub key: usize,
    /// The reply is still streaming (`isStreaming`).
    pub streaming: bool,
    pub parts: Vec<MarkdownPart>,
}

/// One block of a card: a user message, or an assistant text or thinking block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownPart {
    /// The block's content index (0 for a user message).
    pub index: usize,
    /// `user`, `assistant` or `assistant-thinking`.
    pub message_type: &'static str,
    pub markdown: String,
}

/// Which renderer a custom card is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomKind {
    /// A custom message: `registerMessageRenderer`.
    Message,
    /// A custom entry: `registerEntryRenderer`.
    Entry,
}

/// The conversation as cards.
#[derive(Debug)]
pub struct Transcript {
    cards: Vec<Card>,
    pub look: Look,
    /// The assistant reply being streamed, by card index.
    streaming: Option<usize>,
    /// Tool cards by tool call id.
    tools: HashMap<String, usize>,
    /// Raw argument JSON of tool calls still being written, by content index.
    partial_args: HashMap<usize, (String, String)>,
    /// Languages whose grammar compile has been started.
    warmed: std::collections::HashSet<String>,
    /// Where each card's lines start in the frame buffer the screen passes to
    /// [`Transcript::render_into`] (relative to the transcript's first line).
    starts: Vec<usize>,
    /// How many lines each card has there (without the blank line before it).
    lens: Vec<usize>,
    /// Cards whose lines in that buffer are current; a change to card `i` lowers it to `i`.
    valid: usize,
    frame_width: u16,
    /// The transcript's line count in that buffer.
    total: usize,
    /// The current model's provider, named in error lines.
    pub provider: String,
    /// An automatic retry under way: its notice and the failed replies it hides.
    retry: Option<events::Retry>,
}

fn content_text(content: &Content) -> (String, usize) {
    match content {
        Content::Text(text) => (text.clone(), 0),
        Content::Blocks(blocks) => {
            let mut text = String::new();
            let mut images = 0;
            for block in blocks {
                match block {
                    ContentBlock::Text(t) => {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(&t.text);
                    }
                    ContentBlock::Image(_) => images += 1,
                    _ => {}
                }
            }
            (text, images)
        }
    }
}

impl Transcript {
    pub fn new(look: Look) -> Self {
        Self {
            cards: Vec::new(),
            look,
            streaming: None,
            tools: HashMap::new(),
            partial_args: HashMap::new(),
            warmed: std::collections::HashSet::new(),
            starts: Vec::new(),
            lens: Vec::new(),
            valid: 0,
            frame_width: 0,
            total: 0,
            provider: String::new(),
            retry: None,
        }
    }

    /// The buffer given to [`Transcript::render_into`] was replaced: draw every card again.
    pub fn invalidate_frame(&mut self) {
        self.valid = 0;
        self.starts.clear();
        self.lens.clear();
    }

    /// Card `index` changed: its lines (and all after it) are drawn again.
    fn touch(&mut self, index: usize) {
        self.valid = self.valid.min(index);
    }

    pub fn len(&self) -> usize {
        self.cards.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cards.is_empty()
    }

    pub fn cards(&self) -> &[Card] {
        &self.cards
    }

    pub fn clear(&mut self) {
        self.invalidate_frame();
        self.cards.clear();
        self.streaming = None;
        self.tools.clear();
        self.partial_args.clear();
        self.retry = None;
    }

    pub fn push(&mut self, card: Card) {
        self.cards.push(card);
    }

    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.cards.push(Card::Notice(Notice::new(kind, text)));
    }

    /// A status line (a model or thinking change, a name set): it replaces the status just
    /// before it, so cycling through models leaves one line, not one per key.
    pub fn status(&mut self, text: impl Into<String>) {
        let last = self.cards.len().checked_sub(1);
        if let Some(index) = last
            && let Some(Card::Notice(notice)) = self.cards.get_mut(index)
            && notice.status
            && !notice.hidden
        {
            notice.set_text(text.into());
            self.touch(index);
            return;
        }
        let mut notice = Notice::new(NoticeKind::Info, text);
        notice.status = true;
        self.cards.push(Card::Notice(notice));
    }

    /// Drops every card's cached lines (theme, expand/collapse toggles).
    pub fn invalidate(&mut self) {
        self.valid = 0;
        for card in &mut self.cards {
            card.invalidate();
        }
    }

    /// Rebuilds the cards from a session's messages (start-up, resume, branch switch).
    /// Code in the newest cards is highlighted; older history, far up the scrollback,
    /// shows its code in the plain code colour (see [`HISTORY_HIGHLIGHT_LINES`]).
    pub fn load(&mut self, messages: &[AgentMessage]) {
        let items: Vec<_> = messages
            .iter()
            .map(|m| TranscriptItem::Message(m.clone()))
            .collect();
        self.load_items(&items);
    }

    /// Like [`Transcript::load`], with the branch's custom entries in place.
    pub fn load_items(&mut self, items: &[TranscriptItem]) {
        self.clear();
        for item in items {
            match item {
                TranscriptItem::Message(message) => self.add_message(message),
                TranscriptItem::Entry(entry) => self.add_entry(entry),
            }
        }
        let mut budget = HISTORY_HIGHLIGHT_LINES;
        let mut newest = true;
        for card in self.cards.iter_mut().rev() {
            let lines = card.code_lines();
            if lines == 0 {
                continue;
            }
            // The newest code is on screen: it is highlighted whatever it costs.
            if newest || lines <= budget {
                budget = budget.saturating_sub(lines);
            } else {
                budget = 0;
                card.set_plain_code(true);
            }
            newest = false;
        }
    }

    /// Adds a finished message.
    pub fn add_message(&mut self, message: &AgentMessage) {
        match message {
            AgentMessage::User(user) => {
                let (text, images) = content_text(&user.content);
                self.cards.push(Card::User(UserCard::new(text, images)));
            }
            AgentMessage::Assistant(assistant) => {
                let mut card = AssistantCard::from_message(assistant);
                describe_error(&mut card, self.provider_of(assistant));
                if !card.is_empty() {
                    self.cards.push(Card::Assistant(card));
                }
                for call in assistant.tool_calls() {
                    let card =
                        ToolCard::new(call.id.clone(), call.name.clone(), call.arguments.clone());
                    self.tools.insert(call.id.clone(), self.cards.len());
                    self.cards.push(Card::Tool(card));
                }
            }
            AgentMessage::ToolResult(result) => {
                let payload = ToolResultPayload {
                    content: result.content.0.clone(),
                    details: result.details.clone().unwrap_or_default(),
                };
                match self.tools.get(&result.tool_call_id) {
                    Some(&index) => {
                        self.touch(index);
                        if let Some(Card::Tool(card)) = self.cards.get_mut(index) {
                            card.finish(payload, result.is_error, None);
                        }
                    }
                    None => {
                        let mut card = ToolCard::new(
                            result.tool_call_id.clone(),
                            result.tool_name.clone(),
                            serde_json::Value::Object(serde_json::Map::new()),
                        );
                        card.finish(payload, result.is_error, None);
                        self.cards.push(Card::Tool(card));
                    }
                }
            }
            AgentMessage::BashExecution(bash) => {
                self.cards.push(Card::Bash(BashCard::from_message(bash)));
            }
            AgentMessage::Custom(custom) if custom.display => {
                let (text, _) = content_text(&custom.content);
                let notice =
                    Notice::new(NoticeKind::Info, format!("[{}] {text}", custom.custom_type));
                self.cards.push(Card::Custom(CustomCard {
                    notice,
                    message: serde_json::to_value(custom).unwrap_or_default(),
                    lines: None,
                }));
            }
            AgentMessage::CompactionSummary(summary) => {
                let kind = SummaryKind::Compaction {
                    tokens_before: summary.tokens_before.0,
                };
                self.cards.push(Card::Summary(SummaryCard::new(
                    kind,
                    summary.summary.clone(),
                )));
            }
            AgentMessage::BranchSummary(summary) => {
                self.cards.push(Card::Summary(SummaryCard::new(
                    SummaryKind::Branch,
                    summary.summary.clone(),
                )));
            }
            _ => {}
        }
    }

    fn streaming_card(&mut self) -> Option<&mut AssistantCard> {
        let index = self.streaming?;
        self.touch(index);
        match self.cards.get_mut(index) {
            Some(Card::Assistant(card)) => Some(card),
            _ => None,
        }
    }

    /// What message and entry renderers need: the index, kind and JSON of each custom
    /// message whose type `message_drawn` accepts and each custom entry whose type
    /// `entry_drawn` accepts.
    pub fn custom_render_requests(
        &self,
        message_drawn: impl Fn(&str) -> bool,
        entry_drawn: impl Fn(&str) -> bool,
    ) -> Vec<(usize, CustomKind, serde_json::Value)> {
        let custom_type = |value: &serde_json::Value| {
            value
                .get("customType")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        self.cards
            .iter()
            .enumerate()
            .filter_map(|(index, card)| match card {
                Card::Custom(card) if message_drawn(&custom_type(&card.message)) => {
                    Some((index, CustomKind::Message, card.message.clone()))
                }
                Card::Entry(card) if entry_drawn(card.custom_type()) => {
                    Some((index, CustomKind::Entry, card.entry.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// An extension drew the custom message or entry of card `index`.
    pub fn set_custom_message_lines(&mut self, index: usize, lines: Vec<String>) -> bool {
        match self.cards.get_mut(index) {
            Some(Card::Custom(card)) => card.lines = Some(lines),
            Some(Card::Entry(card)) => card.lines = Some(lines),
            _ => return false,
        }
        self.touch(index);
        true
    }

    /// What extensions' markdown transformers need for card `index` (every user and
    /// assistant card when `None`): the card's index, whether it is still streaming, and
    /// its parts (content index, message type, markdown).
    pub fn markdown_requests(&self, index: Option<usize>) -> Vec<MarkdownRequest> {
        let one = |(index, card): (usize, &Card)| {
            let parts = match card {
                Card::User(card) => vec![MarkdownPart {
                    index: 0,
                    message_type: "user",
                    markdown: card.text.clone(),
                }],
                Card::Assistant(card) => card
                    .markdown_parts()
                    .into_iter()
                    .map(|(index, thinking, text)| MarkdownPart {
                        index,
                        message_type: if thinking {
                            "assistant-thinking"
                        } else {
                            "assistant"
                        },
                        markdown: text.to_owned(),
                    })
                    .collect(),
                _ => return None,
            };
            Some(MarkdownRequest {
                key: index,
                streaming: self.streaming == Some(index),
                parts,
            })
        };
        match index {
            Some(index) => self
                .cards
                .get(index)
                .and_then(|card| one((index, card)))
                .into_iter()
                .collect(),
            None => self.cards.iter().enumerate().filter_map(one).collect(),
        }
    }

    /// The markdown transformers' results for card `index`: (content index, markdown).
    pub fn set_markdown(&mut self, index: usize, parts: Vec<(usize, String)>) -> bool {
        let changed = match self.cards.get_mut(index) {
            Some(Card::User(card)) => parts
                .into_iter()
                .next()
                .is_some_and(|(_, markdown)| card.set_shown(markdown)),
            Some(Card::Assistant(card)) => {
                parts.into_iter().fold(false, |changed, (at, markdown)| {
                    card.set_shown(at, markdown) || changed
                })
            }
            _ => false,
        };
        if changed {
            self.touch(index);
        }
        changed
    }

    /// The index of the reply being streamed.
    pub fn streaming_index(&self) -> Option<usize> {
        self.streaming
    }

    /// Adds a custom entry (`appendEntry`) where the transcript stands.
    pub fn add_entry(&mut self, entry: &knightcode_protocol::CustomEntry) {
        let entry = serde_json::to_value(entry).unwrap_or_default();
        self.cards.push(Card::Entry(EntryCard::new(entry)));
    }

    /// An extension drew tool call `id`: show its lines.
    pub fn set_custom_tool_lines(&mut self, id: &str, custom: tool::CustomLines) -> bool {
        match self.tool_card(id) {
            Some(card) => {
                card.set_custom(custom);
                true
            }
            None => false,
        }
    }

    /// What extensions need to draw the tool cards `drawn` accepts by tool name (every
    /// one, or only the card of `id`; none for an id without a card), at `width` columns.
    pub fn tool_render_requests(
        &self,
        id: Option<&str>,
        width: u16,
        drawn: impl Fn(&str) -> bool,
    ) -> Vec<serde_json::Value> {
        let inner = card::inner_width(width);
        let expanded = self.look.tools_expanded;
        let only = match id {
            Some(id) => match self.tools.get(id) {
                Some(index) => Some(*index),
                None => return Vec::new(),
            },
            None => None,
        };
        self.cards
            .iter()
            .enumerate()
            .filter(|(index, _)| only.is_none_or(|only| only == *index))
            .filter_map(|(_, card)| match card {
                Card::Tool(card) if drawn(&card.name) => Some(card.render_request(inner, expanded)),
                _ => None,
            })
            .collect()
    }

    fn tool_card(&mut self, id: &str) -> Option<&mut ToolCard> {
        let index = *self.tools.get(id)?;
        self.touch(index);
        match self.cards.get_mut(index) {
            Some(Card::Tool(card)) => Some(card),
            _ => None,
        }
    }

    /// The provider a reply came from (older sessions may not say: the current one).
    fn provider_of<'a>(&'a self, message: &'a AssistantMessage) -> &'a str {
        if message.provider.is_empty() {
            &self.provider
        } else {
            &message.provider
        }
    }

    /// The text of the newest assistant reply (`/copy`).
    pub fn last_assistant_text(&self) -> Option<String> {
        self.cards.iter().rev().find_map(|card| match card {
            Card::Assistant(a) if !a.text().is_empty() => Some(a.text()),
            _ => None,
        })
    }

    /// A user shell command started: its card, by index, for streaming output into.
    pub fn start_bash(&mut self, command: String, excluded: bool) -> usize {
        self.cards
            .push(Card::Bash(BashCard::started(command, excluded)));
        self.cards.len() - 1
    }

    /// Redraws the cards of commands whose running time has moved on a second; true when
    /// any did.
    pub fn tick(&mut self) -> bool {
        let mut first = None;
        for (index, card) in self.cards.iter_mut().enumerate() {
            let changed = match card {
                Card::Tool(c) => c.tick(),
                Card::Bash(c) => c.tick(),
                _ => false,
            };
            if changed && first.is_none() {
                first = Some(index);
            }
        }
        if let Some(index) = first {
            self.touch(index);
        }
        first.is_some()
    }

    pub fn bash_card(&mut self, index: usize) -> Option<&mut BashCard> {
        self.touch(index);
        match self.cards.get_mut(index) {
            Some(Card::Bash(card)) => Some(card),
            _ => None,
        }
    }

    /// Where each user prompt's first line is in the buffer of the last
    /// [`Transcript::render_into`], counted from the transcript's first line: the rows the
    /// reference marks as a prompt's start, for the fullscreen mode's prompt jumps.
    pub fn prompt_lines(&self) -> impl Iterator<Item = usize> + '_ {
        self.cards
            .iter()
            .zip(self.starts.iter().zip(&self.lens))
            .filter(|(card, (_, len))| matches!(card, Card::User(_)) && **len > 0)
            .map(|(_, (start, _))| start + 1)
    }

    /// All lines: cards separated by one blank line.
    pub fn render(&mut self, width: u16) -> Vec<String> {
        let mut lines = Vec::new();
        self.invalidate_frame();
        self.render_into(width, &mut lines, 0);
        lines
    }

    /// Brings the transcript's lines in `frame[base..]` up to date, re-rendering only the
    /// cards that changed since the last call with this buffer, and truncates the buffer
    /// after the transcript. Copying every cached line of a long transcript into a new
    /// buffer on each frame was most of a keystroke's cost. Returns how many lines at the
    /// start of `frame` were left in place (those after them were written again, whether
    /// or not they differ), for whoever keeps something per line (the search's index).
    pub fn render_into(&mut self, width: u16, frame: &mut Vec<String>, base: usize) -> usize {
        if width != self.frame_width || frame.len() < base + self.total {
            self.frame_width = width;
            self.invalidate_frame();
        }
        // Cards before `valid` are unchanged and their lines are in place.
        let valid = self.valid.min(self.cards.len()).min(self.starts.len());
        let look = self.look.clone();
        let mut next = valid;
        let kept;
        if valid < self.cards.len() && valid < self.starts.len() {
            // The first changed card still has its last lines in place; a streaming reply
            // only replaces the lines at its end.
            let start = self.starts[valid];
            let old_len = self.lens[valid];
            let mut update = self.cards[valid].render_update(width, &look);
            if update.keep > old_len {
                debug_assert!(false, "a card kept more lines than it had");
                update = CardUpdate {
                    keep: 0,
                    lines: self.cards[valid].render(width, &look),
                };
            }
            let keep = update.keep;
            frame.truncate(base + start + if keep > 0 { 1 + keep } else { 0 });
            kept = frame.len();
            if keep == 0 && !update.lines.is_empty() {
                frame.push(String::new());
            }
            let len = keep + update.lines.len();
            frame.extend(update.lines);
            self.starts.truncate(valid + 1);
            self.lens.truncate(valid + 1);
            self.lens[valid] = len;
            next = valid + 1;
        } else {
            // Lines of unchanged cards stay; cards added since keep everything before them.
            let keep = match valid {
                0 => 0,
                _ => self.starts.get(valid).copied().unwrap_or(self.total),
            };
            frame.truncate(base + keep);
            kept = frame.len();
            self.starts.truncate(valid);
            self.lens.truncate(valid);
        }
        for card in &mut self.cards[next..] {
            self.starts.push(frame.len() - base);
            let card_lines = card.render(width, &look);
            self.lens.push(card_lines.len());
            if card_lines.is_empty() {
                continue;
            }
            frame.push(String::new());
            frame.extend(card_lines);
        }
        self.valid = self.cards.len();
        self.total = frame.len() - base;
        kept
    }
}
