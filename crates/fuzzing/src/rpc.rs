//! RPC framing and command parsing: stdin bytes through [`CommandReader`] (the server's own
//! reader, with a small line limit so over-long lines are reached), every input's error
//! response encoded as the server would write it. Reading the bytes in small reads must
//! give the same inputs as reading them at once.

use std::io;
use std::pin::Pin;
use std::task::Context;
use std::task::Poll;

use knightcode_headless::rpc::CommandReader;
use knightcode_headless::rpc::LineReader;
use knightcode_protocol::rpc::RpcInput;
use tokio::io::AsyncRead;
use tokio::io::ReadBuf;

/// Lines longer than this are skipped and answered as parse errors.
const MAX_LINE_BYTES: usize = 512;

pub(crate) fn run(runtime: &tokio::runtime::Runtime, data: &[u8]) {
    let Some((&step, body)) = data.split_first() else {
        return;
    };
    let whole = runtime.block_on(read_all(body, usize::MAX));
    let trickled = runtime.block_on(read_all(body, usize::from(step % 32) + 1));
    assert_eq!(whole, trickled, "the inputs depend on how stdin was read");
    for input in &whole {
        if let Some(response) = input.error_response() {
            let line = serde_json::to_string(&response);
            assert!(
                line.is_ok(),
                "an error response does not encode: {response:?}"
            );
        }
        if let RpcInput::Command(command) = input {
            let _ = command.command_type();
            let _ = command.body.images().count();
        }
    }
}

async fn read_all(body: &[u8], step: usize) -> Vec<RpcInput> {
    let lines = LineReader::new(Trickle { data: body, step }).with_max_line_bytes(MAX_LINE_BYTES);
    let mut reader = CommandReader::from_lines(lines);
    let mut inputs = Vec::new();
    // Reading a slice cannot fail; an `Err` ends the stream as it would end the server.
    while let Ok(Some(input)) = reader.next_input().await {
        inputs.push(input);
    }
    inputs
}

/// A reader that hands out at most `step` bytes per read, as a pipe might.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl AsyncRead for Trickle<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let take = self.step.min(buf.remaining()).min(self.data.len());
        let (head, rest) = self.data.split_at(take);
        buf.put_slice(head);
        self.data = rest;
        Poll::Ready(Ok(()))
    }
}
