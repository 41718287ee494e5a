//! Session export: one self-contained HTML page and the JSONL of one branch.
//!
//! The HTML page carries the whole session (every entry of every branch, the leaf, the
//! system prompt and tools when known) as JSON in a `<script type="application/json">`
//! element and renders it in the browser, lazily, with the page's own CSS and JavaScript
//! inlined: the file needs no network and opens anywhere. Rendering in the browser keeps
//! an export of a 10,000-entry session at one serialisation pass, and the page draws only
//! what is on screen.

mod ansi;
mod colors;
mod error;
mod html;
mod jsonl;

pub use ansi::ansi_lines_to_html;
pub use ansi::ansi_to_html;
pub use colors::ExportColors;
pub use error::ExportError;
pub use error::Result;
pub use html::RenderedTool;
pub use html::SessionData;
pub use html::default_html_name;
pub use html::render_html;
pub use html::write_html;
pub use jsonl::branch_jsonl;
pub use jsonl::default_jsonl_name;
