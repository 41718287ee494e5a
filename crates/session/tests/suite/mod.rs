//! One module per former test binary; see CONTRIBUTING.md ("Tests") for where a new test goes.

mod context;
mod ownership;
mod persistence;
mod pi_fixtures;
mod property;
