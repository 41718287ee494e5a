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

use crate::image::{IMAGE_TOO_LARGE_NOTE, ImagePolicy, ImagePolicySource, NON_VISION_NOTE};
use crate::lines::{LineSlice, LineWindow};
use crate::ops::{Access, FileOps};
use crate::path::resolve_read_path;
use crate::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationOptions, format_size,
    truncate_head,
};
use crate::util::{node_error, parse_args};

/// Bytes read to recognise an image by its signature.
const IMAGE_SNIFF_BYTES: usize = 4100;

/// Reads text files (with paging) and images (fitted to the model's image limits).
pub struct ReadTool {
    definition: ToolDefinition,
    ops: Arc<dyn FileOps>,
    images: Option<ImagePolicySource>,
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
            images: None,
        }
    }

    /// Asks `images` how to treat each image (resize setting, model limits, vision);
    /// without it images are fitted to the default limits.
    pub fn with_image_policy(mut self, images: ImagePolicySource) -> Self {
        self.images = Some(images);
        self
    }

    fn image_policy(&self) -> ImagePolicy {
        self.images
            .as_ref()
            .map(|source| source())
            .unwrap_or_default()
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
            return Ok(read_image(data, mime, self.image_policy()).await);
        }
        if crate::lines::looks_binary(&head) {
            let size = ops.stat(&path).await.map(|stat| stat.size).unwrap_or(0);
            return Ok(ToolOutput::text(format!(
                "[{} is a binary file ({}); read shows text files and images only. Use bash to inspect it (for example: xxd {} | head).]",
                args.path,
                format_size(size),
                args.path
            ))
            .with_details(json!({ "binary": true, "size": size })));
        }
        let start = first_line(&args);
        // The window's text is kept up to twice the output limit: enough for the truncation
        // below to see that it was cut, never the whole of a large file.
        let window = LineWindow {
            start,
            lines: args.limit.map(|limit| limit.max(0.0).trunc() as usize),
            max_bytes: 2 * DEFAULT_MAX_BYTES,
        };
        let slice = ops.read_lines(&path, window).await.map_err(read_error)?;
        read_text(&slice, start, &args)
    }
}

/// The image (fitted when auto-resize is on) with its notes: the scale when it was resized,
/// and that it will be dropped when the model takes no images.
async fn read_image(data: Vec<u8>, mime: &str, policy: ImagePolicy) -> ToolOutput {
    let non_vision = (policy.model_accepts_images == Some(false)).then_some(NON_VISION_NOTE);
    let with_notes = |mut text: String, notes: &[Option<&str>]| {
        for note in notes.iter().flatten() {
            text.push('\n');
            text.push_str(note);
        }
        text
    };
    let (text, image) = if policy.auto_resize {
        let owned_mime = mime.to_owned();
        // Decoding and encoding a large photo takes long enough to stall other tasks.
        let fitted = tokio::task::spawn_blocking(move || {
            crate::image::fit_image(&data, &owned_mime, &policy.limits)
        })
        .await
        .ok()
        .flatten();
        match fitted {
            None => (
                with_notes(
                    format!("Read image file [{mime}]"),
                    &[Some(IMAGE_TOO_LARGE_NOTE), non_vision],
                ),
                None,
            ),
            Some(fitted) => {
                let scale = fitted.dimension_note();
                (
                    with_notes(
                        format!("Read image file [{}]", fitted.mime_type),
                        &[scale.as_deref(), non_vision],
                    ),
                    Some(ContentBlock::image(fitted.data, fitted.mime_type)),
                )
            }
        }
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(&data);
        (
            with_notes(format!("Read image file [{mime}]"), &[non_vision]),
            Some(ContentBlock::image(encoded, mime)),
        )
    };
    let mut content = vec![ContentBlock::text(text)];
    content.extend(image);
    ToolOutput {
        content,
        ..ToolOutput::default()
    }
}

/// The 0-based line `offset` (1-based, 0 meaning the start) asks for.
fn first_line(args: &ReadArgs) -> usize {
    args.offset
        .filter(|offset| *offset != 0.0)
        .map_or(0, |offset| (offset - 1.0).max(0.0).trunc() as usize)
}

/// Pages and truncates text per the arguments, with the notices that tell the model how to
/// continue.
fn read_text(slice: &LineSlice, start: usize, args: &ReadArgs) -> Result<ToolOutput, ToolError> {
    let total = slice.total;
    if start >= total {
        let offset = args.offset.map(format_js_number).unwrap_or_default();
        return Err(ToolError::failed(format!(
            "Offset {offset} is beyond end of file ({total} lines total)"
        )));
    }
    let user_limited = args.limit.map(|_| slice.window_lines);
    let truncation = truncate_head(&slice.text, TruncationOptions::default());
    let first_display = start + 1;
    if truncation.first_line_exceeds_limit {
        let size = format_size(slice.first_line_len as u64);
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
