//! Dev-only test helpers for KnightCode: in-process mock LLM provider servers that speak the
//! real streaming wire formats (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses,
//! Gemini), so provider clients and the whole agent binary can be tested without network.
//!
//! A [`MockServer`] listens on `127.0.0.1`, answers each request to its format's endpoint with
//! the next [`ScriptedReply`] as a chunked `text/event-stream` (one SSE event per HTTP chunk,
//! flushed), records every request, and can inject [`Fault`]s: HTTP errors, truncated streams,
//! malformed events, stalls and in-stream provider errors.
//!
//! ```no_run
//! # async fn demo() -> Result<(), knightcode_testkit::TestkitError> {
//! use knightcode_testkit::{MockServer, ScriptedReply, WireFormat};
//!
//! let server = MockServer::start(
//!     WireFormat::AnthropicMessages,
//!     vec![
//!         ScriptedReply::default()
//!             .with_thinking("Let me look.", Some("sig"))
//!             .with_tool_call("toolu_1", "read", r#"{"path":"a.txt"}"#),
//!         ScriptedReply::text("Done."),
//!     ],
//! )
//! .await?;
//! let base_url = server.base_url(); // give this to the client under test
//! # let _ = base_url;
//! // ... run the client ...
//! let requests = server.requests();
//! assert_eq!(requests[0].path, "/v1/messages");
//! # Ok(()) }
//! ```

mod clock;
mod cloud;
mod error;
mod faux;
mod formats;
mod http;
mod llama;
mod log;
pub mod oauth;
pub mod process;
mod script;
mod server;
mod sse;
mod thread_server;
mod web;

pub use clock::MANUAL_CLOCK_EPOCH_MS;
pub use clock::ManualClock;
pub use cloud::{Ec2Metadata, Ec2Role, GceMetadata, StandIn};
pub use error::TestkitError;
pub use faux::FauxProvider;
pub use faux::FauxReply;
pub use llama::{LlamaRequest, LlamaScript, LlamaServer};
pub use script::{
    Chunking, Fault, MockErrorKind, MockStop, MockUsage, ReplyPart, ScriptedReply, WireFormat,
};
pub use server::{Activity, MockServer, MockServerBuilder, RecordedRequest};
pub use web::{WebRequest, WebResponse, WebServer};

/// Reads a script file: a JSON array of [`ScriptedReply`] values.
pub fn read_script(path: &std::path::Path) -> Result<Vec<ScriptedReply>, TestkitError> {
    let text = std::fs::read_to_string(path).map_err(|source| TestkitError::ReadScript {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| TestkitError::ParseScript {
        path: path.to_owned(),
        source,
    })
}
