//! The `codemode` tool: the model writes JavaScript that calls other tools. The script runs
//! as the body of an async function in a fresh QuickJS context (`sandbox`), its tool calls go
//! through the loop's nested calls (`ctx.executeTool`: validation, `tool_call`/`tool_result`
//! hooks, permission gates, ids `<codemode call id>/<n>`, the `nestedCalls` record), and only
//! what it outputs reaches the model. `store()` writes are appended to the branch as a
//! `codemode-store` entry when the script succeeds.

mod catalog;
mod description;
mod output;
mod sandbox;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use knightcode_agent::ExecutionMode;
use knightcode_agent::NestedCallOptions;
use knightcode_agent::NestedOutcome;
use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolDefinition;
use knightcode_agent::ToolError;
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolListing;
use knightcode_protocol::ConstrainedSampling;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::GrammarVariants;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use catalog::Catalog;
pub use catalog::describe_output;
pub use catalog::identifier;
pub use catalog::ts_type;
pub use description::description;
use sandbox::Event;
use sandbox::Failure;
use sandbox::Request;
use sandbox::Script;

pub const CODEMODE_NAME: &str = "codemode";

/// The script language as a Lark grammar, for providers that let a tool's input be free text
/// constrained by a grammar (OpenAI's custom tools): JavaScript, optionally after one
/// `// @options: {...}` line. Written for this build; it accepts the same language as the
/// reference's grammar (any non-empty text, the options line being the shape the model is
/// steered to), and `parse_options` still checks the line.
pub const SCRIPT_GRAMMAR: &str = r"start: options_line? script
options_line: OPTIONS EOL
script: BODY

OPTIONS: /[ \t]*\/\/ @options:[^\r\n]*/
EOL: /\r?\n/
BODY: /[\s\S]+/
";

/// The custom entry type of one script's `store()` writes: `{set: {key: value}, delete: [key]}`.
pub const STORE_ENTRY_TYPE: &str = "codemode-store";

/// Output over this many estimated tokens (characters / 4) keeps its start and end.
const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 10_000;
/// Estimated tokens (characters / 4) the description's tool declarations may use, when
/// the `codemode.inlineBudget` setting does not say.
pub const DEFAULT_INLINE_BUDGET: u64 = 3_000;

/// Where `store()` values live: the session's current branch.
pub trait ScriptStore: Send + Sync {
    /// The branch's values (its `codemode-store` entries applied in order).
    fn load(&self) -> serde_json::Map<String, Value>;
    /// Appends one successful script's writes to the branch.
    fn save(
        &self,
        set: serde_json::Map<String, Value>,
        delete: Vec<String>,
    ) -> Result<(), crate::CodemodeError>;
}

/// The models a script's `models` global lists: the session's, each as its `ModelInfo`
/// JSON with whether its provider has credentials.
pub trait ScriptModels: Send + Sync {
    fn models(&self) -> Vec<(Value, bool)>;
    /// `models.classify(model, context, options)` (`request` is `{model, context,
    /// options}`): the JS `ClassifierResult`, failures included.
    fn classify(&self, request: Value, cancel: CancellationToken) -> ClassifyFuture {
        let _ = cancel;
        let model = &request["model"];
        let result = json!({"provider": model["provider"], "model": model["id"], "answers": {},
            "stopReason": "error",
            "errorMessage": "Classifier models are not available to this script"});
        Box::pin(async move { result })
    }
}

/// What [`ScriptModels::classify`] returns.
pub type ClassifyFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Value> + Send>>;

/// The `codemode` tool; registered inactive (`--tools`, `defaultTools` or an MCP server with
/// `codemode` exposure activate it).
pub struct Codemode {
    definition: ToolDefinition,
    store: Option<Arc<dyn ScriptStore>>,
    models: Option<Arc<dyn ScriptModels>>,
}

impl Codemode {
    /// `listed`: the tools the description lists (those with `codemode` exposure; `deferred`
    /// ones, MCP tools among them, never are, so the description does not change while
    /// servers connect).
    pub fn new(listed: &[ToolListing], store: Option<Arc<dyn ScriptStore>>) -> Self {
        Self::with_budget(listed, DEFAULT_INLINE_BUDGET, store)
    }

    /// [`Codemode::new`] with `inline_budget` estimated tokens of declarations (see
    /// [`description`]).
    pub fn with_budget(
        listed: &[ToolListing],
        inline_budget: u64,
        store: Option<Arc<dyn ScriptStore>>,
    ) -> Self {
        Self {
            definition: ToolDefinition {
                name: CODEMODE_NAME.to_owned(),
                label: "Codemode".to_owned(),
                description: description(listed, inline_budget),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "code": {"type": "string", "description": "Raw JavaScript source."}
                    },
                    "required": ["code"]
                }),
                prompt_snippet: Some("Run JavaScript that calls other tools".to_owned()),
                prompt_guidelines: vec![
                    "Use codemode to batch independent tool calls (Promise.all), chain them, or filter large output, instead of many separate calls."
                        .to_owned(),
                ],
                execution: ExecutionMode::Parallel,
            },
            store,
            models: None,
        }
    }

    /// Lists `models` to scripts (`models.getModelsOfType()` and co.); without it they see none.
    #[must_use]
    pub fn with_models(mut self, models: Arc<dyn ScriptModels>) -> Self {
        self.models = Some(models);
        self
    }
}

/// `[{model, available}]` for the prelude's `models` global; `headers` are left out (they
/// can carry credentials).
fn models_json(models: Vec<(Value, bool)>) -> String {
    let list: Vec<Value> = models
        .into_iter()
        .map(|(mut model, available)| {
            if let Some(fields) = model.as_object_mut() {
                fields.remove("headers");
            }
            json!({"model": model, "available": available})
        })
        .collect();
    Value::Array(list).to_string()
}

/// The `// @options:` line: fields, and the code with that line blanked (line numbers stay).
struct Options {
    max_output_tokens: u64,
    timeout: Option<Duration>,
}

fn parse_options(code: &str) -> Result<(Options, String), String> {
    let mut options = Options {
        max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
        timeout: None,
    };
    let first = code.lines().next().unwrap_or("");
    let Some(rest) = first.trim_start().strip_prefix("// @options:") else {
        return Ok((options, code.to_owned()));
    };
    let value: Value = serde_json::from_str(rest.trim())
        .map_err(|e| format!("Invalid // @options line: {e}. Write it as // @options: {{\"max_output_tokens\": 10000, \"timeout_ms\": 60000}}"))?;
    let Some(fields) = value.as_object() else {
        return Err("Invalid // @options line: expected a JSON object".to_owned());
    };
    for (key, field) in fields {
        let number = field.as_u64().filter(|n| *n > 0);
        match (key.as_str(), number) {
            ("max_output_tokens", Some(n)) => options.max_output_tokens = n,
            ("timeout_ms", Some(n)) => options.timeout = Some(Duration::from_millis(n)),
            ("max_output_tokens" | "timeout_ms", None) => {
                return Err(format!(
                    "Invalid // @options line: {key} must be a positive integer"
                ));
            }
            _ => {
                return Err(format!(
                    "Invalid // @options line: unknown option {key:?} (use max_output_tokens, timeout_ms)"
                ));
            }
        }
    }
    let body = code
        .find('\n')
        .map_or(String::new(), |i| code[i..].to_owned());
    Ok((options, body))
}

/// One tool call the script made, for the result's details and failure note.
#[derive(Debug, Clone)]
pub(crate) struct CallRecord {
    pub id: String,
    pub name: String,
    pub status: &'static str,
    pub duration_ms: Option<u64>,
    pub error: Option<String>,
}

/// What a call resolves to in the script: the structured content of a tool with an output
/// schema (an MCP tool's `CallToolResult`, `bash`'s output and exit code), error results
/// included, otherwise the text, or a rejection with the error text. A call that failed
/// before or outside the tool (blocked, invalid, a lost connection) has no structured
/// content, and rejects.
fn settlement(outcome: &NestedOutcome, structured: bool) -> (bool, String) {
    let output = &outcome.output;
    if structured && let Some(data) = &output.structured_content {
        return (true, data.to_string());
    }
    let text = knightcode_protocol::content::join_text(&output.content);
    if output.is_error {
        return (false, Value::String(text).to_string());
    }
    let image = output.content.iter().find_map(|b| match b {
        ContentBlock::Image(image) => Some(image),
        _ => None,
    });
    match image {
        Some(image) => (
            true,
            json!({"type": "image", "data": image.data, "mimeType": image.mime_type, "note": text})
                .to_string(),
        ),
        None => (true, Value::String(text).to_string()),
    }
}

impl Tool for Codemode {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// Capable models write the script as raw text instead of a JSON-escaped string.
    fn constrained_sampling(&self) -> Option<ConstrainedSampling> {
        Some(ConstrainedSampling::grammar(GrammarVariants {
            openai_lark: Some(SCRIPT_GRAMMAR.to_owned()),
            ..GrammarVariants::default()
        }))
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let code = arguments["code"].as_str().unwrap_or("").to_owned();
            let (options, code) = parse_options(&code).map_err(ToolError::Failed)?;
            let started = Instant::now();
            let catalog = Arc::new(Catalog::new(context.tool_listing(), CODEMODE_NAME));
            let stored = self.store.as_ref().map(|s| s.load()).unwrap_or_default();
            let models = self.models.as_ref().map(|m| m.models()).unwrap_or_default();
            let script = Script {
                code,
                timeout: options.timeout,
                catalog: Arc::clone(&catalog),
                stored,
                models: models_json(models),
            };
            let (end, calls) = run_script(script, &catalog, &context, self.models.clone()).await?;
            let mut result =
                output::render(&end, &calls, started.elapsed(), options.max_output_tokens);
            if end.failure.is_none()
                && (!end.set.is_empty() || !end.delete.is_empty())
                && let Some(store) = &self.store
                && let Err(error) = store.save(end.set, end.delete)
            {
                result.is_error = true;
                result.content.push(ContentBlock::text(format!(
                    "The script's store() writes were not saved: {error}"
                )));
            }
            Ok(result)
        })
    }

    fn exposure(&self) -> ToolExposure {
        ToolExposure::ModelOnly
    }

    fn active_on_registration(&self) -> bool {
        false
    }
}

/// Runs the script's thread and serves its tool calls until it ends; calls still running
/// then are cancelled (and awaited, so their ends are reported).
async fn run_script(
    script: Script,
    catalog: &Catalog,
    context: &ToolContext,
    models: Option<Arc<dyn ScriptModels>>,
) -> Result<(sandbox::ScriptEnd, Vec<CallRecord>), ToolError> {
    let (request_tx, mut requests) = tokio::sync::mpsc::unbounded_channel::<Request>();
    let (event_tx, events) = std::sync::mpsc::channel::<Event>();
    let (done_tx, mut done) = tokio::sync::oneshot::channel();
    let aborted = Arc::new(AtomicBool::new(false));
    sandbox::spawn(script, request_tx, events, Arc::clone(&aborted), done_tx).map_err(|e| {
        ToolError::Failed(format!("Script failed: the sandbox could not start: {e}"))
    })?;
    let calls_cancel = CancellationToken::new();
    let mut running = tokio::task::JoinSet::new();
    // `models.classify` calls: no tool runs, so they are not among `calls`.
    let mut classifying = tokio::task::JoinSet::new();
    let mut calls: Vec<CallRecord> = Vec::new();
    let mut seen = 0usize;
    let end = loop {
        tokio::select! {
            end = &mut done => break end.unwrap_or_default(),
            Some(request) = requests.recv() => {
                if request.classify {
                    let id = request.id;
                    let call = models.as_ref().map(|m| m.classify(request.arguments, calls_cancel.clone()));
                    classifying.spawn(async move {
                        let result = match call {
                            Some(call) => call.await,
                            None => json!({"answers": {}, "stopReason": "error",
                                "errorMessage": "Classifier models are not available to this script"}),
                        };
                        (id, result)
                    });
                    continue;
                }
                seen += 1;
                let structured = catalog.get(&request.name).is_some_and(|t| t.output_schema.is_some());
                let call = context.execute_tool(&request.name, request.arguments, NestedCallOptions {
                    cancel: Some(calls_cancel.clone()),
                    on_update: None,
                });
                calls.push(CallRecord {
                    id: format!("{}/{seen}", context.tool_call_id),
                    name: request.name.clone(),
                    status: "running",
                    duration_ms: None,
                    error: None,
                });
                let index = calls.len() - 1;
                let id = request.id;
                running.spawn(async move { (index, id, structured, call.await) });
            }
            Some(Ok((index, id, structured, outcome))) = running.join_next() => {
                let (ok, payload) = settlement(&outcome, structured);
                let record = &mut calls[index];
                record.id.clone_from(&outcome.tool_call_id);
                record.status = if outcome.output.is_error { "error" } else { "ok" };
                record.duration_ms = outcome.duration.map(|d| d.as_millis() as u64);
                if outcome.output.is_error {
                    record.error = Some(knightcode_protocol::content::join_text(&outcome.output.content));
                }
                let _ = event_tx.send(Event::Settled { id, ok, payload });
            }
            Some(Ok((id, result))) = classifying.join_next() => {
                let _ = event_tx.send(Event::Settled { id, ok: true, payload: result.to_string() });
            }
            () = context.cancel.cancelled(), if !aborted.load(Ordering::Relaxed) => {
                aborted.store(true, Ordering::Relaxed);
                let _ = event_tx.send(Event::Aborted);
            }
        }
    };
    calls_cancel.cancel();
    while let Some(joined) = running.join_next().await {
        if let Ok((index, ..)) = joined {
            calls[index].status = "cancelled";
        }
    }
    if end.failure == Some(Failure::Aborted) {
        return Err(ToolError::Aborted("Operation aborted".to_owned()));
    }
    Ok((end, calls))
}
