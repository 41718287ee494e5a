//! The `read` tool.

use std::sync::Arc;

use base64::Engine;
use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use knightcode_protocol::ContentBlock;
use knightcode_protocol::content::detect_image_mime;
use knightcode_protocol::wire::format_js_number;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ops::{Access, FileOps};
use crate::path::resolve_read_path;
use crate::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationOptions, format_size,
    truncate_head,
};
use crate::util::{node_error, parse_args};

/// Bytes read to recognise an image by its signature.
const IMAGE_SNIFF_BYTES: usize = 4100;

/// Reads text files (with paging) and images.
///
/// Images are returned as they are on disk: no resizing or re-encoding yet.
pub struct ReadTool {
    definition: ToolDefinition,
    ops: Arc<dyn FileOps>,
}

#[derive(Deserialize)]
struct ReadArgs {
    path: String,
    offset: Option<f64>,
    limit: Option<f64>,
}

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "read".to_owned(),
        label: "read".to_owned(),
        description: format!(
            "Read a file. Works for text files and for images (jpg, png, gif, webp, bmp), \
             which come back as attachments. Text is cut off after {DEFAULT_MAX_LINES} lines \
             or {}KB, whichever comes first; page through large files with offset and limit, \
             and to read all of a file keep reading from the next offset until the end.",
            DEFAULT_MAX_BYTES / 1024
        ),
        parameters: json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "File to read, relative or absolute"},
                "offset": {"type": "number", "description": "Line to start at (1-based)"},
                "limit": {"type": "number", "description": "Most lines to return"}
            }
        }),
        prompt_snippet: Some("Read file contents".to_owned()),
        prompt_guidelines: vec!["Use read to look at files rather than cat or sed.".to_owned()],
        execution: ExecutionMode::Parallel,
    }
}

impl ReadTool {
    pub fn new(ops: Arc<dyn FileOps>) -> Self {
        Self {
            definition: definition(),
            ops,
        }
    }

    async fn run(&self, args: ReadArgs, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ops = self.ops.as_ref();
        let path = resolve_read_path(&args.path, &context.cwd, ops).await;
        ops.access(&path, Access::Read)
            .await
            .map_err(|error| ToolError::failed(node_error(&error, "access", Some(&path))))?;
        let read_error =
            |error: std::io::Error| ToolError::failed(node_error(&error, "read", None));
        let head = ops
            .read_prefix(&path, IMAGE_SNIFF_BYTES)
            .await
            .map_err(read_error)?;
        if let Some(mime) = detect_image_mime(&head) {
            let data = ops.read_file(&path).await.map_err(read_error)?;
            let encoded = base64::engine::general_purpose::STANDARD.encode(&data);
            return Ok(ToolOutput {
                content: vec![
                    ContentBlock::text(format!("Read image file [{mime}]")),
                    ContentBlock::image(encoded, mime),
                ],
                details: None,
                is_error: false,
            });
        }
        let data = ops.read_file(&path).await.map_err(read_error)?;
        read_text(&String::from_utf8_lossy(&data), &args)
    }
}

/// Pages and truncates text per the arguments, with the notices that tell the model how to
/// continue.
fn read_text(text: &str, args: &ReadArgs) -> Result<ToolOutput, ToolError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len();
    let start = args
        .offset
        .filter(|offset| *offset != 0.0)
        .map_or(0, |offset| (offset - 1.0).max(0.0).trunc() as usize);
    if start >= total {
        let offset = args.offset.map(format_js_number).unwrap_or_default();
        return Err(ToolError::failed(format!(
            "Offset {offset} is beyond end of file ({total} lines total)"
        )));
    }
    let (selected, user_limited) = match args.limit {
        Some(limit) => {
            let end = (start + limit.max(0.0).trunc() as usize).min(total);
            (lines[start..end].join("\n"), Some(end - start))
        }
        None => (lines[start..].join("\n"), None),
    };
    let truncation = truncate_head(&selected, TruncationOptions::default());
    let first_display = start + 1;
    if truncation.first_line_exceeds_limit {
        let size = format_size(lines[start].len() as u64);
        let text = format!(
            "[Line {first_display} is {size}, exceeds {} limit. Use bash: sed -n '{first_display}p' {} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(DEFAULT_MAX_BYTES as u64),
            args.path
        );
        return Ok(
            ToolOutput::text(text).with_details(json!({"lineCount": 0, "truncation": truncation}))
        );
    }
    let line_count = truncation.output_lines;
    if truncation.truncated {
        let end_display = first_display + truncation.output_lines - 1;
        let limit_note = match truncation.truncated_by {
            Some(TruncatedBy::Lines) => String::new(),
            _ => format!(" ({} limit)", format_size(DEFAULT_MAX_BYTES as u64)),
        };
        let text = format!(
            "{}\n\n[Showing lines {first_display}-{end_display} of {total}{limit_note}. Use offset={} to continue.]",
            truncation.content,
            end_display + 1
        );
        return Ok(ToolOutput::text(text)
            .with_details(json!({"lineCount": line_count, "truncation": truncation})));
    }
    if let Some(taken) = user_limited.filter(|taken| start + taken < total) {
        let remaining = total - (start + taken);
        let text = format!(
            "{}\n\n[{remaining} more lines in file. Use offset={} to continue.]",
            truncation.content,
            start + taken + 1
        );
        return Ok(ToolOutput::text(text).with_details(json!({"lineCount": line_count})));
    }
    Ok(ToolOutput::text(truncation.content).with_details(json!({"lineCount": line_count})))
}

impl Tool for ReadTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args: ReadArgs = parse_args(arguments)?;
            if context.cancel.is_cancelled() {
                return Err(crate::error::ToolsError::Aborted.into());
            }
            // Reading mutates nothing, so an abort can return at once.
            tokio::select! {
                () = context.cancel.cancelled() => Err(crate::error::ToolsError::Aborted.into()),
                output = self.run(args, &context) => output,
            }
        })
    }
}
