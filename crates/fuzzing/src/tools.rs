//! Tool arguments as a model streams them (partial JSON, repaired), prepared by the tool and
//! checked against its schema, the way a run does before a tool executes; and the edit
//! tool's matcher.

use std::sync::Arc;

use knightcode_agent::SchemaCache;
use knightcode_agent::Tool;
use knightcode_tools::BashConfig;
use knightcode_tools::BashTool;
use knightcode_tools::EditTool;
use knightcode_tools::FileMutationQueue;
use knightcode_tools::FileOps;
use knightcode_tools::FindTool;
use knightcode_tools::GrepTool;
use knightcode_tools::LocalFileOps;
use knightcode_tools::LsTool;
use knightcode_tools::ReadTool;
use knightcode_tools::WriteTool;
use knightcode_tools::diff;

use crate::texts;

/// The built-in tools, built once; nothing here runs them.
pub(crate) struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    schemas: SchemaCache,
}

impl ToolSet {
    pub(crate) fn new() -> Self {
        let ops: Arc<dyn FileOps> = Arc::new(LocalFileOps);
        let queue = FileMutationQueue::new();
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ReadTool::new(Arc::clone(&ops))),
            Arc::new(WriteTool::new(Arc::clone(&ops), queue.clone())),
            Arc::new(EditTool::new(Arc::clone(&ops), queue)),
            Arc::new(BashTool::new(BashConfig::default())),
            Arc::new(GrepTool::new(Arc::clone(&ops))),
            Arc::new(FindTool::new(Arc::clone(&ops))),
            Arc::new(LsTool::new(ops)),
        ];
        Self {
            tools,
            schemas: SchemaCache::default(),
        }
    }

    /// The first byte picks the tool; the rest is the streamed argument text.
    pub(crate) fn validate(&mut self, data: &[u8]) {
        let Some((&pick, body)) = data.split_first() else {
            return;
        };
        let tool = &self.tools[usize::from(pick) % self.tools.len()];
        let text = String::from_utf8_lossy(body);
        let arguments = knightcode_ai::json_partial::parse_streaming_json(&text);
        let prepared = tool.prepare_arguments(arguments);
        if let Err(message) = self.schemas.validate(tool.definition(), &prepared) {
            assert!(
                message.contains(&tool.definition().name),
                "a validation error that does not name its tool: {message}"
            );
        }
    }
}

/// The file's text, then NUL-separated pairs of old and new text.
pub(crate) fn edit_match(data: &[u8]) {
    let texts = texts(data);
    let Some((content, rest)) = texts.split_first() else {
        return;
    };
    let edits: Vec<diff::Edit> = rest
        .chunks(2)
        .map(|pair| diff::Edit {
            old_text: pair[0].clone(),
            new_text: pair.get(1).cloned().unwrap_or_default(),
        })
        .collect();
    if let Ok(edited) = diff::apply_edits(content, &edits, "fuzz.txt") {
        let _ = diff::display_diff(content, &edited);
        let _ = diff::unified_patch("fuzz.txt", content, &edited, 3);
    }
}
