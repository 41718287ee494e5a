//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod skills;
mod templates;
