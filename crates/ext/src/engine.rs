//! The JS thread: one QuickJS runtime per process on a dedicated OS thread (16 MiB stack)
//! with a current-thread tokio runtime, so Node's synchronous APIs (`readFileSync`,
//! `execSync`) and long synchronous JS block a thread we own, never a worker of the agent.
//!
//! Rust talks to JS through one entry point, `__kc_call(method, json)`, which always
//! resolves to a JSON text (`{"ok":…}` or `{"error":…}`); JS reaches Rust through the ops
//! on the hidden `__kc` object (`ops.rs`).

use std::sync::Arc;

use rquickjs::AsyncContext;
use rquickjs::AsyncRuntime;
use rquickjs::CatchResultExt as _;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Promise;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::sync::oneshot;

use crate::error::ExtError;
use crate::ops::Ops;

/// A piece of work run on the JS thread with the context.
type Job = Box<dyn for<'js> FnOnce(Ctx<'js>) + Send>;

/// The scripts evaluated at start, in order (globals, Node layer, host packages, API).
const BOOTSTRAP: &[(&str, &str)] = &[
    ("kc:runner.js", include_str!("../js/runner.js")),
    ("kc:node.js", include_str!("../js/node.js")),
    ("kc:typebox.js", include_str!("../js/typebox.js")),
    ("kc:packages.js", include_str!("../js/packages.js")),
    ("kc:providers.js", include_str!("../js/providers.js")),
    ("kc:fetch.js", include_str!("../js/fetch.js")),
    ("kc:tools.js", include_str!("../js/tools.js")),
    ("kc:api.js", include_str!("../js/api.js")),
];

/// Heap limit of the shared runtime.
const MEMORY_LIMIT: usize = 2 << 30;
/// JS stack limit: below the thread's 16 MiB, so deep recursion throws `RangeError`.
const MAX_STACK: usize = 8 << 20;
const THREAD_STACK: usize = 16 << 20;

/// A handle on the JS thread. Dropping every handle ends the thread.
#[derive(Clone)]
pub struct Engine {
    jobs: mpsc::UnboundedSender<Job>,
}

/// An [`Engine`] that does not keep the JS thread alive (held by the ops themselves).
#[derive(Clone)]
pub struct WeakEngine {
    jobs: mpsc::WeakUnboundedSender<Job>,
}

impl WeakEngine {
    pub fn upgrade(&self) -> Option<Engine> {
        self.jobs.upgrade().map(|jobs| Engine { jobs })
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

/// What a JS exception says, with its stack when it has one.
pub(crate) fn describe<'js>(ctx: &Ctx<'js>, error: rquickjs::Error) -> String {
    match error {
        rquickjs::Error::Exception => {
            let value = ctx.catch();
            if let Some(exception) = value.as_exception() {
                let message = exception.message().unwrap_or_default();
                match exception.stack() {
                    Some(stack) if !stack.is_empty() => format!("{message}\n{stack}"),
                    _ => message,
                }
            } else {
                format!("{value:?}")
            }
        }
        other => other.to_string(),
    }
}

impl Engine {
    /// Starts the thread and evaluates the bootstrap scripts.
    pub fn start(ops: Arc<Ops>) -> Result<Self, ExtError> {
        let (jobs, mut inbox) = mpsc::unbounded_channel::<Job>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        std::thread::Builder::new()
            .name("knightcode-js".to_owned())
            .stack_size(THREAD_STACK)
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = ready_tx.send(Err(error.to_string()));
                        return;
                    }
                };
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, async move {
                    let setup = async {
                        let rt = AsyncRuntime::new().map_err(|e| e.to_string())?;
                        rt.set_memory_limit(MEMORY_LIMIT).await;
                        rt.set_max_stack_size(MAX_STACK).await;
                        let context = AsyncContext::full(&rt).await.map_err(|e| e.to_string())?;
                        context
                            .with(|ctx| bootstrap(&ctx, ops))
                            .await
                            .map(|()| (rt, context))
                    };
                    let (rt, context) = match setup.await {
                        Ok(pair) => {
                            let _ = ready_tx.send(Ok(()));
                            pair
                        }
                        Err(error) => {
                            let _ = ready_tx.send(Err(error));
                            return;
                        }
                    };
                    loop {
                        // Run every ready job and poll the engine's futures; they register
                        // this task's waker, so their progress wakes the `select!` below.
                        while let Ok(true) = rt.execute_pending_job().await {}
                        let mut polled = false;
                        let woken = std::future::poll_fn(|_| {
                            if polled {
                                std::task::Poll::Ready(())
                            } else {
                                polled = true;
                                std::task::Poll::Pending
                            }
                        });
                        tokio::select! {
                            job = inbox.recv() => match job {
                                Some(job) => context.with(job).await,
                                None => break,
                            },
                            () = woken => {}
                        }
                    }
                });
            })
            .map_err(|e| ExtError::Stopped(format!("could not start the JS thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self { jobs }),
            Ok(Err(error)) => Err(ExtError::Stopped(error)),
            Err(_) => Err(ExtError::Stopped(
                "the JS thread exited at start".to_owned(),
            )),
        }
    }

    pub fn downgrade(&self) -> WeakEngine {
        WeakEngine {
            jobs: self.jobs.downgrade(),
        }
    }

    /// Calls `__kc_call(method, payload)` on the JS thread and returns what it resolved to.
    pub async fn call(&self, method: &str, payload: &Value) -> Result<Value, String> {
        let (tx, rx) = oneshot::channel::<Result<Value, String>>();
        let method = method.to_owned();
        let payload = payload.to_string();
        let job: Job = Box::new(move |ctx| {
            let result = (|| {
                let call: Function = ctx.globals().get("__kc_call")?;
                call.call::<_, Promise>((method, payload))
            })();
            match result {
                Ok(promise) => {
                    let inner = ctx.clone();
                    ctx.spawn(async move {
                        let text = promise.into_future::<String>().await.catch(&inner);
                        let reply = match text {
                            Ok(text) => decode(&text),
                            Err(error) => Err(error.to_string()),
                        };
                        let _ = tx.send(reply);
                    });
                }
                Err(error) => {
                    let _ = tx.send(Err(describe(&ctx, error)));
                }
            }
        });
        self.jobs
            .send(job)
            .map_err(|_| "the extension host stopped".to_owned())?;
        rx.await
            .map_err(|_| "the extension host stopped".to_owned())?
    }
}

/// `{"ok": v}` → `Ok(v)`, `{"error": e}` → `Err(e)`.
fn decode(text: &str) -> Result<Value, String> {
    let mut value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return Err(error.to_owned());
    }
    Ok(value.get_mut("ok").map(Value::take).unwrap_or(Value::Null))
}

fn bootstrap(ctx: &Ctx<'_>, ops: Arc<Ops>) -> Result<(), String> {
    crate::ops::install(ctx, ops).map_err(|e| describe(ctx, e))?;
    for (name, source) in BOOTSTRAP {
        let mut options = rquickjs::context::EvalOptions::default();
        options.global = true;
        options.strict = false;
        options.filename = Some((*name).to_owned());
        ctx.eval_with_options::<(), _>(*source, options)
            .map_err(|e| format!("{name}: {}", describe(ctx, e)))?;
    }
    Ok(())
}
