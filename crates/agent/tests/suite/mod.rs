//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod client;
mod queues;
mod retry;
mod turns;
