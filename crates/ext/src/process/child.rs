//! Live children of `child_process.spawn`: a pid at once, stdout and stderr streamed as
//! they arrive, stdin written while the child runs, signals, and the exit status.
//!
//! Each child has up to four threads of its own: one reads stdout, one stderr, one waits
//! for the exit, one writes stdin. They push [`ChildEvent`]s into a bounded channel; JS
//! pulls them with one pending `childNext` promise per child, which takes a whole batch at a
//! time. A full channel blocks the readers, so a child writing faster than the extension
//! reads is held back by its pipe (as a paused Node stream does) instead of filling memory.
//! The channel closes once the readers and the waiter are done; the stdin writer only holds
//! a weak sender, so an open stdin does not keep a finished child's events open.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use rquickjs::Array;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use rquickjs::Promise;
use rquickjs::TypedArray;
use serde_json::Value;
use serde_json::json;
use tokio::sync::mpsc;

use crate::fs_ops::error;
use crate::fs_ops::io_error;
use crate::fs_ops::str_arg;

/// Events a child may have waiting for JS before its readers block.
const EVENT_QUEUE: usize = 64;
/// The most a reader takes from a pipe at once (Node reads 64 KiB too).
const READ_CHUNK: usize = 64 * 1024;
/// Events handed to JS in one batch.
const BATCH: usize = 64;

/// What happened to a child, in the order its threads saw it.
enum ChildEvent {
    /// Bytes from stdout (1) or stderr (2).
    Data { stream: u8, bytes: Vec<u8> },
    /// That stream reached its end (the child closed it or exited).
    End { stream: u8 },
    /// The child exited: its code, or the signal that ended it.
    Exit {
        code: Option<i32>,
        signal: Option<String>,
    },
    /// Writing to its stdin failed (`EPIPE` once the child stopped reading).
    StdinError { code: &'static str, message: String },
}

/// The live children of one JS runtime, by the id JS holds.
#[derive(Default)]
pub(crate) struct Children {
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, LiveChild>>,
}

struct LiveChild {
    pid: i32,
    /// Set once the waiter has reaped the child: its pid may then belong to another
    /// process, so no signal is sent to it any more.
    exited: Arc<AtomicBool>,
    /// Chunks for the stdin writer; `None` once stdin was ended (or was never a pipe).
    stdin: Option<std::sync::mpsc::Sender<Vec<u8>>>,
    events: Arc<tokio::sync::Mutex<mpsc::Receiver<ChildEvent>>>,
}

fn stdio_for(kind: &str, n: usize) -> std::process::Stdio {
    match kind {
        "ignore" => std::process::Stdio::null(),
        // Our stdout is the protocol's in print, JSON and RPC modes: a child's inherited
        // stdout goes where extensions' own `process.stdout` goes, to stderr.
        "inherit" if n == 1 => std::process::Stdio::from(std::io::stderr()),
        "inherit" => std::process::Stdio::inherit(),
        _ => std::process::Stdio::piped(),
    }
}

fn reader(
    mut pipe: impl std::io::Read + Send + 'static,
    stream: u8,
    sink: mpsc::Sender<ChildEvent>,
) {
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; READ_CHUNK];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let bytes = buffer[..n].to_vec();
                    if sink
                        .blocking_send(ChildEvent::Data { stream, bytes })
                        .is_err()
                    {
                        // JS let go of the child: keep draining so it is not blocked on
                        // a full pipe, but drop what it writes.
                        while matches!(pipe.read(&mut buffer), Ok(n) if n > 0) {}
                        return;
                    }
                }
            }
        }
        let _ = sink.blocking_send(ChildEvent::End { stream });
    });
}

fn stdin_writer(
    mut pipe: std::process::ChildStdin,
    chunks: std::sync::mpsc::Receiver<Vec<u8>>,
    sink: mpsc::WeakSender<ChildEvent>,
) {
    std::thread::spawn(move || {
        for chunk in chunks {
            if let Err(e) = pipe.write_all(&chunk).and_then(|()| pipe.flush()) {
                let code = if e.kind() == std::io::ErrorKind::BrokenPipe {
                    "EPIPE"
                } else {
                    "EIO"
                };
                if let Some(sink) = sink.upgrade() {
                    let message = format!("write {code}");
                    let _ = sink.blocking_send(ChildEvent::StdinError { code, message });
                }
                return;
            }
        }
        // The sender was dropped (`stdin.end()`): dropping the pipe gives the child EOF.
    });
}

impl Children {
    /// Starts the child an `exec`/`spawn` request describes; `{ok: {id, pid}}`, or Node's
    /// error (`spawn <file> ENOENT`).
    fn spawn(&self, args: &Value) -> Value {
        let mut command = super::command_for(args);
        for n in 0..3 {
            let stdio = stdio_for(super::stdio_slot(args, n), n);
            match n {
                0 => command.stdin(stdio),
                1 => command.stdout(stdio),
                _ => command.stderr(stdio),
            };
        }
        // `detached`: the child leads a process group of its own, so the group can be
        // signalled as a whole (`process.kill(-pid)`), as Node's setsid() allows.
        if args.get("detached").and_then(Value::as_bool) == Some(true) {
            use std::os::unix::process::CommandExt as _;
            command.process_group(0);
        }
        let file = str_arg(args, "file").to_owned();
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                let mut reply = io_error(&e, &format!("spawn {file}"), &file);
                let code = reply["error"]["code"].as_str().unwrap_or("EIO").to_owned();
                // Node's wording for a failed spawn names the syscall, then the code.
                reply["error"]["message"] = Value::String(format!("spawn {file} {code}"));
                reply["error"]["spawnargs"] = args.get("args").cloned().unwrap_or(json!([]));
                return reply;
            }
        };
        let Ok(pid) = i32::try_from(child.id()) else {
            return error("EIO", "the child's pid does not fit a JavaScript pid");
        };
        let (sink, events) = mpsc::channel(EVENT_QUEUE);
        if let Some(stdout) = child.stdout.take() {
            reader(stdout, 1, sink.clone());
        }
        if let Some(stderr) = child.stderr.take() {
            reader(stderr, 2, sink.clone());
        }
        let stdin = child.stdin.take().map(|pipe| {
            let (chunks, queue) = std::sync::mpsc::channel();
            stdin_writer(pipe, queue, sink.downgrade());
            chunks
        });
        let exited = Arc::new(AtomicBool::new(false));
        let reaped = Arc::clone(&exited);
        std::thread::spawn(move || {
            let status = child.wait();
            reaped.store(true, Ordering::SeqCst);
            let (code, signal) = match status {
                Ok(status) => {
                    use std::os::unix::process::ExitStatusExt as _;
                    (status.code(), status.signal().map(super::signal_name))
                }
                Err(_) => (None, None),
            };
            let _ = sink.blocking_send(ChildEvent::Exit { code, signal });
        });
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                id,
                LiveChild {
                    pid,
                    exited,
                    stdin,
                    events: Arc::new(tokio::sync::Mutex::new(events)),
                },
            );
        json!({ "ok": { "id": id, "pid": pid } })
    }

    fn events(&self, id: u64) -> Option<Arc<tokio::sync::Mutex<mpsc::Receiver<ChildEvent>>>> {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .map(|child| Arc::clone(&child.events))
    }

    /// Queues `bytes` for the child's stdin; false once stdin is ended or gone.
    fn write(&self, id: u64, bytes: Vec<u8>) -> bool {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(stdin) = open.get(&id).and_then(|child| child.stdin.as_ref()) else {
            return false;
        };
        stdin.send(bytes).is_ok()
    }

    /// Ends the child's stdin once what was written before has gone out.
    fn end(&self, id: u64) {
        if let Some(child) = self
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&id)
        {
            child.stdin = None;
        }
    }

    /// `child.kill(signal)`: `{ok: true}` when the signal was sent, `{ok: false}` when the
    /// child has already exited.
    fn kill(&self, id: u64, signal: &Value) -> Value {
        let target = self
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .map(|child| (child.pid, Arc::clone(&child.exited)));
        let Some((pid, exited)) = target else {
            return json!({ "ok": false });
        };
        if exited.load(Ordering::SeqCst) {
            return json!({ "ok": false });
        }
        match super::parse_signal(signal) {
            Ok(signal) => super::send_signal(pid, signal),
            Err(reply) => reply,
        }
    }

    fn forget(&self, id: u64) {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// One event as JS reads it: `{type, stream?, bytes?, code?, signal?, message?}`, the bytes
/// as a `Uint8Array` (no text or base64 round trip).
fn event_object<'js>(ctx: &Ctx<'js>, event: ChildEvent) -> rquickjs::Result<Object<'js>> {
    let object = Object::new(ctx.clone())?;
    match event {
        ChildEvent::Data { stream, bytes } => {
            object.set("type", "data")?;
            object.set("stream", stream)?;
            object.set("bytes", TypedArray::<u8>::new(ctx.clone(), bytes)?)?;
        }
        ChildEvent::End { stream } => {
            object.set("type", "end")?;
            object.set("stream", stream)?;
        }
        ChildEvent::Exit { code, signal } => {
            object.set("type", "exit")?;
            object.set("code", code)?;
            object.set("signal", signal)?;
        }
        ChildEvent::StdinError { code, message } => {
            object.set("type", "stdinError")?;
            object.set("code", code)?;
            object.set("message", message)?;
        }
    }
    Ok(object)
}

/// The `__kc.childSpawn/childNext/childWrite/childEnd/childKill` ops of `spawn`
/// (`js/child_process.js`).
pub(super) fn install<'js>(
    ctx: &Ctx<'js>,
    kc: &Object<'js>,
    children: &Arc<Children>,
) -> rquickjs::Result<()> {
    let c = Arc::clone(children);
    kc.set(
        "childSpawn",
        Function::new(ctx.clone(), move |args: String| {
            let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
            c.spawn(&args).to_string()
        })?,
    )?;
    let c = Arc::clone(children);
    kc.set(
        "childNext",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id: f64| -> rquickjs::Result<Promise<'js>> {
                let id = id as u64;
                let events = c.events(id);
                let registry = Arc::clone(&c);
                let (promise, resolve, _reject) = ctx.promise()?;
                let scope = ctx.clone();
                ctx.spawn(async move {
                    // A batch of events, or `null` once the child and its streams are done.
                    let mut batch = Vec::new();
                    if let Some(events) = events {
                        let mut events = events.lock().await;
                        if let Some(first) = events.recv().await {
                            batch.push(first);
                            while batch.len() < BATCH {
                                match events.try_recv() {
                                    Ok(event) => batch.push(event),
                                    Err(_) => break,
                                }
                            }
                        }
                    }
                    if batch.is_empty() {
                        registry.forget(id);
                        let _ = resolve.call::<_, ()>((rquickjs::Null,));
                        return;
                    }
                    let built = Array::new(scope.clone()).and_then(|list| {
                        for (i, event) in batch.into_iter().enumerate() {
                            list.set(i, event_object(&scope, event)?)?;
                        }
                        Ok(list)
                    });
                    // Out of memory building the batch: end the child's stream in JS rather
                    // than leave its pump waiting for ever.
                    let _ = match built {
                        Ok(list) => resolve.call::<_, ()>((list,)),
                        Err(_) => resolve.call::<_, ()>((rquickjs::Null,)),
                    };
                });
                Ok(promise)
            },
        )?,
    )?;
    let c = Arc::clone(children);
    kc.set(
        "childWrite",
        Function::new(ctx.clone(), move |id: f64, bytes: TypedArray<'js, u8>| {
            let bytes = bytes.as_bytes().map(<[u8]>::to_vec).unwrap_or_default();
            c.write(id as u64, bytes)
        })?,
    )?;
    let c = Arc::clone(children);
    kc.set(
        "childEnd",
        Function::new(ctx.clone(), move |id: f64| c.end(id as u64))?,
    )?;
    let c = Arc::clone(children);
    kc.set(
        "childKill",
        Function::new(ctx.clone(), move |id: f64, signal: String| {
            let signal: Value = serde_json::from_str(&signal).unwrap_or(Value::Null);
            c.kill(id as u64, &signal).to_string()
        })?,
    )?;
    Ok(())
}
