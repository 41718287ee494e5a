//! RPC mode (`knightcode --mode rpc`): one JSON object per LF-terminated line on stdin and
//! stdout. Wire types are in [`knightcode_protocol::rpc`]; this module moves them.

pub mod client;
pub mod framing;
pub mod server;
pub mod ui_bridge;

pub use client::RpcClient;
pub use client::RpcClientBuilder;
pub use client::RpcEvent;
pub use client::RpcEvents;
pub use client::SpawnOptions;
pub use framing::CommandReader;
pub use framing::LineReader;
pub use framing::LineWriter;
pub use framing::WriterTask;
pub use framing::spawn_writer;
pub use server::run_stdio;
pub use server::serve;
pub use ui_bridge::DialogOptions;
pub use ui_bridge::UiBridge;
