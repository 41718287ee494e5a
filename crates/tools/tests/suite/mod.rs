//! One module per former test binary; see CONTRIBUTING.md ("Tests") for where a new test goes.

mod bash;
mod edit;
mod mutation_queue;
mod read;
mod scale;
mod schemas;
mod search;
mod web;
mod write;
