//! Shared helpers for the testkit's integration tests: a reqwest client and an incremental SSE
//! reader that hands out events as they arrive.

// Test helpers panic on purpose: a failed expectation is a failed test.
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

pub mod assemble;

use std::collections::VecDeque;
use std::time::Duration;

use knightcode_testkit::MockServer;
use serde_json::Value;

/// Safety net so a broken test fails instead of hanging; never used to wait for progress.
pub const GUARD: Duration = Duration::from_secs(20);

pub fn client() -> reqwest::Client {
    // reqwest is built without a bundled crypto provider; plain http still builds a rustls
    // config, so one provider must be installed (a second install attempt just fails).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .build()
        .expect("build reqwest client")
}

/// One parsed SSE event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub event: Option<String>,
    pub data: String,
}

impl Event {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("event data is not JSON ({e}): {}", self.data))
    }
}

/// Reads SSE events from a streaming response as they arrive.
pub struct SseReader {
    resp: reqwest::Response,
    buf: Vec<u8>,
    ready: VecDeque<Event>,
}

impl SseReader {
    pub fn new(resp: reqwest::Response) -> Self {
        SseReader {
            resp,
            buf: Vec::new(),
            ready: VecDeque::new(),
        }
    }

    /// The next event; `Ok(None)` at a clean end of body, `Err` when the body breaks.
    pub async fn next(&mut self) -> Result<Option<Event>, reqwest::Error> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Ok(Some(event));
            }
            match tokio::time::timeout(GUARD, self.resp.chunk())
                .await
                .expect("stream made no progress")?
            {
                Some(bytes) => {
                    self.buf.extend_from_slice(&bytes);
                    self.parse();
                }
                None => {
                    assert!(
                        self.buf.iter().all(u8::is_ascii_whitespace),
                        "stream ended inside an event: {:?}",
                        String::from_utf8_lossy(&self.buf)
                    );
                    return Ok(None);
                }
            }
        }
    }

    /// Reads exactly `n` events.
    pub async fn take(&mut self, n: usize) -> Vec<Event> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(
                self.next()
                    .await
                    .expect("stream error")
                    .expect("stream ended early"),
            );
        }
        out
    }

    /// Reads every remaining event of a well-formed stream.
    pub async fn rest(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(event) = self.next().await.expect("stream error") {
            out.push(event);
        }
        out
    }

    /// The rest of the body as raw text, for payloads that are not SSE (Gemini's in-stream
    /// error object). Events already parsed but not taken are an error.
    pub async fn rest_raw(&mut self) -> String {
        assert!(self.ready.is_empty(), "unread events: {:?}", self.ready);
        while let Some(bytes) = tokio::time::timeout(GUARD, self.resp.chunk())
            .await
            .expect("stream made no progress")
            .expect("stream error")
        {
            self.buf.extend_from_slice(&bytes);
        }
        String::from_utf8(std::mem::take(&mut self.buf)).expect("utf-8")
    }

    fn parse(&mut self) {
        while let Some(end) = find(&self.buf, b"\n\n") {
            let block: Vec<u8> = self.buf.drain(..end + 2).collect();
            let text = String::from_utf8(block).expect("event is UTF-8");
            let mut event = None;
            let mut data: Vec<&str> = Vec::new();
            for line in text.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    event = Some(v.to_owned());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push(v);
                } else if !line.is_empty() {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            self.ready.push_back(Event {
                event,
                data: data.join("\n"),
            });
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// POSTs `body` to the server's endpoint for `model`.
pub async fn post(
    client: &reqwest::Client,
    server: &MockServer,
    model: &str,
    body: Value,
) -> reqwest::Response {
    client
        .post(server.endpoint_url(model))
        .header("x-api-key", "test-key")
        .json(&body)
        .send()
        .await
        .expect("send request")
}

/// POSTs a minimal streaming request and returns an SSE reader over a 200 response.
pub async fn open_stream(client: &reqwest::Client, server: &MockServer, model: &str) -> SseReader {
    let resp = post(
        client,
        server,
        model,
        serde_json::json!({"model": model, "stream": true, "messages": []}),
    )
    .await;
    assert_eq!(resp.status(), 200, "unexpected status");
    SseReader::new(resp)
}
