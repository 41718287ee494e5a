//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod cache;
mod child_process;
mod faults;
mod fs_watch;
mod host;
mod session_ops;
mod streams;
mod tui_package;
mod typebox;
