//! What grep, find and ls share around their searches: checking the path they were given,
//! and turning result rows into the truncated text with the reference agent's notices.

use std::path::{Path, PathBuf};

use knightcode_agent::tool::{ToolError, ToolOutput};
use knightcode_protocol::JsNumber;
use knightcode_protocol::wire::format_js_number;
use serde_json::{Map, Value, json};

use crate::ops::FileOps;
use crate::path::resolve_to_cwd;
use crate::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, format_size, truncate_head};

/// `path` (default `.`) resolved against `cwd`, checked to exist (`Path not found: …`) and,
/// when `dir_only`, to be a directory (`Not a directory: …`). Returns whether it is one.
pub(crate) async fn search_root(
    ops: &dyn FileOps,
    path: Option<&str>,
    cwd: &Path,
    dir_only: bool,
) -> Result<(PathBuf, bool), ToolError> {
    let root = resolve_to_cwd(path.unwrap_or("."), cwd);
    let Ok(stat) = ops.stat(&root).await else {
        return Err(ToolError::failed(format!(
            "Path not found: {}",
            root.display()
        )));
    };
    if dir_only && !stat.is_dir {
        return Err(ToolError::failed(format!(
            "Not a directory: {}",
            root.display()
        )));
    }
    Ok((root, stat.is_dir))
}

/// Result rows cut to 50 KB (whole lines), plus the notices appended after a blank line as
/// `[first. second]` and the matching `details` keys, in the order the tool adds them.
pub(crate) struct Listing {
    text: String,
    truncation: crate::truncate::TruncationResult,
    notices: Vec<String>,
    details: Map<String, Value>,
}

impl Listing {
    pub(crate) fn new(rows: &[String]) -> Self {
        let truncation = truncate_head(&rows.join("\n"), TruncationOptions::bytes_only());
        Self {
            text: truncation.content.clone(),
            truncation,
            notices: Vec::new(),
            details: Map::new(),
        }
    }

    /// Lines kept after truncation.
    pub(crate) fn output_lines(&self) -> usize {
        self.truncation.output_lines
    }

    pub(crate) fn detail(&mut self, key: &str, value: Value) {
        self.details.insert(key.to_owned(), value);
    }

    /// `{limit} {what} limit reached. Use limit={2·limit} for more{hint}`.
    pub(crate) fn limit_reached(&mut self, what: &str, hint: &str, key: &str, limit: f64) {
        self.notices.push(format!(
            "{} {what} limit reached. Use limit={} for more{hint}",
            format_js_number(limit),
            format_js_number(limit * 2.0)
        ));
        self.detail(key, Value::from(JsNumber(limit)));
    }

    /// `50.0KB limit reached` when the rows were cut.
    pub(crate) fn size_limit(&mut self) {
        if self.truncation.truncated {
            self.notices.push(format!(
                "{} limit reached",
                format_size(DEFAULT_MAX_BYTES as u64)
            ));
            let truncation = json!(self.truncation);
            self.detail("truncation", truncation);
        }
    }

    pub(crate) fn notice(&mut self, notice: String) {
        self.notices.push(notice);
    }

    /// The text with its notices; details only when any were set.
    pub(crate) fn output(mut self) -> ToolOutput {
        if !self.notices.is_empty() {
            self.text
                .push_str(&format!("\n\n[{}]", self.notices.join(". ")));
        }
        let output = ToolOutput::text(self.text);
        if self.details.is_empty() {
            output
        } else {
            output.with_details(Value::Object(self.details))
        }
    }
}
