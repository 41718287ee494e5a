//! Wire types of KnightCode: messages, content blocks, usage, session entries and agent events.
//!
//! Pure data with serde; no I/O. Every type reads what the TypeScript agent writes and writes
//! it back byte for byte, including keys and variants this version does not know.

pub mod content;
pub mod entry;
mod error_class;
pub mod event;
pub mod file_history;
pub mod message;
pub mod plan;
pub mod rpc;
pub mod turn;
pub mod usage;
pub mod wire;

pub use content::Blocks;
pub use content::Content;
pub use content::ContentBlock;
pub use content::ImageContent;
pub use content::TextContent;
pub use content::ThinkingContent;
pub use content::ToolCall;
pub use entry::*;
pub use error_class::ErrorClass;
pub use event::AgentEvent;
pub use event::AssistantMessageEvent;
pub use event::CompactionReason;
pub use event::ToolResultPayload;
pub use message::*;
pub use turn::TURN_END;
pub use turn::TURN_MARKER;
pub use turn::TurnEnd;
pub use turn::TurnError;
pub use turn::TurnErrorKind;
pub use turn::TurnStatus;
pub use usage::Cost;
pub use usage::Usage;
pub use wire::Extra;
pub use wire::JsNumber;
pub use wire::MemoryOnly;
pub use wire::Millis;
pub use wire::Object;
pub use wire::Tokens;
