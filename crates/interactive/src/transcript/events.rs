//! How the agent's events change the transcript: a message's card opens on its start and
//! fills as deltas stream in, tool cards follow their calls, and an automatic retry shows
//! one line in place of the failed attempt it hides until the retries end.

use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessageEvent;
use knightcode_protocol::SessionEntry;

use super::AssistantCard;
use super::Card;
use super::Notice;
use super::NoticeKind;
use super::SummaryCard;
use super::SummaryKind;
use super::ToolCard;
use super::Transcript;
use super::describe_error;
use super::errors;
use super::reply;

#[derive(Debug, Default)]
pub(super) struct Retry {
    notice: Option<usize>,
    hidden: Vec<usize>,
}

/// How the agent's retries ended (`auto_retry_end`).
enum RetryOutcome<'a> {
    Succeeded,
    /// An abort stopped them before the next attempt.
    Cancelled,
    /// The last attempt failed too, with this error.
    GaveUp(Option<&'a str>),
}

impl Transcript {
    /// Applies an agent event; returns true when anything visible changed.
    pub fn apply(&mut self, event: &AgentEvent) -> bool {
        match event {
            AgentEvent::MessageStart { message } => match message {
                AgentMessage::Assistant(_) => {
                    self.streaming = Some(self.cards.len());
                    self.partial_args.clear();
                    self.cards.push(Card::Assistant(AssistantCard::new()));
                    true
                }
                // User messages arrive with message_start too; bash results and custom
                // messages only at their end.
                AgentMessage::User(_) => {
                    self.add_message(message);
                    true
                }
                _ => false,
            },
            AgentEvent::MessageUpdate {
                assistant_message_event,
                ..
            } => self.apply_delta(assistant_message_event),
            // Nothing shows until an entry renderer draws it.
            AgentEvent::EntryAppended {
                entry: SessionEntry::Custom(entry),
            } => {
                self.add_entry(entry);
                false
            }
            AgentEvent::MessageEnd { message } => match message {
                AgentMessage::Assistant(assistant) => {
                    if let Some(index) = self.streaming.take() {
                        self.touch(index);
                        let provider = self.provider_of(assistant).to_owned();
                        if let Some(Card::Assistant(card)) = self.cards.get_mut(index) {
                            card.set_message(assistant);
                            describe_error(card, &provider);
                            // Left in place, drawing nothing: cards are known by index.
                            card.hidden |= card.is_empty();
                        }
                    } else {
                        let mut card = AssistantCard::from_message(assistant);
                        describe_error(&mut card, self.provider_of(assistant));
                        if !card.is_empty() {
                            self.cards.push(Card::Assistant(card));
                        }
                    }
                    for call in assistant.tool_calls() {
                        match self.tool_card(&call.id) {
                            Some(card) => card.set_args(call.arguments.clone()),
                            None => {
                                self.tools.insert(call.id.clone(), self.cards.len());
                                self.cards.push(Card::Tool(ToolCard::new(
                                    call.id.clone(),
                                    call.name.clone(),
                                    call.arguments.clone(),
                                )));
                            }
                        }
                    }
                    true
                }
                AgentMessage::User(_) | AgentMessage::ToolResult(_) | AgentMessage::System(_) => {
                    false
                }
                other => {
                    self.add_message(other);
                    true
                }
            },
            // Calls a tool made (`ctx.executeTool`) are not in the transcript: the calling
            // tool reports them itself.
            AgentEvent::ToolExecutionStart {
                parent_tool_call_id: Some(_),
                ..
            }
            | AgentEvent::ToolExecutionUpdate {
                parent_tool_call_id: Some(_),
                ..
            }
            | AgentEvent::ToolExecutionEnd {
                parent_tool_call_id: Some(_),
                ..
            } => false,
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                ..
            } => {
                // A read's result is highlighted: compile its grammar while the file loads.
                if tool_name == "read"
                    && let Some(path) = args.get("path").and_then(serde_json::Value::as_str)
                    && let Some(lang) =
                        knightcode_tui::highlight::language_for_path(std::path::Path::new(path))
                {
                    self.warm_grammar(lang.to_owned());
                }
                if let Some(card) = self.tool_card(tool_call_id) {
                    card.start(args.clone());
                } else {
                    let mut card =
                        ToolCard::new(tool_call_id.clone(), tool_name.clone(), args.clone());
                    card.start(args.clone());
                    self.tools.insert(tool_call_id.clone(), self.cards.len());
                    self.cards.push(Card::Tool(card));
                }
                true
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => match self.tool_card(tool_call_id) {
                Some(card) => {
                    card.update(partial_result.clone());
                    true
                }
                None => false,
            },
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                duration_ms,
                ..
            } => match self.tool_card(tool_call_id) {
                Some(card) => {
                    let took = duration_ms.map(std::time::Duration::from_millis);
                    card.finish(result.clone(), *is_error, took);
                    true
                }
                None => false,
            },
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => {
                let text = errors::retry_text(
                    error_message,
                    &self.provider,
                    *delay_ms,
                    *attempt,
                    *max_attempts,
                );
                self.retry_started(text);
                true
            }
            AgentEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
                cancelled,
            } => {
                let outcome = if *success {
                    RetryOutcome::Succeeded
                } else if *cancelled {
                    RetryOutcome::Cancelled
                } else {
                    RetryOutcome::GaveUp(final_error.as_deref())
                };
                self.retry_ended(outcome, *attempt);
                true
            }
            AgentEvent::CompactionEnd {
                reason,
                result,
                aborted,
                error_message,
                ..
            } => {
                // A manual compaction's failure is its command's reply; the card shows it.
                let manual = *reason == knightcode_protocol::CompactionReason::Manual;
                match (result, error_message) {
                    (Some(result), _) => {
                        let kind = SummaryKind::Compaction {
                            tokens_before: result["tokensBefore"].as_u64().unwrap_or(0),
                        };
                        let summary = result["summary"].as_str().unwrap_or_default().to_owned();
                        self.cards
                            .push(Card::Summary(SummaryCard::new(kind, summary)));
                    }
                    (None, Some(message)) if !manual => {
                        self.notice(NoticeKind::Error, message.clone());
                    }
                    (None, None) if *aborted && !manual => {
                        self.notice(NoticeKind::Info, "Compaction cancelled.");
                    }
                    (None, _) => return false,
                }
                true
            }
            AgentEvent::ExtensionError {
                extension_path,
                event,
                error,
            } => {
                self.notice(
                    NoticeKind::Error,
                    format!("Extension {extension_path} failed in {event}: {error}"),
                );
                true
            }
            _ => false,
        }
    }

    /// A retry is scheduled: the failed reply gives way to one line saying what happened and
    /// when the next attempt comes (updated in place for later attempts).
    fn retry_started(&mut self, text: String) {
        let failed = self.last_failed_reply();
        let retry = self.retry.get_or_insert_with(Retry::default);
        if let Some(index) = failed
            && let Some(Card::Assistant(card)) = self.cards.get_mut(index)
        {
            card.hidden = true;
            retry.hidden.push(index);
        }
        let notice = retry.notice;
        match notice.and_then(|i| self.cards.get_mut(i).map(|c| (i, c))) {
            Some((index, Card::Notice(notice))) => {
                notice.set_text(text);
                self.valid = self.valid.min(index);
            }
            _ => {
                self.cards
                    .push(Card::Notice(Notice::new(NoticeKind::Warning, text)));
                let index = self.cards.len() - 1;
                if let Some(retry) = &mut self.retry {
                    retry.notice = Some(index);
                }
            }
        }
        if let Some(&first) = self.retry.as_ref().and_then(|r| r.hidden.first()) {
            self.touch(first);
        }
    }

    /// The retries ended: a success leaves no trace; a cancelled retry shows the failure it
    /// was for again; the last failure says it was the last.
    fn retry_ended(&mut self, outcome: RetryOutcome<'_>, attempt: u32) {
        let Some(retry) = self.retry.take() else {
            return;
        };
        if let Some(index) = retry.notice {
            if let Some(Card::Notice(notice)) = self.cards.get_mut(index) {
                notice.hidden = true;
            }
            self.touch(index);
        }
        let final_error = match outcome {
            RetryOutcome::Succeeded => return,
            RetryOutcome::Cancelled => {
                self.retry_cancelled(&retry);
                return;
            }
            RetryOutcome::GaveUp(final_error) => final_error,
        };
        if let (Some(index), Some(error)) = (self.last_failed_reply(), final_error) {
            let provider = self.provider.clone();
            if let Some(Card::Assistant(card)) = self.cards.get_mut(index) {
                card.set_error_text(errors::final_text(error, &provider, Some(attempt)));
            }
            self.touch(index);
        }
    }

    /// An abort ended the retries: the failure they were for shows again.
    fn retry_cancelled(&mut self, retry: &Retry) {
        if let Some(&index) = retry.hidden.last() {
            if let Some(Card::Assistant(card)) = self.cards.get_mut(index) {
                card.hidden = false;
            }
            self.touch(index);
        }
        self.notice(NoticeKind::Info, "Retry cancelled.");
    }

    /// The newest reply on screen that ended in an error (the attempt a retry is about).
    fn last_failed_reply(&self) -> Option<usize> {
        self.cards.iter().rposition(|card| match card {
            Card::Assistant(c) => !c.hidden && matches!(c.ending, Some(reply::Ending::Error(_))),
            _ => false,
        })
    }

    fn apply_delta(&mut self, event: &AssistantMessageEvent) -> bool {
        match event {
            AssistantMessageEvent::TextStart { content_index } => {
                if let Some(card) = self.streaming_card() {
                    card.start_block(*content_index, false);
                }
                false
            }
            AssistantMessageEvent::ThinkingStart { content_index } => {
                if let Some(card) = self.streaming_card() {
                    card.start_block(*content_index, true);
                }
                false
            }
            AssistantMessageEvent::TextDelta {
                content_index,
                delta,
            } => match self.streaming_card() {
                Some(card) => {
                    if let Some(lang) = card.append(*content_index, delta, false) {
                        self.warm_grammar(lang);
                    }
                    true
                }
                None => false,
            },
            AssistantMessageEvent::ThinkingDelta {
                content_index,
                delta,
            } => match self.streaming_card() {
                Some(card) => {
                    card.append(*content_index, delta, true);
                    true
                }
                None => false,
            },
            AssistantMessageEvent::ToolcallStart {
                content_index,
                id,
                tool_name,
            } => {
                self.partial_args
                    .insert(*content_index, (id.clone(), String::new()));
                self.tools.insert(id.clone(), self.cards.len());
                self.cards.push(Card::Tool(ToolCard::new(
                    id.clone(),
                    tool_name.clone(),
                    serde_json::Value::Object(serde_json::Map::new()),
                )));
                true
            }
            AssistantMessageEvent::ToolcallDelta {
                content_index,
                delta,
            } => {
                let Some((id, json)) = self.partial_args.get_mut(content_index) else {
                    return false;
                };
                json.push_str(delta);
                let args = knightcode_ai::json_partial::parse_streaming_json(json);
                let id = id.clone();
                match self.tool_card(&id) {
                    Some(card) => {
                        card.set_args(args);
                        true
                    }
                    None => false,
                }
            }
            AssistantMessageEvent::ToolcallEnd {
                content_index,
                tool_call,
            } => {
                self.partial_args.remove(content_index);
                match self.tool_card(&tool_call.id) {
                    Some(card) => {
                        card.set_args(tool_call.arguments.clone());
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        }
    }

    /// Compiles a language's highlighting grammar on a helper thread as soon as a code
    /// fence for it opens: with the pure-Rust regex engine that takes up to a second
    /// (TypeScript), which the code lines streaming in after the fence would otherwise wait
    /// for. Grammars are compiled only for languages that appear, since each costs memory
    /// (TypeScript about 75 MB), so none are loaded ahead of time.
    fn warm_grammar(&mut self, lang: String) {
        if !self.warmed.insert(lang.clone()) {
            return;
        }
        let _ = std::thread::Builder::new()
            .name("highlight-warm".into())
            .spawn(move || knightcode_tui::highlight::preload(&[lang.as_str()]));
    }
}
