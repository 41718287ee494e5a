//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod checkpoint;
mod context;
mod ownership;
mod persistence;
mod pi_fixtures;
mod plan_mode;
mod property;
mod turns;
