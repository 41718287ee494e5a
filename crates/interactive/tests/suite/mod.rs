//! One module per former test binary; see CONTRIBUTING.md ("Tests") for where a new test goes.

mod pickers_models;
mod pickers_prompts;
mod pickers_sessions;
mod pickers_tree;
mod transcript;
mod transcript_retries;
