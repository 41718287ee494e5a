//! Tools that reach other tools through the loop's nested calls and activations, without
//! knowing where those come from (built in, an extension, an MCP server):
//! - `tool_search` finds tools that are not declared to the model (BM25 over their names,
//!   descriptions and namespaces) and declares the matches for the next request;
//! - `codemode` runs a JavaScript script in a fresh QuickJS context that calls tools
//!   (`tools.*`), searches them (`searchTools`, the same ranking) and outputs only what the
//!   model needs.

pub mod bm25;
mod codemode;
mod tool_search;

pub use codemode::CODEMODE_NAME;
pub use codemode::ClassifyFuture;
pub use codemode::Codemode;
pub use codemode::DEFAULT_INLINE_BUDGET;
pub use codemode::SCRIPT_GRAMMAR;
pub use codemode::STORE_ENTRY_TYPE;
pub use codemode::ScriptModels;
pub use codemode::ScriptStore;
pub use codemode::describe_output;
pub use codemode::description;
pub use codemode::identifier;
pub use codemode::ts_type;
pub use tool_search::TOOL_SEARCH_NAME;
pub use tool_search::ToolSearch;

/// What went wrong outside a script's own failures.
#[derive(Debug, thiserror::Error)]
pub enum CodemodeError {
    /// The session could not record the script's `store()` writes.
    #[error("{0}")]
    Store(String),
}
