//! The opt-in OS sandbox for the commands KnightCode's tools start (`--sandbox`, the
//! `sandbox` setting).
//!
//! A sandboxed command is started through the `knightcode` binary itself:
//! `knightcode __sandbox-exec <policy> -- <program> <args>` applies the policy to its own
//! process (Landlock for the file system and TCP, a seccomp filter that refuses every socket
//! but Unix ones when the network is off, `no_new_privs`) and then `exec`s the program, so
//! the command and everything it starts inherit the restrictions and nothing else in the
//! agent is restricted. Re-executing the binary (as Codex's Linux sandbox does) keeps the
//! restriction out of the agent's own threads and needs no code between `fork` and `exec`.
//!
//! The file tools follow the same policy through [`SandboxPolicy::check_write`].

mod error;
mod launch;
mod policy;

#[cfg(target_os = "linux")]
mod linux;

pub use error::SandboxError;
pub use launch::{EXEC_ARG, SandboxLauncher, exec_main};
pub use policy::{SandboxMode, SandboxPolicy};

/// Checks that this kernel can enforce `policy` (Landlock is built in and enabled), without
/// restricting anything. Call it when a session chooses a sandbox, so a kernel without
/// Landlock is reported at once rather than at the first command.
pub fn probe(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    if policy.mode == SandboxMode::Off {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    {
        linux::probe(policy.mode)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(SandboxError::Unsupported {
            reason: format!(
                "the sandbox is built on Linux's Landlock and seccomp; this is {}",
                std::env::consts::OS
            ),
        })
    }
}
