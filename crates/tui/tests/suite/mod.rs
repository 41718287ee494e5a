//! One module per former test binary; see CONTRIBUTING.md ("Tests") for where a new test goes.

mod components_diff;
mod components_markdown;
mod components_widgets;
mod renderer;
mod renderer_terminal;
