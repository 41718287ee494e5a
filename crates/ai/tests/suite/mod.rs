//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod catalog;
mod classify;
mod codex;
mod error_kinds;
mod faults;
mod grammar_tools;
mod local;
mod requests;
mod streaming;
mod strict_tools;
mod subscription;
