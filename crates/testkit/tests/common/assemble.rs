//! Minimal per-format stream consumers: they check each event's shape and ordering rules and
//! rebuild the assistant message, the way a provider client would.

use serde_json::Value;

use super::Event;

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Tool {
        id: String,
        name: String,
        args: String,
    },
}

/// Usage normalised the way pi does it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Assembled {
    pub blocks: Vec<Block>,
    /// The raw stop / finish reason / status of the format.
    pub stop: String,
    pub usage: Usage,
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {v}"))
        .to_owned()
}

pub fn anthropic(events: &[Event]) -> Assembled {
    let mut out = Assembled::default();
    let mut open: Option<usize> = None;
    assert_eq!(
        events.first().and_then(|e| e.event.as_deref()),
        Some("message_start")
    );
    assert_eq!(
        events.last().and_then(|e| e.event.as_deref()),
        Some("message_stop")
    );
    for e in events {
        let d = e.json();
        assert_eq!(
            e.event.as_deref(),
            d["type"].as_str(),
            "event name matches data.type"
        );
        match s(&d["type"]).as_str() {
            "message_start" => {
                let usage = &d["message"]["usage"];
                assert!(
                    d["message"]["id"]
                        .as_str()
                        .is_some_and(|id| id.starts_with("msg_"))
                );
                assert_eq!(d["message"]["role"], "assistant");
                out.usage.input = u(&usage["input_tokens"]);
                out.usage.cache_read = u(&usage["cache_read_input_tokens"]);
                out.usage.cache_write = u(&usage["cache_creation_input_tokens"]);
            }
            "ping" => {}
            "content_block_start" => {
                assert!(open.is_none(), "block opened while another is open");
                let index = d["index"].as_u64().expect("index") as usize;
                assert_eq!(index, out.blocks.len(), "block indices are sequential");
                open = Some(index);
                let b = &d["content_block"];
                out.blocks.push(match s(&b["type"]).as_str() {
                    "text" => Block::Text(String::new()),
                    "thinking" => Block::Thinking {
                        text: String::new(),
                        signature: None,
                    },
                    "redacted_thinking" => Block::Thinking {
                        text: String::new(),
                        signature: Some(s(&b["data"])),
                    },
                    "tool_use" => Block::Tool {
                        id: s(&b["id"]),
                        name: s(&b["name"]),
                        args: String::new(),
                    },
                    other => panic!("unknown block type {other}"),
                });
            }
            "content_block_delta" => {
                let index = d["index"].as_u64().expect("index") as usize;
                assert_eq!(open, Some(index), "delta for the open block");
                let delta = &d["delta"];
                match (&mut out.blocks[index], s(&delta["type"]).as_str()) {
                    (Block::Text(t), "text_delta") => t.push_str(&s(&delta["text"])),
                    (Block::Thinking { text, .. }, "thinking_delta") => {
                        text.push_str(&s(&delta["thinking"]));
                    }
                    (Block::Thinking { signature, .. }, "signature_delta") => {
                        *signature = Some(s(&delta["signature"]));
                    }
                    (Block::Tool { args, .. }, "input_json_delta") => {
                        args.push_str(&s(&delta["partial_json"]));
                    }
                    (block, kind) => panic!("delta {kind} does not fit {block:?}"),
                }
            }
            "content_block_stop" => {
                let index = d["index"].as_u64().expect("index") as usize;
                assert_eq!(open.take(), Some(index));
            }
            "message_delta" => {
                out.stop = s(&d["delta"]["stop_reason"]);
                out.usage.output = u(&d["usage"]["output_tokens"]);
            }
            "message_stop" => assert!(open.is_none()),
            other => panic!("unknown event {other}"),
        }
    }
    out
}

pub fn openai_completions(events: &[Event]) -> Assembled {
    let mut out = Assembled::default();
    assert_eq!(events.last().map(|e| e.data.as_str()), Some("[DONE]"));
    let mut tool_slots: Vec<usize> = Vec::new();
    for e in &events[..events.len() - 1] {
        assert!(e.event.is_none(), "completions events are unnamed");
        let d = e.json();
        assert_eq!(d["object"], "chat.completion.chunk");
        assert!(
            d["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("chatcmpl-"))
        );
        if let Some(usage) = d.get("usage").filter(|u| !u.is_null()) {
            let cached = u(&usage["prompt_tokens_details"]["cached_tokens"]);
            let write = u(&usage["prompt_tokens_details"]["cache_write_tokens"]);
            let read = if write > 0 { cached - write } else { cached };
            out.usage = Usage {
                input: u(&usage["prompt_tokens"]) - read - write,
                output: u(&usage["completion_tokens"]),
                cache_read: read,
                cache_write: write,
            };
        }
        let Some(choice) = d["choices"].get(0) else {
            continue;
        };
        if let Some(reason) = choice["finish_reason"].as_str() {
            out.stop = reason.to_owned();
        }
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            match out.blocks.last_mut() {
                Some(Block::Text(t)) => t.push_str(text),
                _ => out.blocks.push(Block::Text(text.to_owned())),
            }
        }
        if let Some(text) = delta["reasoning_content"]
            .as_str()
            .filter(|t| !t.is_empty())
        {
            match out.blocks.last_mut() {
                Some(Block::Thinking { text: t, .. }) => t.push_str(text),
                _ => out.blocks.push(Block::Thinking {
                    text: text.to_owned(),
                    signature: None,
                }),
            }
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().expect("tool index") as usize;
            if index == tool_slots.len() {
                tool_slots.push(out.blocks.len());
                out.blocks.push(Block::Tool {
                    id: s(&call["id"]),
                    name: s(&call["function"]["name"]),
                    args: String::new(),
                });
            }
            if let Block::Tool { args, .. } = &mut out.blocks[tool_slots[index]]
                && let Some(piece) = call["function"]["arguments"].as_str()
            {
                args.push_str(piece);
            }
        }
    }
    out
}

pub fn openai_responses(events: &[Event]) -> Assembled {
    let mut out = Assembled::default();
    for (i, e) in events.iter().enumerate() {
        let d = e.json();
        assert_eq!(
            e.event.as_deref(),
            d["type"].as_str(),
            "event name matches data.type"
        );
        assert_eq!(
            u(&d["sequence_number"]),
            i as u64,
            "sequence numbers run in order"
        );
        let kind = s(&d["type"]);
        match kind.as_str() {
            "response.created" | "response.in_progress" => {
                assert_eq!(d["response"]["status"], "in_progress");
            }
            "response.output_item.added" => {
                let item = &d["item"];
                assert_eq!(u(&d["output_index"]) as usize, out.blocks.len());
                out.blocks.push(match s(&item["type"]).as_str() {
                    "reasoning" => Block::Thinking {
                        text: String::new(),
                        signature: None,
                    },
                    "message" => Block::Text(String::new()),
                    "function_call" => Block::Tool {
                        id: s(&item["call_id"]),
                        name: s(&item["name"]),
                        args: String::new(),
                    },
                    other => panic!("unknown item {other}"),
                });
            }
            "response.reasoning_summary_part.added"
            | "response.content_part.added"
            | "response.reasoning_summary_part.done"
            | "response.content_part.done" => {}
            "response.reasoning_summary_text.delta" => match out.blocks.last_mut() {
                Some(Block::Thinking { text, .. }) => text.push_str(&s(&d["delta"])),
                other => panic!("summary delta outside reasoning: {other:?}"),
            },
            "response.reasoning_summary_text.done" => match out.blocks.last() {
                Some(Block::Thinking { text, .. }) => assert_eq!(&s(&d["text"]), text),
                other => panic!("summary done outside reasoning: {other:?}"),
            },
            "response.output_text.delta" => match out.blocks.last_mut() {
                Some(Block::Text(t)) => t.push_str(&s(&d["delta"])),
                other => panic!("text delta outside message: {other:?}"),
            },
            "response.output_text.done" => match out.blocks.last() {
                Some(Block::Text(t)) => assert_eq!(&s(&d["text"]), t),
                other => panic!("text done outside message: {other:?}"),
            },
            "response.function_call_arguments.delta" => match out.blocks.last_mut() {
                Some(Block::Tool { args, .. }) => args.push_str(&s(&d["delta"])),
                other => panic!("args delta outside call: {other:?}"),
            },
            "response.function_call_arguments.done" => match out.blocks.last() {
                Some(Block::Tool { args, .. }) => assert_eq!(&s(&d["arguments"]), args),
                other => panic!("args done outside call: {other:?}"),
            },
            "response.output_item.done" => {
                let item = &d["item"];
                if let Some(Block::Thinking { signature, .. }) = out.blocks.last_mut() {
                    *signature = item["encrypted_content"].as_str().map(str::to_owned);
                }
            }
            "response.completed" | "response.incomplete" => {
                assert_eq!(i, events.len() - 1, "terminal event is last");
                let r = &d["response"];
                out.stop = s(&r["status"]);
                if let Some(reason) = r["incomplete_details"]["reason"].as_str() {
                    out.stop = format!("{}:{reason}", out.stop);
                }
                let usage = &r["usage"];
                let cached = u(&usage["input_tokens_details"]["cached_tokens"]);
                out.usage = Usage {
                    input: u(&usage["input_tokens"]) - cached,
                    output: u(&usage["output_tokens"]),
                    cache_read: cached,
                    cache_write: 0,
                };
                assert_eq!(
                    r["output"].as_array().map(Vec::len),
                    Some(out.blocks.len()),
                    "final output lists every item"
                );
            }
            other => panic!("unknown event {other}"),
        }
    }
    out
}

pub fn google(events: &[Event]) -> Assembled {
    let mut out = Assembled::default();
    for (i, e) in events.iter().enumerate() {
        assert!(e.event.is_none(), "gemini events are unnamed");
        let d = e.json();
        let candidate = &d["candidates"][0];
        assert_eq!(candidate["content"]["role"], "model");
        for part in candidate["content"]["parts"].as_array().expect("parts") {
            if let Some(text) = part["text"].as_str() {
                let thought = part["thought"].as_bool().unwrap_or(false);
                let sig = part["thoughtSignature"].as_str().map(str::to_owned);
                match (out.blocks.last_mut(), thought) {
                    (Some(Block::Thinking { text: t, signature }), true) => {
                        t.push_str(text);
                        if sig.is_some() {
                            *signature = sig;
                        }
                    }
                    (Some(Block::Text(t)), false) => t.push_str(text),
                    (_, true) => out.blocks.push(Block::Thinking {
                        text: text.to_owned(),
                        signature: sig,
                    }),
                    (_, false) => out.blocks.push(Block::Text(text.to_owned())),
                }
            }
            if let Some(call) = part.get("functionCall") {
                out.blocks.push(Block::Tool {
                    id: s(&call["id"]),
                    name: s(&call["name"]),
                    args: call["args"].to_string(),
                });
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            assert_eq!(i, events.len() - 1, "finishReason only on the last chunk");
            out.stop = reason.to_owned();
        }
        let usage = &d["usageMetadata"];
        let cached = u(&usage["cachedContentTokenCount"]);
        out.usage = Usage {
            input: u(&usage["promptTokenCount"]) - cached,
            output: u(&usage["candidatesTokenCount"]) + u(&usage["thoughtsTokenCount"]),
            cache_read: cached,
            cache_write: 0,
        };
    }
    out
}
