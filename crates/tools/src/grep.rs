//! The `grep` tool: content search in-process with ripgrep's crates.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use knightcode_protocol::JsNumber;
use knightcode_protocol::wire::format_js_number;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::ToolsError;
use crate::ops::FileOps;
use crate::path::resolve_to_cwd;
use crate::truncate::{
    DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, TruncationOptions, format_size, truncate_head,
    truncate_line,
};
use crate::util::parse_args;
use crate::walk::walker;

const DEFAULT_LIMIT: f64 = 100.0;

/// Searches file contents.
pub struct GrepTool {
    definition: ToolDefinition,
    ops: Arc<dyn FileOps>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    ignore_case: Option<bool>,
    literal: Option<bool>,
    context: Option<f64>,
    limit: Option<f64>,
}

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "grep".to_owned(),
        label: "grep".to_owned(),
        description: format!(
            "Search file contents for a regular expression or literal text. Returns the \
             matching lines with file path and line number. Files ignored by .gitignore are \
             skipped. Output stops at {} matches or {}KB, whichever comes first, and lines \
             longer than {GREP_MAX_LINE_LENGTH} characters are shortened.",
            format_js_number(DEFAULT_LIMIT),
            DEFAULT_MAX_BYTES / 1024
        ),
        parameters: json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression or literal text to look for"},
                "path": {"type": "string", "description": "Directory or file to search (defaults to the current directory)"},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.ts' or '**/*.spec.ts'"},
                "ignoreCase": {"type": "boolean", "description": "Ignore letter case (default: false)"},
                "literal": {"type": "boolean", "description": "Take the pattern as plain text, not a regex (default: false)"},
                "context": {"type": "number", "description": "Lines to show before and after each match (default: 0)"},
                "limit": {"type": "number", "description": "Most matches to return (default: 100)"}
            }
        }),
        prompt_snippet: Some("Search file contents for patterns (respects .gitignore)".to_owned()),
        prompt_guidelines: Vec::new(),
        execution: ExecutionMode::Parallel,
    }
}

/// One matching line as the searcher reported it.
struct Match {
    path: PathBuf,
    line_number: u64,
    text: String,
}

struct SearchOutcome {
    matches: Vec<Match>,
    limit_reached: bool,
}

struct SearchRequest {
    root: PathBuf,
    pattern: String,
    glob: Option<String>,
    ignore_case: bool,
    literal: bool,
    max_matches: usize,
    cancel: CancellationToken,
}

/// Walks and searches on the calling (blocking) thread, in path order.
fn search_blocking(request: &SearchRequest) -> Result<SearchOutcome, ToolsError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(request.ignore_case)
        .fixed_strings(request.literal)
        .line_terminator(Some(b'\n'))
        .build(&request.pattern)
        .map_err(|error| ToolsError::message(error.to_string()))?;
    let mut builder = walker(&request.root);
    if let Some(glob) = &request.glob {
        let mut overrides = OverrideBuilder::new(&request.root);
        overrides
            .add(glob)
            .map_err(|error| ToolsError::message(error.to_string()))?;
        builder.overrides(
            overrides
                .build()
                .map_err(|error| ToolsError::message(error.to_string()))?,
        );
    }
    // Binary files are skipped as ripgrep does by default: the search stops at a NUL byte.
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build();
    let mut matches = Vec::new();
    for entry in builder.build() {
        if request.cancel.is_cancelled() {
            return Err(ToolsError::Aborted);
        }
        // Unreadable directories and files are skipped rather than failing the search.
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let path = entry.path();
        let _ = searcher.search_path(
            &matcher,
            path,
            Lossy(|line_number, line| {
                matches.push(Match {
                    path: path.to_path_buf(),
                    line_number,
                    text: line.to_owned(),
                });
                Ok(matches.len() < request.max_matches && !request.cancel.is_cancelled())
            }),
        );
        if matches.len() >= request.max_matches {
            return Ok(SearchOutcome {
                matches,
                limit_reached: true,
            });
        }
    }
    Ok(SearchOutcome {
        matches,
        limit_reached: false,
    })
}

impl GrepTool {
    pub fn new(ops: Arc<dyn FileOps>) -> Self {
        Self {
            definition: definition(),
            ops,
        }
    }

    async fn run(&self, args: GrepArgs, context: &ToolContext) -> Result<ToolOutput, ToolError> {
        let root = resolve_to_cwd(args.path.as_deref().unwrap_or("."), &context.cwd);
        let is_dir = match self.ops.stat(&root).await {
            Ok(stat) => stat.is_dir,
            Err(_) => {
                return Err(ToolError::failed(format!(
                    "Path not found: {}",
                    root.display()
                )));
            }
        };
        let context_lines = args.context.filter(|c| *c > 0.0).map_or(0, |c| c as usize);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1.0);
        let request = SearchRequest {
            root: root.clone(),
            pattern: args.pattern,
            glob: args.glob.filter(|glob| !glob.is_empty()),
            ignore_case: args.ignore_case.unwrap_or(false),
            literal: args.literal.unwrap_or(false),
            max_matches: limit.ceil() as usize,
            cancel: context.cancel.clone(),
        };
        let outcome = tokio::task::spawn_blocking(move || search_blocking(&request))
            .await
            .map_err(|error| ToolError::failed(format!("Search failed: {error}")))??;
        if outcome.matches.is_empty() {
            return Ok(ToolOutput::text("No matches found"));
        }

        let display = |path: &Path| -> String {
            if is_dir && let Ok(relative) = path.strip_prefix(&root) {
                let text = relative.to_string_lossy();
                if !text.is_empty() && !text.starts_with("..") {
                    return text.into_owned();
                }
            }
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let mut lines_truncated = false;
        let mut shorten = |text: &str| {
            let (text, cut) = truncate_line(text, GREP_MAX_LINE_LENGTH);
            lines_truncated |= cut;
            text
        };
        let mut file_lines: HashMap<PathBuf, Vec<String>> = HashMap::new();
        let mut rows = Vec::new();
        for found in &outcome.matches {
            let shown = display(&found.path);
            if context_lines == 0 {
                let text = found.text.replace("\r\n", "\n").replace('\r', "");
                let text = text.strip_suffix('\n').unwrap_or(&text);
                rows.push(format!("{shown}:{}: {}", found.line_number, shorten(text)));
                continue;
            }
            if !file_lines.contains_key(&found.path) {
                let lines = match self.ops.read_file(&found.path).await {
                    Ok(data) => normalize_newlines(&String::from_utf8_lossy(&data))
                        .split('\n')
                        .map(str::to_owned)
                        .collect(),
                    Err(_) => Vec::new(),
                };
                file_lines.insert(found.path.clone(), lines);
            }
            let lines = file_lines
                .get(&found.path)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let number = found.line_number as usize;
            if lines.is_empty() {
                rows.push(format!("{shown}:{number}: (unable to read file)"));
                continue;
            }
            let first = number.saturating_sub(context_lines).max(1);
            let last = (number + context_lines).min(lines.len());
            for current in first..=last {
                let text = lines
                    .get(current - 1)
                    .map(String::as_str)
                    .unwrap_or_default();
                let text = shorten(&text.replace('\r', ""));
                if current == number {
                    rows.push(format!("{shown}:{current}: {text}"));
                } else {
                    rows.push(format!("{shown}-{current}- {text}"));
                }
            }
        }

        let truncation = truncate_head(&rows.join("\n"), TruncationOptions::bytes_only());
        let mut text = truncation.content.clone();
        let mut details = Map::new();
        let mut notices = Vec::new();
        if outcome.limit_reached {
            notices.push(format!(
                "{} matches limit reached. Use limit={} for more, or refine pattern",
                format_js_number(limit),
                format_js_number(limit * 2.0)
            ));
            details.insert("matchLimitReached".to_owned(), Value::from(JsNumber(limit)));
        }
        if truncation.truncated {
            notices.push(format!(
                "{} limit reached",
                format_size(DEFAULT_MAX_BYTES as u64)
            ));
            details.insert("truncation".to_owned(), json!(truncation));
        }
        if lines_truncated {
            notices.push(format!(
                "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
            ));
            details.insert("linesTruncated".to_owned(), Value::Bool(true));
        }
        if !notices.is_empty() {
            text.push_str(&format!("\n\n[{}]", notices.join(". ")));
        }
        let output = ToolOutput::text(text);
        Ok(if details.is_empty() {
            output
        } else {
            output.with_details(Value::Object(details))
        })
    }
}

fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

impl Tool for GrepTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args: GrepArgs = parse_args(arguments)?;
            if context.cancel.is_cancelled() {
                return Err(ToolsError::Aborted.into());
            }
            // Searching mutates nothing, so an abort can return at once (the blocking walk
            // notices the cancelled token and stops on its own).
            tokio::select! {
                () = context.cancel.cancelled() => Err(ToolsError::Aborted.into()),
                output = self.run(args, &context) => output,
            }
        })
    }
}
