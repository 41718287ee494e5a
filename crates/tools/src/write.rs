//! The `write` tool.

use std::path::Path;
use std::sync::Arc;

use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::diff::{display_diff, normalize_to_lf, strip_bom};
use crate::error::ToolsError;
use crate::ops::FileOps;
use crate::path::resolve_to_cwd;
use crate::queue::FileMutationQueue;
use crate::util::{js_len, parse_args};

/// Files above this size (and contents above this length) get no display diff.
const MAX_DIFF_CHARS: usize = 1024 * 1024;

/// Creates or replaces whole files.
pub struct WriteTool {
    definition: ToolDefinition,
    ops: Arc<dyn FileOps>,
    queue: FileMutationQueue,
}

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
}

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "write".to_owned(),
        label: "write".to_owned(),
        description: "Write content to a file, creating the file if it is missing and \
                      replacing it if it exists. Missing parent directories are created."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {
                "path": {"type": "string", "description": "File to write, relative or absolute"},
                "content": {"type": "string", "description": "Text to put in the file"}
            }
        }),
        prompt_snippet: Some("Create or overwrite files".to_owned()),
        prompt_guidelines: vec![
            "Use write only to create new files or to replace a file's contents entirely."
                .to_owned(),
        ],
        execution: ExecutionMode::Parallel,
    }
}

/// The display diff against the previous contents, when there were some that differ.
fn overwrite_diff(previous: Option<&str>, content: &str) -> Option<String> {
    let previous = previous?;
    if js_len(previous) + js_len(content) > MAX_DIFF_CHARS {
        return None;
    }
    let before = normalize_to_lf(strip_bom(previous));
    let after = normalize_to_lf(strip_bom(content));
    (before != after).then(|| display_diff(&before, &after).0)
}

impl WriteTool {
    pub fn new(ops: Arc<dyn FileOps>, queue: FileMutationQueue) -> Self {
        Self {
            definition: definition(),
            ops,
            queue,
        }
    }

    /// Previous contents for the diff; anything unusual (missing, large, unreadable) just
    /// means no diff, and the write itself reports real problems.
    async fn previous(&self, path: &Path) -> Option<String> {
        let stat = self.ops.stat(path).await.ok()?;
        if !stat.is_file || stat.size > MAX_DIFF_CHARS as u64 {
            return None;
        }
        let data = self.ops.read_file(path).await.ok()?;
        Some(String::from_utf8_lossy(&data).into_owned())
    }

    async fn run(&self, args: WriteArgs, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = resolve_to_cwd(&args.path, &context.cwd);
        // Aborts are checked between steps, never mid-step, so the queue is only released
        // once the file operation in flight has settled.
        let aborted = || {
            if context.cancel.is_cancelled() {
                Err(ToolError::from(ToolsError::Aborted))
            } else {
                Ok(())
            }
        };
        self.queue
            .run(&path, async {
                aborted()?;
                let previous = self.previous(&path).await;
                aborted()?;
                if let Some(parent) = path.parent()
                    && let Err(error) = self.ops.create_dir_all(parent).await
                {
                    return Err(ToolError::failed(mkdir_error(&error, parent)));
                }
                aborted()?;
                self.ops
                    .write_file(&path, args.content.as_bytes())
                    .await
                    .map_err(|error| {
                        ToolError::failed(crate::util::node_error(&error, "open", Some(&path)))
                    })?;
                aborted()?;
                let output = ToolOutput::text(format!("Successfully wrote to {}", args.path));
                Ok(match overwrite_diff(previous.as_deref(), &args.content) {
                    Some(diff) => output.with_details(json!({"diff": diff})),
                    None => output,
                })
            })
            .await
    }
}

impl Tool for WriteTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args: WriteArgs = parse_args(arguments)?;
            self.run(args, &context).await
        })
    }
}

/// Why the folders of a written file could not be made. A file standing where a folder must
/// be comes back from `mkdir -p` as "already exists"; Node (and so the model) knows that case
/// as ENOTDIR, and the file in the way is what to fix.
fn mkdir_error(error: &std::io::Error, parent: &std::path::Path) -> String {
    if error.kind() == std::io::ErrorKind::AlreadyExists
        && let Some(file) = parent.ancestors().find(|dir| dir.is_file())
    {
        let not_a_dir = std::io::Error::from_raw_os_error(nix::errno::Errno::ENOTDIR as i32);
        return format!(
            "{} ({} is a file, not a folder)",
            crate::util::node_error(&not_a_dir, "mkdir", Some(parent)),
            file.display()
        );
    }
    crate::util::node_error(error, "mkdir", Some(parent))
}
