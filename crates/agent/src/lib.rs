//! KnightCode's agent loop and the tool interface it drives.
//!
//! No filesystem, terminal or persistence here: the loop talks to a provider and to tools
//! through traits, so it is testable in milliseconds.

pub mod tool;

pub use tool::ExecutionMode;
pub use tool::Tool;
pub use tool::ToolContext;
pub use tool::ToolDefinition;
pub use tool::ToolError;
pub use tool::ToolFuture;
pub use tool::ToolOutput;
pub use tool::ToolRegistry;
pub use tool::UpdateSink;
