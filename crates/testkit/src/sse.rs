//! One server-sent event as it goes on the wire.

/// A single SSE event: an optional `event:` name and one `data:` payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

impl SseEvent {
    /// A `data:`-only event (OpenAI completions, Gemini).
    pub fn data(value: &serde_json::Value) -> Self {
        SseEvent {
            event: None,
            data: value.to_string(),
        }
    }

    /// A named event whose data is JSON (Anthropic, OpenAI Responses).
    pub fn named(event: &str, value: &serde_json::Value) -> Self {
        SseEvent {
            event: Some(event.to_owned()),
            data: value.to_string(),
        }
    }

    /// A `data:` event with a raw, possibly non-JSON payload (`[DONE]`, garbage).
    pub fn raw(data: &str) -> Self {
        SseEvent {
            event: None,
            data: data.to_owned(),
        }
    }

    /// The bytes of the event, terminated by the blank line that dispatches it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = String::new();
        if let Some(event) = &self.event {
            out.push_str("event: ");
            out.push_str(event);
            out.push('\n');
        }
        // serde_json never emits raw newlines, but raw payloads might: one `data:` per line.
        for line in self.data.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out.into_bytes()
    }
}
