//! Child processes with a bounded wait. A test that runs a program (the agent binary, npm,
//! node, git, Chromium) must not hang the whole suite when that program does:
//! [`OutputWithin::output_within`] waits at most a given time, then kills the child and fails
//! with what it was waiting for and the output so far.
//!
//! ```no_run
//! use knightcode_testkit::process::{OutputWithin, PROCESS_LIMIT};
//! let out = std::process::Command::new("git")
//!     .arg("--version")
//!     .output_within(PROCESS_LIMIT, "git --version")
//!     .unwrap();
//! assert!(out.status.success());
//! ```

use std::io::Read;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::TestkitError;

/// How long a test waits for one run of the agent binary (generous: debug builds on a
/// loaded two-core machine).
pub const PROCESS_LIMIT: Duration = Duration::from_secs(120);

/// How long the output of a killed child may take to arrive.
const PIPE_GRACE: Duration = Duration::from_secs(5);

/// How long a test waits for a download from a package registry (`npm install`, `npm pack`
/// of a published package) on a cold cache.
pub const REGISTRY_LIMIT: Duration = Duration::from_secs(600);

/// [`Command::output`] with a limit.
pub trait OutputWithin {
    /// Like [`Command::output`] (stdout and stderr captured, stdin closed), but a child still running after `limit` is killed and the error
    /// names `what` the test was waiting for, with the tail of its output.
    fn output_within(&mut self, limit: Duration, what: &str) -> Result<Output, TestkitError>;
}

impl OutputWithin for Command {
    fn output_within(&mut self, limit: Duration, what: &str) -> Result<Output, TestkitError> {
        output_within(self, limit, what)
    }
}

fn output_within(
    command: &mut Command,
    limit: Duration,
    what: &str,
) -> Result<Output, TestkitError> {
    // What it was, in words and as the command line (cut short: it lists the environment).
    let mut line = format!("{command:?}");
    if line.len() > 400 {
        line.truncate(line.floor_char_boundary(400));
        line.push('…');
    }
    let what = format!("{what} ({line})");
    let spawn_error = |source| TestkitError::Spawn {
        what: what.clone(),
        source,
    };
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = child.wait_timeout(limit).map_err(spawn_error)?;
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        // The pipes close with the child, unless a descendant still holds them: what it wrote
        // is then not waited for.
        let tail = |rx: Receiver<Vec<u8>>| {
            let Ok(bytes) = rx.recv_timeout(PIPE_GRACE) else {
                return String::from("(its pipe is still held open by a descendant)");
            };
            let text = String::from_utf8_lossy(&bytes);
            text[text.ceil_char_boundary(text.len().saturating_sub(2000))..].to_owned()
        };
        return Err(TestkitError::TimedOut {
            what,
            limit,
            stdout: tail(stdout),
            stderr: tail(stderr),
        });
    };
    // A descendant that outlives the child and keeps its output open holds these; the wait
    // is bounded like the child's.
    let collect = |rx: Receiver<Vec<u8>>, name: &str| {
        rx.recv_timeout(limit).map_err(|_| TestkitError::TimedOut {
            what: format!("{what}: its {name} to close after it exited"),
            limit,
            stdout: String::new(),
            stderr: String::new(),
        })
    };
    Ok(Output {
        status,
        stdout: collect(stdout, "stdout")?,
        stderr: collect(stderr, "stderr")?,
    })
}

/// Reads a child's pipe to its end on a thread of its own, so a chatty child never blocks on
/// a full pipe while we wait for it to exit; the bytes arrive on the returned channel.
fn drain(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        let _ = tx.send(bytes);
    });
    rx
}

/// A child talked to line by line: its stdout read as it comes, its stdin written when the
/// test decides. Every wait is bounded; dropping it kills the child.
pub struct Dialogue {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: Receiver<String>,
    stderr: Receiver<Vec<u8>>,
    seen: Vec<String>,
}

impl Drop for Dialogue {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dialogue {
    /// Starts `command` with piped stdin, stdout and stderr.
    pub fn spawn(command: &mut Command, what: &str) -> Result<Self, TestkitError> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| TestkitError::Spawn {
                what: what.to_owned(),
                source,
            })?;
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let Some(stdout) = stdout else { return };
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr = drain(child.stderr.take());
        Ok(Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            seen: Vec::new(),
        })
    }

    /// Waits (at most `limit`) for a whole stdout line that `wanted` accepts, and returns it.
    pub fn wait_for_line(
        &mut self,
        limit: Duration,
        what: &str,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<String, TestkitError> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return Ok(line);
                    }
                }
                Err(_) => {
                    return Err(TestkitError::TimedOut {
                        what: what.to_owned(),
                        limit,
                        stdout: self.seen.join("\n"),
                        stderr: String::new(),
                    });
                }
            }
        }
    }

    /// Writes `line` and a newline to the child's stdin.
    pub fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin is closed"))?;
        use std::io::Write as _;
        writeln!(stdin, "{line}")?;
        stdin.flush()
    }

    /// Closes the child's stdin (the end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits (at most `limit`) for the child to exit: its status, the rest of its stdout
    /// (after the lines already waited for) and its stderr.
    pub fn finish(
        mut self,
        limit: Duration,
    ) -> Result<(std::process::ExitStatus, String, String), TestkitError> {
        self.stdin = None;
        let status = self
            .child
            .wait_timeout(limit)
            .map_err(|source| TestkitError::Spawn {
                what: "the child".into(),
                source,
            })?;
        let Some(status) = status else {
            return Err(TestkitError::TimedOut {
                what: "the child to exit".into(),
                limit,
                stdout: self.seen.join("\n"),
                stderr: String::new(),
            });
        };
        let mut rest: Vec<String> = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(PIPE_GRACE) {
            rest.push(line);
        }
        let stderr = self.stderr.recv_timeout(PIPE_GRACE).unwrap_or_default();
        Ok((
            status,
            rest.join("\n"),
            String::from_utf8_lossy(&stderr).into_owned(),
        ))
    }
}
