//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod cache;
mod faults;
mod fs_watch;
mod host;
mod session_ops;
mod tui_package;
mod typebox;
