//! One module per former test binary; see CONTRIBUTING.md ("Tests") for where a new test goes.

mod client;
mod framing;
mod ui_bridge;
