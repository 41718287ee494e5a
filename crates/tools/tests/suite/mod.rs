//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod bash;
mod edit;
mod mutation_queue;
mod read;
mod scale;
mod schemas;
mod search;
mod web;
mod write;
