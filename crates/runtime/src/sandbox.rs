//! The session's OS sandbox: `--sandbox` over the `sandbox` setting, checked once when the
//! session starts so a kernel that cannot enforce it stops the start with a clear error
//! instead of running commands unsandboxed.

use std::path::{Path, PathBuf};

use knightcode_sandbox::{SandboxError, SandboxLauncher, SandboxMode, SandboxPolicy};

use crate::error::Result;
use crate::settings::SandboxSettings;

/// What the front end asks of the sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxRequest {
    /// `--sandbox`: wins over the `sandbox` setting.
    pub mode: Option<SandboxMode>,
    /// The binary whose `__sandbox-exec` starts sandboxed commands: the CLI passes itself.
    /// Any mode but off needs it.
    pub launcher: Option<PathBuf>,
}

/// The sandbox a session's commands and file tools run under.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionSandbox {
    /// `None` when the sandbox is off.
    launcher: Option<SandboxLauncher>,
    /// `sandbox.userCommands`: the user's `!` commands run under it too.
    user_commands: bool,
}

impl SessionSandbox {
    /// For the `bash` and `powershell` tools.
    pub(crate) fn launcher(&self) -> Option<&SandboxLauncher> {
        self.launcher.as_ref()
    }

    /// For the user's own `!` commands: only when `sandbox.userCommands` asks for it.
    pub(crate) fn user_command_launcher(&self) -> Option<SandboxLauncher> {
        self.launcher.clone().filter(|_| self.user_commands)
    }

    /// For the file tools' writes.
    pub(crate) fn policy(&self) -> Option<&SandboxPolicy> {
        self.launcher.as_ref().map(|launcher| &launcher.policy)
    }
}

/// The session's sandbox from the request and the settings, checked against the kernel.
pub(crate) fn resolve(
    request: &SandboxRequest,
    settings: &SandboxSettings,
    cwd: &Path,
    home: Option<&Path>,
) -> Result<SessionSandbox> {
    let mode = request.mode.unwrap_or(settings.mode);
    if mode == SandboxMode::Off {
        return Ok(SessionSandbox::default());
    }
    let launcher = request
        .launcher
        .clone()
        .ok_or_else(|| SandboxError::Unsupported {
            reason: format!(
                "the {mode} sandbox starts commands through the knightcode binary, and this \
             session was given none (SandboxRequest::launcher)"
            ),
        })?;
    let roots: Vec<PathBuf> = settings
        .writable_roots
        .iter()
        .map(|root| expand(root, cwd, home))
        .collect();
    let policy = SandboxPolicy::for_project(mode, cwd, &[], &roots, settings.network);
    knightcode_sandbox::probe(&policy)?;
    Ok(SessionSandbox {
        launcher: Some(SandboxLauncher { launcher, policy }),
        user_commands: settings.user_commands,
    })
}

/// A `writableRoots` entry: `~/` from the home folder, relative to the project.
fn expand(root: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    match (root.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if root == "~" => home.map_or_else(|| PathBuf::from(root), Path::to_path_buf),
        _ => cwd.join(root),
    }
}
