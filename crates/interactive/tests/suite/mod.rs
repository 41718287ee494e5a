//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod pickers_models;
mod pickers_prompts;
mod pickers_sessions;
mod pickers_tree;
mod transcript;
mod transcript_retries;
