//! The OS sandbox (`--sandbox`, the `sandbox` setting) through the real binary: the model's
//! `bash` commands and file writes under Landlock and seccomp, against a scripted model.

use std::path::{Path, PathBuf};

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;

use crate::oneshot_common::{Sandbox, command, knightcode, sandbox};

/// A folder outside the project and outside every temp folder, which `workspace-write`
/// must not let a command write: the build's own scratch folder, else (when the build is
/// itself under `/tmp`, as in `scripts/ci-fresh.sh`) one below the crate or the user's
/// cache. Removed again when the test ends.
struct Outside(PathBuf);

impl Outside {
    fn new(name: &str) -> Self {
        let temp_roots = [
            std::env::temp_dir(),
            PathBuf::from("/tmp"),
            PathBuf::from("/var/tmp"),
        ]
        .map(|p| p.canonicalize().unwrap_or(p));
        let home_cache = std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(".cache/knightcode-rs"))
            .unwrap_or_default();
        let base = [
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
            PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            home_cache,
        ]
        .into_iter()
        .find(|dir| {
            let resolved = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            dir.is_absolute() && !temp_roots.iter().any(|t| resolved.starts_with(t))
        })
        .expect("a folder outside every temp folder to write the test's target in");
        let dir = base.join(format!("sandbox-outside-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl std::ops::Deref for Outside {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One tool call, then "done".
fn server_calling(tool: &str, arguments: &Value) -> MockServer {
    MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", tool, arguments.to_string()),
            ScriptedReply::text("done"),
        ],
    )
    .unwrap()
}

/// The text of the tool result the model was sent back.
fn tool_result(server: &MockServer) -> String {
    let requests = server.requests();
    let messages = requests[1].body["messages"].as_array().unwrap();
    let result = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    match &result["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Whether this kernel enforces the sandbox. Where it cannot, the test checks what a user
/// gets instead: the start refused with a message that says why, and nothing run.
pub(crate) fn enforced() -> bool {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_knightcode"))
        .args(["__sandbox-exec", "--mode", "read-only", "--", "/bin/true"])
        .output()
        .unwrap();
    if output.status.success() {
        return true;
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("sandbox cannot be enforced here"),
        "{stderr}"
    );
    let server = server_calling("bash", &serde_json::json!({"command": "touch ran"}));
    let box_ = sandbox(&server);
    let run = run_bash(&box_, &["--sandbox", "workspace-write"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("the workspace-write sandbox cannot be enforced here"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty() && !box_.project.join("ran").exists());
    false
}

fn run_bash(box_: &Sandbox, extra: &[&str]) -> crate::oneshot_common::Run {
    let mut args = vec!["-p", "go", "--tools", "bash,write"];
    args.extend_from_slice(extra);
    knightcode(box_, &args)
}

#[test]
fn workspace_write_lets_bash_write_in_the_project_and_nowhere_else() {
    if !enforced() {
        return;
    }
    let outside = Outside::new("ww");
    let command = format!(
        "echo in > inside.txt && echo made; echo out > {}/escaped.txt",
        outside.display()
    );
    let server = server_calling("bash", &serde_json::json!({ "command": command }));
    let box_ = sandbox(&server);
    let run = run_bash(&box_, &["--sandbox", "workspace-write"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(box_.project.join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(!outside.join("escaped.txt").exists(), "the write escaped");
    let result = tool_result(&server);
    assert!(result.contains("made"), "{result}");
    assert!(result.contains("Permission denied"), "{result}");
    assert!(
        result.contains("ran in the workspace-write sandbox"),
        "the result names the sandbox: {result}"
    );

    // Without the sandbox the same command writes there: the refusal was the sandbox's.
    let server = server_calling("bash", &serde_json::json!({ "command": command }));
    let box_ = sandbox(&server);
    let run = run_bash(&box_, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(outside.join("escaped.txt").exists());
}

/// A loopback listener the command tries to reach with bash's `/dev/tcp`.
fn connect_command(listener: &std::net::TcpListener) -> String {
    let port = listener.local_addr().unwrap().port();
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[test]
fn the_network_is_off_in_the_sandbox_unless_the_setting_allows_it() {
    if !enforced() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let command = connect_command(&listener);
    let server = server_calling("bash", &serde_json::json!({ "command": command }));
    let box_ = sandbox(&server);
    let run = run_bash(&box_, &["--sandbox", "workspace-write"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = tool_result(&server);
    assert!(!result.contains("connected"), "{result}");
    assert!(result.contains("Operation not permitted"), "{result}");
    assert!(result.contains("the network is off"), "{result}");

    let server = server_calling("bash", &serde_json::json!({ "command": command }));
    let box_ = sandbox(&server);
    std::fs::write(
        box_.agent.join("settings.json"),
        r#"{"sandbox": {"mode": "workspace-write", "network": true}}"#,
    )
    .unwrap();
    let run = run_bash(&box_, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = tool_result(&server);
    assert!(result.contains("connected"), "{result}");
}

#[test]
fn read_only_refuses_the_write_tool_with_a_message_naming_the_sandbox() {
    if !enforced() {
        return;
    }
    let server = server_calling(
        "write",
        &serde_json::json!({"path": "new.txt", "content": "x"}),
    );
    let box_ = sandbox(&server);
    let run = run_bash(&box_, &["--sandbox", "read-only"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!box_.project.join("new.txt").exists());
    let result = tool_result(&server);
    assert!(
        result.contains("the read-only sandbox does not allow writing"),
        "{result}"
    );

    let server = server_calling("bash", &serde_json::json!({"command": "touch new.txt"}));
    let box_ = sandbox(&server);
    let run = run_bash(&box_, &["--sandbox", "read-only"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!box_.project.join("new.txt").exists());
    let result = tool_result(&server);
    assert!(result.contains("read-only sandbox"), "{result}");
}

#[test]
fn workspace_write_refuses_the_write_tool_outside_the_project_even_through_a_link() {
    if !enforced() {
        return;
    }
    let outside = Outside::new("link");
    let server = server_calling(
        "write",
        &serde_json::json!({"path": "door/escaped.txt", "content": "x"}),
    );
    let box_ = sandbox(&server);
    std::os::unix::fs::symlink(&*outside, box_.project.join("door")).unwrap();
    let run = run_bash(&box_, &["--sandbox", "workspace-write"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!outside.join("escaped.txt").exists());
    let result = tool_result(&server);
    assert!(
        result.contains("the workspace-write sandbox does not allow writing"),
        "{result}"
    );
}

#[test]
fn a_project_can_tighten_the_sandbox_but_not_open_it() {
    if !enforced() {
        return;
    }
    let outside = Outside::new("project");
    let command = format!("echo out > {}/escaped.txt", outside.display());
    let server = server_calling("bash", &serde_json::json!({ "command": command }));
    let box_ = sandbox(&server);
    std::fs::write(
        box_.agent.join("settings.json"),
        r#"{"sandbox": "workspace-write"}"#,
    )
    .unwrap();
    std::fs::create_dir_all(box_.project.join(".knightcode")).unwrap();
    std::fs::write(
        box_.project.join(".knightcode/settings.json"),
        r#"{"sandbox": {"mode": "off", "writableRoots": ["/"]}}"#,
    )
    .unwrap();
    let run = run_bash(&box_, &["--approve"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !outside.join("escaped.txt").exists(),
        "the project opened the sandbox"
    );
    assert!(
        run.stderr
            .contains("a project can tighten the sandbox, never widen it"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("a project cannot widen the sandbox"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_small_crate_still_builds_offline_in_the_workspace_write_sandbox() {
    if !enforced() {
        return;
    }
    // The toolchain's own cargo and rustc (not rustup's proxies, which look for their
    // settings under the sandbox's HOME).
    let cargo = PathBuf::from(env!("CARGO"));
    let rustc = cargo.with_file_name("rustc");
    let command = format!(
        "cd hello && CARGO_HOME=\"$HOME/.cargo\" RUSTC={} {} build --offline --quiet && ./target/debug/hello",
        rustc.display(),
        cargo.display()
    );
    let server = server_calling("bash", &serde_json::json!({ "command": command }));
    let box_ = sandbox(&server);
    let crate_dir = box_.project.join("hello");
    std::fs::create_dir_all(crate_dir.join("src")).unwrap();
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        crate_dir.join("src/main.rs"),
        "fn main() { println!(\"built in the sandbox\"); }\n",
    )
    .unwrap();
    let run = run_bash(&box_, &["--sandbox", "workspace-write"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = tool_result(&server);
    assert!(result.contains("built in the sandbox"), "{result}");
}

#[test]
fn bad_sandbox_choices_are_refused_plainly() {
    let server = server_calling("bash", &serde_json::json!({"command": "true"}));
    let box_ = sandbox(&server);
    let run = knightcode(&box_, &["-p", "go", "--sandbox", "sideways"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "--sandbox: unknown mode \"sideways\" (expected read-only, workspace-write, off)"
        ),
        "{}",
        run.stderr
    );
    // The launcher entry point refuses malformed arguments without running anything.
    let output = command(&box_, &["__sandbox-exec", "--mode", "read-only"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(126));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("invalid sandbox arguments"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
