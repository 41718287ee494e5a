//! One module per former test binary; see CONTRIBUTING.md ("Tests") for where a new test goes.

mod faults;
mod host;
