//! Strict JSONL framing (spec `rpc.md` §1): records end at LF and nowhere else.
//!
//! * Reading splits on `\n` only. U+2028/U+2029 (and a lone `\r`) are ordinary characters
//!   inside JSON strings, which is why generic "line" readers that also split on Unicode
//!   separators are unsuitable. One trailing `\r` is stripped, so CRLF input works. A final
//!   line without LF is still delivered at EOF.
//! * A line longer than the limit ([`DEFAULT_MAX_LINE_BYTES`], 64 MiB) is skipped without
//!   buffering it, reported once, and reading resumes after its LF: a peer that never sends
//!   a newline cannot grow memory without bound, yet a prompt with several megabytes of
//!   base64 images fits easily.
//! * Writing goes through one task fed by a bounded channel. Each record is serialized by its
//!   producer and queued whole, so records from concurrent producers never interleave, and a
//!   slow reader of the output makes producers wait instead of growing a buffer.

use std::io;

use knightcode_protocol::rpc::RpcInput;
use serde::Serialize;
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::io::AsyncWriteExt;
use tokio::io::BufReader;
use tokio::io::BufWriter;
use tokio::sync::mpsc;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::HeadlessError;

/// Longest accepted line in bytes (without its LF): 64 MiB. Large enough for prompts carrying
/// several full-size images as base64, small enough to bound what a misbehaving peer can make
/// us buffer. The reference agent uses the same cap.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Records queued for output before producers wait.
pub const DEFAULT_OUTPUT_CAPACITY: usize = 256;

/// Read buffer size; large reads keep multi-megabyte lines cheap.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Splits an async byte stream into LF-terminated lines.
pub struct LineReader<R> {
    inner: BufReader<R>,
    line: Vec<u8>,
    max_line_bytes: usize,
    /// Bytes of an over-long line seen so far; `Some` while skipping to its LF.
    skipping: Option<usize>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(reader: R) -> Self {
        Self {
            inner: BufReader::with_capacity(READ_BUFFER_BYTES, reader),
            line: Vec::new(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            skipping: None,
        }
    }

    /// Changes the line length limit (bytes, without the LF).
    pub fn with_max_line_bytes(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// The next line without its LF and without one trailing CR; `Ok(None)` at EOF.
    ///
    /// [`HeadlessError::LineTooLong`] is recoverable: the line was skipped and the next call
    /// continues after it. Invalid UTF-8 is replaced with U+FFFD, as a UTF-8 text decoder
    /// would, so that the JSON parser reports the problem rather than the framing.
    pub async fn next_line(&mut self) -> Result<Option<String>, HeadlessError> {
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                if let Some(length) = self.skipping.take() {
                    return Err(self.too_long(length));
                }
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(self.take_line()));
            }
            let newline = chunk.iter().position(|&byte| byte == b'\n');
            let body = newline.unwrap_or(chunk.len());
            let consumed = newline.map_or(body, |at| at + 1);
            if let Some(length) = &mut self.skipping {
                *length += body;
            } else if self.line.len() + body > self.max_line_bytes {
                self.skipping = Some(self.line.len() + body);
                self.line = Vec::new();
            } else {
                self.line.extend_from_slice(&chunk[..body]);
            }
            self.inner.consume(consumed);
            if newline.is_some() {
                if let Some(length) = self.skipping.take() {
                    return Err(self.too_long(length));
                }
                return Ok(Some(self.take_line()));
            }
        }
    }

    fn too_long(&self, length: usize) -> HeadlessError {
        HeadlessError::LineTooLong {
            length,
            limit: self.max_line_bytes,
        }
    }

    fn take_line(&mut self) -> String {
        let mut bytes = std::mem::take(&mut self.line);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        match String::from_utf8(bytes) {
            Ok(line) => line,
            Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
        }
    }
}

/// Reads stdin of an RPC server as classified [`RpcInput`]s.
pub struct CommandReader<R> {
    lines: LineReader<R>,
}

impl<R: AsyncRead + Unpin> CommandReader<R> {
    pub fn new(reader: R) -> Self {
        Self {
            lines: LineReader::new(reader),
        }
    }

    pub fn from_lines(lines: LineReader<R>) -> Self {
        Self { lines }
    }

    /// The next input; `Ok(None)` at EOF (the server shuts down gracefully then). An over-long
    /// line becomes a [`RpcInput::ParseError`], answered like any unparseable line.
    pub async fn next_input(&mut self) -> Result<Option<RpcInput>, HeadlessError> {
        match self.lines.next_line().await {
            Ok(Some(line)) => Ok(Some(RpcInput::parse(&line))),
            Ok(None) => Ok(None),
            Err(error @ HeadlessError::LineTooLong { .. }) => Ok(Some(RpcInput::ParseError {
                id: None,
                message: error.to_string(),
            })),
            Err(error) => Err(error),
        }
    }
}

/// Queues JSON records for the writer task. Cheap to clone; every clone feeds the same output.
#[derive(Debug, Clone)]
pub struct LineWriter {
    tx: mpsc::Sender<String>,
}

impl LineWriter {
    /// Serializes `record` as one compact line and queues it, waiting while the queue is full.
    pub async fn send<T: Serialize + ?Sized>(&self, record: &T) -> Result<(), HeadlessError> {
        let line = Self::encode(record)?;
        self.tx
            .send(line)
            .await
            .map_err(|_| HeadlessError::OutputClosed)
    }

    /// Like [`LineWriter::send`], but fails with [`HeadlessError::OutputFull`] instead of
    /// waiting; for synchronous callers (fire-and-forget notifications).
    pub fn try_send<T: Serialize + ?Sized>(&self, record: &T) -> Result<(), HeadlessError> {
        let line = Self::encode(record)?;
        self.tx.try_send(line).map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => HeadlessError::OutputFull,
            mpsc::error::TrySendError::Closed(_) => HeadlessError::OutputClosed,
        })
    }

    /// Queues a record that is already compact JSON text (without the LF).
    pub async fn send_json(&self, mut json: String) -> Result<(), HeadlessError> {
        if json.contains('\n') {
            return Err(HeadlessError::EmbeddedNewline);
        }
        json.push('\n');
        self.tx
            .send(json)
            .await
            .map_err(|_| HeadlessError::OutputClosed)
    }

    /// Whether the writer task has stopped accepting records.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    fn encode<T: Serialize + ?Sized>(record: &T) -> Result<String, HeadlessError> {
        // Compact serde_json output escapes every control character inside strings, so the
        // only LF in the record is the terminator added here.
        let mut line = serde_json::to_string(record)?;
        line.push('\n');
        Ok(line)
    }
}

impl LineWriter {
    /// A writer whose lines come out of the returned receiver, for an owner that writes
    /// them itself (with other output) instead of through [`spawn_writer`]'s task.
    pub fn channel(capacity: usize) -> (Self, mpsc::Receiver<String>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (Self { tx }, rx)
    }
}

/// The writer task of [`spawn_writer`].
#[derive(Debug)]
pub struct WriterTask {
    close: Option<oneshot::Sender<()>>,
    task: JoinHandle<io::Result<()>>,
}

impl WriterTask {
    /// Stops accepting records, writes what is queued, flushes and shuts the output down (for a
    /// child's stdin: the child sees EOF). Records sent afterwards fail with
    /// [`HeadlessError::OutputClosed`].
    pub async fn close(mut self) -> Result<(), HeadlessError> {
        if let Some(close) = self.close.take() {
            // The task may already have ended (write error); its result is reported below.
            let _ = close.send(());
        }
        self.finished().await
    }

    /// Waits until every [`LineWriter`] is dropped and the queue is written out.
    pub async fn finished(self) -> Result<(), HeadlessError> {
        match self.task.await {
            Ok(result) => result.map_err(HeadlessError::from),
            Err(join) => Err(HeadlessError::Io(io::Error::other(join))),
        }
    }
}

/// Starts the single writer task over `writer`, with room for `capacity` queued records.
/// Must be called inside a tokio runtime.
pub fn spawn_writer<W>(writer: W, capacity: usize) -> (LineWriter, WriterTask)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel(capacity.max(1));
    let (close_tx, close_rx) = oneshot::channel();
    let task = tokio::spawn(write_loop(writer, rx, close_rx));
    (
        LineWriter { tx },
        WriterTask {
            close: Some(close_tx),
            task,
        },
    )
}

async fn write_loop<W>(
    writer: W,
    mut rx: mpsc::Receiver<String>,
    close: oneshot::Receiver<()>,
) -> io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut out = RecordSink::new(writer);
    let mut close = Some(close);
    loop {
        let next = match &mut close {
            Some(signal) => tokio::select! {
                biased;
                line = rx.recv() => Some(line),
                requested = signal => {
                    // A dropped WriterTask is not a close request: keep serving the senders.
                    if requested.is_ok() {
                        rx.close();
                    }
                    None
                }
            },
            None => Some(rx.recv().await),
        };
        let Some(next) = next else {
            close = None;
            continue;
        };
        let Some(line) = next else { break };
        out.write(&line, !rx.is_empty()).await?;
    }
    out.close().await
}

/// The writing end of an output of records: bursts share one write, a record with nothing
/// queued behind it (a response the client is waiting for) is flushed at once.
pub(crate) struct RecordSink<W> {
    out: BufWriter<W>,
}

impl<W: AsyncWrite + Unpin> RecordSink<W> {
    pub(crate) fn new(writer: W) -> Self {
        Self {
            out: BufWriter::new(writer),
        }
    }

    /// Writes one record (with its LF); flushes unless `more` are waiting.
    pub(crate) async fn write(&mut self, line: &str, more: bool) -> io::Result<()> {
        self.out.write_all(line.as_bytes()).await?;
        if !more {
            self.out.flush().await?;
        }
        Ok(())
    }

    /// Flushes and shuts the output down (a child's stdin sees EOF).
    pub(crate) async fn close(mut self) -> io::Result<()> {
        self.out.flush().await?;
        self.out.shutdown().await
    }
}
