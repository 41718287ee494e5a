//! The `grep` tool: content search in-process with ripgrep's crates.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, WalkState};
use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use knightcode_protocol::wire::format_js_number;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::ToolsError;
use crate::listing::{Listing, search_root};
use crate::ops::FileOps;
use crate::truncate::{DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line};
use crate::util::parse_args;
use crate::walk::{CancellableRead, Ranked, Walk};

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

/// One matching line, as shown without context: CRs dropped, cut to
/// [`GREP_MAX_LINE_LENGTH`] characters (so a huge line costs no more than a short one).
#[derive(PartialEq, Eq)]
struct Match {
    path: Arc<Path>,
    line_number: u64,
    text: String,
    cut: bool,
}

impl Ord for Match {
    fn cmp(&self, other: &Self) -> Ordering {
        self.path
            .cmp(&other.path)
            .then(self.line_number.cmp(&other.line_number))
    }
}

impl PartialOrd for Match {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ranked for Match {
    fn path(&self) -> &Path {
        &self.path
    }
}

struct SearchOutcome {
    matches: Vec<Match>,
    limit_reached: bool,
    skipped: Option<String>,
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

/// A line longer than this fails its file's search (noted as skipped) rather than growing
/// the searcher's buffer without bound.
const MAX_LINE_BUFFER: usize = 64 * 1024 * 1024;

/// Walks and searches on the walker's threads; the matches come back in path order.
fn search_blocking(request: &SearchRequest) -> Result<SearchOutcome, ToolsError> {
    // Multi-line as ripgrep builds it: `^`/`$` match at line boundaries, which lets the
    // searcher scan whole buffers instead of line by line (lines are still searched one at
    // a time: `.` and `\s` do not cross the line terminator).
    let matcher = RegexMatcherBuilder::new()
        .multi_line(true)
        .case_insensitive(request.ignore_case)
        .fixed_strings(request.literal)
        .line_terminator(Some(b'\n'))
        .build(&request.pattern)
        .map_err(|error| ToolsError::message(error.to_string()))?;
    let mut walk = Walk::<Match>::new(&request.root, request.max_matches, &request.cancel);
    if let Some(glob) = &request.glob {
        let mut overrides = OverrideBuilder::new(&request.root);
        overrides
            .add(glob)
            .map_err(|error| ToolsError::message(error.to_string()))?;
        walk.builder.overrides(
            overrides
                .build()
                .map_err(|error| ToolsError::message(error.to_string()))?,
        );
    }
    let max_matches = request.max_matches;
    let cancel = &request.cancel;
    walk.run(|| {
        let matcher = matcher.clone();
        let results = &walk.results;
        let skipped = &walk.skipped;
        // Binary files are skipped as ripgrep does by default: the search stops at a NUL
        // byte.
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .heap_limit(Some(MAX_LINE_BUFFER))
            .build();
        let mut found: Vec<Match> = Vec::new();
        move |entry: &DirEntry| {
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            let path: Arc<Path> = Arc::from(entry.path());
            if results.beyond(&path) {
                return WalkState::Continue;
            }
            let file = match File::open(&path) {
                Ok(file) => file,
                Err(error) => {
                    skipped.record(path.to_path_buf(), error.to_string());
                    return WalkState::Continue;
                }
            };
            let reader = CancellableRead {
                inner: file,
                cancel,
            };
            let searched = searcher.search_reader(
                &matcher,
                reader,
                Lossy(|line_number, line| {
                    let line = line.replace("\r\n", "\n").replace('\r', "");
                    let line = line.strip_suffix('\n').unwrap_or(&line);
                    let (text, cut) = truncate_line(line, GREP_MAX_LINE_LENGTH);
                    found.push(Match {
                        path: Arc::clone(&path),
                        line_number,
                        text,
                        cut,
                    });
                    // Later lines of this file rank after these, so past the limit they
                    // cannot make the cut.
                    Ok(found.len() < max_matches)
                }),
            );
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            if let Err(error) = searched {
                skipped.record(path.to_path_buf(), error.to_string());
            }
            for found in found.drain(..) {
                results.offer(found);
            }
            WalkState::Continue
        }
    })?;
    let (matches, limit_reached, skipped) = walk.finish(&request.root);
    Ok(SearchOutcome {
        matches,
        limit_reached,
        skipped,
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
        let (root, is_dir) =
            search_root(self.ops.as_ref(), args.path.as_deref(), &context.cwd, false).await?;
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
            let mut text = "No matches found".to_owned();
            if let Some(skipped) = outcome.skipped {
                text.push_str(&format!("\n\n[{skipped}]"));
            }
            return Ok(ToolOutput::text(text));
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
        let mut file_lines: HashMap<Arc<Path>, Vec<String>> = HashMap::new();
        let mut rows = Vec::new();
        for found in &outcome.matches {
            let shown = display(&found.path);
            if context_lines == 0 {
                lines_truncated |= found.cut;
                rows.push(format!("{shown}:{}: {}", found.line_number, found.text));
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
                let (text, cut) = truncate_line(&text.replace('\r', ""), GREP_MAX_LINE_LENGTH);
                lines_truncated |= cut;
                if current == number {
                    rows.push(format!("{shown}:{current}: {text}"));
                } else {
                    rows.push(format!("{shown}-{current}- {text}"));
                }
            }
        }

        let mut listing = Listing::new(&rows);
        if outcome.limit_reached {
            listing.limit_reached("matches", ", or refine pattern", "matchLimitReached", limit);
        }
        listing.size_limit();
        if lines_truncated {
            listing.notice(format!(
                "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
            ));
            listing.detail("linesTruncated", Value::Bool(true));
        }
        if let Some(skipped) = outcome.skipped {
            listing.notice(skipped);
        }
        Ok(listing.output())
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
