use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use common::{call, context, failure, text, tool_with};
use knightcode_agent::tool::{Tool, ToolError, ToolOutput};
use knightcode_tools::{BashConfig, SessionEnv, ToolsConfig};
use serde_json::{Value, json};
use tokio::sync::mpsc;

fn bash_in(output_dir: &Path) -> Arc<dyn Tool> {
    bash_with(BashConfig {
        output_dir: Some(output_dir.to_path_buf()),
        ..BashConfig::default()
    })
}

fn bash_with(bash: BashConfig) -> Arc<dyn Tool> {
    tool_with(
        "bash",
        ToolsConfig {
            bash,
            ..ToolsConfig::default()
        },
    )
}

/// Starts a call whose partial results arrive on the returned channel.
fn start(
    tool: Arc<dyn Tool>,
    cwd: &Path,
    arguments: Value,
) -> (
    tokio::task::JoinHandle<Result<ToolOutput, ToolError>>,
    mpsc::UnboundedReceiver<ToolOutput>,
    tokio_util::sync::CancellationToken,
) {
    let (updates_tx, updates) = mpsc::unbounded_channel();
    let ctx = context(cwd).with_updates(Arc::new(move |partial| {
        let _ = updates_tx.send(partial);
    }));
    let cancel = ctx.cancel.clone();
    let handle = tokio::spawn(async move { tool.execute(arguments, ctx).await });
    (handle, updates, cancel)
}

/// Waits for a partial result whose text contains `needle`; returns that text.
async fn wait_for_output(
    updates: &mut mpsc::UnboundedReceiver<ToolOutput>,
    needle: &str,
) -> String {
    while let Some(update) = updates.recv().await {
        let seen = text(&update);
        if seen.contains(needle) {
            return seen;
        }
    }
    panic!("output never contained {needle:?}");
}

#[tokio::test]
async fn runs_in_the_working_directory_and_merges_stderr() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("here.txt"), "").unwrap();
    let out = call(
        bash_in(dir.path()).as_ref(),
        dir.path(),
        json!({"command": "ls; echo oops >&2"}),
    )
    .await
    .unwrap();
    // stdout and stderr come through two pipes: both are in the output, in whichever order
    // the reads saw them.
    let output = text(&out);
    let mut lines: Vec<&str> = output.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["here.txt", "oops"], "{output:?}");
    assert!(output.ends_with('\n'), "{output:?}");
    assert_eq!(out.details, None);

    let out = call(
        bash_in(dir.path()).as_ref(),
        dir.path(),
        json!({"command": "true"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "(no output)");
}

#[tokio::test]
async fn a_failing_command_reports_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let message = failure(
        call(
            bash_in(dir.path()).as_ref(),
            dir.path(),
            json!({"command": "echo boom; exit 3"}),
        )
        .await,
    );
    assert_eq!(message, "boom\n\n\nCommand exited with code 3");
    let message = failure(
        call(
            bash_in(dir.path()).as_ref(),
            dir.path(),
            json!({"command": "exit 7"}),
        )
        .await,
    );
    assert_eq!(message, "(no output)\n\nCommand exited with code 7");
}

#[tokio::test]
async fn scripts_get_the_output_exit_code_and_wall_time_as_data() {
    let dir = tempfile::tempdir().unwrap();
    let bash = bash_in(dir.path());
    assert_eq!(
        bash.output_schema().unwrap()["required"],
        json!(["output", "truncated", "exit_code", "wall_time_seconds"])
    );
    let out = call(bash.as_ref(), dir.path(), json!({"command": "echo hi"}))
        .await
        .unwrap();
    let data = out.structured_content.unwrap();
    assert_eq!(data["output"], "hi\n");
    assert_eq!(data["truncated"], false);
    assert_eq!(data["exit_code"], 0);
    assert!(data["wall_time_seconds"].as_f64().unwrap() >= 0.0);
    assert!(data.get("full_output_path").is_none());
    // A failed command is an error result for the model (the text names the exit code,
    // `details` is `{}` as for any failure) that still carries its data.
    let out = call(
        bash.as_ref(),
        dir.path(),
        json!({"command": "echo no; exit 5"}),
    )
    .await
    .unwrap();
    assert!(out.is_error);
    assert_eq!(text(&out), "no\n\n\nCommand exited with code 5");
    assert_eq!(out.details, Some(json!({})));
    let data = out.structured_content.unwrap();
    assert_eq!(
        (data["output"].clone(), data["exit_code"].clone()),
        (json!("no\n"), json!(5))
    );
}

#[tokio::test]
async fn scripts_get_output_whole_up_to_a_mebibyte_and_its_two_ends_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let bash = bash_in(dir.path());
    // 40,000 lines (about 229 KB): the model sees the last 2,000, scripts all of them.
    let out = call(bash.as_ref(), dir.path(), json!({"command": "seq 1 40000"}))
        .await
        .unwrap();
    let data = out.structured_content.unwrap();
    let expected: String = (1..=40_000).map(|n| format!("{n}\n")).collect();
    assert_eq!(data["output"].as_str().unwrap(), expected);
    assert_eq!(data["truncated"], false);
    assert!(data["full_output_path"].is_string());
    // 10 MiB: the first and the last 512 KiB, and what was left out between them.
    let out = call(
        bash.as_ref(),
        dir.path(),
        json!({"command": "seq 1 1500000"}),
    )
    .await
    .unwrap();
    let data = out.structured_content.unwrap();
    let all: String = (1..=1_500_000).map(|n| format!("{n}\n")).collect();
    let half = 512 * 1024;
    let text = data["output"].as_str().unwrap();
    assert_eq!(data["truncated"], true);
    assert_eq!(
        text,
        format!(
            "{}\n\n[{} bytes left out]\n\n{}",
            &all[..half],
            all.len() - 2 * half,
            &all[all.len() - half..]
        )
    );
}

#[tokio::test]
async fn ten_megabytes_of_output_are_cut_and_saved_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        bash_in(dir.path()).as_ref(),
        dir.path(),
        json!({"command": "seq 1 1500000"}),
    )
    .await
    .unwrap();
    let expected: String = (1..=1_500_000).map(|n| format!("{n}\n")).collect();
    assert!(expected.len() > 10 * 1024 * 1024);

    let details = out.details.clone().unwrap();
    let saved = details["fullOutputPath"].as_str().unwrap().to_owned();
    let body = text(&out);
    assert!(body.starts_with("1498001\n"), "{}", &body[..40]);
    let tail = &body[body.len().saturating_sub(200)..];
    assert!(
        body.ends_with(&format!(
            "1500000\n\n[Showing lines 1498001-1500000 of 1500000. Full output: {saved}]"
        )),
        "{tail}"
    );
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert_eq!(details["truncation"]["totalLines"], 1_500_000);
    assert_eq!(details["truncation"]["outputLines"], 2000);

    let saved = Path::new(&saved);
    assert_eq!(saved.parent(), Some(dir.path()));
    let name = saved.file_name().unwrap().to_str().unwrap();
    let hex = name
        .strip_prefix("knightcode-bash-")
        .and_then(|rest| rest.strip_suffix(".log"))
        .unwrap();
    assert_eq!(hex.len(), 16);
    assert!(hex.chars().all(|c| c.is_ascii_hexdigit()));
    let mode = std::fs::metadata(saved).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(std::fs::read(saved).unwrap() == expected.as_bytes());
}

#[tokio::test]
async fn wide_output_is_cut_at_the_byte_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        bash_in(dir.path()).as_ref(),
        dir.path(),
        json!({"command": "for i in $(seq 1 1000); do printf '%099d\\n' $i; done"}),
    )
    .await
    .unwrap();
    // 100-byte lines: 512 of them fit in 50 KB.
    let saved = out.details.as_ref().unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text(&out).ends_with(&format!(
        "\n\n[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: {saved}]"
    )));
    assert_eq!(std::fs::read(&saved).unwrap().len(), 100_000);
}

#[tokio::test]
async fn one_huge_line_keeps_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        bash_in(dir.path()).as_ref(),
        dir.path(),
        json!({"command": "head -c 60000 /dev/zero | tr '\\0' a"}),
    )
    .await
    .unwrap();
    let saved = out.details.as_ref().unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text(&out).ends_with(&format!(
        "\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {saved}]"
    )));
    assert_eq!(out.details.unwrap()["truncation"]["lastLinePartial"], true);
}

#[tokio::test]
async fn invalid_utf8_output_is_shown_with_replacement_characters() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        bash_in(dir.path()).as_ref(),
        dir.path(),
        json!({"command": "printf 'ok\\377\\376end\\n'"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "ok\u{FFFD}\u{FFFD}end\n");
}

#[tokio::test]
async fn partial_output_streams_while_the_command_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("go");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (handle, mut updates, _cancel) = start(
        bash_in(dir.path()),
        dir.path(),
        json!({"command": "echo first; read line < go; echo \"second $line\""}),
    );
    let initial = updates.recv().await.unwrap();
    assert!(initial.content.is_empty());
    assert_eq!(initial.details, None);
    // The command is blocked on the fifo, so this text can only come from streaming.
    assert_eq!(wait_for_output(&mut updates, "first").await, "first\n");
    tokio::fs::write(&fifo, "now\n").await.unwrap();
    let out = handle.await.unwrap().unwrap();
    assert_eq!(text(&out), "first\nsecond now\n");
}

/// A process id printed by the command after `label `.
fn pid_after(output: &str, label: &str) -> i32 {
    output
        .lines()
        .find_map(|line| line.strip_prefix(label))
        .and_then(|rest| rest.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {label:?} in {output:?}"))
}

/// Blocks until the process behind `pidfd` has exited (waiting on the kernel's exit
/// notification, not on time); false if it is still running after a generous bound.
fn exited(pidfd: &rustix::fd::OwnedFd) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
    let bound = Timespec {
        tv_sec: 30,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&bound)).unwrap() == 1
}

fn pidfd(pid: i32) -> Option<rustix::fd::OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_kills_the_command_and_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, mut updates, cancel) = start(
        bash_in(dir.path()),
        dir.path(),
        json!({"command": "echo \"shell $$\"; sleep 100 & echo \"background $!\"; sh -c 'echo \"foreground $$\"; exec sleep 100'"}),
    );
    let seen = wait_for_output(&mut updates, "foreground ").await;
    let pids = [
        pid_after(&seen, "shell "),
        pid_after(&seen, "background "),
        pid_after(&seen, "foreground "),
    ];
    let fds: Vec<_> = pids
        .iter()
        .map(|&pid| pidfd(pid).unwrap_or_else(|| panic!("process {pid} should be running")))
        .collect();

    cancel.cancel();
    let result = handle.await.unwrap();
    match result {
        Err(ToolError::Aborted(message)) => {
            assert!(message.ends_with("\n\nCommand aborted"), "{message}");
            assert!(message.starts_with("shell "), "{message}");
        }
        other => panic!("expected an abort, got {other:?}"),
    }
    for (pid, fd) in pids.iter().zip(&fds) {
        assert!(exited(fd), "process {pid} survived the abort");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, mut updates, _cancel) = start(
        bash_in(dir.path()),
        dir.path(),
        json!({"command": "echo \"pid $$\"; sleep 100 & wait", "timeout": 0.5}),
    );
    let seen = wait_for_output(&mut updates, "pid ").await;
    let shell = pidfd(pid_after(&seen, "pid "));
    let message = failure(handle.await.unwrap());
    assert!(message.starts_with("pid "), "{message}");
    assert!(
        message.ends_with("\n\nCommand timed out after 0.5 seconds"),
        "{message}"
    );
    if let Some(fd) = shell {
        assert!(exited(&fd));
    }
}

#[tokio::test]
async fn timeouts_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let bash = bash_in(dir.path());
    let message = failure(
        call(
            bash.as_ref(),
            dir.path(),
            json!({"command": "true", "timeout": 0}),
        )
        .await,
    );
    assert_eq!(
        message,
        "Invalid timeout: must be a finite number of seconds"
    );
    let message = failure(
        call(
            bash.as_ref(),
            dir.path(),
            json!({"command": "true", "timeout": 3_000_000}),
        )
        .await,
    );
    assert_eq!(message, "Invalid timeout: maximum is 2147483.647 seconds");
}

#[tokio::test]
async fn a_missing_working_directory_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let message = failure(
        call(
            bash_in(dir.path()).as_ref(),
            &gone,
            json!({"command": "true"}),
        )
        .await,
    );
    assert_eq!(
        message,
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            gone.display()
        )
    );
}

#[tokio::test]
async fn prefix_session_variables_and_spawn_hook_shape_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let bash = bash_with(BashConfig {
        output_dir: Some(dir.path().to_path_buf()),
        command_prefix: Some("GREETING=hi".to_owned()),
        session_env: Some(Arc::new(|| SessionEnv {
            session_id: Some("s-1".to_owned()),
            model: Some("m-1".to_owned()),
            ..SessionEnv::default()
        })),
        spawn_hook: Some(Arc::new(|mut spawn| {
            spawn.command = format!("{}; echo hooked", spawn.command);
            spawn
        })),
        ..BashConfig::default()
    });
    let out = call(
        bash.as_ref(),
        dir.path(),
        json!({"command": "echo \"$GREETING $KNIGHTCODE_SESSION_ID $KNIGHTCODE_MODEL [${KNIGHTCODE_PROVIDER-unset}]\""}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "hi s-1 m-1 [unset]\nhooked\n");
    assert_eq!(bash.definition().prompt_guidelines.len(), 1);

    let quiet = bash_with(BashConfig {
        expose_session_environment: false,
        session_env: Some(Arc::new(|| SessionEnv {
            model: Some("m-1".to_owned()),
            ..SessionEnv::default()
        })),
        ..BashConfig::default()
    });
    let out = call(
        quiet.as_ref(),
        dir.path(),
        json!({"command": "echo \"[${KNIGHTCODE_MODEL-unset}]\""}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "[unset]\n");
    assert!(quiet.definition().prompt_guidelines.is_empty());
}

#[tokio::test]
async fn a_configured_shell_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    let bash = bash_with(BashConfig {
        shell_path: Some(dir.path().join("no-such-shell")),
        ..BashConfig::default()
    });
    let message = failure(call(bash.as_ref(), dir.path(), json!({"command": "true"})).await);
    assert_eq!(
        message,
        format!(
            "Custom shell path not found: {}",
            dir.path().join("no-such-shell").display()
        )
    );
}

#[tokio::test]
async fn an_already_aborted_call_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    ctx.cancel.cancel();
    let result = bash_in(dir.path())
        .execute(json!({"command": "touch ran"}), ctx)
        .await;
    assert_eq!(
        result,
        Err(ToolError::Aborted("Command aborted".to_owned()))
    );
    assert!(!dir.path().join("ran").exists());
}
