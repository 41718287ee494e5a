//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod faults;
mod requests;
mod streaming;
