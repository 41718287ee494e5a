//! SSE parse + event translation throughput (MB/s of wire data) and the latency a chunk's
//! decoding adds before its event is emitted, for anthropic-messages and openai-completions.
//!
//! Run with `cargo bench -p knightcode-ai --bench stream_throughput`. Prints medians.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;
use std::time::Instant;

use knightcode_ai::Api;
use knightcode_ai::Model;
use knightcode_ai::StreamEvent;
use knightcode_ai::WireDecoder;
use serde_json::json;

const TARGET_BYTES: usize = 16 << 20;
const READ_SIZE: usize = 16 << 10;
const ROUNDS: usize = 9;

/// Token-sized deltas with the escapes real replies have (quotes, newlines, unicode).
fn pieces() -> Vec<String> {
    let words = [
        "Hello",
        " world",
        ", the",
        " function",
        " `parse`",
        " returns",
        " \"ok\"",
        "\n",
        " — ",
        "résumé",
        " {x: 1}",
        " and",
        " then",
        " 42",
        ".\n\n",
        " fn main()",
    ];
    (0..64)
        .map(|i| words[i % words.len()].repeat(1 + i % 3))
        .collect()
}

fn anthropic_stream() -> Vec<u8> {
    let mut out = Vec::new();
    let mut push = |event: &str, data: serde_json::Value| {
        out.extend_from_slice(format!("event: {event}\ndata: {data}\n\n").as_bytes());
    };
    push(
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"bench","content":[],"stop_reason":null,"usage":{"input_tokens":1000,"output_tokens":1}}}),
    );
    push(
        "content_block_start",
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    let pieces = pieces();
    let mut i = 0;
    while out.len() < TARGET_BYTES {
        let text = &pieces[i % pieces.len()];
        let data = json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}});
        out.extend_from_slice(format!("event: content_block_delta\ndata: {data}\n\n").as_bytes());
        i += 1;
    }
    let mut tail = Vec::new();
    let mut push = |event: &str, data: serde_json::Value| {
        tail.extend_from_slice(format!("event: {event}\ndata: {data}\n\n").as_bytes());
    };
    push(
        "content_block_stop",
        json!({"type":"content_block_stop","index":0}),
    );
    push(
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5000}}),
    );
    push("message_stop", json!({"type":"message_stop"}));
    out.extend(tail);
    out
}

fn completions_stream() -> Vec<u8> {
    let mut out = Vec::new();
    let pieces = pieces();
    let mut i = 0;
    while out.len() < TARGET_BYTES {
        let text = &pieces[i % pieces.len()];
        let data = json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1750000000,"model":"bench","choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]});
        out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
        i += 1;
    }
    let finish = json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1750000000,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]});
    let usage = json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1750000000,"model":"bench","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":5000,"total_tokens":6000}});
    out.extend_from_slice(
        format!("data: {finish}\n\ndata: {usage}\n\ndata: [DONE]\n\n").as_bytes(),
    );
    out
}

fn model(api: Api) -> Model {
    Model::new("bench", "bench", api, "http://127.0.0.1")
}

/// Decodes the whole body in network-sized reads; returns the time and the event count.
fn decode_all(model: &Model, body: &[u8]) -> (Duration, usize) {
    let start = Instant::now();
    let mut decoder = WireDecoder::new(model, 0).unwrap();
    let mut events = Vec::with_capacity(1 << 16);
    let mut count = 0;
    for chunk in body.chunks(READ_SIZE) {
        decoder.feed(chunk).unwrap();
        decoder.drain_into(&mut events);
        count += events.len();
        events.clear();
    }
    let last = decoder.finish(0, &mut events);
    assert!(matches!(last, StreamEvent::Done { .. }), "{last:?}");
    count += events.len() + 1;
    (start.elapsed(), count)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn throughput(name: &str, model: &Model, body: &[u8]) {
    decode_all(model, body);
    let mut rates = Vec::new();
    let mut events = 0;
    for _ in 0..ROUNDS {
        let (elapsed, count) = decode_all(model, body);
        events = count;
        rates.push(body.len() as f64 / 1e6 / elapsed.as_secs_f64());
    }
    println!(
        "{name}: throughput median {:.0} MB/s ({:.1} MB, {events} events, {ROUNDS} rounds, {} KiB reads)",
        median(rates),
        body.len() as f64 / 1e6,
        READ_SIZE >> 10
    );
}

/// Time from handing the decoder a chunk that completes one event to holding that event,
/// measured per event on the synchronous path (what the HTTP task does between reads).
fn sync_latency(name: &str, model: &Model, body: &[u8]) {
    let separator: &[u8] = b"\n\n";
    let mut decoder = WireDecoder::new(model, 0).unwrap();
    let mut events = Vec::new();
    let mut samples = Vec::new();
    let mut rest = body;
    while let Some(pos) = rest.windows(2).position(|w| w == separator) {
        let (event, tail) = rest.split_at(pos + 2);
        rest = tail;
        let start = Instant::now();
        decoder.feed(event).unwrap();
        decoder.drain_into(&mut events);
        let elapsed = start.elapsed();
        if !events.is_empty() {
            samples.push(elapsed.as_secs_f64() * 1e6);
        }
        events.clear();
        if samples.len() >= 100_000 {
            break;
        }
    }
    println!(
        "{name}: decode latency per event median {:.3} µs, p99 {:.3} µs",
        median(samples.clone()),
        {
            samples.sort_by(f64::total_cmp);
            samples[samples.len() * 99 / 100]
        }
    );
}

/// The async path the client runs: a task receives a chunk (as from the socket), decodes it
/// and sends the events over the stream's channel; measured from chunk send to event receipt.
fn async_latency(name: &str, model: &Model, body: &[u8]) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut events: Vec<Vec<u8>> = body
        .split_inclusive(|b| *b == b'\n')
        .collect::<Vec<_>>()
        .chunks(3)
        .map(|lines| lines.concat())
        .filter(|chunk| chunk.ends_with(b"\n\n"))
        .take(20_000)
        .collect();
    // The first events open the message and its text block; feed them before measuring so
    // that every measured chunk yields exactly one event (a text delta).
    let prefix: Vec<u8> = events.drain(..2).flatten().collect();
    let model = model.clone();
    let samples = runtime.block_on(async move {
        let (chunk_tx, mut chunk_rx) = tokio::sync::mpsc::channel::<Vec<u8>>(16);
        let (event_tx, mut event_rx) = tokio::sync::mpsc::channel::<StreamEvent>(1024);
        tokio::spawn(async move {
            let mut decoder = WireDecoder::new(&model, 0).unwrap();
            let mut out = Vec::new();
            decoder.feed(&prefix).unwrap();
            decoder.drain_into(&mut out);
            out.clear();
            while let Some(chunk) = chunk_rx.recv().await {
                decoder.feed(&chunk).unwrap();
                decoder.drain_into(&mut out);
                for event in out.drain(..) {
                    if event_tx.send(event).await.is_err() {
                        return;
                    }
                }
            }
        });
        let mut samples = Vec::new();
        for chunk in events {
            let start = Instant::now();
            chunk_tx.send(chunk).await.unwrap();
            let event = event_rx.recv().await.unwrap();
            assert!(matches!(event, StreamEvent::TextDelta { .. }), "{event:?}");
            samples.push(start.elapsed().as_secs_f64() * 1e6);
        }
        samples
    });
    println!(
        "{name}: chunk-to-event latency through the stream task median {:.1} µs",
        median(samples)
    );
}

fn main() {
    let anthropic = anthropic_stream();
    let completions = completions_stream();
    let anthropic_model = model(Api::AnthropicMessages);
    let completions_model = model(Api::OpenAiCompletions);
    throughput("anthropic-messages", &anthropic_model, &anthropic);
    throughput("openai-completions", &completions_model, &completions);
    sync_latency("anthropic-messages", &anthropic_model, &anthropic);
    sync_latency("openai-completions", &completions_model, &completions);
    async_latency("anthropic-messages", &anthropic_model, &anthropic);
    async_latency("openai-completions", &completions_model, &completions);
}
