//! The summary requests (`spec/compaction.md` §6): the conversation as plain text, the
//! instructions (our own prose; the section headings are the contract other tools read), and
//! one model call per summary with the session's model and credentials.

use std::sync::Arc;

use std::fmt::Write as _;
use std::time::Duration;

use knightcode_agent::EventSender;
use knightcode_ai::CacheRetention;
use knightcode_ai::Context;
use knightcode_ai::Model;
use knightcode_ai::Provider;
use knightcode_ai::RetryPolicy;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_ai::ThinkingLevel;
use knightcode_ai::is_retryable_assistant_error;
use knightcode_clock::Clock;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_protocol::Usage;
use tokio_util::sync::CancellationToken;

use super::CompactionError;

/// Tool results longer than this are cut in the serialized conversation.
const TOOL_RESULT_CHARS: usize = 2000;

pub(crate) const SYSTEM_PROMPT: &str = "You write context checkpoints. You read a conversation \
between a user and an AI coding assistant and reply with nothing but the structured summary \
you are asked for. Do not carry on the conversation, do not answer questions asked in it, and \
do not call tools.";

/// The sections every summary has; compaction summaries add [`CRITICAL_CONTEXT`].
const SUMMARY_SECTIONS: &str = "## Goal
[What the user is trying to achieve; several goals as a list]

## Constraints & Preferences
- [Requirements, conventions and preferences the user stated, or (none)]

## Progress
### Done
- [x] [Finished work]

### In Progress
- [ ] [Work started but not finished]

### Blocked
- [Problems holding work up, or (none)]

## Key Decisions
- **[Decision]**: [Why it was made]

## Next Steps
1. [What should happen next, in order]";

const CRITICAL_CONTEXT: &str = "## Critical Context
- [Facts the work cannot go on without: data, references, open questions, or (none)]";

const BRANCH_INSTRUCTIONS: &str = "The conversation above is a branch the user has now left \
to go back to an earlier point. Summarise what was tried and learned on it, so that the \
conversation they return to can use it, using exactly this markdown layout:";

/// What a branch summary starts with, before the model's text: the model reading it later
/// must know it describes a path that was left.
pub const BRANCH_PREAMBLE: &str = "The user explored another branch of this conversation \
before coming back to this point.\nWhat happened on that branch, in summary:\n\n";

const INITIAL_INSTRUCTIONS: &str = "The conversation above will be dropped from the assistant's \
context. Write the checkpoint another model will pick the work up from, using exactly this \
markdown layout:";

const UPDATE_INSTRUCTIONS: &str = "The conversation above continues the work described in the \
previous summary. Bring that summary up to date: keep everything in it that still matters, add \
the new progress and decisions, move finished items from In Progress to Done, rewrite Next Steps \
for where the work stands now, and drop only what no longer matters. Use exactly this markdown \
layout:";

const STYLE: &str = "Be brief and concrete. Keep file paths, function names, commands and \
error messages exactly as they appear. Write (none) for a section with nothing to say.";

const TURN_PREFIX_INSTRUCTIONS: &str = "The conversation above is the beginning of a single \
turn that was too long to keep whole; its later part stays in the assistant's context. \
Summarise the beginning so that the later part makes sense, using exactly this markdown layout:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [What was done and learned before the kept part]

## Context for Suffix
- [What the kept part relies on: files, results, decisions]

Be brief, and keep paths, names and error messages exactly.";

/// The conversation as labelled plain text, one block per part, blank lines between.
/// Written into one buffer: a first compaction of a long session serializes megabytes.
pub fn serialize_conversation<'a, I>(messages: I) -> String
where
    I: IntoIterator<Item = &'a AgentMessage>,
    I::IntoIter: Clone,
{
    let messages = messages.into_iter();
    // One allocation of about the right size instead of a doubling series of copies.
    let size: usize = messages.clone().map(text_bytes).sum();
    let mut out = Parts {
        text: String::with_capacity(size + size / 8),
    };
    for message in messages {
        match message {
            AgentMessage::User(m) => out.content("User", &m.content),
            AgentMessage::Custom(m) => out.content("User", &m.content),
            AgentMessage::BashExecution(m) => {
                if m.exclude_from_context != Some(true) {
                    out.start("User");
                    out.text.push_str("Ran `");
                    out.text.push_str(&m.command);
                    out.text.push_str("`\n");
                    out.text.push_str(&m.output);
                }
            }
            AgentMessage::BranchSummary(m) => out.part("User", &m.summary),
            AgentMessage::CompactionSummary(m) => out.part("User", &m.summary),
            AgentMessage::Assistant(m) => serialize_assistant(&mut out, m),
            AgentMessage::ToolResult(m) => {
                let texts: Vec<&str> = m
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let joined;
                let text = match texts.as_slice() {
                    [one] => *one,
                    _ => {
                        joined = texts.join("\n");
                        &joined
                    }
                };
                out.truncated("Tool result", text);
            }
            AgentMessage::System(_) | AgentMessage::Unknown(_) => {}
        }
    }
    out.text
}

/// About how many bytes of text a message contributes to its serialization.
fn text_bytes(message: &AgentMessage) -> usize {
    let blocks = |blocks: &[ContentBlock]| -> usize {
        blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => t.text.len(),
                ContentBlock::Thinking(t) => t.thinking.len(),
                ContentBlock::ToolCall(c) => c.name.len() + 32,
                _ => 0,
            })
            .sum()
    };
    let content = |content: &Content| match content {
        Content::Text(t) => t.len(),
        Content::Blocks(b) => blocks(b),
    };
    // Labels and separators: up to three parts of ~25 bytes for a reply with tool calls.
    48 + match message {
        AgentMessage::User(m) => content(&m.content),
        AgentMessage::Custom(m) => content(&m.content),
        AgentMessage::Assistant(m) => blocks(&m.content),
        AgentMessage::ToolResult(m) => blocks(&m.content).min(TOOL_RESULT_CHARS * 4 + 64),
        AgentMessage::BashExecution(m) => m.command.len() + m.output.len(),
        AgentMessage::BranchSummary(m) => m.summary.len(),
        AgentMessage::CompactionSummary(m) => m.summary.len(),
        AgentMessage::System(_) | AgentMessage::Unknown(_) => 0,
    }
}

/// The serialized conversation being written: `[Label]: text` parts, blank lines between.
#[derive(Default)]
struct Parts {
    text: String,
}

impl Parts {
    fn start(&mut self, label: &str) {
        if !self.text.is_empty() {
            self.text.push_str("\n\n");
        }
        self.text.push('[');
        self.text.push_str(label);
        self.text.push_str("]: ");
    }

    /// A part, left out when `text` is empty.
    fn part(&mut self, label: &str, text: &str) {
        if !text.is_empty() {
            self.start(label);
            self.text.push_str(text);
        }
    }

    /// A part of several pieces joined by `separator`, left out when all are empty.
    fn joined<'a>(&mut self, label: &str, pieces: impl Iterator<Item = &'a str>, separator: &str) {
        let mut first = true;
        let mut any = false;
        let mark = self.text.len();
        for piece in pieces {
            if first {
                self.start(label);
                first = false;
            } else {
                self.text.push_str(separator);
            }
            any |= !piece.is_empty();
            self.text.push_str(piece);
        }
        if !any {
            self.text.truncate(mark);
        }
    }

    /// A part cut after [`TOOL_RESULT_CHARS`] characters, with a note of how many were cut.
    fn truncated(&mut self, label: &str, text: &str) {
        // No more bytes than the limit: no more characters either.
        let cut = if text.len() <= TOOL_RESULT_CHARS {
            None
        } else {
            text.char_indices().nth(TOOL_RESULT_CHARS).map(|(at, _)| at)
        };
        match cut {
            None => self.part(label, text),
            Some(at) => {
                self.start(label);
                self.text.push_str(&text[..at]);
                let rest = text[at..].chars().count();
                self.text
                    .push_str(&format!("\n\n[... {rest} more characters truncated]"));
            }
        }
    }

    fn content(&mut self, label: &str, content: &Content) {
        match content {
            Content::Text(t) => self.part(label, t),
            Content::Blocks(blocks) => self.joined(
                label,
                blocks.iter().filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                }),
                "\n",
            ),
        }
    }
}

fn serialize_assistant(out: &mut Parts, message: &AssistantMessage) {
    let blocks = || message.content.iter();
    out.joined(
        "Assistant thinking",
        blocks().filter_map(|b| match b {
            ContentBlock::Thinking(t) => Some(t.thinking.as_str()),
            _ => None,
        }),
        "\n",
    );
    out.joined(
        "Assistant",
        blocks().filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        }),
        "\n",
    );
    // Tool calls are written straight into the buffer: `name(k=<json>, …); name2(…)`.
    let mut first = true;
    for call in blocks().filter_map(|b| match b {
        ContentBlock::ToolCall(call) => Some(call),
        _ => None,
    }) {
        if first {
            out.start("Assistant tool calls");
            first = false;
        } else {
            out.text.push_str("; ");
        }
        out.text.push_str(&call.name);
        out.text.push('(');
        match call.arguments.as_object() {
            Some(map) => {
                for (i, (key, value)) in map.iter().enumerate() {
                    if i > 0 {
                        out.text.push_str(", ");
                    }
                    out.text.push_str(key);
                    out.text.push('=');
                    // Writing to a String cannot fail.
                    let _ = write!(out.text, "{value}");
                }
            }
            None => {
                let _ = write!(out.text, "{}", call.arguments);
            }
        }
        out.text.push(')');
    }
}

fn blocks_text<'a>(blocks: impl Iterator<Item = &'a ContentBlock>) -> String {
    blocks
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The user message of a history summary request.
pub fn history_prompt(conversation: &str, previous: Option<&str>, custom: Option<&str>) -> String {
    let mut text = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    let instructions = match previous {
        Some(previous) => {
            text.push_str(&format!(
                "<previous-summary>\n{previous}\n</previous-summary>\n\n"
            ));
            UPDATE_INSTRUCTIONS
        }
        None => INITIAL_INSTRUCTIONS,
    };
    text.push_str(&format!(
        "{instructions}\n\n{SUMMARY_SECTIONS}\n\n{CRITICAL_CONTEXT}\n\n{STYLE}"
    ));
    push_focus(&mut text, custom);
    text
}

/// The user message of a branch summary request: our instructions, the user's appended as
/// a focus, or the user's alone (`replace`).
pub fn branch_prompt(messages: &[AgentMessage], custom: Option<&str>, replace: bool) -> String {
    let mut text = format!(
        "<conversation>\n{}\n</conversation>\n\n",
        serialize_conversation(messages)
    );
    match custom.filter(|c| !c.trim().is_empty()) {
        Some(custom) if replace => text.push_str(custom),
        custom => {
            text.push_str(&format!(
                "{BRANCH_INSTRUCTIONS}\n\n{SUMMARY_SECTIONS}\n\n{STYLE}"
            ));
            push_focus(&mut text, custom);
        }
    }
    text
}

/// The user message of a split turn's prefix summary.
pub fn turn_prefix_prompt(conversation: &str, custom: Option<&str>) -> String {
    let mut text =
        format!("<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_INSTRUCTIONS}");
    push_focus(&mut text, custom);
    text
}

fn push_focus(text: &mut String, custom: Option<&str>) {
    if let Some(custom) = custom.filter(|c| !c.trim().is_empty()) {
        text.push_str(&format!("\n\nAdditional focus: {custom}"));
    }
}

/// The model, credentials and provider summaries are requested with: the session's.
#[derive(Clone)]
pub struct SummaryModel {
    pub provider: Arc<dyn Provider>,
    pub model: Model,
    /// The session's options (key, headers, thinking level); budgets are set per request.
    pub options: StreamOptions,
    /// `retry.*`: transient failures of a summary request are retried like turns.
    pub retry: RetryPolicy,
    /// Waits between retries.
    pub clock: Arc<dyn Clock>,
}

/// What a summary request's retries report as (`summarization_retry_attempt_start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetrySource {
    Compaction(CompactionReason),
    BranchSummary,
}

/// Where a summary request's retry events go.
pub struct RetryEvents<'a> {
    pub events: &'a EventSender,
    pub source: RetrySource,
}

impl RetryEvents<'_> {
    fn attempt_start(&self) -> AgentEvent {
        match self.source {
            RetrySource::Compaction(reason) => AgentEvent::SummarizationRetryAttemptStart {
                source: "compaction".to_owned(),
                reason: Some(reason),
            },
            RetrySource::BranchSummary => AgentEvent::SummarizationRetryAttemptStart {
                source: "branchSummary".to_owned(),
                reason: None,
            },
        }
    }
}

impl std::fmt::Debug for SummaryModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryModel")
            .field("model", &self.model.id)
            .finish_non_exhaustive()
    }
}

/// Which summary a request makes (for the error texts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryKind {
    History,
    TurnPrefix,
    Branch,
}

impl SummaryKind {
    fn label(self) -> &'static str {
        match self {
            Self::History => "Summarization",
            Self::TurnPrefix => "Turn prefix summarization",
            Self::Branch => "Branch summarization",
        }
    }
}

impl SummaryModel {
    /// `fraction` of `reserve` as the output budget, capped by the model's own maximum.
    pub fn budget(&self, reserve: u64, fraction: f64) -> u64 {
        let budget = (reserve as f64 * fraction).floor() as u64;
        if self.model.max_tokens > 0 {
            budget.min(self.model.max_tokens)
        } else {
            budget
        }
    }

    /// One summary: the text and the call's usage. Transient failures are retried per
    /// `retry.*`, announced by `summarization_retry_*` events.
    pub async fn summarize(
        &self,
        prompt: String,
        max_tokens: u64,
        kind: SummaryKind,
        retry: &RetryEvents<'_>,
        cancel: &CancellationToken,
    ) -> Result<(String, Usage), CompactionError> {
        let mut attempt = 0;
        let outcome = loop {
            let message = self.request(&prompt, max_tokens, kind, cancel).await;
            let retry_left = self.retry.enabled && attempt < self.retry.max_retries;
            if cancel.is_cancelled()
                || !retry_left
                || message.stop_reason.known() != Some(StopReason::Error)
                || !is_retryable_assistant_error(&message)
            {
                break judge(message, kind, cancel);
            }
            attempt += 1;
            let delay_ms = self.retry.delay_ms(attempt);
            retry
                .events
                .emit(AgentEvent::SummarizationRetryScheduled {
                    attempt,
                    max_attempts: self.retry.max_retries,
                    delay_ms,
                    error_message: message
                        .error_message
                        .clone()
                        .filter(|e| !e.is_empty())
                        .unwrap_or_else(|| "Unknown error".to_owned()),
                })
                .await;
            tokio::select! {
                () = self.clock.sleep(Duration::from_millis(delay_ms)) => {}
                () = cancel.cancelled() => break Err(CompactionError::Cancelled),
            }
            retry.events.emit(retry.attempt_start()).await;
        };
        if attempt > 0 {
            retry
                .events
                .emit(AgentEvent::SummarizationRetryFinished)
                .await;
        }
        outcome
    }

    async fn request(
        &self,
        prompt: &str,
        max_tokens: u64,
        kind: SummaryKind,
        cancel: &CancellationToken,
    ) -> AssistantMessage {
        let mut options = self.options.clone();
        options.max_tokens = Some(max_tokens);
        options.cache_retention = Some(CacheRetention::None);
        options.payload_hook = None;
        options.response_hook = None;
        options.headers_hook = None;
        options.stream_event_hook = None;
        // Branch summaries are short and asked without reasoning, as in the reference.
        if !self.model.reasoning || kind == SummaryKind::Branch {
            options.thinking = ThinkingLevel::Off;
        }
        let request = StreamRequest {
            model: self.model.clone(),
            context: Context {
                system_prompt: Some(SYSTEM_PROMPT.to_owned()),
                messages: vec![Arc::new(AgentMessage::user(
                    prompt.to_owned(),
                    Millis(self.clock.now_ms()),
                ))],
                tools: Vec::new(),
            },
            options,
        };
        self.provider
            .stream(&request, cancel.clone())
            .result()
            .await
    }
}

/// The summary a response holds, or why it is not one.
fn judge(
    message: AssistantMessage,
    kind: SummaryKind,
    cancel: &CancellationToken,
) -> Result<(String, Usage), CompactionError> {
    let label = kind.label();
    match message.stop_reason.known() {
        _ if cancel.is_cancelled() => return Err(CompactionError::Cancelled),
        Some(StopReason::Aborted) => return Err(CompactionError::Cancelled),
        Some(StopReason::Error) => {
            let reason = message.error_message.unwrap_or_default();
            return Err(CompactionError::Failed(format!("{label} failed: {reason}")));
        }
        Some(StopReason::Length) => {
            return Err(CompactionError::Failed(format!(
                "{label} failed: generation hit the token cap and the summary is incomplete"
            )));
        }
        _ => {}
    }
    if message.tool_calls().next().is_some() {
        return Err(CompactionError::Failed(format!(
            "{label} attempted to call a tool"
        )));
    }
    let text = blocks_text(message.content.iter());
    Ok((text, message.usage))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_conversation_is_labelled_and_long_results_are_cut() {
        let long = "x".repeat(TOOL_RESULT_CHARS + 5);
        let result: AgentMessage = serde_json::from_value(serde_json::json!({
            "role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": long}], "isError": false, "timestamp": 1
        }))
        .unwrap();
        let assistant: AgentMessage = serde_json::from_value(serde_json::json!({
            "role": "assistant", "api": "a", "provider": "p", "model": "m",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "reading"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.rs"}}
            ],
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "toolUse", "timestamp": 1
        }))
        .unwrap();
        let text =
            serialize_conversation(&[AgentMessage::user("fix it", Millis(1)), assistant, result]);
        let expected_tail = format!(
            "[Tool result]: {}\n\n[... 5 more characters truncated]",
            "x".repeat(TOOL_RESULT_CHARS)
        );
        assert_eq!(
            text,
            format!(
                "[User]: fix it\n\n[Assistant thinking]: hmm\n\n[Assistant]: reading\n\n\
                 [Assistant tool calls]: read(path=\"a.rs\")\n\n{expected_tail}"
            )
        );
    }

    #[test]
    fn an_update_carries_the_previous_summary_and_the_focus() {
        let text = history_prompt(
            &serialize_conversation(&[AgentMessage::user("hi", Millis(1))]),
            Some("OLD"),
            Some("the parser"),
        );
        assert!(text.starts_with("<conversation>\n[User]: hi\n</conversation>\n\n"));
        assert!(text.contains("<previous-summary>\nOLD\n</previous-summary>\n\n"));
        assert!(text.contains("## Critical Context"));
        assert!(text.ends_with("\n\nAdditional focus: the parser"));
    }
}
