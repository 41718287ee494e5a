//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod actor;
mod auto_compaction;
mod bash_env;
mod branch_summary;
mod bug_report;
mod cache_warming;
mod compaction;
mod compaction_hooks;
mod faux;
mod hooks;
mod images;
mod import;
mod long_session;
mod model_select;
mod navigate;
mod prompt;
mod resources;
mod sessions;
mod settings;
mod settings_effects;
mod trust;
mod undo;
