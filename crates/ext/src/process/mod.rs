//! Processes for extensions: `child_process` (`spawnSync`/`execSync`, the buffered `exec`
//! family, live `spawn` children in [`child`]) and `process.kill`, as Node shapes them.
//! Failures come back as `{"error": {"code", "message", …}}` for the JS side to throw.

mod child;

use std::io::Write as _;
use std::sync::Arc;

use nix::sys::signal::Signal;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use rquickjs::Promise;
use serde_json::Value;
use serde_json::json;

use crate::fs_ops::error;
use crate::fs_ops::io_error;
use crate::fs_ops::str_arg;
use crate::providers_ops::async_op;

fn env_of(args: &Value) -> Option<Vec<(String, String)>> {
    args.get("env").and_then(Value::as_object).map(|map| {
        map.iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect()
    })
}

/// The command an `exec`/`spawn` request describes (`shell` runs `file` through `sh -c`).
pub(super) fn command_for(args: &Value) -> std::process::Command {
    let file = str_arg(args, "file");
    let list: Vec<String> = args
        .get("args")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let shell = args.get("shell").and_then(Value::as_bool) == Some(true);
    let mut command = if shell {
        let mut line = file.to_owned();
        for arg in &list {
            line.push(' ');
            line.push_str(arg);
        }
        // `shell: "<path>"` names the shell (Node's string form of the option).
        let shell_path = args
            .get("shellPath")
            .and_then(Value::as_str)
            .unwrap_or("/bin/sh");
        let mut c = std::process::Command::new(shell_path);
        c.arg("-c").arg(line);
        c
    } else {
        let mut c = std::process::Command::new(file);
        c.args(&list);
        c
    };
    let cwd = str_arg(args, "cwd");
    if !cwd.is_empty() {
        command.current_dir(cwd);
    }
    if let Some(env) = env_of(args) {
        command.env_clear();
        command.envs(env);
    }
    command
}

fn output_json(output: &std::process::Output) -> Value {
    #[cfg(unix)]
    let signal = {
        use std::os::unix::process::ExitStatusExt as _;
        output.status.signal()
    };
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    json!({
        "stdout": String::from_utf8_lossy(&output.stdout),
        "stderr": String::from_utf8_lossy(&output.stderr),
        "status": output.status.code(),
        "signal": signal.map(signal_name),
    })
}

/// Node's name of a signal (`SIGTERM`), or its number for one without a name here.
fn signal_name(signal: i32) -> String {
    Signal::try_from(signal).map_or_else(|_| format!("SIG{signal}"), |s| s.as_str().to_owned())
}

/// A signal as Node takes it: a name (`"SIGTERM"`, `"TERM"`) or a number; `Ok(None)` is
/// signal 0, which only asks whether the process exists.
fn parse_signal(signal: &Value) -> Result<Option<Signal>, Value> {
    let unknown = || {
        error(
            "ERR_UNKNOWN_SIGNAL",
            &format!(
                "Unknown signal: {}",
                signal
                    .as_str()
                    .map_or_else(|| signal.to_string(), str::to_owned)
            ),
        )
    };
    match signal {
        Value::Null => Ok(Some(Signal::SIGTERM)),
        Value::Number(n) => match n.as_i64() {
            Some(0) => Ok(None),
            Some(n) => i32::try_from(n)
                .ok()
                .and_then(|n| Signal::try_from(n).ok())
                .map(Some)
                .ok_or_else(unknown),
            None => Err(unknown()),
        },
        Value::String(name) => {
            let full = if name.starts_with("SIG") {
                name.clone()
            } else {
                format!("SIG{name}")
            };
            full.parse::<Signal>().map(Some).map_err(|_| unknown())
        }
        _ => Err(unknown()),
    }
}

/// Sends `signal` to `pid` (a negative pid is a process group, as in `kill(2)`), with
/// Node's errors (`kill ESRCH`, `kill EPERM`).
fn send_signal(pid: i32, signal: Option<Signal>) -> Value {
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal) {
        Ok(()) => json!({ "ok": true }),
        Err(errno) => {
            let code = match errno {
                nix::errno::Errno::EPERM => "EPERM",
                nix::errno::Errno::ESRCH => "ESRCH",
                _ => "EINVAL",
            };
            json!({ "error": { "code": code, "message": format!("kill {code}"), "syscall": "kill", "errno": -(errno as i32) } })
        }
    }
}

/// `process.kill(pid, signal)`.
fn kill_op(pid: f64, signal: &Value) -> Value {
    if pid.fract() != 0.0 || !pid.is_finite() || pid.abs() > f64::from(i32::MAX) {
        return error(
            "ERR_INVALID_ARG_TYPE",
            "The \"pid\" argument must be of type number",
        );
    }
    match parse_signal(signal) {
        Ok(signal) => send_signal(pid as i32, signal),
        Err(reply) => reply,
    }
}

/// What a request's `stdio` says of stream `n`: "pipe" (the default), "inherit" or "ignore".
fn stdio_slot(args: &Value, n: usize) -> &str {
    args.get("stdio")
        .and_then(Value::as_array)
        .and_then(|slots| slots.get(n))
        .and_then(Value::as_str)
        .unwrap_or("pipe")
}

/// `spawnSync` / `execSync`: blocks the JS thread (as in Node), never an agent worker.
fn spawn_sync(args: &Value) -> Value {
    let mut command = command_for(args);
    let input = args.get("input").and_then(Value::as_str).map(str::to_owned);
    // `stdio`: "pipe", "inherit" or "ignore" per stream (`["inherit", …]` as Node takes
    // it); an inherited stream is the terminal (a program run after `tui.stop()`).
    let slot = |n: usize| stdio_slot(args, n);
    let stream = |n: usize| match slot(n) {
        "inherit" => std::process::Stdio::inherit(),
        "ignore" => std::process::Stdio::null(),
        _ if n == 0 && input.is_none() => std::process::Stdio::null(),
        _ => std::process::Stdio::piped(),
    };
    command.stdin(stream(0));
    command.stdout(stream(1));
    command.stderr(stream(2));
    let child = command.spawn();
    let result = child.and_then(|mut child| {
        if let (Some(text), Some(mut stdin)) = (input.clone(), child.stdin.take()) {
            let _ = stdin.write_all(text.as_bytes());
        }
        child.wait_with_output()
    });
    match result {
        Ok(output) => {
            let mut out = output_json(&output);
            // Node gives `null` for a stream that was not piped.
            for (n, key) in [(1, "stdout"), (2, "stderr")] {
                if slot(n) != "pipe" {
                    out[key] = Value::Null;
                }
            }
            json!({ "ok": out })
        }
        Err(e) => io_error(
            &e,
            &format!("spawnSync {}", str_arg(args, "file")),
            str_arg(args, "file"),
        ),
    }
}

/// `pi.exec` and `child_process.exec*`: the process is waited for on a helper thread
/// (the JS thread's runtime does not reap children), the JS thread awaits the result.
async fn exec_async(args: Value) -> Value {
    let mut command = command_for(&args);
    // `input`: what `spawn`'s stdin was given, written whole on a thread of its own so a
    // child that fills its output pipes before reading cannot deadlock against it.
    let input = args.get("input").and_then(Value::as_str).map(str::to_owned);
    command.stdin(if input.is_some() {
        std::process::Stdio::piped()
    } else {
        std::process::Stdio::null()
    });
    command.stdout(std::process::Stdio::piped());
    command.stderr(std::process::Stdio::piped());
    let file = str_arg(&args, "file").to_owned();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return io_error(&e, &format!("spawn {file}"), &file),
    };
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        std::thread::spawn(move || {
            use std::io::Write;
            // A child that exits without reading its input closes the pipe: not an error
            // of ours (Node reports EPIPE on the stream, which callers ignore).
            let _ = stdin.write_all(text.as_bytes());
        });
    }
    let pid = child.id();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let timeout = args
        .get("timeout")
        .and_then(Value::as_f64)
        .filter(|t| *t > 0.0)
        .map(|t| std::time::Duration::from_millis(t as u64));
    let output = match timeout {
        Some(limit) => match tokio::time::timeout(limit, rx).await {
            Ok(output) => output,
            Err(_) => {
                if let Ok(pid) = i32::try_from(pid) {
                    let _ = send_signal(pid, Some(Signal::SIGTERM));
                }
                return json!({ "ok": { "stdout": "", "stderr": "", "status": null, "signal": "SIGTERM", "killed": true } });
            }
        },
        None => rx.await,
    };
    match output {
        Ok(Ok(output)) => json!({ "ok": output_json(&output) }),
        Ok(Err(e)) => io_error(&e, &format!("spawn {file}"), &file),
        Err(_) => error("EIO", "the process waiter stopped"),
    }
}

/// The process ops on `__kc`: `spawnSync`, `exec`, `kill` and the live children's ops.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, kc: &Object<'js>) -> rquickjs::Result<()> {
    kc.set(
        "spawnSync",
        Function::new(ctx.clone(), |args: String| {
            let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
            spawn_sync(&args).to_string()
        })?,
    )?;
    kc.set(
        "exec",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, args: String| -> rquickjs::Result<Promise<'js>> {
                let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
                async_op(&ctx, async move { exec_async(args).await.to_string() })
            },
        )?,
    )?;
    kc.set(
        "kill",
        Function::new(ctx.clone(), |pid: f64, signal: String| {
            let signal: Value = serde_json::from_str(&signal).unwrap_or(Value::Null);
            kill_op(pid, &signal).to_string()
        })?,
    )?;
    // Owned by the ops' closures: the registry goes with the runtime (a reload, the end);
    // the children themselves live on, as a Node parent's do when it exits.
    child::install(ctx, kc, &Arc::default())
}
