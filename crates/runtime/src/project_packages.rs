//! A trusted project's missing packages, installed at start-up (packages.md: "knightcode
//! installs any missing packages automatically on startup after the project is trusted").
//! Never for an untrusted project: its settings are not even read. A failed install is a
//! warning naming the package and the command to retry; the run goes on without it and no
//! settings file changes.

use std::io::Write as _;

use knightcode_packages::Layout;
use knightcode_packages::Manager;
use knightcode_packages::Scope;

/// Where the installs report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InstallOutput {
    /// `Installing <source>...` and npm's and git's own output on stderr, as they happen
    /// (print, JSON and RPC modes, whose stdout is the answer or the protocol).
    Stderr,
    /// Nothing on the terminal (a full-screen UI owns it): what happened becomes start-up
    /// notices.
    #[default]
    Notices,
}

/// Installs each of the project's packages whose folder is missing; call only once the
/// project is trusted. Blocking (npm and git run as subprocesses).
pub(crate) fn install_missing(
    layout: &Layout,
    npm_command: Vec<String>,
    output: InstallOutput,
) -> Vec<String> {
    let missing = knightcode_packages::missing_project_packages(layout);
    let mut notices = Vec::new();
    if missing.is_empty() {
        return notices;
    }
    let mut progress = |line: &str| {
        if output == InstallOutput::Stderr {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    };
    let mut manager = Manager {
        layout: layout.clone(),
        npm_command,
        progress: &mut progress,
        env: Vec::new(),
        capture: output == InstallOutput::Notices,
    };
    let mut done = Vec::new();
    for source in missing {
        match manager.install(&source, Scope::Project) {
            Ok(()) => done.push(source),
            Err(error) => notices.push(format!(
                "Could not install the project package {source}: {error}. The session starts without it; retry with: knightcode install {source} -l"
            )),
        }
    }
    drop(manager);
    for source in done {
        let line = format!("Installed the project package {source}");
        match output {
            InstallOutput::Stderr => {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
            InstallOutput::Notices => notices.push(line),
        }
    }
    notices
}
