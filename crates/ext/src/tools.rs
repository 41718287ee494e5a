//! The tool factories of `@knightcodeai/cli` (`createBashTool`, `createReadTool`, …): the
//! tools they make run our built-in tools (`knightcode-tools`) through the `builtinTool` op.
//! Custom `operations` (remote execution, sandboxes) stay JS functions: the built-in tool
//! runs over [`FileOps`]/[`ExecOps`] that call them; a bash `spawnHook` was already applied
//! in JS and arrives as the command, folder and environment to run with.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use knightcode_agent::ToolContext;
use knightcode_agent::ToolError;
use knightcode_tools::Access;
use knightcode_tools::BoxFuture;
use knightcode_tools::DataSink;
use knightcode_tools::ExecOps;
use knightcode_tools::ExecRequest;
use knightcode_tools::ExecStatus;
use knightcode_tools::FileOps;
use knightcode_tools::FileStat;
use knightcode_tools::GlobOutput;
use knightcode_tools::GlobRequest;
use knightcode_tools::LocalFileOps;
use knightcode_tools::ToolsConfig;
use knightcode_tools::ToolsError;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::WeakEngine;
use crate::error::CallError;

/// Runs in progress (their cancellation) and the output sinks of JS `exec` operations.
#[derive(Default)]
pub(crate) struct ToolOps {
    next_id: AtomicU64,
    runs: Mutex<HashMap<u64, CancellationToken>>,
    sinks: Mutex<HashMap<u64, DataSink>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ToolOps {
    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// `kc.builtinToolAbort(runId)`: the JS signal of a run aborted.
    pub(crate) fn abort(&self, run: u64) {
        if let Some(token) = lock(&self.runs).get(&run) {
            token.cancel();
        }
    }

    /// `kc.toolOpData(sinkId, base64)`: output of a JS `exec` operation.
    pub(crate) fn data(&self, sink: u64, bytes: &[u8]) {
        if let Some(sink) = lock(&self.sinks).get_mut(&sink) {
            sink(bytes);
        }
    }
}

/// The JS operations object of one factory-made tool (a handle into `js/tools.js`).
#[derive(Clone)]
struct JsOperations {
    engine: WeakEngine,
    handle: u64,
    methods: Vec<String>,
    tools: Arc<ToolOps>,
}

impl JsOperations {
    fn has(&self, method: &str) -> bool {
        self.methods.iter().any(|m| m == method)
    }

    /// `stat` for operation sets that only answer pi's narrower questions: grep's
    /// `isDirectory` (throws when the path is missing) or find's `exists`.
    async fn stat_from_checks(&self, path: &Path) -> io::Result<FileStat> {
        let args = json!([path_text(path)]);
        if self.has("isDirectory") {
            let value = self.call("isDirectory", args).await.map_err(io_error)?;
            let is_dir = value.as_bool() == Some(true);
            return Ok(FileStat {
                is_dir,
                is_file: !is_dir,
                size: 0,
            });
        }
        if self.has("exists") {
            let value = self.call("exists", args).await.map_err(io_error)?;
            if value.as_bool() != Some(true) {
                return Err(io::Error::from(io::ErrorKind::NotFound));
            }
            // Find only asks whether its folder exists; the operations' glob does the rest.
            return Ok(FileStat {
                is_dir: true,
                is_file: false,
                size: 0,
            });
        }
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "these operations have no stat",
        ))
    }

    async fn call(&self, method: &str, args: Value) -> Result<Value, CallError> {
        let engine = self.engine.upgrade().ok_or(CallError::Stopped)?;
        engine
            .call(
                "toolOp",
                &json!({ "handle": self.handle, "method": method, "args": args }),
            )
            .await
    }
}

fn io_error(failure: CallError) -> io::Error {
    let message = failure.to_string();
    let kind = if message.contains("ENOENT") || message.contains("No such file") {
        io::ErrorKind::NotFound
    } else if message.contains("EACCES") {
        io::ErrorKind::PermissionDenied
    } else {
        io::ErrorKind::Other
    };
    io::Error::new(kind, message)
}

/// The strings of a JSON array (anything else: none).
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

pub(crate) fn decode_base64(text: &str) -> Vec<u8> {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut lookup = [255u8; 256];
    for (i, c) in TABLE.iter().enumerate() {
        lookup[*c as usize] = i as u8;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes() {
        let value = lookup[byte as usize];
        if value == 255 {
            continue;
        }
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    out
}

/// `readFile`, `writeFile`, `access`, `mkdir`, `stat`, `readdir` of the JS operations; what
/// they lack is what the reference's tool would not call either (an error for the model).
impl FileOps for JsOperations {
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(async move {
            let value = self
                .call("readFile", json!([path_text(path)]))
                .await
                .map_err(io_error)?;
            Ok(decode_base64(value.as_str().unwrap_or("")))
        })
    }

    fn write_file<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            let text = String::from_utf8_lossy(data).into_owned();
            self.call("writeFile", json!([path_text(path), text]))
                .await
                .map(|_| ())
                .map_err(io_error)
        })
    }

    fn access<'a>(&'a self, path: &'a Path, _access: Access) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            if !self.has("access") {
                return Ok(());
            }
            self.call("access", json!([path_text(path)]))
                .await
                .map(|_| ())
                .map_err(io_error)
        })
    }

    fn stat<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileStat>> {
        Box::pin(async move {
            if !self.has("stat") {
                return self.stat_from_checks(path).await;
            }
            let value = self
                .call("stat", json!([path_text(path)]))
                .await
                .map_err(io_error)?;
            Ok(FileStat {
                is_dir: value.get("isDirectory").and_then(Value::as_bool) == Some(true),
                is_file: value.get("isFile").and_then(Value::as_bool) == Some(true),
                size: value.get("size").and_then(Value::as_u64).unwrap_or(0),
            })
        })
    }

    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            if !self.has("mkdir") {
                return Ok(());
            }
            self.call("mkdir", json!([path_text(path)]))
                .await
                .map(|_| ())
                .map_err(io_error)
        })
    }

    fn read_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<String>>> {
        Box::pin(async move {
            let value = self
                .call("readdir", json!([path_text(path)]))
                .await
                .map_err(io_error)?;
            Ok(strings(&value))
        })
    }

    fn glob<'a>(&'a self, request: GlobRequest) -> BoxFuture<'a, Result<GlobOutput, ToolsError>> {
        Box::pin(async move {
            if !self.has("glob") {
                return Err(ToolsError::message(
                    "these find operations have no glob(pattern, cwd, {ignore, limit})",
                ));
            }
            let call = self.call(
                "glob",
                json!([
                    request.pattern,
                    path_text(&request.dir),
                    { "ignore": request.ignore, "limit": request.limit },
                ]),
            );
            let value = tokio::select! {
                biased;
                () = request.cancel.cancelled() => return Err(ToolsError::Aborted),
                value = call => value.map_err(|e| ToolsError::message(e.to_string()))?,
            };
            Ok(GlobOutput::from(strings(&value)))
        })
    }
}

impl ExecOps for JsOperations {
    fn exec(&self, request: ExecRequest) -> BoxFuture<'_, Result<ExecStatus, ToolsError>> {
        Box::pin(async move {
            let ExecRequest {
                command,
                cwd,
                env,
                timeout,
                cancel,
                on_data,
            } = request;
            let sink = self.tools.id();
            lock(&self.tools.sinks).insert(sink, on_data);
            let env: serde_json::Map<String, Value> = env
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        Value::String(v.to_string_lossy().into_owned()),
                    )
                })
                .collect();
            let args = json!({
                "command": command,
                "cwd": path_text(&cwd),
                "timeout": timeout.map(|t| t.as_secs_f64()),
                "env": env,
                "sink": sink,
            });
            let result = tokio::select! {
                result = self.call("exec", args) => result,
                () = cancel.cancelled() => {
                    let _ = self.call("abort", json!({ "sink": sink })).await;
                    lock(&self.tools.sinks).remove(&sink);
                    return Err(ToolsError::Aborted);
                }
            };
            lock(&self.tools.sinks).remove(&sink);
            match result {
                Ok(value) => Ok(ExecStatus {
                    exit_code: value
                        .get("exitCode")
                        .and_then(Value::as_i64)
                        .and_then(|c| i32::try_from(c).ok()),
                }),
                // pi's bash tool tells its operations' rejections apart by message
                // ("timeout:<secs>", "aborted"), so custom operations reject that way.
                Err(CallError::Threw(message)) if message.starts_with("timeout") => {
                    Err(ToolsError::TimedOut)
                }
                Err(CallError::Threw(message)) if message == "aborted" => Err(ToolsError::Aborted),
                Err(failure) => Err(ToolsError::message(failure.to_string())),
            }
        })
    }
}

/// What a factory-made tool's `execute` asked for.
pub(crate) struct BuiltinRun {
    pub name: String,
    pub cwd: PathBuf,
    pub tool_call_id: String,
    pub params: Value,
    /// `spawnHook`'s result: command, folder and environment of the bash command.
    pub spawn: Option<Value>,
    /// The JS operations handle and the methods it has.
    pub operations: Option<(u64, Vec<String>)>,
    pub run: u64,
    /// Whether the caller passed an `onUpdate` (partial results go back to JS for it).
    pub js_updates: bool,
    /// The read factory's `autoResizeImages` option (on unless it is `false`).
    pub auto_resize_images: bool,
    /// The bash factory's `shellPath` and `commandPrefix` options.
    pub shell_path: Option<PathBuf>,
    pub command_prefix: Option<String>,
}

impl BuiltinRun {
    pub(crate) fn from_json(args: &Value) -> Self {
        let text = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        Self {
            name: text("name"),
            cwd: PathBuf::from(text("cwd")),
            tool_call_id: text("toolCallId"),
            params: args.get("params").cloned().unwrap_or(json!({})),
            spawn: args.get("spawn").cloned().filter(|v| !v.is_null()),
            operations: args
                .get("operations")
                .and_then(Value::as_u64)
                .map(|h| (h, strings(&args["methods"]))),
            run: args.get("run").and_then(Value::as_u64).unwrap_or(0),
            js_updates: args.get("jsUpdates").and_then(Value::as_bool) == Some(true),
            auto_resize_images: args.get("autoResizeImages").and_then(Value::as_bool)
                != Some(false),
            shell_path: args
                .get("shellPath")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            command_prefix: args
                .get("commandPrefix")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        }
    }
}

/// The partial results of a factory tool whose caller passed `onUpdate`: each goes back to
/// the JS thread, in order, for that callback (`toolPartial` in `js/tools.js`).
pub(crate) fn js_update_sink(
    providers: &crate::providers::ProviderOps,
    run: u64,
) -> knightcode_agent::UpdateSink {
    let engine = lock(&providers.engine).clone();
    Arc::new(move |partial: knightcode_agent::ToolOutput| {
        if let Some(engine) = engine.as_ref().and_then(WeakEngine::upgrade) {
            engine.post(
                "toolPartial",
                &json!({
                    "run": run,
                    "partial": { "content": partial.content, "details": partial.details },
                }),
            );
        }
    })
}

/// Runs one built-in tool call; the result as JS reads it (`{content, details, isError}`),
/// or `{error}` for what the reference's tool would throw.
pub(crate) async fn run_builtin(
    run: BuiltinRun,
    engine: WeakEngine,
    tools: Arc<ToolOps>,
    updates: Option<knightcode_agent::UpdateSink>,
) -> Value {
    let operations = run
        .operations
        .clone()
        .map(|(handle, methods)| JsOperations {
            engine,
            handle,
            methods,
            tools: Arc::clone(&tools),
        });
    let mut config = ToolsConfig::default();
    config.bash.shell_path.clone_from(&run.shell_path);
    config.bash.command_prefix.clone_from(&run.command_prefix);
    if !run.auto_resize_images {
        config.images = Some(Arc::new(|| knightcode_tools::ImagePolicy {
            auto_resize: false,
            ..knightcode_tools::ImagePolicy::default()
        }));
    }
    if let Some(ops) = &operations {
        if ops.has("exec") {
            config.bash.ops = Some(Arc::new(ops.clone()));
        } else {
            config.file_ops = Arc::new(ops.clone());
        }
    } else {
        config.file_ops = Arc::new(LocalFileOps);
    }
    if let Some(spawn) = run.spawn.clone() {
        config.bash.spawn_hook = Some(Arc::new(move |mut context| {
            if let Some(command) = spawn.get("command").and_then(Value::as_str) {
                command.clone_into(&mut context.command);
            }
            if let Some(cwd) = spawn.get("cwd").and_then(Value::as_str) {
                context.cwd = PathBuf::from(cwd);
            }
            if let Some(env) = spawn.get("env").and_then(Value::as_object) {
                // The hook's environment, over what the tool would have set (its session
                // variables stay unless the hook replaced them).
                let mut merged: Vec<(OsString, OsString)> = context
                    .env
                    .into_iter()
                    .filter(|(k, _)| !env.contains_key(&*k.to_string_lossy()))
                    .collect();
                for (k, v) in env {
                    if let Some(v) = v.as_str() {
                        merged.push((OsString::from(k), OsString::from(v)));
                    }
                }
                context.env = merged;
            }
            context
        }));
    }
    let Some(tool) = knightcode_tools::builtin_tools(config)
        .into_iter()
        .find(|t| t.definition().name == run.name)
    else {
        return json!({ "error": { "message": format!("Tool {} not found", run.name) } });
    };
    let token = CancellationToken::new();
    lock(&tools.runs).insert(run.run, token.clone());
    let mut context = ToolContext::new(run.tool_call_id.clone(), run.cwd.clone(), token);
    if let Some(sink) = updates {
        context = context.with_updates(sink);
    }
    let result = tool.execute(run.params, context).await;
    lock(&tools.runs).remove(&run.run);
    match result {
        // A failed command (`bash`'s non-zero exit) throws from `execute`, as the
        // reference's factory tools do; its data is for the loop's scripts only.
        Ok(output) if output.is_error => json!({ "error": {
            "message": knightcode_protocol::content::join_text(&output.content)
        }}),
        Ok(output) => json!({ "ok": {
            "content": output.content,
            "details": output.details,
            "structuredContent": output.structured_content,
            "isError": output.is_error,
        }}),
        Err(ToolError::Failed(message) | ToolError::Aborted(message)) => {
            json!({ "error": { "message": message } })
        }
    }
}

/// `kc.builtinToolDefinition(name)`: what the model is told about a built-in tool.
pub(crate) fn definition(name: &str) -> Value {
    let tools = knightcode_tools::builtin_tools(ToolsConfig::default());
    match tools.iter().find(|t| t.definition().name == name) {
        Some(tool) => {
            let d = tool.definition();
            json!({ "ok": {
                "name": d.name,
                "label": d.label,
                "description": d.description,
                "parameters": d.parameters,
                "promptSnippet": d.prompt_snippet,
                "promptGuidelines": d.prompt_guidelines,
                "outputSchema": tool.output_schema(),
            }})
        }
        None => json!({ "error": { "message": format!("Tool {name} not found") } }),
    }
}
