//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod client;
mod framing;
mod ui_bridge;
