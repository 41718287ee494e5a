//! Headless modes of KnightCode. For now: the RPC plumbing that does not need the agent
//! runtime — strict JSONL framing ([`rpc::framing`]), a typed client that drives
//! `knightcode --mode rpc` ([`rpc::client`]) and the server side of the extension UI
//! subprotocol ([`rpc::ui_bridge`]).

mod error;
pub mod rpc;

pub use error::HeadlessError;
