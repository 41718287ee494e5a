//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod context;
mod ownership;
mod persistence;
mod pi_fixtures;
mod property;
