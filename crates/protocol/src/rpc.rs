//! Wire types of RPC mode (`knightcode --mode rpc`, spec `rpc.md`): commands read from stdin,
//! responses and extension UI requests written to stdout, extension UI replies read from stdin.
//! Session events are [`crate::AgentEvent`], which already covers the RPC-only
//! `bash_execution_update` and `extension_error`.
//!
//! Framing (one JSON object per LF-terminated line) lives with the I/O in `knightcode-headless`;
//! this module only turns one line into a typed value and back:
//!
//! * [`RpcInput::parse`] classifies a stdin line; [`RpcInput::error_response`] is the answer to
//!   a line that is not a runnable command (`Failed to parse command: …`,
//!   `Unknown command: <type>`).
//! * [`RpcResponse`] writes `{id?, type:"response", command, success, data? | error?}` with the
//!   keys in the reference order; `data` keeps its JSON text, and the shapes in [`data`] read it.
//! * [`RpcOutput::parse`] classifies a stdout line for clients.

pub mod command;
pub mod data;
pub mod response;
pub mod ui;

pub use command::COMMAND_TYPES;
pub use command::QueueMode;
pub use command::RpcCommand;
pub use command::RpcCommandBody;
pub use command::RpcInput;
pub use command::StreamingBehavior;
pub use data::*;
pub use response::RpcOutcome;
pub use response::RpcOutput;
pub use response::RpcResponse;
pub use ui::ExtensionUiRequest;
pub use ui::ExtensionUiResponse;
pub use ui::NotifyType;
pub use ui::UiReply;
pub use ui::UiRequestKind;
pub use ui::WidgetPlacement;
