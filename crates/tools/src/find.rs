//! The `find` tool: glob search for paths.

use std::path::Path;
use std::sync::Arc;

use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use knightcode_protocol::wire::format_js_number;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ToolsError;
use crate::listing::{Listing, search_root};
use crate::ops::{FileOps, GlobRequest};
use crate::truncate::DEFAULT_MAX_BYTES;
use crate::util::parse_args;

const DEFAULT_LIMIT: f64 = 1000.0;

/// Finds files and directories by glob.
pub struct FindTool {
    definition: ToolDefinition,
    ops: Arc<dyn FileOps>,
}

#[derive(Deserialize)]
struct FindArgs {
    pattern: String,
    path: Option<String>,
    limit: Option<f64>,
}

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "find".to_owned(),
        label: "find".to_owned(),
        description: format!(
            "Find files by glob pattern. Returns the matching paths relative to the searched \
             directory. Files ignored by .gitignore are skipped. Output stops at {} results or \
             {}KB, whichever comes first.",
            format_js_number(DEFAULT_LIMIT),
            DEFAULT_MAX_BYTES / 1024
        ),
        parameters: json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Glob the paths must match, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'"},
                "path": {"type": "string", "description": "Directory to search (defaults to the current directory)"},
                "limit": {"type": "number", "description": "Most results to return (default: 1000)"}
            }
        }),
        prompt_snippet: Some("Find files by glob pattern (respects .gitignore)".to_owned()),
        prompt_guidelines: Vec::new(),
        execution: ExecutionMode::Parallel,
    }
}

/// A result made relative to the search directory, with `/` separators and a directory's
/// trailing `/` kept.
fn relativize(result: &str, root: &Path) -> String {
    let trailing = result.ends_with('/');
    let trimmed = result.trim_end_matches('/');
    let path = Path::new(trimmed);
    let relative = if path.is_absolute() {
        path.strip_prefix(root).unwrap_or(path)
    } else {
        path
    };
    let mut text = relative.to_string_lossy().into_owned();
    if trailing && !text.ends_with('/') {
        text.push('/');
    }
    text
}

impl FindTool {
    pub fn new(ops: Arc<dyn FileOps>) -> Self {
        Self {
            definition: definition(),
            ops,
        }
    }

    async fn run(&self, args: FindArgs, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let (root, _) =
            search_root(self.ops.as_ref(), args.path.as_deref(), &context.cwd, true).await?;
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1.0);
        let found = self
            .ops
            .glob(GlobRequest {
                pattern: args.pattern,
                dir: root.clone(),
                limit: limit.ceil() as usize,
                ignore: vec!["**/node_modules/**".to_owned(), "**/.git/**".to_owned()],
                cancel: context.cancel.clone(),
            })
            .await?;
        let relativized: Vec<String> = found
            .paths
            .iter()
            .map(|line| line.trim_end_matches('\r').trim())
            .filter(|line| !line.is_empty())
            .map(|line| relativize(line, &root))
            .collect();
        if relativized.is_empty() {
            let mut text = "No files found matching pattern".to_owned();
            if !found.notes.is_empty() {
                text.push_str(&format!("\n\n[{}]", found.notes.join(". ")));
            }
            return Ok(ToolOutput::text(text));
        }
        let mut listing = Listing::new(&relativized);
        if relativized.len() as f64 >= limit {
            listing.limit_reached(
                "results",
                ", or refine pattern",
                "resultLimitReached",
                limit,
            );
        }
        listing.size_limit();
        for note in found.notes {
            listing.notice(note);
        }
        Ok(listing.output())
    }
}

impl Tool for FindTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args: FindArgs = parse_args(arguments)?;
            if context.cancel.is_cancelled() {
                return Err(ToolsError::Aborted.into());
            }
            // Finding mutates nothing, so an abort can return at once.
            tokio::select! {
                () = context.cancel.cancelled() => Err(ToolsError::Aborted.into()),
                output = self.run(args, &context) => output,
            }
        })
    }
}
