use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::policy::{SandboxMode, SandboxPolicy};

/// The first argument that makes the `knightcode` binary a sandbox launcher instead of the
/// agent (hidden from help: only this crate writes it).
pub const EXEC_ARG: &str = "__sandbox-exec";

/// Starts commands under a policy through a launcher binary (`knightcode` itself: its
/// `main` hands [`EXEC_ARG`] invocations to [`exec_main`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxLauncher {
    /// The binary that understands [`EXEC_ARG`].
    pub launcher: PathBuf,
    pub policy: SandboxPolicy,
}

impl SandboxLauncher {
    /// The program and arguments that run `program args` under the policy.
    pub fn wrap(&self, program: &Path, args: &[OsString]) -> (PathBuf, Vec<OsString>) {
        let mut out: Vec<OsString> = vec![EXEC_ARG.into(), "--mode".into()];
        out.push(self.policy.mode.as_str().into());
        for root in &self.policy.writable_roots {
            out.push("--write".into());
            out.push(root.clone().into_os_string());
        }
        if self.policy.network {
            out.push("--network".into());
        }
        out.push("--".into());
        out.push(program.as_os_str().to_owned());
        out.extend(args.iter().cloned());
        (self.launcher.clone(), out)
    }
}

/// The policy and command of an [`EXEC_ARG`] invocation (`args` after [`EXEC_ARG`]).
fn parse(args: &[OsString]) -> Result<(SandboxPolicy, &[OsString]), SandboxError> {
    let mut policy = SandboxPolicy::off();
    let mut index = 0;
    while index < args.len() {
        let flag = args[index].to_str().unwrap_or_default();
        match flag {
            "--mode" => {
                let value = value(args, index, flag)?;
                policy.mode = value.to_str().unwrap_or_default().parse()?;
                index += 2;
            }
            "--write" => {
                policy
                    .writable_roots
                    .push(PathBuf::from(value(args, index, flag)?));
                index += 2;
            }
            "--network" => {
                policy.network = true;
                index += 1;
            }
            "--" => {
                let command = &args[index + 1..];
                if command.is_empty() {
                    return Err(SandboxError::Arguments("no command after --".to_owned()));
                }
                return Ok((policy, command));
            }
            other => {
                return Err(SandboxError::Arguments(format!(
                    "unknown argument {other:?}"
                )));
            }
        }
    }
    Err(SandboxError::Arguments(
        "no command (expected -- <program>)".to_owned(),
    ))
}

fn value<'a>(args: &'a [OsString], index: usize, flag: &str) -> Result<&'a OsStr, SandboxError> {
    args.get(index + 1)
        .map(OsString::as_os_str)
        .ok_or_else(|| SandboxError::Arguments(format!("{flag} needs a value")))
}

/// Applies the policy given in `args` (what follows [`EXEC_ARG`]) to this process and
/// replaces it with the command. Returns only when that failed; the caller reports the error
/// and exits with 126 (as a shell does for a command it cannot run).
pub fn exec_main(args: &[OsString]) -> SandboxError {
    let (policy, command) = match parse(args) {
        Ok(parsed) => parsed,
        Err(error) => return error,
    };
    if policy.mode == SandboxMode::Off {
        return exec(command);
    }
    #[cfg(target_os = "linux")]
    {
        if let Err(error) = crate::linux::restrict_self(&policy) {
            return error;
        }
        exec(command)
    }
    #[cfg(not(target_os = "linux"))]
    {
        crate::probe(&policy).err().unwrap_or_else(|| exec(command))
    }
}

fn exec(command: &[OsString]) -> SandboxError {
    use std::os::unix::process::CommandExt as _;
    let error = std::process::Command::new(&command[0])
        .args(&command[1..])
        .exec();
    SandboxError::Exec {
        program: command[0].to_string_lossy().into_owned(),
        source: error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_and_parse_round_trip() {
        let launcher = SandboxLauncher {
            launcher: PathBuf::from("/bin/knightcode"),
            policy: SandboxPolicy {
                mode: SandboxMode::WorkspaceWrite,
                writable_roots: vec![PathBuf::from("/work/a b"), PathBuf::from("/tmp")],
                network: false,
            },
        };
        let (program, args) =
            launcher.wrap(Path::new("/bin/bash"), &["-c".into(), "echo --mode".into()]);
        assert_eq!(program, PathBuf::from("/bin/knightcode"));
        assert_eq!(args[0], EXEC_ARG);
        let (policy, command) = parse(&args[1..]).expect("parses");
        assert_eq!(policy, launcher.policy);
        assert_eq!(
            command,
            ["/bin/bash", "-c", "echo --mode"].map(OsString::from)
        );
    }

    #[test]
    fn malformed_arguments_are_refused() {
        for args in [
            vec!["--mode"],
            vec!["--mode", "sideways", "--", "true"],
            vec!["--mode", "read-only"],
            vec!["--mode", "read-only", "--"],
            vec!["--bogus", "--", "true"],
        ] {
            let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
            assert!(
                matches!(parse(&args), Err(SandboxError::Arguments(_))),
                "{args:?} accepted"
            );
        }
    }
}
