//! One probe: an agent (ours or the reference) run on one example in a fresh sandbox against
//! a scripted mock model, in print, JSON or RPC mode, and the checks of what it did.
//!
//! A probe is JSON (`probes/<example>.json`, `probes` list):
//! - `mode`: `print` (default), `json`, `rpc`, or `plain` (only `-e` and `args`); `args`: extra CLI arguments; `prompts`: the
//!   prompts (print/JSON, as arguments); `steps` (RPC): `{"send": {...}, "until": ...}`.
//! - `entry`: load this file of a directory example instead of the directory.
//! - `replace`: `[[old, new], …]`: load a copy of the (single-file) example with those texts
//!   replaced, e.g. a machine-wide path by one inside the sandbox.
//! - `files` (written into the project first), `git` (the project is a git repository with
//!   one commit), `settings` (the agent's `settings.json`), `replies` (the model's script:
//!   `{"text"}`, `{"tool", "args"}`, `{"calls": [{"tool","args"}]}`), `env` (added to the
//!   scrubbed environment).
//! - `watchdog_secs`: the bound of this probe's run instead of 90 s (see [`watchdog`]).
//! - `ui`: answers to RPC dialogs in order (`{"method", "value"|"confirmed"|"cancelled"}`);
//!   an unanswered dialog is cancelled.
//! - `checks`: see [`check`].
//!
//! Strings may name `{project}`, `{home}`, `{agent}` and `{ext}` (the example's path).

use std::io::BufRead;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

/// Upper bound of one run: a hang fails the probe instead of blocking the suite. A passing
/// probe never gets near it, so it is not a timing assertion.
const WATCHDOG: Duration = Duration::from_secs(90);

/// The probe's bound: [`WATCHDOG`], or `"watchdog_secs"` for a probe whose extension loads
/// a very large library on first use (pi-mermaid's `import("mermaid")`, cold, on a loaded
/// machine).
fn watchdog(probe: &Value) -> Duration {
    probe["watchdog_secs"]
        .as_u64()
        .map_or(WATCHDOG, Duration::from_secs)
}

/// Which agent runs the probe.
#[derive(Clone)]
pub enum Agent {
    Ours(PathBuf),
    /// The reference agent (pi), run offline.
    Reference(PathBuf),
}

/// What one run left behind.
pub struct Observed {
    /// The sandbox lives as long as this, so the checks can read it.
    _sandbox: tempfile::TempDir,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The JSON lines of stdout (JSON and RPC mode).
    pub events: Vec<Value>,
    pub ui_requests: Vec<Value>,
    pub requests: Vec<Value>,
    pub project: PathBuf,
    pub agent: PathBuf,
    pub home: PathBuf,
    /// The run could not be driven to the end (hang, output ended early).
    pub broken: Option<String>,
}

struct Dirs {
    root: tempfile::TempDir,
    home: PathBuf,
    agent: PathBuf,
    project: PathBuf,
}

fn expand(text: &str, dirs: &Dirs, ext: &Path) -> String {
    text.replace("{project}", &dirs.project.to_string_lossy())
        .replace("{home}", &dirs.home.to_string_lossy())
        .replace("{agent}", &dirs.agent.to_string_lossy())
        .replace("{ext}", &ext.to_string_lossy())
}

fn expand_value(value: &Value, dirs: &Dirs, ext: &Path) -> Value {
    match value {
        Value::String(s) => Value::String(expand(s, dirs, ext)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| expand_value(v, dirs, ext)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), expand_value(v, dirs, ext)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn replies(probe: &Value, dirs: &Dirs, ext: &Path) -> Vec<ScriptedReply> {
    let probe = &expand_value(probe, dirs, ext);
    let mut n = 0;
    let mut call = |reply: ScriptedReply, c: &Value| {
        n += 1;
        reply.with_tool_call(
            format!("call_{n}"),
            c["tool"].as_str().unwrap(),
            c["args"].to_string(),
        )
    };
    let Some(list) = probe["replies"].as_array() else {
        return vec![ScriptedReply::text("EXAMPLE-ANSWER")];
    };
    list.iter()
        .map(|r| {
            let mut reply = ScriptedReply::default();
            if let Some(text) = r["text"].as_str() {
                reply = reply.with_text(text);
            }
            if r["tool"].is_string() {
                reply = call(reply, r);
            }
            for c in r["calls"].as_array().into_iter().flatten() {
                reply = call(reply, c);
            }
            reply
        })
        .collect()
}

fn git(project: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=probe",
            "-c",
            "user.email=probe@example.invalid",
        ])
        .args(args)
        .current_dir(project)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

fn sandbox(server: &MockServer, probe: &Value, ext: &Path) -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let dirs = Dirs {
        home: root.path().join("home"),
        agent: root.path().join("agent"),
        project: root.path().join("project"),
        root,
    };
    for dir in [&dirs.home, &dirs.agent, &dirs.project] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let models = json!({"providers": {"mock": {
        "baseUrl": server.base_url(), "api": "openai-completions", "apiKey": "mock-api-key",
        "models": [
            {"id": "mock-model", "name": "Mock Model", "reasoning": false, "input": ["text"],
             "contextWindow": 128000, "maxTokens": 4096},
            {"id": "mock-model-2", "name": "Mock Model Two", "reasoning": true, "input": ["text"],
             "contextWindow": 32000, "maxTokens": 4096}]}}});
    std::fs::write(dirs.agent.join("models.json"), models.to_string()).unwrap();
    if let Some(settings) = probe.get("settings") {
        std::fs::write(dirs.agent.join("settings.json"), settings.to_string()).unwrap();
    }
    for (path, content) in probe["files"].as_object().into_iter().flatten() {
        // Keys may name `{agent}` or `{home}`; relative ones are in the project.
        let path = dirs.project.join(expand(path, &dirs, ext));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, expand(content.as_str().unwrap(), &dirs, ext)).unwrap();
    }
    if probe["git"].as_bool() == Some(true) {
        // Commits the example makes need an identity; the sandbox HOME has none.
        std::fs::write(
            dirs.home.join(".gitconfig"),
            "[user]\n\tname = probe\n\temail = probe@example.invalid\n",
        )
        .unwrap();
        git(&dirs.project, &["init", "-q", "-b", "main"]);
        git(&dirs.project, &["add", "-A"]);
        git(
            &dirs.project,
            &["commit", "-q", "--allow-empty", "-m", "initial"],
        );
    }
    dirs
}

fn command(agent: &Agent, dirs: &Dirs, probe: &Value, args: &[String]) -> Command {
    let (program, pi) = match agent {
        Agent::Ours(path) => (path, false),
        Agent::Reference(path) => (path, true),
    };
    let mut command = Command::new(program);
    if probe["mode"] != "plain" {
        command.args(["--provider", "mock", "--model", "mock-model"]);
    }
    command
        .args(args)
        .current_dir(&dirs.project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &dirs.home)
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8");
    if pi {
        command
            .env("PI_CODING_AGENT_DIR", &dirs.agent)
            .env("PI_OFFLINE", "1");
    } else {
        command.env("KNIGHTCODE_CODING_AGENT_DIR", &dirs.agent);
    }
    for (name, value) in probe["env"].as_object().into_iter().flatten() {
        command.env(name, value.as_str().unwrap_or_default());
    }
    command
}

/// Runs one probe of the example at `ext`.
pub fn run(agent: &Agent, ext: &Path, probe: &Value) -> Observed {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, Vec::new()).unwrap();
    let dirs = sandbox(&server, probe, ext);
    // Replies may name the sandbox's folders, so they are scripted once it exists.
    for reply in replies(probe, &dirs, ext) {
        server.push_reply(reply);
    }
    let mode = probe["mode"].as_str().unwrap_or("print");
    // `entry`: a file inside a directory example, loaded instead of the directory.
    let ext = &match probe["entry"].as_str() {
        Some(entry) => ext.join(entry),
        None => ext.to_path_buf(),
    };
    let ext = &replaced_copy(ext, probe, &dirs);
    let mut args: Vec<String> = vec!["-e".into(), ext.to_string_lossy().into_owned()];
    args.extend(
        probe["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| expand(a.as_str().unwrap(), &dirs, ext)),
    );
    let (code, stdout, stderr, ui_requests, broken) = match mode {
        "rpc" => {
            args.extend(["--mode".into(), "rpc".into()]);
            drive_rpc(command(agent, &dirs, probe, &args), probe, &dirs, ext)
        }
        _ => {
            match mode {
                "json" => args.extend(["--mode".into(), "json".into()]),
                "plain" => {}
                _ => args.push("-p".into()),
            }
            args.extend(
                probe["prompts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|a| expand(a.as_str().unwrap(), &dirs, ext)),
            );
            let (code, stdout, stderr, broken) =
                run_once(command(agent, &dirs, probe, &args), watchdog(probe));
            (code, stdout, stderr, Vec::new(), broken)
        }
    };
    let events = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect();
    let requests = server.requests().into_iter().map(|r| r.body).collect();
    let Dirs {
        root,
        home,
        agent: agent_dir,
        project,
    } = dirs;
    Observed {
        _sandbox: root,
        code,
        stdout,
        stderr,
        events,
        ui_requests,
        requests,
        project,
        agent: agent_dir,
        home,
        broken,
    }
}

/// `replace`: a copy of the single-file example with those texts replaced (say, a
/// machine-wide path by one in the sandbox), loaded instead of the example itself.
fn replaced_copy(ext: &Path, probe: &Value, dirs: &Dirs) -> PathBuf {
    let Some(pairs) = probe["replace"].as_array() else {
        return ext.to_path_buf();
    };
    let mut text = std::fs::read_to_string(ext).expect("`replace` needs a single-file example");
    for pair in pairs {
        let old = pair[0].as_str().expect("`replace` pairs are [old, new]");
        assert!(
            text.contains(old),
            "{} does not contain {old:?}",
            ext.display()
        );
        text = text.replace(old, &expand(pair[1].as_str().unwrap(), dirs, ext));
    }
    let copy = dirs.root.path().join(ext.file_name().unwrap());
    std::fs::write(&copy, text).unwrap();
    copy
}

type Finished = (Option<i32>, String, String, Option<String>);

fn run_once(mut command: Command, limit: Duration) -> Finished {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the agent");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(output)) => (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
            None,
        ),
        Ok(Err(e)) => (None, String::new(), String::new(), Some(e.to_string())),
        Err(_) => {
            kill(pid);
            (
                None,
                String::new(),
                String::new(),
                Some("did not finish (watchdog)".into()),
            )
        }
    }
}

fn kill(pid: u32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}

/// What a dialog request is answered with: the next matching `ui` answer, else cancelled.
fn answer(request: &Value, answers: &mut Vec<Value>) -> Value {
    let method = request["method"].as_str().unwrap_or("");
    let mut reply = json!({"type": "extension_ui_response", "id": request["id"]});
    match answers.iter().position(|a| a["method"] == method) {
        Some(i) => {
            let chosen = answers.remove(i);
            for (k, v) in chosen.as_object().unwrap() {
                if k != "method" {
                    reply[k] = v.clone();
                }
            }
        }
        None => reply["cancelled"] = json!(true),
    }
    reply
}

fn waits_for_exit(until: &Value) -> bool {
    until == "exit"
        || until
            .as_array()
            .is_some_and(|any| any.iter().any(|u| u == "exit"))
}

const DIALOGS: [&str; 4] = ["select", "confirm", "input", "editor"];

/// Whether `line` is what a step waits for: `until` is `"response"` (to this step's id), an
/// event type, `{"event": type, "contains": text}` (an event of that type containing the
/// text), `{"ui": method}` (with `"contains"`: a request containing that text), `"exit"`
/// (the output closes), or a list of these (any).
fn reached(line: &Value, until: &Value, id: &str) -> bool {
    match until {
        Value::Array(any) => any.iter().any(|u| reached(line, u, id)),
        Value::String(s) if s == "response" => line["type"] == "response" && line["id"] == id,
        Value::String(s) => line["type"] == s.as_str(),
        Value::Object(o) if o.contains_key("event") => {
            line["type"] == o["event"]
                && o.get("contains")
                    .and_then(Value::as_str)
                    .is_none_or(|text| super::check::contains(line, text))
        }
        Value::Object(o) if o.contains_key("ui") => {
            line["type"] == "extension_ui_request"
                && line["method"] == o["ui"]
                && o.get("contains")
                    .and_then(Value::as_str)
                    .is_none_or(|text| super::check::contains(line, text))
        }
        _ => false,
    }
}

fn drive_rpc(
    mut command: Command,
    probe: &Value,
    dirs: &Dirs,
    ext: &Path,
) -> (Option<i32>, String, String, Vec<Value>, Option<String>) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the agent");
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let err_thread = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut text);
        text
    });
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut answers: Vec<Value> = probe["ui"].as_array().cloned().unwrap_or_default();
    let mut out = String::new();
    let mut ui = Vec::new();
    let mut broken = None;
    let mut handle = |line: &str, stdin: &mut std::process::ChildStdin, out: &mut String| {
        out.push_str(line);
        out.push('\n');
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return Value::Null;
        };
        if value["type"] == "extension_ui_request" {
            ui.push(value.clone());
            if DIALOGS.contains(&value["method"].as_str().unwrap_or("")) {
                let reply = answer(&value, &mut answers);
                let _ = writeln!(stdin, "{reply}");
            }
        }
        value
    };
    'steps: for (n, step) in probe["steps"].as_array().into_iter().flatten().enumerate() {
        let id = format!("step-{n}");
        if let Some(send) = step.get("send") {
            let mut send = expand_value(send, dirs, ext);
            send["id"] = json!(id);
            let _ = writeln!(stdin, "{send}");
        }
        let until = step.get("until").cloned().unwrap_or_else(|| {
            // A command (and a prompt an `input` handler takes) is answered once it has run;
            // a prompt for the model once its run ends.
            let command = step["send"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with('/'));
            if step["send"]["type"] == "prompt" && !command {
                json!("agent_end")
            } else {
                json!("response")
            }
        });
        loop {
            match rx.recv_timeout(watchdog(probe)) {
                Ok(line) => {
                    if reached(&handle(&line, &mut stdin, &mut out), &until, &id) {
                        break;
                    }
                }
                // `"until": "exit"`: the agent ends by itself (its output closes).
                Err(mpsc::RecvTimeoutError::Disconnected) if waits_for_exit(&until) => break 'steps,
                Err(e) => {
                    broken = Some(format!("step {n}: waiting for {until}: {e:?}"));
                    break 'steps;
                }
            }
        }
    }
    drop(stdin);
    // What is still written after stdin closed is kept (no more answers are sent).
    loop {
        match rx.recv_timeout(watchdog(probe)) {
            Ok(line) => {
                out.push_str(&line);
                out.push('\n');
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                kill(pid);
                broken.get_or_insert_with(|| "did not exit after stdin closed (watchdog)".into());
                break;
            }
        }
    }
    let code = child.wait().ok().and_then(|s| s.code());
    for line in out.lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line)
            && v["type"] == "extension_ui_request"
            && !ui.contains(&v)
        {
            ui.push(v);
        }
    }
    (code, out, err_thread.join().unwrap_or_default(), ui, broken)
}
