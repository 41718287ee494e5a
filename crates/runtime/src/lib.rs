//! KnightCode's session runtime (`AgentSession`, the SDK): settings, project trust, resources
//! and the system prompt; it wires the agent loop, tools, session store and providers.

pub mod actor;
pub mod agent_session;
mod atomic;
pub mod block_images;
pub mod bug_report;
pub mod cache_warming;
mod codemode_tools;
pub mod compaction;
pub mod context_files;
pub mod diagnostics;
pub mod dialogs;
mod error;
pub mod export;
pub mod extensions;
pub mod file_history;
pub mod hooks;
pub mod local_models;
pub mod mcp;
mod mcp_resources;
pub mod model_select;
pub mod paths;
mod plan_mode;
pub mod project_packages;
pub mod resources;
pub mod sandbox;
pub mod services;
pub mod sessions;
pub mod settings;
pub mod shutdown;
pub mod system_prompt;
mod tool_activation;
pub mod tool_selection;
pub mod trust;
pub mod web_tools;

pub use actor::Command;
pub use actor::Reply;
pub use actor::Responder;
pub use actor::SessionEvent;
pub use actor::SessionEvents;
pub use actor::SessionHandle;
pub use agent_session::AgentSession;
pub use agent_session::SessionSetup;
pub use agent_session::SessionTarget;
pub use agent_session::ToolSelection;
pub use agent_session::operations::TranscriptItem;
pub use error::Result;
pub use error::RuntimeError;
pub use extensions::ExtensionSources;
pub use hooks::SessionHooks;
/// Sizes as the tools state their limits (`50.0KB`), for front ends that repeat them.
pub use knightcode_tools::format_size;
pub use services::Services;
pub use settings::Settings;
pub use trust::TrustDecision;
pub use trust::TrustStore;
