//! The `edit` tool.

use std::sync::Arc;

use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::diff::{
    Edit, apply_edits, detect_crlf, display_diff, normalize_to_lf, restore_crlf, split_bom,
    unified_patch,
};
use crate::error::ToolsError;
use crate::ops::{Access, FileOps};
use crate::path::resolve_to_cwd;
use crate::queue::FileMutationQueue;
use crate::util::{errno_name, parse_args};

/// Context lines of the unified patch in `details.patch`.
const PATCH_CONTEXT: usize = 4;

/// Exact-text replacements in one file.
pub struct EditTool {
    definition: ToolDefinition,
    ops: Arc<dyn FileOps>,
    queue: FileMutationQueue,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EditItem {
    old_text: String,
    new_text: String,
}

#[derive(Deserialize)]
struct EditArgs {
    path: String,
    edits: Option<Vec<EditItem>>,
}

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "edit".to_owned(),
        label: "edit".to_owned(),
        description: "Change one file by exact text replacement. Every edits[].oldText has to \
                      match exactly one place in the original file, and no two edits may \
                      overlap. When changes fall in the same block or on nearby lines, combine \
                      them into a single edit instead of overlapping ones. Don't pad oldText \
                      with long unchanged stretches just to bridge distant changes."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "required": ["path", "edits"],
            "properties": {
                "path": {"type": "string", "description": "File to edit, relative or absolute"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["oldText", "newText"],
                        "properties": {
                            "oldText": {
                                "type": "string",
                                "description": "Exact text of one targeted replacement. It must occur exactly once in the original file and must not overlap any other edits[].oldText of this call."
                            },
                            "newText": {
                                "type": "string",
                                "description": "Text that replaces oldText."
                            }
                        },
                        "additionalProperties": false
                    },
                    "description": "One or more targeted replacements, each matched against the original file rather than after earlier edits. No overlapping or nested edits: when two changes touch the same block or neighbouring lines, merge them into one edit."
                }
            },
            "additionalProperties": false
        }),
        prompt_snippet: Some(
            "Make precise file edits by exact text replacement, several disjoint edits per call"
                .to_owned(),
        ),
        prompt_guidelines: vec![
            "Use edit for precise changes; each edits[].oldText must match the file exactly."
                .to_owned(),
            "To change several separate places in one file, make one edit call with several \
             entries in edits[] rather than several edit calls."
                .to_owned(),
            "Every edits[].oldText is matched against the original file, not against the result \
             of earlier edits. Never send overlapping or nested edits; merge nearby changes into \
             one edit."
                .to_owned(),
            "Keep each edits[].oldText as short as possible while still unique in the file; \
             don't pad it with large unchanged regions."
                .to_owned(),
        ],
        execution: ExecutionMode::Parallel,
    }
}

fn is_single_edit(value: &Value) -> bool {
    value.get("oldText").is_some_and(Value::is_string)
        && value.get("newText").is_some_and(Value::is_string)
}

/// Repairs argument shapes models are known to send: `edits` as a JSON string, a single
/// edit object instead of an array, or the legacy top-level `oldText`/`newText`.
pub fn prepare_edit_arguments(raw: Value) -> Value {
    let Value::Object(mut args) = raw else {
        return raw;
    };
    match args.get("edits") {
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(parsed @ Value::Array(_)) => {
                args.insert("edits".to_owned(), parsed);
            }
            Ok(parsed) if is_single_edit(&parsed) => {
                args.insert("edits".to_owned(), Value::Array(vec![parsed]));
            }
            _ => {}
        },
        Some(single) if is_single_edit(single) => {
            let single = single.clone();
            args.insert("edits".to_owned(), Value::Array(vec![single]));
        }
        _ => {}
    }
    let legacy = match (args.get("oldText"), args.get("newText")) {
        (Some(Value::String(old)), Some(Value::String(new))) => Some((old.clone(), new.clone())),
        _ => None,
    };
    let Some((old_text, new_text)) = legacy else {
        return Value::Object(args);
    };
    let mut edits = match args.get("edits") {
        Some(Value::Array(edits)) => edits.clone(),
        _ => Vec::new(),
    };
    edits.push(json!({"oldText": old_text, "newText": new_text}));
    // Keys keep their order; `edits` takes its old place, or goes last if it was absent.
    let mut edits = Some(Value::Array(edits));
    let mut repaired = Map::new();
    for (key, value) in args {
        match key.as_str() {
            "oldText" | "newText" => {}
            "edits" => {
                if let Some(edits) = edits.take() {
                    repaired.insert(key, edits);
                }
            }
            _ => {
                repaired.insert(key, value);
            }
        }
    }
    if let Some(edits) = edits {
        repaired.insert("edits".to_owned(), edits);
    }
    Value::Object(repaired)
}

impl EditTool {
    pub fn new(ops: Arc<dyn FileOps>, queue: FileMutationQueue) -> Self {
        Self {
            definition: definition(),
            ops,
            queue,
        }
    }

    async fn run(&self, args: EditArgs, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let edits: Vec<Edit> = args
            .edits
            .unwrap_or_default()
            .into_iter()
            .map(|item| Edit {
                old_text: item.old_text,
                new_text: item.new_text,
            })
            .collect();
        if edits.is_empty() {
            return Err(ToolError::failed(
                "Edit tool input is invalid. edits must contain at least one replacement.",
            ));
        }
        let display_path = args.path;
        let path = resolve_to_cwd(&display_path, &context.cwd);
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
                if let Err(error) = self.ops.access(&path, Access::ReadWrite).await {
                    aborted()?;
                    let reason = match errno_name(&error) {
                        Some(code) => format!("Error code: {code}"),
                        None => error.to_string(),
                    };
                    return Err(ToolError::failed(format!(
                        "Could not edit file: {display_path}. {reason}."
                    )));
                }
                aborted()?;
                let data = self.ops.read_file(&path).await.map_err(|error| {
                    ToolError::failed(crate::util::node_error(&error, "read", None))
                })?;
                aborted()?;
                let raw = String::from_utf8_lossy(&data);
                let (bom, text) = split_bom(&raw);
                let crlf = detect_crlf(text);
                let original = normalize_to_lf(text);
                let updated = apply_edits(&original, &edits, &display_path)?;
                aborted()?;
                let written = format!("{bom}{}", restore_crlf(&updated, crlf));
                self.ops
                    .write_file(&path, written.as_bytes())
                    .await
                    .map_err(|error| {
                        ToolError::failed(crate::util::node_error(&error, "open", Some(&path)))
                    })?;
                aborted()?;
                let (diff, first_changed_line) = display_diff(&original, &updated);
                let patch = unified_patch(&display_path, &original, &updated, PATCH_CONTEXT);
                let mut details = Map::new();
                details.insert("diff".to_owned(), Value::String(diff));
                details.insert("patch".to_owned(), Value::String(patch));
                if let Some(line) = first_changed_line {
                    details.insert("firstChangedLine".to_owned(), json!(line));
                }
                Ok(ToolOutput::text(format!(
                    "Successfully replaced {} block(s) in {display_path}.",
                    edits.len()
                ))
                .with_details(Value::Object(details)))
            })
            .await
    }
}

impl Tool for EditTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn prepare_arguments(&self, raw: Value) -> Value {
        prepare_edit_arguments(raw)
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args: EditArgs = parse_args(arguments)?;
            self.run(args, &context).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repairs_legacy_argument_shapes() {
        let pair = json!({"oldText": "a", "newText": "b"});
        assert_eq!(
            prepare_edit_arguments(
                json!({"path": "f", "edits": "[{\"oldText\":\"a\",\"newText\":\"b\"}]"})
            ),
            json!({"path": "f", "edits": [pair]})
        );
        assert_eq!(
            prepare_edit_arguments(
                json!({"path": "f", "edits": "{\"oldText\":\"a\",\"newText\":\"b\"}"})
            ),
            json!({"path": "f", "edits": [pair]})
        );
        assert_eq!(
            prepare_edit_arguments(json!({"path": "f", "edits": pair})),
            json!({"path": "f", "edits": [pair]})
        );
        assert_eq!(
            prepare_edit_arguments(json!({"path": "f", "oldText": "a", "newText": "b"})),
            json!({"path": "f", "edits": [pair]})
        );
        assert_eq!(
            prepare_edit_arguments(
                json!({"path": "f", "edits": [{"oldText": "x", "newText": "y"}], "oldText": "a", "newText": "b"})
            ),
            json!({"path": "f", "edits": [{"oldText": "x", "newText": "y"}, pair]})
        );
        assert_eq!(
            prepare_edit_arguments(json!({"path": "f", "edits": "not json"})),
            json!({"path": "f", "edits": "not json"})
        );
    }
}
