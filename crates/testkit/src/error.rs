//! The crate's single error type.

use std::path::PathBuf;

/// Everything that can go wrong while starting or running a mock server.
#[derive(Debug, thiserror::Error)]
pub enum TestkitError {
    /// A child process could not be started or waited for.
    #[error("could not run {what}: {source}")]
    Spawn {
        /// What the test was running.
        what: String,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// A child process was still running when its time was up; it was killed.
    #[error(
        "timed out after {limit:?} waiting for {what}; it was killed.\n--- its stdout (tail) ---\n{stdout}\n--- its stderr (tail) ---\n{stderr}"
    )]
    TimedOut {
        /// What the test was waiting for.
        what: String,
        /// How long it waited.
        limit: std::time::Duration,
        /// The end of what the child wrote to stdout.
        stdout: String,
        /// The end of what the child wrote to stderr.
        stderr: String,
    },
    /// The listening socket could not be bound.
    #[error("could not bind the mock provider server to {addr}: {source}")]
    Bind {
        /// Requested address.
        addr: std::net::SocketAddr,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// The runtime thread of a blocking server could not be started.
    #[error("could not start the mock provider runtime thread: {0}")]
    Runtime(std::io::Error),
    /// A script file could not be read.
    #[error("could not read the script file {path}: {source}")]
    ReadScript {
        /// Script path.
        path: PathBuf,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// A script file is not a valid JSON array of replies.
    #[error("the script file {path} is not a JSON array of scripted replies: {source}")]
    ParseScript {
        /// Script path.
        path: PathBuf,
        /// Parse error.
        source: serde_json::Error,
    },
    /// The request log could not be opened or written.
    #[error("could not write the request log {path}: {source}")]
    RequestLog {
        /// Log path.
        path: PathBuf,
        /// Underlying I/O error.
        source: std::io::Error,
    },
}
