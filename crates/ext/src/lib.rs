//! The extension host: TypeScript extensions run in one embedded QuickJS runtime per
//! process, on its own thread, started only when an extension is configured.
//!
//! - [`discover`]: which files load (`-e`, `<agentDir>/extensions/`, trusted project).
//! - [`transpile`]: TypeScript stripped at load time (oxc).
//! - [`resolve`]: specifiers to host packages, Node built-ins and files.
//! - `loader`, `cache`, `bytecode`: files to run, through the content-hashed load cache
//!   of stripped code and QuickJS bytecode (`bytecode` is the crate's one `unsafe` module).
//! - [`ExtensionHost`]: loading, events, tools and commands; it implements the agent
//!   loop's hooks, and the runtime adds the session's (`knightcode-runtime`).
//! - `js/`: the module runner, the Node layer, the host packages and the extension API.

mod bytecode;
mod cache;
pub mod discover;
mod engine;
mod error;
mod fetch;
mod fs_ops;
mod hooks;
mod host;
mod js_heap;
mod loader;
mod loadout;
mod nested;
mod oauth_login;
mod ops;
mod process;
mod providers;
mod providers_ops;
pub mod resolve;
mod session_op;
mod tools;
pub mod transpile;
mod tui_ops;
mod virtual_route;
mod watch;

pub use error::CallError;
pub use error::ExtError;
pub use error::PortError;
pub use error::ResolveError;
pub use hooks::JsTool;
pub use host::CommandSpec;
pub use host::ExtensionHost;
pub use host::FlagKind;
pub use host::FlagSpec;
pub use host::HandlerError;
pub use host::HostConfig;
pub use host::McpServerSpec;
pub use host::ProviderSpec;
pub use host::Registry;
pub use host::RendererSpec;
pub use host::ShortcutSpec;
pub use host::ToolSpec;
pub use host::VirtualModelSpec;
pub use oauth_login::LOGIN_CANCELLED;
pub use oauth_login::LoginNews;
pub use oauth_login::OAuthLoginProvider;
pub use providers::AuthFuture;
pub use providers::JsApiProvider;
pub use providers::ModelPort;
pub use providers::RequestAuth;
pub use session_op::PortFuture;
pub use session_op::SessionOp;
pub use session_op::SessionPort;
