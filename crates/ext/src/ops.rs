//! The Rust functions JS calls (`__kc.*`): module loading, the file system, processes,
//! timers, and the session. Bulk data crosses as JSON text; failures come back as
//! `{"error": {"code", "message"}}` for the JS side to throw as Node-shaped errors.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_agent::UpdateSink;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use rquickjs::Promise;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

pub(crate) use crate::fs_ops::error;
use crate::fs_ops::fs_op;
pub(crate) use crate::fs_ops::io_error;
use crate::providers_ops::async_op;
use crate::resolve::Resolved;

use crate::session_op::PortFuture;
use crate::session_op::SessionPort;

/// What JS throws for a session operation that failed (one code for every kind: callers
/// tell them apart by message, as the reference's own errors are told apart).
fn port_error(failure: &crate::PortError) -> Value {
    error("ERR_KC_SESSION", &failure.to_string())
}

/// Shared between the host and the JS thread.
#[derive(Default)]
pub struct Ops {
    session: Mutex<Option<Arc<dyn SessionPort>>>,
    updates: Mutex<HashMap<String, UpdateSink>>,
    pub(crate) providers: Arc<crate::providers::ProviderOps>,
    pub(crate) tools: Arc<crate::tools::ToolOps>,
    pub(crate) nested: Arc<crate::nested::NestedOps>,
    /// The extensions' OAuth logins under way (`oauth.login`).
    pub(crate) logins: Arc<crate::oauth_login::Logins>,
    /// The conversations of the virtual models' `route()` calls under way.
    pub(crate) routes: Arc<crate::virtual_route::Conversations>,
    /// The cancel tokens of async session ops still running, by the id JS gave them.
    cancels: Mutex<HashMap<u64, CancellationToken>>,
    /// Where errors no handler call returns go (unhandled rejections, throwing timer
    /// callbacks): `HandlerError` JSON, reported as `extension_error` events.
    uncaught: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Vec<Value>>>>,
    /// Each stripped file's way back from generated to source positions.
    positions: Mutex<HashMap<String, Arc<crate::transpile::PositionMap>>>,
    /// The load cache (off by default).
    cache: crate::cache::Cache,
}

impl std::fmt::Debug for Ops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ops").finish_non_exhaustive()
    }
}

impl Ops {
    /// Ops that load through `cache`.
    pub(crate) fn with_cache(cache: crate::cache::Cache) -> Self {
        Self {
            cache,
            ..Self::default()
        }
    }

    pub(crate) fn cache(&self) -> &crate::cache::Cache {
        &self.cache
    }

    pub(crate) fn remember_positions(&self, path: &str, positions: crate::transpile::PositionMap) {
        self.positions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.to_owned(), Arc::new(positions));
    }

    pub fn bind(&self, port: Arc<dyn SessionPort>) {
        *self.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(port);
    }

    /// Routes uncaught errors to `sink` from now on.
    pub fn report_uncaught_to(&self, sink: tokio::sync::mpsc::UnboundedSender<Vec<Value>>) {
        *self.uncaught.lock().unwrap_or_else(PoisonError::into_inner) = Some(sink);
    }

    /// Reports errors no call returned; before the host is bound (while extensions
    /// load) they go to stderr.
    pub(crate) fn report_uncaught(&self, errors: Vec<Value>) {
        match &*self.uncaught.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(sink) => {
                let _ = sink.send(errors);
            }
            None => {
                let errors: Vec<crate::HandlerError> = errors
                    .into_iter()
                    .filter_map(|e| serde_json::from_value(e).ok())
                    .collect();
                crate::host::write_to_stderr(&errors);
            }
        }
    }

    pub fn watch_updates(&self, call_id: &str, sink: UpdateSink) {
        self.updates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(call_id.to_owned(), sink);
    }

    /// Where partial results of the tool call `call_id` go (its `onUpdate`).
    pub fn unwatch_updates(&self, call_id: &str) {
        self.updates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(call_id);
    }

    fn session_call(&self, op: &str, args: Value) -> Value {
        let port = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(op) = crate::SessionOp::parse(op) else {
            return port_error(&crate::PortError::Unsupported(op.to_owned()));
        };
        match port {
            Some(port) => match port.call(op, args) {
                Ok(value) => json!({ "ok": value }),
                Err(failure) => port_error(&failure),
            },
            None => error(
                "ERR_KC_NOT_BOUND",
                "Extension runtime not initialized. Action methods cannot be called during extension loading.",
            ),
        }
    }

    /// Starts an async session op; `None` when no session is bound (the error reply).
    fn session_async(&self, id: u64, op: &str, args: Value) -> Result<PortFuture, Value> {
        let port = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(port) = port else {
            return Err(error(
                "ERR_KC_NOT_BOUND",
                "Extension runtime not initialized. Action methods cannot be called during extension loading.",
            ));
        };
        let Some(op) = crate::SessionOp::parse(op) else {
            return Ok(Box::pin(std::future::ready(Err(
                crate::PortError::Unsupported(op.to_owned()),
            ))));
        };
        let cancel = CancellationToken::new();
        self.cancels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, cancel.clone());
        Ok(port.call_async(op, args, cancel))
    }

    fn cancel_async(&self, id: u64) {
        if let Some(cancel) = self
            .cancels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id)
        {
            cancel.cancel();
        }
    }

    fn forget_async(&self, id: u64) {
        self.cancels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }

    fn tool_update(&self, args: &Value) -> Value {
        let id = args.get("toolCallId").and_then(Value::as_str).unwrap_or("");
        let sink = self
            .updates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned();
        if let Some(sink) = sink {
            sink(crate::hooks::tool_output(
                args.get("partial").unwrap_or(&Value::Null),
            ));
        }
        json!({ "ok": null })
    }
}

fn os_info() -> Value {
    let home = std::env::home_dir().map(|p| p.to_string_lossy().into_owned());
    let env: serde_json::Map<String, Value> = std::env::vars()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    json!({
        "env": env,
        "cwd": std::env::current_dir().ok().map(|p| p.to_string_lossy().into_owned()),
        "home": home,
        "tmpdir": std::env::temp_dir().to_string_lossy(),
        "platform": match std::env::consts::OS { "macos" => "darwin", "windows" => "win32", other => other },
        "arch": match std::env::consts::ARCH { "x86_64" => "x64", "aarch64" => "arm64", other => other },
        "pid": std::process::id(),
        "execPath": std::env::current_exe().ok().map(|p| p.to_string_lossy().into_owned()),
        "hostname": std::fs::read_to_string("/etc/hostname").map(|s| s.trim().to_owned()).unwrap_or_else(|_| "localhost".to_owned()),
    })
}

impl Ops {
    /// A stack with every frame in a stripped file pointing at its source line and column
    /// (`at f (/x/ext.ts:12:5)`, `at /x/ext.ts:3:1`); other frames are kept.
    pub(crate) fn map_stack(&self, stack: &str) -> String {
        let positions = self
            .positions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut out = String::with_capacity(stack.len());
        for (i, line) in stack.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            match map_frame(line, &positions) {
                Some(mapped) => out.push_str(&mapped),
                None => out.push_str(line),
            }
        }
        out
    }
}

fn map_frame(
    line: &str,
    positions: &HashMap<String, Arc<crate::transpile::PositionMap>>,
) -> Option<String> {
    let trimmed = line.trim_end();
    let (body, close) = match trimmed.strip_suffix(')') {
        Some(body) => (body, ")"),
        None => (trimmed, ""),
    };
    let (rest, column) = body.rsplit_once(':')?;
    let (location, row) = rest.rsplit_once(':')?;
    let (column, row) = (column.parse::<u32>().ok()?, row.parse::<u32>().ok()?);
    let start = match location.rfind('(') {
        Some(i) => i + 1,
        None => location.find("at ")? + 3,
    };
    let path = &location[start..];
    let (row, column) = positions.get(path)?.source_of(row, column)?;
    Some(format!(
        "{}{path}:{row}:{column}{close}",
        &location[..start]
    ))
}

fn resolve_op(specifier: &str, from_dir: &str, importer: &str) -> Value {
    match crate::resolve::resolve(specifier, &PathBuf::from(from_dir), importer) {
        Ok(Resolved::Host(id)) => json!({ "ok": { "host": id } }),
        Ok(Resolved::File(path)) => json!({ "ok": { "file": path.to_string_lossy() } }),
        Err(not_found) => error("ERR_MODULE_NOT_FOUND", &not_found.to_string()),
    }
}

/// Puts the ops on the global `__kc` object (the bootstrap hides it from extension code).
pub fn install<'js>(ctx: &Ctx<'js>, ops: Arc<Ops>) -> rquickjs::Result<()> {
    let kc = Object::new(ctx.clone())?;
    let load_ops = Arc::clone(&ops);
    kc.set(
        "loadFile",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, path: String| -> rquickjs::Result<rquickjs::Value<'js>> {
                crate::loader::load_file(&ctx, &load_ops, &path)
            },
        )?,
    )?;
    let stack_ops = Arc::clone(&ops);
    kc.set(
        "mapStack",
        Function::new(ctx.clone(), move |stack: String| {
            stack_ops.map_stack(&stack)
        })?,
    )?;
    kc.set(
        "resolve",
        Function::new(
            ctx.clone(),
            |specifier: String, from: String, importer: String| {
                resolve_op(&specifier, &from, &importer).to_string()
            },
        )?,
    )?;
    kc.set(
        "fs",
        Function::new(ctx.clone(), |op: String, args: String| {
            let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
            fs_op(&op, &args).to_string()
        })?,
    )?;
    crate::process::install(ctx, &kc)?;
    kc.set(
        "sleep",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, ms: f64| -> rquickjs::Result<Promise<'js>> {
                let duration = std::time::Duration::from_micros((ms.max(0.0) * 1000.0) as u64);
                // The timer runs as a task of the JS thread's runtime; a timer polled
                // inside the engine's own executor is never woken.
                let (tx, rx) = tokio::sync::oneshot::channel::<()>();
                tokio::task::spawn_local(async move {
                    tokio::time::sleep(duration).await;
                    let _ = tx.send(());
                });
                async_op(&ctx, async move {
                    let _ = rx.await;
                    String::new()
                })
            },
        )?,
    )?;
    kc.set("os", Function::new(ctx.clone(), || os_info().to_string())?)?;
    // `convertToLlm`: the session's messages as the model sees them, by the same code that
    // builds our requests (bash runs, custom messages and summaries become user text).
    kc.set(
        "convertToLlm",
        Function::new(ctx.clone(), |messages: String| {
            let messages =
                serde_json::from_str::<Vec<knightcode_protocol::AgentMessage>>(&messages)
                    .map_err(|e| format!("convertToLlm: not a list of messages ({e})"));
            match messages {
                Ok(messages) => json!({ "ok": knightcode_ai::llm_messages_json(&messages) }),
                Err(message) => error("ERR_INVALID_ARG_TYPE", &message),
            }
            .to_string()
        })?,
    )?;
    // `registerMcpServer`'s config, checked as an `mcp.json` entry by the code that reads
    // the files (the same messages).
    kc.set(
        "checkMcpServer",
        Function::new(ctx.clone(), |name: String, config: String| {
            let config: Value = serde_json::from_str(&config).unwrap_or(Value::Null);
            match knightcode_mcp::check_entry(&name, &config, knightcode_mcp::Scope::Extension) {
                Ok(()) => json!({ "ok": null }),
                Err(problem) => error("ERR_INVALID_ARG_VALUE", &problem.to_string()),
            }
            .to_string()
        })?,
    )?;
    // `performance.now()`: fractional milliseconds on the monotonic clock (extensions time
    // animations and their own work with it; `Date.now()` only has whole milliseconds).
    let origin = std::time::Instant::now();
    kc.set(
        "now",
        Function::new(ctx.clone(), move || origin.elapsed().as_secs_f64() * 1000.0)?,
    )?;
    kc.set(
        "print",
        Function::new(ctx.clone(), |text: String| {
            // stdout belongs to the protocol in print, JSON and RPC modes.
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        })?,
    )?;
    let session_ops = Arc::clone(&ops);
    kc.set(
        "session",
        Function::new(ctx.clone(), move |op: String, args: String| {
            let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
            session_ops.session_call(&op, args).to_string()
        })?,
    )?;
    let async_ops = Arc::clone(&ops);
    kc.set(
        "sessionAsync",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>,
                  id: f64,
                  op: String,
                  args: String|
                  -> rquickjs::Result<Promise<'js>> {
                let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
                let id = id as u64;
                let started = async_ops.session_async(id, &op, args);
                let (tx, rx) = tokio::sync::oneshot::channel::<Value>();
                match started {
                    Ok(future) => {
                        let done = Arc::clone(&async_ops);
                        // Awaited as a task of the JS thread's tokio runtime: the session's
                        // futures use its timers and channels, which the engine's own
                        // executor would never wake (see `sleep`).
                        tokio::task::spawn_local(async move {
                            let reply = match future.await {
                                Ok(value) => json!({ "ok": value }),
                                Err(failure) => port_error(&failure),
                            };
                            done.forget_async(id);
                            let _ = tx.send(reply);
                        });
                    }
                    Err(reply) => {
                        let _ = tx.send(reply);
                    }
                }
                let what = op;
                async_op(&ctx, async move {
                    rx.await
                        .unwrap_or_else(|_| port_error(&crate::PortError::Ended { what }))
                        .to_string()
                })
            },
        )?,
    )?;
    let cancel_ops = Arc::clone(&ops);
    kc.set(
        "cancelAsync",
        Function::new(ctx.clone(), move |id: f64| {
            cancel_ops.cancel_async(id as u64)
        })?,
    )?;
    let uncaught_ops = Arc::clone(&ops);
    kc.set(
        "reportUncaught",
        Function::new(ctx.clone(), move |error: String| {
            if let Ok(error) = serde_json::from_str::<Value>(&error) {
                uncaught_ops.report_uncaught(vec![error]);
            }
        })?,
    )?;
    let update_ops = Arc::clone(&ops);
    kc.set(
        "toolUpdate",
        Function::new(ctx.clone(), move |args: String| {
            let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
            update_ops.tool_update(&args).to_string()
        })?,
    )?;
    crate::providers_ops::install(ctx, &kc, &ops.providers)?;
    crate::providers_ops::install_tools(ctx, &kc, &ops)?;
    crate::nested::install(ctx, &kc, &ops)?;
    crate::oauth_login::install(ctx, &kc, &ops.logins)?;
    crate::virtual_route::install(ctx, &kc, &ops.routes)?;
    crate::tui_ops::install(ctx, &kc)?;
    // Owned by the ops' closures: the watchers stop with the runtime (a reload, the end).
    crate::watch::install(ctx, &kc, &Arc::default())?;
    ctx.globals().set("__kc", kc)?;
    Ok(())
}
