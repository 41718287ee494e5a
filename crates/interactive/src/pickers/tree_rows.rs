//! What one session entry looks like in `/tree`: its kind (for the filters), a one-line
//! text and the text searches look through. Computed once per entry when the view opens.

use std::collections::HashMap;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::content::Content;
use knightcode_protocol::content::ContentBlock;
use knightcode_protocol::message::StopReason;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use serde_json::Value;

use super::common::one_line;
use crate::footer::tilde;

/// Characters of a message kept for its row and its search text (the reference keeps 200).
const PREVIEW_CHARS: usize = 200;

/// [`one_line`] of at most `max_chars` characters of `text` (previews of long messages do
/// not need the whole text, and 10k-entry trees must stay cheap to build).
fn preview(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => one_line(&text[..cut]),
        None => one_line(text),
    }
}

/// What the filters need to know about an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    User,
    /// An assistant message; `bare` when it has no text and ended normally (a tool-call
    /// step), which the tree hides unless it is the leaf or everything is shown.
    Assistant {
        bare: bool,
    },
    ToolResult,
    /// Messages and summaries that are part of the conversation.
    Conversation,
    /// Labels, model and thinking changes, titles, extension state, usage, context edits.
    Settings,
}

/// The colour a piece of a row is drawn in; resolved against the theme when drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    Text,
    Accent,
    Success,
    Muted,
    Dim,
    Warning,
    Error,
    Border,
}

impl Tone {
    pub(crate) fn style(self, theme: &Theme) -> Style {
        match self {
            Self::Text => theme.text,
            Self::Accent => theme.accent,
            Self::Success => theme.success,
            Self::Muted => theme.muted,
            Self::Dim => theme.dim,
            Self::Warning => theme.warning,
            Self::Error => theme.error,
            Self::Border => theme.border,
        }
    }
}

/// A row's text: an optional role prefix (`user: `) and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Display {
    pub(crate) prefix: Option<(&'static str, Tone)>,
    pub(crate) body: String,
    pub(crate) tone: Tone,
}

impl Display {
    fn plain(body: String, tone: Tone) -> Self {
        Self {
            prefix: None,
            body,
            tone,
        }
    }

    fn role(prefix: &'static str, prefix_tone: Tone, body: String, tone: Tone) -> Self {
        Self {
            prefix: Some((prefix, prefix_tone)),
            body,
            tone,
        }
    }
}

/// Tool calls by id, so a tool result row can show what was called.
pub(crate) type ToolCalls<'a> = HashMap<&'a str, (&'a str, &'a Value)>;

pub(crate) fn tool_calls(entries: &[SessionEntry]) -> ToolCalls<'_> {
    let mut calls = HashMap::new();
    for entry in entries {
        if let Some(AgentMessage::Assistant(message)) = entry.message() {
            for call in message.tool_calls() {
                calls.insert(call.id.as_str(), (call.name.as_str(), &call.arguments));
            }
        }
    }
    calls
}

pub(crate) fn kind(entry: &SessionEntry) -> Kind {
    match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(_) => Kind::User,
            AgentMessage::Assistant(a) => {
                let ended_badly = matches!(
                    a.stop_reason.known(),
                    Some(StopReason::Error | StopReason::Aborted | StopReason::Length) | None
                ) || a.error_message.is_some();
                let has_text = a
                    .content
                    .iter()
                    .any(|block| block.as_text().is_some_and(|text| !text.trim().is_empty()));
                Kind::Assistant {
                    bare: !has_text && !ended_badly,
                }
            }
            AgentMessage::ToolResult(_) => Kind::ToolResult,
            _ => Kind::Conversation,
        },
        SessionEntry::CustomMessage(_)
        | SessionEntry::Compaction(_)
        | SessionEntry::BranchSummary(_) => Kind::Conversation,
        SessionEntry::ModelChange(_)
        | SessionEntry::ThinkingLevelChange(_)
        | SessionEntry::Usage(_)
        | SessionEntry::ContextEdit(_)
        | SessionEntry::Custom(_)
        | SessionEntry::Label(_)
        | SessionEntry::SessionInfo(_)
        | SessionEntry::Unknown(_) => Kind::Settings,
    }
}

/// The first `PREVIEW_CHARS` characters of the text blocks.
fn content_preview(content: &Content) -> String {
    match content {
        Content::Text(text) => preview(text, PREVIEW_CHARS),
        Content::Blocks(blocks) => blocks_preview(blocks),
    }
}

fn blocks_preview(blocks: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in blocks {
        if let Some(part) = block.as_text() {
            text.push_str(part);
            if text.len() >= PREVIEW_CHARS * 4 {
                break;
            }
        }
    }
    preview(&text, PREVIEW_CHARS)
}

pub(crate) fn display(entry: &SessionEntry, calls: &ToolCalls<'_>, home: Option<&str>) -> Display {
    match entry {
        SessionEntry::Message(m) => message_display(&m.message, calls, home),
        SessionEntry::CustomMessage(m) => Display::plain(
            format!("[{}]: {}", m.custom_type, content_preview(&m.content)),
            Tone::Text,
        ),
        SessionEntry::Compaction(c) => compaction(c.tokens_before.0),
        SessionEntry::BranchSummary(b) => branch_summary(&b.summary),
        SessionEntry::ModelChange(c) => {
            Display::plain(format!("[model: {}]", c.model_id), Tone::Dim)
        }
        SessionEntry::ThinkingLevelChange(c) => {
            Display::plain(format!("[thinking: {}]", c.thinking_level), Tone::Dim)
        }
        SessionEntry::Usage(u) => Display::plain(format!("[usage: {}]", u.kind), Tone::Dim),
        SessionEntry::ContextEdit(e) => Display::plain(
            format!(
                "[context edit: {} {}]",
                if e.replacement.is_some() {
                    "replaced"
                } else {
                    "removed"
                },
                e.target_id
            ),
            Tone::Dim,
        ),
        SessionEntry::Custom(c) => {
            Display::plain(format!("[custom: {}]", c.custom_type), Tone::Dim)
        }
        SessionEntry::Label(l) => Display::plain(
            format!(
                "[label: {}]",
                l.label.as_deref().map_or("(cleared)".to_owned(), one_line)
            ),
            Tone::Dim,
        ),
        SessionEntry::SessionInfo(info) => Display::plain(
            format!(
                "[title: {}]",
                info.name.as_deref().map_or("empty".to_owned(), one_line)
            ),
            Tone::Dim,
        ),
        SessionEntry::Unknown(map) => Display::plain(
            format!(
                "[{}]",
                map.get("type").and_then(Value::as_str).unwrap_or("entry")
            ),
            Tone::Dim,
        ),
    }
}

/// Compactions and branch summaries look the same whether stored as entries or as
/// messages.
fn compaction(tokens_before: u64) -> Display {
    Display::plain(
        format!(
            "[compaction: {}k tokens]",
            (tokens_before as f64 / 1000.0).round() as i64
        ),
        Tone::Border,
    )
}

fn branch_summary(summary: &str) -> Display {
    Display::role(
        "[branch summary]: ",
        Tone::Warning,
        preview(summary, PREVIEW_CHARS),
        Tone::Text,
    )
}

fn message_display(message: &AgentMessage, calls: &ToolCalls<'_>, home: Option<&str>) -> Display {
    match message {
        AgentMessage::User(user) => Display::role(
            "user: ",
            Tone::Accent,
            content_preview(&user.content),
            Tone::Text,
        ),
        AgentMessage::Assistant(a) => {
            let text = blocks_preview(&a.content);
            let (body, tone) = if !text.is_empty() {
                (text, Tone::Text)
            } else if a.stop_reason.known() == Some(StopReason::Aborted) {
                ("(aborted)".to_owned(), Tone::Muted)
            } else if let Some(error) = &a.error_message {
                (preview(error, 80), Tone::Error)
            } else {
                let names: Vec<&str> = a.tool_calls().map(|call| call.name.as_str()).collect();
                if names.is_empty() {
                    ("(no content)".to_owned(), Tone::Muted)
                } else {
                    (format!("[tool calls: {}]", names.join(", ")), Tone::Muted)
                }
            };
            Display::role("assistant: ", Tone::Success, body, tone)
        }
        AgentMessage::ToolResult(result) => {
            let call = calls.get(result.tool_call_id.as_str());
            let body = match call {
                Some((name, args)) => format_tool_call(name, args, home),
                None => format!("[{}]", result.tool_name),
            };
            let tone = if result.is_error {
                Tone::Error
            } else {
                Tone::Muted
            };
            Display::plain(body, tone)
        }
        AgentMessage::BashExecution(bash) => Display::plain(
            format!("[bash]: {}", preview(&bash.command, 200)),
            Tone::Dim,
        ),
        AgentMessage::Custom(custom) => Display::plain(
            format!(
                "[{}]: {}",
                custom.custom_type,
                content_preview(&custom.content)
            ),
            Tone::Text,
        ),
        AgentMessage::BranchSummary(b) => branch_summary(&b.summary),
        AgentMessage::CompactionSummary(c) => compaction(c.tokens_before.0),
        other => Display::plain(format!("[{}]", other.role()), Tone::Dim),
    }
}

fn arg<'a>(args: &'a Value, names: &[&str]) -> Option<&'a Value> {
    names
        .iter()
        .find_map(|name| args.get(*name).filter(|v| !v.is_null()))
}

fn arg_text(args: &Value, names: &[&str], default: &str) -> String {
    match arg(args, names) {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::String(_)) | None => default.to_owned(),
        Some(other) => other.to_string(),
    }
}

/// `[read: src/main.rs:10-59]`, `[bash: cargo test]`: the call behind a tool result, as
/// the reference shows it.
pub(crate) fn format_tool_call(name: &str, args: &Value, home: Option<&str>) -> String {
    let path = |names: &[&str], default: &str| tilde(&arg_text(args, names, default), home);
    match name {
        "read" => {
            let mut shown = path(&["path", "file_path"], "");
            let offset = arg(args, &["offset"]).and_then(Value::as_i64);
            let limit = arg(args, &["limit"]).and_then(Value::as_i64);
            if offset.is_some() || limit.is_some() {
                let start = offset.unwrap_or(1);
                shown.push_str(&format!(":{start}"));
                if let Some(limit) = limit {
                    shown.push_str(&format!("-{}", start + limit - 1));
                }
            }
            format!("[read: {shown}]")
        }
        "write" | "edit" => format!("[{name}: {}]", path(&["path", "file_path"], "")),
        "bash" => {
            let command = one_line(&arg_text(args, &["command"], ""));
            let short: String = command.chars().take(50).collect();
            let more = if command.chars().count() > 50 {
                "..."
            } else {
                ""
            };
            format!("[bash: {short}{more}]")
        }
        "grep" => format!(
            "[grep: /{}/ in {}]",
            arg_text(args, &["pattern"], ""),
            path(&["path"], ".")
        ),
        "find" => format!(
            "[find: {} in {}]",
            arg_text(args, &["pattern"], ""),
            path(&["path"], ".")
        ),
        "ls" => format!("[ls: {}]", path(&["path"], ".")),
        _ => {
            let json = args.to_string();
            let short: String = json.chars().take(40).collect();
            let more = if json.chars().count() > 40 { "..." } else { "" };
            format!("[{name}: {short}{more}]")
        }
    }
}

/// Lower-case text a search looks through: role or type, and the row's text (labels are
/// searched separately because they change while the view is open).
pub(crate) fn search_text(entry: &SessionEntry, display: &Display) -> String {
    let mut text = String::new();
    let kind = match entry {
        SessionEntry::Message(m) => m.message.role(),
        SessionEntry::SessionInfo(_) => "title",
        _ => "",
    };
    text.push_str(kind);
    text.push(' ');
    if let Some((prefix, _)) = display.prefix {
        text.push_str(prefix);
    }
    text.push_str(&display.body);
    text.to_lowercase()
}

/// What Ctrl+X copies of an entry: a message's text (a reply's text blocks, a command with
/// its output), a summary's text; `None` for entries without text.
pub(crate) fn copy_text(entry: &SessionEntry) -> Option<String> {
    let text = match entry {
        SessionEntry::Compaction(c) => c.summary.clone(),
        SessionEntry::BranchSummary(b) => b.summary.clone(),
        _ => match entry.message()? {
            AgentMessage::User(user) => user.content.text(),
            AgentMessage::Assistant(reply) => reply.text(),
            AgentMessage::ToolResult(result) => {
                knightcode_protocol::content::join_text(&result.content)
            }
            AgentMessage::BashExecution(bash) => format!("$ {}\n{}", bash.command, bash.output),
            AgentMessage::Custom(custom) => custom.content.text(),
            AgentMessage::BranchSummary(summary) => summary.summary.clone(),
            AgentMessage::CompactionSummary(summary) => summary.summary.clone(),
            AgentMessage::System(_) | AgentMessage::Unknown(_) => return None,
        },
    };
    (!text.trim().is_empty()).then_some(text)
}

/// The full text of a user message (what goes back into the editor).
pub(crate) fn user_text(entry: &SessionEntry) -> Option<String> {
    match entry.message()? {
        AgentMessage::User(user) => Some(user.content.text()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn previews_are_cut_by_characters() {
        assert_eq!(preview("abcdef", 3), "abc");
        assert_eq!(preview("äö\nü", 10), "äö ü");
    }

    #[test]
    fn tool_calls_read_like_the_reference() {
        let home = Some("/home/u");
        assert_eq!(
            format_tool_call(
                "read",
                &json!({"path": "/home/u/a.rs", "offset": 10, "limit": 50}),
                home
            ),
            "[read: ~/a.rs:10-59]"
        );
        assert_eq!(
            format_tool_call("bash", &json!({"command": "ls\n-la"}), None),
            "[bash: ls -la]"
        );
        assert_eq!(
            format_tool_call("grep", &json!({"pattern": "fn"}), None),
            "[grep: /fn/ in .]"
        );
        assert_eq!(
            format_tool_call("mcp", &json!({"q": "x"}), None),
            "[mcp: {\"q\":\"x\"}]"
        );
    }
}
