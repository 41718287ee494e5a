//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod components_diff;
mod components_markdown;
mod components_widgets;
mod renderer;
mod renderer_terminal;
