//! The command-line layer of `knightcode`: argument parsing, mode resolution, help text and
//! the commands that need no agent runtime. `main.rs` only wires these to the process.

pub mod args;
pub mod auth;
pub mod help;
pub mod initial;
pub mod interactive;
pub mod list_models;
pub mod mcp;
mod mcp_login;
mod mcp_report;
pub mod oneshot;
pub mod packages;
pub mod setup;
pub mod unavailable;
