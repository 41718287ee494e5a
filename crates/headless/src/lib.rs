//! Headless modes of KnightCode: print and JSON mode ([`oneshot`]), RPC mode
//! (`knightcode --mode rpc`, [`rpc::server`]) and its building blocks — strict JSONL framing ([`rpc::framing`]), a typed client that drives
//! the server ([`rpc::client`]) and the server side of the extension UI subprotocol
//! ([`rpc::ui_bridge`]).

mod error;
pub mod oneshot;
pub mod rpc;
mod start;

pub use error::HeadlessError;
