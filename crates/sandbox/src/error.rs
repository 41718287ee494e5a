use std::path::PathBuf;

use crate::policy::SandboxMode;

/// What the sandbox refused or could not do.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce the sandbox; never run unsandboxed silently.
    #[error(
        "the {mode} sandbox cannot be enforced here: {reason}. Use a kernel with Landlock \
         (Linux 5.13 or later, with landlock in the lsm= boot list), or choose --sandbox off \
         to run commands unsandboxed"
    )]
    Unenforceable { mode: SandboxMode, reason: String },
    /// The sandbox is not built for this operating system.
    #[error("{reason}; choose --sandbox off")]
    Unsupported { reason: String },
    /// A file tool's write outside what the policy allows.
    #[error("{}", write_refused(*.mode, path, roots))]
    WriteRefused {
        mode: SandboxMode,
        path: PathBuf,
        roots: Vec<PathBuf>,
    },
    /// `__sandbox-exec`'s arguments are malformed (only this binary writes them).
    #[error("invalid sandbox arguments: {0}")]
    Arguments(String),
    /// Landlock or seccomp refused the restriction.
    #[error("could not apply the {mode} sandbox: {detail}")]
    Apply { mode: SandboxMode, detail: String },
    /// The sandboxed program could not be started.
    #[error("could not start {program}: {source}")]
    Exec {
        program: String,
        source: std::io::Error,
    },
}

fn write_refused(mode: SandboxMode, path: &std::path::Path, roots: &[PathBuf]) -> String {
    match mode {
        SandboxMode::ReadOnly => format!(
            "the read-only sandbox does not allow writing {}: no writes are allowed (run with \
             --sandbox workspace-write or off to allow them)",
            path.display()
        ),
        _ => {
            let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            format!(
                "the {mode} sandbox does not allow writing {}: writes are allowed only under {} \
                 (add a folder to the sandbox.writableRoots setting, or run with --sandbox off)",
                path.display(),
                roots.join(", ")
            )
        }
    }
}
