//! The JS thread: one QuickJS runtime per process on a dedicated OS thread (16 MiB stack)
//! with a current-thread tokio runtime, so Node's synchronous APIs (`readFileSync`,
//! `execSync`) and long synchronous JS block a thread we own, never a worker of the agent.
//!
//! Rust talks to JS through one entry point, `__kc_call(method, json)`, which always
//! resolves to a JSON text (`{"ok":…}` or `{"error":…}`); JS reaches Rust through the ops
//! on the hidden `__kc` object (`ops.rs`).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use rquickjs::AsyncContext;
use rquickjs::AsyncRuntime;
use rquickjs::Ctx;
use rquickjs::Function;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::sync::oneshot;

use crate::error::CallError;
use crate::error::ExtError;
use crate::ops::Ops;

/// A piece of work run on the JS thread with the context.
type Job = Box<dyn for<'js> FnOnce(Ctx<'js>) + Send>;

/// The scripts evaluated at start, in order (globals, Node layer, host packages, API); what
/// each holds and what they share is in docs/extensions.md, "The bootstrap scripts".
const BOOTSTRAP: &[(&str, &str)] = &[
    ("kc:runner.js", include_str!("../js/runner.js")),
    ("kc:session.js", include_str!("../js/session.js")),
    ("kc:node.js", include_str!("../js/node.js")),
    ("kc:buffer.js", include_str!("../js/buffer.js")),
    ("kc:web.js", include_str!("../js/web.js")),
    ("kc:fs.js", include_str!("../js/fs.js")),
    ("kc:stream.js", include_str!("../js/stream.js")),
    ("kc:webstreams.js", include_str!("../js/webstreams.js")),
    (
        "kc:child_process.js",
        include_str!("../js/child_process.js"),
    ),
    ("kc:typebox.js", include_str!("../js/typebox.js")),
    ("kc:packages.js", include_str!("../js/packages.js")),
    ("kc:tui_widgets.js", include_str!("../js/tui_widgets.js")),
    ("kc:tui.js", include_str!("../js/tui.js")),
    ("kc:providers.js", include_str!("../js/providers.js")),
    ("kc:virtual.js", include_str!("../js/virtual.js")),
    ("kc:mcp_servers.js", include_str!("../js/mcp_servers.js")),
    ("kc:fetch.js", include_str!("../js/fetch.js")),
    ("kc:tools.js", include_str!("../js/tools.js")),
    ("kc:ui.js", include_str!("../js/ui.js")),
    ("kc:renderers.js", include_str!("../js/renderers.js")),
    ("kc:autocomplete.js", include_str!("../js/autocomplete.js")),
    ("kc:ctx_ui.js", include_str!("../js/ctx_ui.js")),
    ("kc:dispatch.js", include_str!("../js/dispatch.js")),
    ("kc:api.js", include_str!("../js/api.js")),
];

/// Heap limit of the shared runtime unless the host configures another.
const MEMORY_LIMIT: usize = 2 << 30;
/// JS stack limit: below the thread's 16 MiB, so deep recursion throws `RangeError`.
const MAX_STACK: usize = 8 << 20;
const THREAD_STACK: usize = 16 << 20;

/// How long either side of a hand-off keeps polling before it parks. A parked thread costs
/// a futex wake-up and, on an idle VM, a halted vCPU woken by the hypervisor: some 30 µs
/// each way, more than the JS work of an event. Events come in bursts (a turn's events, a
/// tool call's gate and result), so polling this long after each piece of work catches the
/// next one on a running core; an idle host still sleeps, since the spin only follows work.
const SPIN: std::time::Duration = std::time::Duration::from_micros(60);

/// Polls `ready` until it yields or [`SPIN`] has passed.
fn spin_for<T>(mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = std::time::Instant::now() + SPIN;
    loop {
        if let Some(value) = ready() {
            return Some(value);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        for _ in 0..32 {
            std::hint::spin_loop();
        }
    }
}

/// What the handles and the JS thread share: whether JS is executing, and a request to
/// stop it. The interrupt handler QuickJS polls while it executes reads the request, so a
/// runaway synchronous loop ends with an uncatchable error at our call site.
#[derive(Debug)]
struct Watch {
    running: AtomicBool,
    interrupt: AtomicBool,
    /// The interrupt hit: JS was unwound.
    fired: AtomicBool,
    /// When the synchronous JS running now must have returned (a component's `render` or
    /// `handleInput`), in microseconds after `epoch`; 0 for no limit. Set from JS through
    /// `__kc.deadline(ms)`.
    deadline: AtomicU64,
    /// The deadline passed and the code was unwound; JS is told once the thread is free.
    deadline_passed: AtomicBool,
    epoch: std::time::Instant,
}

impl Watch {
    fn new() -> Self {
        Self {
            running: AtomicBool::new(false),
            interrupt: AtomicBool::new(false),
            fired: AtomicBool::new(false),
            deadline: AtomicU64::new(0),
            deadline_passed: AtomicBool::new(false),
            epoch: std::time::Instant::now(),
        }
    }

    fn micros(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// What the interrupt handler answers: stop for an abort, or for a deadline passed.
    fn should_interrupt(&self) -> bool {
        if self.interrupt.swap(false, Ordering::Relaxed) {
            self.fired.store(true, Ordering::Relaxed);
            return true;
        }
        let due = self.deadline.load(Ordering::Relaxed);
        if due != 0 && self.micros() >= due {
            self.deadline.store(0, Ordering::Relaxed);
            self.deadline_passed.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }
}

/// What `__kc_call` answered: its JSON text (decoded by the caller, off the JS thread), or
/// why it has none.
type Reply = oneshot::Sender<Result<String, CallError>>;

/// Calls waiting for JS, by id. An interrupt that hits a promise job unwinds code whose
/// call would otherwise never settle, so every waiting call is failed then.
#[derive(Default)]
struct Inflight {
    next: std::sync::atomic::AtomicU64,
    waiting: std::sync::Mutex<std::collections::HashMap<u64, Reply>>,
}

impl Inflight {
    fn add(&self, reply: Reply) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, reply);
        id
    }

    fn settle(&self, id: u64, result: Result<String, CallError>) {
        if let Some(reply) = self.lock().remove(&id) {
            let _ = reply.send(result);
        }
    }

    fn fail_all(&self, failure: &CallError) {
        for (_, reply) in self.lock().drain() {
            let _ = reply.send(Err(failure.clone()));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u64, Reply>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A handle on the JS thread. Dropping every handle ends the thread.
#[derive(Clone)]
pub struct Engine {
    jobs: mpsc::UnboundedSender<Job>,
    watch: Arc<Watch>,
    inflight: Arc<Inflight>,
}

/// Promise rejections nobody handled yet: QuickJS reports a rejection without a handler at
/// once and again when a handler is attached later, so they are reported only when the
/// JS thread has run out of work (as Node does after its microtask queue).
type Unhandled = Rc<RefCell<Vec<(rquickjs::Persistent<rquickjs::Value<'static>>, Value)>>>;

/// The message and stack of a thrown or rejected value, as a `HandlerError`'s JSON.
fn rejection_json(reason: &rquickjs::Value<'_>) -> Value {
    let (error, stack) = match reason.as_exception() {
        Some(exception) => (
            exception.message().unwrap_or_default(),
            exception.stack().filter(|s| !s.is_empty()),
        ),
        None => match reason.as_string().and_then(|s| s.to_string().ok()) {
            Some(text) => (text, None),
            None => (format!("{reason:?}"), None),
        },
    };
    serde_json::json!({
        "extensionPath": "<unknown>",
        "event": "unhandledRejection",
        "error": format!("Unhandled promise rejection: {error}"),
        "stack": stack,
    })
}

/// QuickJS has no WebAssembly. Libraries such as undici 6 start compiling their wasm at
/// import and need it only when used (where the error reaches the caller again), so that
/// eager rejection is not reported; Node would have compiled it. JS gives a ReferenceError
/// no code, so the message is what tells it apart.
fn lacks_webassembly(reason: &rquickjs::Value<'_>) -> bool {
    reason
        .as_exception()
        .and_then(rquickjs::Exception::message)
        .is_some_and(|message| message == "WebAssembly is not defined")
}

/// An [`Engine`] that does not keep the JS thread alive (held by the ops themselves).
#[derive(Clone)]
pub struct WeakEngine {
    jobs: mpsc::WeakUnboundedSender<Job>,
    watch: Arc<Watch>,
    inflight: Arc<Inflight>,
}

impl WeakEngine {
    pub fn upgrade(&self) -> Option<Engine> {
        self.jobs.upgrade().map(|jobs| Engine {
            jobs,
            watch: Arc::clone(&self.watch),
            inflight: Arc::clone(&self.inflight),
        })
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
    pub fn start(ops: Arc<Ops>, memory_limit: Option<usize>) -> Result<Self, ExtError> {
        let (jobs, mut inbox) = mpsc::unbounded_channel::<Job>();
        let watch = Arc::new(Watch::new());
        let watching = Arc::clone(&watch);
        let inflight = Arc::new(Inflight::default());
        let failing = Arc::clone(&inflight);
        let replies = Arc::clone(&inflight);
        let deadlines = Arc::clone(&watch);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), ExtError>>();
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
                        let _ = ready_tx.send(Err(ExtError::Stopped(error.to_string())));
                        return;
                    }
                };
                let local = tokio::task::LocalSet::new();
                let unhandled: Unhandled = Rc::default();
                let reporting = Arc::clone(&ops);
                local.block_on(&runtime, async move {
                    let setup = async {
                        let rt = AsyncRuntime::new_with_alloc(crate::js_heap::JsHeap)
                            .map_err(|e| ExtError::Stopped(e.to_string()))?;
                        rt.set_memory_limit(memory_limit.unwrap_or(MEMORY_LIMIT))
                            .await;
                        rt.set_max_stack_size(MAX_STACK).await;
                        let interrupting = Arc::clone(&watching);
                        rt.set_interrupt_handler(Some(Box::new(move || {
                            interrupting.should_interrupt()
                        })))
                        .await;
                        let tracked = Rc::clone(&unhandled);
                        rt.set_host_promise_rejection_tracker(Some(Box::new(
                            move |ctx, promise, reason, handled| {
                                let mut list = tracked.borrow_mut();
                                if handled {
                                    list.retain(|(p, _)| {
                                        p.clone().restore(&ctx).ok().as_ref() != Some(&promise)
                                    });
                                } else if !lacks_webassembly(&reason) {
                                    list.push((
                                        rquickjs::Persistent::save(&ctx, promise),
                                        rejection_json(&reason),
                                    ));
                                }
                            },
                        )))
                        .await;
                        let context = AsyncContext::full(&rt)
                            .await
                            .map_err(|e| ExtError::Stopped(e.to_string()))?;
                        context
                            .with(|ctx| bootstrap(&ctx, ops, &replies, &deadlines))
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
                        watching.running.store(true, Ordering::Relaxed);
                        loop {
                            match rt.execute_pending_job().await {
                                Ok(true) => {}
                                Ok(false) => break,
                                // An interrupted or failed job: its exception is pending on
                                // the context; clear it so the next job starts clean.
                                Err(failed) => {
                                    // The job's context is ours (there is one); the
                                    // exception's handle does not own a reference to it
                                    // (QuickJS hands out the bare pointer), so dropping it
                                    // would free the context once too often.
                                    std::mem::forget(failed);
                                    context.with(|ctx| drop(ctx.catch())).await;
                                }
                            }
                        }
                        watching.running.store(false, Ordering::Relaxed);
                        watching.interrupt.store(false, Ordering::Relaxed);
                        if watching.fired.swap(false, Ordering::Relaxed) {
                            failing.fail_all(&CallError::Interrupted);
                        }
                        if watching.deadline_passed.swap(false, Ordering::Relaxed) {
                            context.with(|ctx| deadline_passed(&ctx)).await;
                            continue;
                        }
                        let rejected: Vec<Value> =
                            unhandled.borrow_mut().drain(..).map(|(_, e)| e).collect();
                        if !rejected.is_empty() {
                            reporting.report_uncaught(rejected);
                        }
                        let mut polled = false;
                        let woken = std::future::poll_fn(|_| {
                            if polled {
                                std::task::Poll::Ready(())
                            } else {
                                polled = true;
                                std::task::Poll::Pending
                            }
                        });
                        // A job that comes while the thread is still awake skips the park.
                        let early = spin_for(|| inbox.try_recv().ok());
                        tokio::select! {
                            biased;
                            job = async { match early { Some(job) => Some(job), None => inbox.recv().await } } => match job {
                                Some(job) => {
                                    watching.running.store(true, Ordering::Relaxed);
                                    // A panic in our glue fails this call (its reply
                                    // channel drops), never the thread or the process.
                                    context
                                        .with(|ctx| {
                                            let _ = std::panic::catch_unwind(
                                                std::panic::AssertUnwindSafe(|| job(ctx)),
                                            );
                                        })
                                        .await;
                                    // An interrupt of a job's synchronous part fails just
                                    // that call, with the exception.
                                    watching.fired.store(false, Ordering::Relaxed);
                                    if watching.deadline_passed.swap(false, Ordering::Relaxed) {
                                        context.with(|ctx| deadline_passed(&ctx)).await;
                                    }
                                }
                                None => break,
                            },
                            () = woken => {}
                        }
                    }
                });
            })
            .map_err(|e| ExtError::Stopped(format!("could not start the JS thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self {
                jobs,
                watch,
                inflight,
            }),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(ExtError::Stopped(
                "the JS thread exited at start".to_owned(),
            )),
        }
    }

    pub fn downgrade(&self) -> WeakEngine {
        WeakEngine {
            jobs: self.jobs.downgrade(),
            watch: Arc::clone(&self.watch),
            inflight: Arc::clone(&self.inflight),
        }
    }

    /// Stops the JS that is executing now, if any (a user abort): it ends with an
    /// uncatchable error at our call site. Nothing happens while the thread is idle, so an
    /// abort never hits the next, unrelated call.
    pub fn interrupt(&self) {
        if self.watch.running.load(Ordering::Relaxed) {
            self.watch.interrupt.store(true, Ordering::Relaxed);
        }
    }

    /// [`Engine::call`] that gives up when `cancel` fires: the running JS is interrupted
    /// (a handler stuck in a synchronous loop ends) and the caller goes on at once.
    pub async fn call_until(
        &self,
        method: &str,
        payload: &Value,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Value, CallError> {
        tokio::select! {
            result = self.call(method, payload) => result,
            () = cancel.cancelled() => {
                self.interrupt();
                Err(CallError::Interrupted)
            }
        }
    }

    /// Resolves once every job queued before it has run on the JS thread (what was
    /// `post`ed has been handled). The JS thread runs its jobs in order.
    pub fn flushed(&self) -> impl std::future::Future<Output = ()> + Send + 'static + use<> {
        let (tx, rx) = oneshot::channel::<()>();
        let job: Job = Box::new(move |_ctx| {
            let _ = tx.send(());
        });
        let _ = self.jobs.send(job);
        async move {
            let _ = rx.await;
        }
    }

    /// Queues `__kc_call(method, payload)` without waiting for its answer.
    pub fn post(&self, method: &str, payload: &Value) {
        let method = method.to_owned();
        let payload = payload.to_string();
        let job: Job = Box::new(move |ctx| {
            if let Ok(call) = ctx.globals().get::<_, Function>("__kc_call") {
                let _ = call.call::<_, ()>((method, payload));
            }
        });
        let _ = self.jobs.send(job);
    }

    /// Calls `__kc_call(method, payload, id)` on the JS thread and returns what it resolved
    /// to. The JS side answers through the `reply` op when the call settles, so the JS
    /// thread hands the answer straight back (no future of ours waits on the promise).
    pub async fn call(&self, method: &str, payload: &Value) -> Result<Value, CallError> {
        self.queue_call(method, payload).await
    }

    /// Like [`Engine::call`], but the call is queued on the JS thread before this returns,
    /// not when the future is first polled: calls posted one after another run in that
    /// order whichever task awaits them.
    pub fn queue_call(
        &self,
        method: &str,
        payload: &Value,
    ) -> impl std::future::Future<Output = Result<Value, CallError>> + Send + 'static + use<> {
        let (tx, rx) = oneshot::channel::<Result<String, CallError>>();
        let id = self.inflight.add(tx);
        let inflight = Arc::clone(&self.inflight);
        let watch = Arc::clone(&self.watch);
        let method = method.to_owned();
        let payload = payload.to_string();
        let job: Job = Box::new(move |ctx| {
            let result = (|| {
                let call: Function = ctx.globals().get("__kc_call")?;
                call.call::<_, ()>((method, payload, id as f64))
            })();
            if let Err(error) = result {
                let described = describe(&ctx, error);
                // QuickJS's own "interrupted" says nothing to a user.
                let reply = if watch.fired.load(Ordering::Relaxed) {
                    CallError::Interrupted
                } else {
                    CallError::Threw(described)
                };
                inflight.settle(id, Err(reply));
            }
        });
        if self.jobs.send(job).is_err() {
            self.inflight.settle(id, Err(CallError::Stopped));
        }
        async move {
            let mut rx = rx;
            // A quick answer (most events and tool calls) is taken before this task parks.
            let answered = spin_for(|| match rx.try_recv() {
                Ok(answer) => Some(Ok(answer)),
                Err(oneshot::error::TryRecvError::Empty) => None,
                Err(oneshot::error::TryRecvError::Closed) => Some(Err(())),
            });
            let answer = match answered {
                Some(answer) => answer,
                None => rx.await.map_err(|_| ()),
            };
            let text = answer.map_err(|()| CallError::Stopped)??;
            decode(&text)
        }
    }
}

/// `{"ok": v}` → `Ok(v)`, `{"error": e}` → `Err(e)`.
fn decode(text: &str) -> Result<Value, CallError> {
    let mut value: Value =
        serde_json::from_str(text).map_err(|e| CallError::Malformed(e.to_string()))?;
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        // A call an abort unwound rejects with QuickJS's bare "interrupted".
        if error == "interrupted" {
            return Err(CallError::Interrupted);
        }
        return Err(CallError::Threw(error.to_owned()));
    }
    Ok(value.get_mut("ok").map(Value::take).unwrap_or(Value::Null))
}

fn bootstrap(
    ctx: &Ctx<'_>,
    ops: Arc<Ops>,
    inflight: &Arc<Inflight>,
    watch: &Arc<Watch>,
) -> Result<(), ExtError> {
    crate::ops::install(ctx, Arc::clone(&ops)).map_err(|e| ExtError::Stopped(describe(ctx, e)))?;
    install_reply(ctx, inflight).map_err(|e| ExtError::Stopped(describe(ctx, e)))?;
    install_deadline(ctx, watch).map_err(|e| ExtError::Stopped(describe(ctx, e)))?;
    for (name, source) in BOOTSTRAP {
        crate::loader::bootstrap_script(ctx, ops.cache(), name, source)
            .map_err(|e| ExtError::Stopped(format!("{name}: {}", describe(ctx, e))))?;
    }
    Ok(())
}

/// `__kc.reply(id, text)`: how `__kc_call` answers a waiting [`Engine::call`].
fn install_reply(ctx: &Ctx<'_>, inflight: &Arc<Inflight>) -> rquickjs::Result<()> {
    let kc: rquickjs::Object = ctx.globals().get("__kc")?;
    let inflight = Arc::clone(inflight);
    kc.set(
        "reply",
        Function::new(ctx.clone(), move |id: f64, text: String| {
            inflight.settle(id as u64, Ok(text));
        })?,
    )
}

/// `__kc.deadline(ms)`: the synchronous code about to run (a component's `render` or
/// `handleInput`) is stopped if it has not returned within `ms`; `0` lifts the limit.
fn install_deadline(ctx: &Ctx<'_>, watch: &Arc<Watch>) -> rquickjs::Result<()> {
    let kc: rquickjs::Object = ctx.globals().get("__kc")?;
    let watch = Arc::clone(watch);
    kc.set(
        "deadline",
        Function::new(ctx.clone(), move |ms: f64| {
            let due = if ms > 0.0 {
                watch.micros().saturating_add((ms * 1000.0) as u64)
            } else {
                0
            };
            watch.deadline.store(due, Ordering::Relaxed);
        })?,
    )
}

/// Tells the UI code that the code it ran under a deadline was stopped
/// (`__kc_deadline_passed`), so it can show that component as failed.
fn deadline_passed(ctx: &Ctx<'_>) {
    // Whatever the unwinding left pending is not this call's.
    drop(ctx.catch());
    let hook: rquickjs::Result<Function<'_>> = ctx.globals().get("__kc_deadline_passed");
    if let Ok(hook) = hook
        && hook.call::<_, ()>(()).is_err()
    {
        drop(ctx.catch());
    }
}
