//! The QuickJS side of a codemode script: a fresh runtime and context per script on a thread
//! of its own (QuickJS is single-threaded, and a script that loops must not hold a tokio
//! worker), with a memory limit and an interrupt for abort and timeout. Nothing but the
//! prelude's globals is defined: no Node, file system, network or timers.
//!
//! Tool calls leave as [`Request`]s on a channel the tool's async side serves; their outcomes
//! come back as [`Event`]s, each settling the script's promise for that call. Between events
//! the thread runs QuickJS's pending jobs until the script ends or waits.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;
use std::time::Instant;

use rquickjs::Context;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use rquickjs::Runtime;
use serde_json::Value;

use super::catalog::Catalog;

/// The script's heap (`InternalError: out of memory` past it).
const MEMORY_LIMIT: usize = 256 * 1024 * 1024;
/// The sandbox thread's stack; QuickJS's own stack guard (1 MiB) raises a catchable
/// `RangeError` well before it.
const THREAD_STACK: usize = 8 * 1024 * 1024;

const PRELUDE: &str = include_str!("prelude.js");

/// A tool call the script made.
#[derive(Debug)]
pub(crate) struct Request {
    pub id: u32,
    pub name: String,
    pub arguments: Value,
    /// `models.classify(model, context, options)`: `arguments` is `{model, context,
    /// options}`, `name` is empty.
    pub classify: bool,
}

/// What the async side tells the script.
#[derive(Debug)]
pub(crate) enum Event {
    /// A call ended: `ok` resolves its promise with `payload` (JSON), otherwise it rejects
    /// with an `Error` whose message is the JSON string `payload`.
    Settled { id: u32, ok: bool, payload: String },
    /// The tool call was aborted: stop now.
    Aborted,
}

/// How a script ended when it did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// It threw (or a limit it hit threw); the text is the error and its stack.
    Script(String),
    Timeout(Duration),
    Aborted,
    /// The sandbox itself failed (could not start, or the script's result was unreadable).
    Sandbox(String),
}

/// What the script left: its output, its store writes, and how it ended.
#[derive(Debug, Default)]
pub(crate) struct ScriptEnd {
    pub items: Vec<Value>,
    pub console: Vec<String>,
    pub set: serde_json::Map<String, Value>,
    pub delete: Vec<String>,
    pub failure: Option<Failure>,
}

/// One script to run.
pub(crate) struct Script {
    pub code: String,
    pub timeout: Option<Duration>,
    pub catalog: Arc<Catalog>,
    /// The branch's stored values (`load`).
    pub stored: serde_json::Map<String, Value>,
    /// `[{model, available}]`, for the `models` global.
    pub models: String,
}

/// Runs `script` on a thread of its own; `done` receives how it ended.
pub(crate) fn spawn(
    script: Script,
    requests: tokio::sync::mpsc::UnboundedSender<Request>,
    events: std::sync::mpsc::Receiver<Event>,
    aborted: Arc<AtomicBool>,
    done: tokio::sync::oneshot::Sender<ScriptEnd>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("codemode".to_owned())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let end = run(script, &requests, &events, &aborted);
            let _ = done.send(end);
        })
        .map(|_| ())
}

fn failed(failure: Failure) -> ScriptEnd {
    ScriptEnd {
        failure: Some(failure),
        ..ScriptEnd::default()
    }
}

fn run(
    script: Script,
    requests: &tokio::sync::mpsc::UnboundedSender<Request>,
    events: &std::sync::mpsc::Receiver<Event>,
    aborted: &Arc<AtomicBool>,
) -> ScriptEnd {
    let deadline = script.timeout.map(|t| Instant::now() + t);
    let runtime = match Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return failed(Failure::Sandbox(error.to_string())),
    };
    runtime.set_memory_limit(MEMORY_LIMIT);
    let flag = Arc::clone(aborted);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        flag.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)
    })));
    let context = match Context::full(&runtime) {
        Ok(context) => context,
        Err(error) => return failed(Failure::Sandbox(error.to_string())),
    };
    let started = context.with(|ctx| start(&ctx, &script, requests.clone()));
    let interrupted = |aborted: &AtomicBool| {
        if aborted.load(Ordering::Relaxed) {
            Some(Failure::Aborted)
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            script.timeout.map(Failure::Timeout)
        } else {
            None
        }
    };
    if let Err(error) = started {
        let failure = interrupted(aborted).unwrap_or(Failure::Script(error));
        runtime.set_interrupt_handler(None);
        return finish(&context, Some(failure));
    }
    let stop = |failure: Failure| {
        // Reading the result must not be interrupted too.
        runtime.set_interrupt_handler(None);
        finish(&context, Some(failure))
    };
    loop {
        while let Ok(true) | Err(_) = runtime.execute_pending_job() {
            if interrupted(aborted).is_some() {
                break;
            }
        }
        if let Some(failure) = interrupted(aborted) {
            return stop(failure);
        }
        let (status, calls) = context.with(|ctx| status(&ctx));
        if status != "running" {
            return finish(&context, None);
        }
        if calls == 0 {
            return stop(Failure::Script(
                "Error: the script waits for a promise that can never settle (no tool call is running)"
                    .to_owned(),
            ));
        }
        let event = match deadline {
            Some(deadline) => {
                match events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(event) => event,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => Event::Aborted,
                }
            }
            None => events.recv().unwrap_or(Event::Aborted),
        };
        match event {
            Event::Aborted => {
                aborted.store(true, Ordering::Relaxed);
            }
            Event::Settled { id, ok, payload } => {
                context.with(|ctx| settle(&ctx, id, ok, &payload));
            }
        }
    }
}

/// Defines `__host`, runs the prelude and starts the script.
fn start<'js>(
    ctx: &Ctx<'js>,
    script: &Script,
    requests: tokio::sync::mpsc::UnboundedSender<Request>,
) -> Result<(), String> {
    let host = Object::new(ctx.clone()).map_err(|e| e.to_string())?;
    let set = |name: &str, function: rquickjs::Result<Function<'js>>| -> Result<(), String> {
        let function = function.map_err(|e| e.to_string())?;
        host.set(name, function).map_err(|e| e.to_string())
    };
    let classify_requests = requests.clone();
    set(
        "call",
        Function::new(
            ctx.clone(),
            move |id: u32, name: String, arguments: String| {
                let arguments = serde_json::from_str(&arguments).unwrap_or(Value::Null);
                let _ = requests.send(Request {
                    id,
                    name,
                    arguments,
                    classify: false,
                });
            },
        ),
    )?;
    set(
        "classify",
        Function::new(ctx.clone(), move |id: u32, request: String| {
            let _ = classify_requests.send(Request {
                id,
                name: String::new(),
                arguments: serde_json::from_str(&request).unwrap_or(Value::Null),
                classify: true,
            });
        }),
    )?;
    let catalog = Arc::clone(&script.catalog);
    set(
        "tools",
        Function::new(ctx.clone(), move || catalog.script_tools_json()),
    )?;
    let catalog = Arc::clone(&script.catalog);
    set(
        "search",
        Function::new(
            ctx.clone(),
            move |query: String, limit: f64, namespace: String| {
                catalog.search_json(&query, limit, &namespace)
            },
        ),
    )?;
    let catalog = Arc::clone(&script.catalog);
    set(
        "describe",
        Function::new(ctx.clone(), move |name: String| catalog.describe(&name)),
    )?;
    let catalog = Arc::clone(&script.catalog);
    set(
        "namespace",
        Function::new(ctx.clone(), move |name: String| {
            catalog.namespace_json(&name)
        }),
    )?;
    let models = script.models.clone();
    set("models", Function::new(ctx.clone(), move || models.clone()))?;
    let stored = script.stored.clone();
    set(
        "load",
        Function::new(ctx.clone(), move |key: String| {
            stored.get(&key).map(Value::to_string)
        }),
    )?;
    ctx.globals()
        .set("__host", host)
        .map_err(|e| e.to_string())?;
    eval(ctx, PRELUDE)?;
    // The body starts on the wrapper's second line: error line numbers are one more than
    // the script's own.
    let wrapped = format!("__kc.start(async () => {{\n{}\n}});", script.code);
    eval(ctx, &wrapped)
}

fn eval(ctx: &Ctx<'_>, source: &str) -> Result<(), String> {
    ctx.eval::<(), _>(source)
        .map_err(|error| exception_text(ctx, &error))
}

/// The thrown value behind `error`, as `Name: message` and its stack.
fn exception_text(ctx: &Ctx<'_>, error: &rquickjs::Error) -> String {
    if !matches!(error, rquickjs::Error::Exception) {
        return error.to_string();
    }
    let thrown = ctx.catch();
    if let Some(exception) = thrown.as_exception() {
        let head = format!(
            "{}: {}",
            exception
                .get::<_, String>("name")
                .unwrap_or_else(|_| "Error".to_owned()),
            exception.message().unwrap_or_default()
        );
        return match exception.stack() {
            Some(stack) if !stack.trim().is_empty() => format!("{head}\n{}", stack.trim_end()),
            _ => head,
        };
    }
    thrown
        .as_string()
        .and_then(|s| s.to_string().ok())
        .map(|s| format!("Uncaught {s}"))
        .unwrap_or_else(|| "Uncaught exception".to_owned())
}

/// The script's status (`running`, `done`, `failed`) and how many calls it waits for.
fn status(ctx: &Ctx<'_>) -> (String, usize) {
    let status = ctx
        .eval::<String, _>("__kc.status()")
        .unwrap_or_else(|_| "failed".to_owned());
    let pending = ctx
        .eval::<f64, _>("__kc.pending()")
        .map(|n| n as usize)
        .unwrap_or(0);
    (status, pending)
}

fn settle(ctx: &Ctx<'_>, id: u32, ok: bool, payload: &str) {
    let settle: rquickjs::Result<Function<'_>> = ctx
        .globals()
        .get::<_, Object<'_>>("__kc")
        .and_then(|kc| kc.get("settle"));
    if let Ok(settle) = settle {
        let _ = settle.call::<_, ()>((id, ok, payload.to_owned()));
    }
}

/// Reads what the script left; `failure` (an abort, a timeout) wins over its own status.
fn finish(context: &Context, failure: Option<Failure>) -> ScriptEnd {
    let json = context.with(|ctx| ctx.eval::<String, _>("__kc.result()").ok());
    let Some(value) = json.and_then(|j| serde_json::from_str::<Value>(&j).ok()) else {
        return failed(failure.unwrap_or_else(|| {
            Failure::Sandbox("the script's output could not be read".to_owned())
        }));
    };
    let strings = |key: &str| -> Vec<String> {
        value[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let set = value["set"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let parsed = serde_json::from_str(v.as_str()?).ok()?;
            Some((k.clone(), parsed))
        })
        .collect();
    let failure = failure.or_else(|| {
        value["error"]
            .as_str()
            .map(|e| Failure::Script(e.to_owned()))
    });
    ScriptEnd {
        items: value["items"].as_array().cloned().unwrap_or_default(),
        console: strings("console"),
        set,
        delete: strings("delete"),
        failure,
    }
}
