use std::time::Duration;

/// Everything that can go wrong in the headless modes. Messages reach users verbatim, so they
/// say what happened and what to do next.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    #[error("RPC stream I/O failed: {0}")]
    Io(#[from] std::io::Error),

    /// Recoverable: the reader skipped the line and continues with the next one.
    #[error(
        "a line of {length} bytes exceeds the {limit}-byte limit and was skipped; send large payloads in smaller records"
    )]
    LineTooLong { length: usize, limit: usize },

    #[error("the RPC output is closed (its reader went away or the writer was shut down)")]
    OutputClosed,

    #[error("the RPC output queue is full; retry once the reader has caught up")]
    OutputFull,

    #[error("a JSONL record must not contain a line feed; serialize it as compact JSON")]
    EmbeddedNewline,

    #[error("could not serialize an RPC record: {0}")]
    Serialize(#[from] serde_json::Error),

    #[error("could not start `{program}`: {source}; check the binary path (SpawnOptions::program)")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },

    #[error("the knightcode RPC server is gone ({reason}); start a new client")]
    Disconnected { reason: String },

    #[error("{message}")]
    Command { command: String, message: String },

    #[error("no response to `{command}` within {timeout:?}; the server may be busy or stuck")]
    Timeout { command: String, timeout: Duration },

    #[error("the `{command}` response has unexpected data: {source}")]
    BadData {
        command: String,
        #[source]
        source: serde_json::Error,
    },
}
