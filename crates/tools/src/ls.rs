//! The `ls` tool.

use std::cmp::Ordering;
use std::sync::Arc;

use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use knightcode_protocol::wire::format_js_number;
use serde::Deserialize;
use serde_json::{Value, json};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::error::ToolsError;
use crate::listing::{Listing, search_root};
use crate::ops::FileOps;
use crate::truncate::DEFAULT_MAX_BYTES;
use crate::util::{node_error, parse_args};

const DEFAULT_LIMIT: f64 = 500.0;

/// Lists one directory.
pub struct LsTool {
    definition: ToolDefinition,
    ops: Arc<dyn FileOps>,
}

#[derive(Deserialize)]
struct LsArgs {
    path: Option<String>,
    limit: Option<f64>,
}

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "ls".to_owned(),
        label: "ls".to_owned(),
        description: format!(
            "List a directory's entries in alphabetical order, directories marked with a \
             trailing '/'. Dotfiles are listed too. Output stops at {} entries or {}KB, \
             whichever comes first.",
            format_js_number(DEFAULT_LIMIT),
            DEFAULT_MAX_BYTES / 1024
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (defaults to the current directory)"},
                "limit": {"type": "number", "description": "Most entries to return (default: 500)"}
            }
        }),
        prompt_snippet: Some("List directory contents".to_owned()),
        prompt_guidelines: Vec::new(),
        execution: ExecutionMode::Parallel,
    }
}

/// Case-insensitive order close to `localeCompare` on lowercased names: accents only break
/// ties (`é` sorts with `e`, not after `z`), then plain code points decide.
fn compare_names(a: &str, b: &str) -> Ordering {
    fn primary(name: &str) -> String {
        name.to_lowercase()
            .nfd()
            .filter(|c| !is_combining_mark(*c))
            .collect()
    }
    primary(a)
        .cmp(&primary(b))
        .then_with(|| a.to_lowercase().cmp(&b.to_lowercase()))
        .then_with(|| a.cmp(b))
}

impl LsTool {
    pub fn new(ops: Arc<dyn FileOps>) -> Self {
        Self {
            definition: definition(),
            ops,
        }
    }

    async fn run(&self, args: LsArgs, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let (dir, _) =
            search_root(self.ops.as_ref(), args.path.as_deref(), &context.cwd, true).await?;
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let mut entries = self.ops.read_dir(&dir).await.map_err(|error| {
            ToolError::failed(format!(
                "Cannot read directory: {}",
                node_error(&error, "scandir", Some(&dir))
            ))
        })?;
        entries.sort_by(|a, b| compare_names(a, b));

        let mut rows = Vec::new();
        let mut limit_reached = false;
        for entry in entries {
            if rows.len() as f64 >= limit {
                limit_reached = true;
                break;
            }
            // Entries that cannot be stat'ed (dangling links, races) are left out.
            let Ok(stat) = self.ops.stat(&dir.join(&entry)).await else {
                continue;
            };
            rows.push(if stat.is_dir {
                format!("{entry}/")
            } else {
                entry
            });
        }
        if rows.is_empty() {
            return Ok(ToolOutput::text("(empty directory)").with_details(json!({"pathCount": 0})));
        }
        let mut listing = Listing::new(&rows);
        listing.detail("pathCount", json!(listing.output_lines()));
        if limit_reached {
            listing.limit_reached("entries", "", "entryLimitReached", limit);
        }
        listing.size_limit();
        Ok(listing.output())
    }
}

impl Tool for LsTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args: LsArgs = parse_args(arguments)?;
            if context.cancel.is_cancelled() {
                return Err(ToolsError::Aborted.into());
            }
            // Listing mutates nothing, so an abort can return at once.
            tokio::select! {
                () = context.cancel.cancelled() => Err(ToolsError::Aborted.into()),
                output = self.run(args, &context) => output,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_case_insensitively_with_accents_beside_their_letter() {
        let mut names = vec!["b", "A", "éclair", "f", ".env", "a"];
        names.sort_by(|a, b| compare_names(a, b));
        assert_eq!(names, vec![".env", "A", "a", "b", "éclair", "f"]);
    }
}
