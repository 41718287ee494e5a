//! Turns session messages into what a provider request needs (messages.md §4).
//!
//! Every wire module starts from [`prepare_messages`]: session roles are reduced to user,
//! assistant and tool-result messages, images are replaced for text-only models, thinking from
//! another model becomes plain text, failed assistant turns are dropped, and tool calls without
//! a result get a synthetic error result so every API accepts the history.

use std::borrow::Borrow;
use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::HashSet;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::StopReason;
use knightcode_protocol::TextContent;
use knightcode_protocol::ToolResultMessage;

use crate::model::Model;

const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";

/// User content: a plain string or blocks (text and images).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum UserContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Cow<'a, [ContentBlock]>),
}

/// A message as the wire modules see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LlmMessage<'a> {
    User(UserContent<'a>),
    Assistant(Cow<'a, AssistantMessage>),
    ToolResult(Cow<'a, ToolResultMessage>),
}

/// Reduces session roles to user / assistant / toolResult (`convertToLlm`).
pub(crate) fn convert_to_llm<M: Borrow<AgentMessage>>(messages: &[M]) -> Vec<LlmMessage<'_>> {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        match message.borrow() {
            AgentMessage::User(m) => out.push(LlmMessage::User(content_ref(&m.content))),
            AgentMessage::Assistant(m) => out.push(LlmMessage::Assistant(Cow::Borrowed(m))),
            AgentMessage::ToolResult(m) => out.push(LlmMessage::ToolResult(Cow::Borrowed(m))),
            AgentMessage::Custom(m) => out.push(LlmMessage::User(content_ref(&m.content))),
            AgentMessage::BashExecution(m) => {
                if m.exclude_from_context == Some(true) {
                    continue;
                }
                out.push(user_text(bash_execution_text(m)));
            }
            AgentMessage::BranchSummary(m) => {
                if m.summary.is_empty() {
                    continue;
                }
                out.push(user_text(format!(
                    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n{}</summary>",
                    m.summary
                )));
            }
            AgentMessage::CompactionSummary(m) => out.push(user_text(format!(
                "The conversation history before this point was compacted into the following summary:\n\n<summary>\n{}\n</summary>",
                m.summary
            ))),
            AgentMessage::System(_) | AgentMessage::Unknown(_) => {}
        }
    }
    out
}

/// The conversation as a JavaScript provider receives it (`context.messages` of pi's
/// `streamSimple`): user, assistant and tool-result messages in their JSON form, other
/// session roles reduced as for every request (`convertToLlm`).
pub fn llm_messages_json<M: Borrow<AgentMessage>>(messages: &[M]) -> Vec<serde_json::Value> {
    let timestamp = |message: &AgentMessage| {
        message
            .timestamp()
            .map_or(serde_json::Value::from(0), |t| serde_json::Value::from(t.0))
    };
    let mut out = Vec::with_capacity(messages.len());
    let converted = convert_to_llm(messages);
    // `convert_to_llm` drops messages but keeps order; timestamps come from the originals
    // that produced each user message, matched in order.
    let mut originals = messages.iter().map(Borrow::borrow).filter(|m| {
        !matches!(m, AgentMessage::System(_) | AgentMessage::Unknown(_))
            && !matches!(m, AgentMessage::BashExecution(b) if b.exclude_from_context == Some(true))
            && !matches!(m, AgentMessage::BranchSummary(b) if b.summary.is_empty())
    });
    for message in converted {
        let original = originals.next();
        let value = match message {
            LlmMessage::User(content) => {
                let content = match content {
                    UserContent::Text(text) => serde_json::Value::String(text.into_owned()),
                    UserContent::Blocks(blocks) => {
                        serde_json::to_value(blocks.as_ref()).unwrap_or_default()
                    }
                };
                serde_json::json!({
                    "role": "user",
                    "content": content,
                    "timestamp": original.map_or(serde_json::Value::from(0), timestamp),
                })
            }
            LlmMessage::Assistant(m) => {
                serde_json::to_value(AgentMessage::Assistant(Box::new(m.into_owned())))
                    .unwrap_or_default()
            }
            LlmMessage::ToolResult(m) => {
                serde_json::to_value(AgentMessage::ToolResult(Box::new(m.into_owned())))
                    .unwrap_or_default()
            }
        };
        out.push(value);
    }
    out
}

/// Text the agent writes on the user's behalf (shell runs, summaries) goes out as one text
/// block, as the reference sends it, not as a bare string.
fn user_text(text: String) -> LlmMessage<'static> {
    LlmMessage::User(UserContent::Blocks(Cow::Owned(vec![
        knightcode_protocol::ContentBlock::text(text),
    ])))
}

fn content_ref(content: &Content) -> UserContent<'_> {
    match content {
        Content::Text(t) => UserContent::Text(Cow::Borrowed(t)),
        Content::Blocks(b) => UserContent::Blocks(Cow::Borrowed(b)),
    }
}

fn bash_execution_text(m: &knightcode_protocol::BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", m.command);
    if m.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str("```\n");
        text.push_str(&m.output);
        text.push_str("\n```");
    }
    if m.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.exit_code.filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if m.truncated
        && let Some(path) = &m.full_output_path
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

/// Whether an assistant message came from exactly this model (so its signatures are valid).
pub(crate) fn is_same_model(message: &AssistantMessage, model: &Model) -> bool {
    message.provider == model.provider && message.api == model.api && message.model == model.id
}

/// Provider-specific tool-call id rewriting for histories from another model.
pub(crate) type IdNormalizer<'f> = &'f dyn Fn(&str, &AssistantMessage) -> String;

/// Converts and cleans the conversation for `model` (see the module docs).
pub(crate) fn prepare_messages<'a, M: Borrow<AgentMessage>>(
    messages: &'a [M],
    model: &Model,
    normalize_id: Option<IdNormalizer<'_>>,
) -> Vec<LlmMessage<'a>> {
    let supports_images = model.supports_images();
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut transformed = Vec::new();
    for message in convert_to_llm(messages) {
        match message {
            LlmMessage::User(UserContent::Blocks(blocks)) if !supports_images => {
                let replaced = match replace_images(&blocks, USER_IMAGE_PLACEHOLDER) {
                    Cow::Owned(owned) => Cow::Owned(owned),
                    Cow::Borrowed(_) => blocks,
                };
                transformed.push(LlmMessage::User(UserContent::Blocks(replaced)));
            }
            LlmMessage::User(content) => transformed.push(LlmMessage::User(content)),
            LlmMessage::ToolResult(mut result) => {
                if !supports_images
                    && let Cow::Owned(blocks) =
                        replace_images(&result.content, TOOL_IMAGE_PLACEHOLDER)
                {
                    result.to_mut().content = Blocks(blocks);
                }
                if let Some(mapped) = id_map.get(&result.tool_call_id)
                    && *mapped != result.tool_call_id
                {
                    result.to_mut().tool_call_id = mapped.clone();
                }
                transformed.push(LlmMessage::ToolResult(result));
            }
            LlmMessage::Assistant(assistant) => {
                let converted = transform_assistant(assistant, model, normalize_id, &mut id_map);
                transformed.push(LlmMessage::Assistant(converted));
            }
        }
    }
    insert_synthetic_results(transformed)
}

fn replace_images<'b>(blocks: &'b [ContentBlock], placeholder: &str) -> Cow<'b, [ContentBlock]> {
    if !blocks.iter().any(|b| matches!(b, ContentBlock::Image(_))) {
        return Cow::Borrowed(blocks);
    }
    let mut out: Vec<ContentBlock> = Vec::with_capacity(blocks.len());
    let mut previous_was_placeholder = false;
    for block in blocks {
        if matches!(block, ContentBlock::Image(_)) {
            if !previous_was_placeholder {
                out.push(ContentBlock::text(placeholder));
            }
            previous_was_placeholder = true;
            continue;
        }
        previous_was_placeholder = block.as_text() == Some(placeholder);
        out.push(block.clone());
    }
    Cow::Owned(out)
}

fn transform_assistant<'a>(
    message: Cow<'a, AssistantMessage>,
    model: &Model,
    normalize_id: Option<IdNormalizer<'_>>,
    id_map: &mut HashMap<String, String>,
) -> Cow<'a, AssistantMessage> {
    let same = is_same_model(&message, model);
    let needs_change = message.content.iter().any(|block| match block {
        ContentBlock::Thinking(t) => {
            if t.redacted == Some(true) {
                !same
            } else if same && t.thinking_signature.is_some() {
                false
            } else {
                t.thinking.trim().is_empty() || !same
            }
        }
        ContentBlock::Text(t) => !same && (t.text_signature.is_some() || !t.extra.is_empty()),
        ContentBlock::ToolCall(c) => {
            !same
                && (c.thought_signature.is_some()
                    || normalize_id.is_some_and(|f| f(&c.id, &message) != c.id))
        }
        _ => false,
    });
    if !needs_change {
        return message;
    }
    let mut owned = message.into_owned();
    let snapshot = owned.clone();
    let mut content = Vec::with_capacity(owned.content.len());
    for block in std::mem::take(&mut owned.content.0) {
        match block {
            ContentBlock::Thinking(t) => {
                if t.redacted == Some(true) {
                    if same {
                        content.push(ContentBlock::Thinking(t));
                    }
                } else if same && t.thinking_signature.is_some() {
                    content.push(ContentBlock::Thinking(t));
                } else if t.thinking.trim().is_empty() {
                } else if same {
                    content.push(ContentBlock::Thinking(t));
                } else {
                    content.push(ContentBlock::text(t.thinking));
                }
            }
            ContentBlock::Text(t) if !same => content.push(ContentBlock::Text(TextContent {
                text: t.text,
                ..TextContent::default()
            })),
            ContentBlock::ToolCall(mut c) if !same => {
                c.thought_signature = None;
                if let Some(normalize) = normalize_id {
                    let normalized = normalize(&c.id, &snapshot);
                    if normalized != c.id {
                        id_map.insert(c.id.clone(), normalized.clone());
                        c.id = normalized;
                    }
                }
                content.push(ContentBlock::ToolCall(c));
            }
            other => content.push(other),
        }
    }
    owned.content = Blocks(content);
    Cow::Owned(owned)
}

/// Drops failed assistant turns and tool results without their call, and adds an error result
/// for every tool call left without one.
fn insert_synthetic_results(messages: Vec<LlmMessage<'_>>) -> Vec<LlmMessage<'_>> {
    let mut out = Vec::with_capacity(messages.len());
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let flush = |out: &mut Vec<LlmMessage<'_>>,
                 pending: &mut Vec<(String, String)>,
                 answered: &mut HashSet<String>| {
        for (id, name) in pending.drain(..) {
            if !answered.contains(&id) {
                out.push(LlmMessage::ToolResult(Cow::Owned(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: name,
                    content: Blocks(vec![ContentBlock::text("No result provided")]),
                    is_error: true,
                    ..ToolResultMessage::default()
                })));
            }
        }
        answered.clear();
    };
    for message in messages {
        match &message {
            LlmMessage::Assistant(a) => {
                flush(&mut out, &mut pending, &mut answered);
                if matches!(
                    a.stop_reason.known(),
                    Some(StopReason::Error | StopReason::Aborted)
                ) {
                    continue;
                }
                pending = a
                    .tool_calls()
                    .map(|c| (c.id.clone(), c.name.clone()))
                    .collect();
                out.push(message);
            }
            LlmMessage::ToolResult(r) => {
                // A result whose call is not in the assistant message before it (that message
                // was lost from a damaged session file, or dropped as failed): every API
                // refuses such a result, so it is left out.
                if !pending.iter().any(|(id, _)| *id == r.tool_call_id) {
                    continue;
                }
                answered.insert(r.tool_call_id.clone());
                out.push(message);
            }
            LlmMessage::User(_) => {
                flush(&mut out, &mut pending, &mut answered);
                out.push(message);
            }
        }
    }
    flush(&mut out, &mut pending, &mut answered);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Api;
    use knightcode_protocol::Millis;
    use knightcode_protocol::ThinkingContent;
    use knightcode_protocol::ToolCall;

    fn assistant(model: &str, content: Vec<ContentBlock>, stop: StopReason) -> AgentMessage {
        AgentMessage::Assistant(Box::new(AssistantMessage {
            content: Blocks(content),
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            model: model.into(),
            stop_reason: stop.into(),
            ..AssistantMessage::default()
        }))
    }

    fn call(id: &str) -> ContentBlock {
        ContentBlock::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: serde_json::json!({}),
            thought_signature: Some("sig".into()),
            ..ToolCall::default()
        })
    }

    #[test]
    fn cross_model_thinking_and_orphans() {
        let model = Model::new("anthropic", "other", Api::AnthropicMessages, "http://x");
        let thinking = ContentBlock::Thinking(ThinkingContent {
            thinking: "deep".into(),
            thinking_signature: Some("s".into()),
            ..ThinkingContent::default()
        });
        let messages = vec![
            AgentMessage::user("hi", Millis(1)),
            assistant("m", vec![thinking, call("a|b")], StopReason::ToolUse),
            AgentMessage::user("next", Millis(2)),
            assistant("m", vec![ContentBlock::text("partial")], StopReason::Error),
        ];
        let normalize = |id: &str, _: &AssistantMessage| id.replace('|', "_");
        let out = prepare_messages(&messages, &model, Some(&normalize));
        assert_eq!(out.len(), 4);
        let LlmMessage::Assistant(a) = &out[1] else {
            panic!("assistant expected")
        };
        assert_eq!(a.content[0], ContentBlock::text("deep"));
        let ContentBlock::ToolCall(c) = &a.content[1] else {
            panic!("tool call expected")
        };
        assert_eq!(c.id, "a_b");
        assert_eq!(c.thought_signature, None);
        let LlmMessage::ToolResult(r) = &out[2] else {
            panic!("synthetic result expected")
        };
        assert_eq!(r.tool_call_id, "a_b");
        assert!(r.is_error);
    }

    #[test]
    fn a_tool_result_without_its_call_is_left_out() {
        // The assistant message with the call was lost (a damaged session line), or it
        // failed and is dropped: its result alone would be refused by every API.
        let model = Model::new("anthropic", "m", Api::AnthropicMessages, "http://x");
        let result = |id: &str| {
            AgentMessage::ToolResult(Box::new(ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "read".into(),
                content: Blocks(vec![ContentBlock::text("contents")]),
                ..ToolResultMessage::default()
            }))
        };
        let messages = vec![
            result("lost"),
            AgentMessage::user("hi", Millis(1)),
            assistant("m", vec![call("kept")], StopReason::ToolUse),
            result("kept"),
            assistant("m", vec![call("failed")], StopReason::Error),
            result("failed"),
        ];
        let out = prepare_messages(&messages, &model, None);
        let results: Vec<&str> = out
            .iter()
            .filter_map(|m| match m {
                LlmMessage::ToolResult(r) => Some(r.tool_call_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(results, ["kept"]);
        assert!(matches!(out[0], LlmMessage::User(_)));
    }

    #[test]
    fn same_model_is_borrowed() {
        let model = Model::new("anthropic", "m", Api::AnthropicMessages, "http://x");
        let messages = vec![assistant(
            "m",
            vec![ContentBlock::text("x")],
            StopReason::Stop,
        )];
        let out = prepare_messages(&messages, &model, None);
        assert!(matches!(&out[0], LlmMessage::Assistant(Cow::Borrowed(_))));
    }

    #[test]
    fn agent_written_user_text_is_one_text_block() {
        let messages = vec![AgentMessage::BashExecution(Box::new(
            knightcode_protocol::BashExecutionMessage {
                command: "pwd".into(),
                output: "/w".into(),
                exit_code: Some(0),
                ..Default::default()
            },
        ))];
        let converted = convert_to_llm(&messages);
        match &converted[..] {
            [LlmMessage::User(UserContent::Blocks(blocks))] => {
                assert_eq!(blocks.len(), 1);
                assert_eq!(blocks[0].as_text(), Some("Ran `pwd`\n```\n/w\n```"));
            }
            _ => panic!("expected one user message with one text block"),
        }
    }

    #[test]
    fn bash_execution_text() {
        let m = knightcode_protocol::BashExecutionMessage {
            command: "ls".into(),
            output: "a\nb".into(),
            exit_code: Some(2),
            truncated: true,
            full_output_path: Some("/tmp/o".into()),
            ..Default::default()
        };
        assert_eq!(
            super::bash_execution_text(&m),
            "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/o]"
        );
    }
}
