//! Running shell commands on this machine.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;

use knightcode_sandbox::SandboxLauncher;

use crate::error::ToolsError;
use crate::ops::{BoxFuture, ExecOps, ExecRequest, ExecStatus};

/// How long output may stay silent after the shell exits before we stop reading. A
/// background process can keep the pipes open forever; output still flowing keeps us
/// reading, so nothing written shortly after the exit is lost.
const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);

/// PowerShell's switches for one command: no profile scripts, no prompts, no script-signing
/// policy in the way, then the command.
const POWERSHELL_ARGS: [&str; 5] = [
    "-NoProfile",
    "-NonInteractive",
    "-ExecutionPolicy",
    "Bypass",
    "-Command",
];

/// Makes PowerShell write UTF-8 whatever the console's code page; put before every command
/// (errors ignored on versions without the setting).
const POWERSHELL_UTF8_PREFIX: &str =
    "try { [Console]::OutputEncoding=[System.Text.Encoding]::UTF8 } catch {}\n";

/// The PowerShell executables looked for on `PATH`, PowerShell 7 first.
const POWERSHELL_NAMES: [&str; 4] = ["pwsh", "pwsh.exe", "powershell", "powershell.exe"];

/// Which shell runs the commands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ShellKind {
    /// `bash -c` (the `shellPath` setting, `/bin/bash`, `bash` on `PATH`, then `sh`).
    #[default]
    Bash,
    /// `pwsh` or `powershell` from `PATH` with [`POWERSHELL_ARGS`].
    PowerShell,
}

/// Runs commands with a local shell in their own process group, so abort and timeout can
/// kill everything the command started.
#[derive(Debug, Clone, Default)]
pub struct LocalExecOps {
    /// The `shellPath` setting; `None` means `/bin/bash`, then `bash` on `PATH`, then `sh`.
    /// Not used for PowerShell.
    pub shell_path: Option<PathBuf>,
    /// Shell name for error messages (`bash`).
    pub shell_name: Option<String>,
    pub kind: ShellKind,
    /// Runs each command through the sandbox launcher under its policy (`--sandbox`).
    pub sandbox: Option<SandboxLauncher>,
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

impl LocalExecOps {
    pub fn new(shell_path: Option<PathBuf>) -> Self {
        Self {
            shell_path,
            shell_name: None,
            kind: ShellKind::Bash,
            sandbox: None,
        }
    }

    /// The same shell, each command started under `sandbox` (none: unsandboxed).
    pub fn with_sandbox(mut self, sandbox: Option<SandboxLauncher>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// PowerShell from `PATH`.
    pub fn powershell() -> Self {
        Self {
            shell_path: None,
            shell_name: Some("PowerShell".to_owned()),
            kind: ShellKind::PowerShell,
            sandbox: None,
        }
    }

    fn shell(&self) -> Result<PathBuf, ToolsError> {
        if self.kind == ShellKind::PowerShell {
            return POWERSHELL_NAMES
                .iter()
                .find_map(|name| find_on_path(name))
                .ok_or_else(|| {
                    ToolsError::message(
                        "No PowerShell executable found. Install PowerShell (pwsh) or add \
                         pwsh or powershell to PATH; on Linux and macOS see \
                         https://aka.ms/powershell.",
                    )
                });
        }
        if let Some(custom) = &self.shell_path {
            if custom.exists() {
                return Ok(custom.clone());
            }
            return Err(ToolsError::message(format!(
                "Custom shell path not found: {}",
                custom.display()
            )));
        }
        let bin_bash = Path::new("/bin/bash");
        if bin_bash.exists() {
            return Ok(bin_bash.to_path_buf());
        }
        Ok(find_on_path("bash").unwrap_or_else(|| PathBuf::from("sh")))
    }
}

/// Kills the process group when dropped while armed: a command whose caller went away
/// must not keep running.
struct GroupKill(Option<Pid>);

impl GroupKill {
    fn kill(&self) {
        if let Some(group) = self.0 {
            // The group may already be gone; nothing to do then.
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn read_pipe<R: AsyncRead + Unpin>(pipe: &mut Option<R>, buf: &mut [u8]) -> usize {
    match pipe {
        // A read error ends the stream like EOF: there is nothing more to collect.
        Some(reader) => reader.read(buf).await.unwrap_or(0),
        None => std::future::pending().await,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Aborted,
    TimedOut,
}

impl LocalExecOps {
    async fn run(&self, mut request: ExecRequest) -> Result<ExecStatus, ToolsError> {
        if request.cancel.is_cancelled() {
            return Err(ToolsError::Aborted);
        }
        let shell = self.shell()?;
        if !request.cwd.exists() {
            return Err(ToolsError::message(format!(
                "Working directory does not exist: {}\nCannot execute {} commands.",
                request.cwd.display(),
                self.shell_name.as_deref().unwrap_or("bash")
            )));
        }
        let (switches, command): (&[&str], String) = match self.kind {
            ShellKind::Bash => (&["-c"], std::mem::take(&mut request.command)),
            ShellKind::PowerShell => (
                &POWERSHELL_ARGS,
                format!("{POWERSHELL_UTF8_PREFIX}{}", request.command),
            ),
        };
        let mut arguments: Vec<std::ffi::OsString> = switches.iter().map(Into::into).collect();
        arguments.push(command.into());
        let (program, arguments) = match &self.sandbox {
            Some(sandbox) => sandbox.wrap(&shell, &arguments),
            None => (shell.clone(), arguments),
        };
        let mut child = tokio::process::Command::new(&program)
            .args(&arguments)
            .current_dir(&request.cwd)
            .env_clear()
            .envs(request.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| {
                ToolsError::message(format!("Failed to start {}: {error}", program.display()))
            })?;
        let group = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .map(Pid::from_raw);
        let mut guard = GroupKill(group);
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let mut out_buf = vec![0u8; 64 * 1024];
        let mut err_buf = vec![0u8; 64 * 1024];
        let deadline = request.timeout.map(|timeout| Instant::now() + timeout);
        let mut exit: Option<ExitStatus> = None;
        let mut stop: Option<Stop> = None;

        loop {
            if exit.is_some() && stdout.is_none() && stderr.is_none() {
                break;
            }
            tokio::select! {
                read = read_pipe(&mut stdout, &mut out_buf) => {
                    if read == 0 {
                        stdout = None;
                    } else {
                        (request.on_data)(&out_buf[..read]);
                    }
                }
                read = read_pipe(&mut stderr, &mut err_buf) => {
                    if read == 0 {
                        stderr = None;
                    } else {
                        (request.on_data)(&err_buf[..read]);
                    }
                }
                status = child.wait(), if exit.is_none() => {
                    match status {
                        Ok(status) => exit = Some(status),
                        Err(error) => {
                            return Err(ToolsError::message(format!("Failed to wait for command: {error}")));
                        }
                    }
                }
                () = request.cancel.cancelled(), if stop.is_none() => {
                    stop = Some(Stop::Aborted);
                    guard.kill();
                }
                () = sleep_until_opt(deadline), if stop.is_none() && deadline.is_some() => {
                    stop = Some(Stop::TimedOut);
                    guard.kill();
                }
                () = tokio::time::sleep(EXIT_STDIO_GRACE), if exit.is_some() => break,
            }
        }

        if stop.is_none() && request.cancel.is_cancelled() {
            stop = Some(Stop::Aborted);
        }
        match stop {
            Some(Stop::Aborted) => Err(ToolsError::Aborted),
            Some(Stop::TimedOut) => Err(ToolsError::TimedOut),
            None => {
                // Finished normally: background processes it left behind keep running,
                // as they would in a terminal.
                guard.0 = None;
                Ok(ExecStatus {
                    exit_code: exit.and_then(|status| status.code()),
                })
            }
        }
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

impl ExecOps for LocalExecOps {
    fn exec(&self, request: ExecRequest) -> BoxFuture<'_, Result<ExecStatus, ToolsError>> {
        Box::pin(self.run(request))
    }
}
