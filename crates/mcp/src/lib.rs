//! KnightCode's MCP client (docs/mcp.md): the `mcp.json` files (user, and the project's when
//! it is trusted) read and checked entry by entry, and a [`McpManager`] that connects every
//! enabled server in the background (stdio in its own process group, streamable HTTP), lists
//! their tools and calls them with a timeout that progress renews.
//!
//! Built on `rmcp`, the official Rust SDK, with the client side only. What the model sees of
//! a server (tool names, exposure, result text) is decided here too, so the runtime only
//! wraps each tool for the agent's registry.

mod auth;
mod client;
mod config;
mod error;
mod exposure;
mod interpolate;
mod log;
mod manager;
mod names;
mod prompt_section;
mod report;
mod resource_cache;
mod result;

pub use auth::DEFAULT_CLIENT_NAME;
pub use auth::OAuthConfig;
pub use auth::ProviderToken;
pub use auth::login::DEFAULT_SIGN_IN_TIMEOUT;
pub use auth::login::SignIn;
pub use auth::normalize_url;
pub use auth::store::AuthStore;
pub use config::ConfigIssue;
pub use config::LoadedConfig;
pub use config::Scope;
pub use config::ServerConfig;
pub use config::ServerPatch;
pub use config::Transport;
pub use config::add_server;
pub use config::check_entry;
pub use config::extension_server;
pub use config::load_config;
pub use config::names_clash;
pub use config::project_config_path;
pub use config::remove_server;
pub use config::update_server;
pub use config::user_config_path;
pub use error::McpError;
pub use exposure::Exposure;
pub use log::ServerLog;
pub use log::format_line as format_log_line;
pub use manager::ConnectOptions;
pub use manager::McpManager;
pub use manager::ProgressSink;
pub use manager::ServerState;
pub use manager::ServerStatus;
pub use manager::ToolInfo;
pub use names::namespace_name;
pub use names::tool_name;
pub use prompt_section::MAX_SECTION_CHARS;
pub use prompt_section::SECTION_NAME;
pub use prompt_section::servers_section;
pub use report::by_attention;
pub use report::source_label;
pub use report::status_lines;
pub use result::CallOutput;
pub use result::TRUNCATE_LIMIT;
pub use result::resource_output;
