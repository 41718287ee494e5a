//! Streams as extensions and their SDKs use them: `node:stream` (pipes, transforms,
//! async iteration, pipeline), `node:string_decoder`, and the web streams the MCP SDK and
//! server-sent-event parsers subclass and pipe through.

use serde_json::Value;
use serde_json::json;

const IMPORTS: &str = r#"
import { PassThrough, Readable, Transform, Writable, pipeline } from "node:stream";
import { pipeline as pipelineAsync } from "node:stream/promises";
import { StringDecoder } from "node:string_decoder";
"#;

async fn run(body: &str) -> Value {
    crate::common::run_probe_body(IMPORTS, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_streams_pipe_transform_and_iterate() {
    let out = run(r#"async (dir) => {
      // A PassThrough fed by pipe (the MCP SDK pipes a child's stderr into one).
      const source = new PassThrough();
      const copy = new PassThrough();
      source.pipe(copy);
      const piped = [];
      copy.on("data", (chunk) => piped.push(chunk.toString()));
      const copied = waitFor("the copy's end", (done) => copy.on("end", () => done(piped.join(""))));
      source.write("a");
      source.end("b");

      // A transform in a pipeline, into a collecting writable.
      const seen = [];
      const upper = new Transform({ transform(chunk, _enc, cb) { cb(null, chunk.toString().toUpperCase()); } });
      const sink = new Writable({ write(chunk, _enc, cb) { seen.push(chunk.toString()); cb(); } });
      const piped2 = waitFor("the pipeline's callback", (done) => pipeline(Readable.from(["x", "y"]), upper, sink, (e) => done(e ? e.message : "ok")));

      // Async iteration, and the promise form of pipeline.
      const items = [];
      for await (const item of Readable.from([1, 2, 3])) items.push(item);
      const collected = [];
      await pipelineAsync(Readable.from(["p", "q"]), new Writable({ objectMode: true, write(c, _e, cb) { collected.push(c); cb(); } }));

      // A write after end is an error, not a crash.
      const ended = new Writable({ write(_c, _e, cb) { cb(); } });
      ended.end();
      const late = await waitFor("the late write's error", (done) => { ended.on("error", (e) => done(e.code)); ended.write("late"); });

      // A multi-byte character split across chunks decodes whole.
      const decoder = new StringDecoder("utf8");
      const euro = Buffer.from("€ok");
      const decoded = decoder.write(euro.subarray(0, 1)) + decoder.write(euro.subarray(1, 2)) + decoder.write(euro.subarray(2)) + decoder.end();
      return { copied: await copied, pipeline: await piped2, seen, items, collected, late, decoded };
    }"#)
    .await;
    assert_eq!(
        out,
        json!({
            "copied": "ab",
            "pipeline": "ok",
            "seen": ["X", "Y"],
            "items": [1, 2, 3],
            "collected": ["p", "q"],
            "late": "ERR_STREAM_WRITE_AFTER_END",
            "decoded": "€ok",
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_streams_pipe_through_transforms_and_subclasses() {
    let out = run(r#"async (dir) => {
      // eventsource-parser's shape: a class that extends TransformStream.
      class Lines extends TransformStream {
        constructor() {
          let rest = "";
          super({
            transform(chunk, controller) {
              const parts = (rest + chunk).split("\n");
              rest = parts.pop();
              for (const line of parts) controller.enqueue(line);
            },
            flush(controller) { if (rest) controller.enqueue(rest); },
          });
        }
      }
      const bytes = new TextEncoder().encode("data: é\ndata: two\nlast");
      const chunks = [bytes.slice(0, 7), bytes.slice(7, 12), bytes.slice(12)];
      const lines = [];
      const stream = ReadableStream.from(chunks).pipeThrough(new TextDecoderStream()).pipeThrough(new Lines());
      for await (const line of stream) lines.push(line);

      // A pull source, a reader, cancel, and tee.
      let n = 0;
      const counter = new ReadableStream({ pull(c) { n += 1; if (n > 3) c.close(); else c.enqueue(n); } });
      const [left, right] = counter.tee();
      const fromLeft = [];
      for await (const v of left) fromLeft.push(v);
      const reader = right.getReader();
      const first = await reader.read();
      await reader.cancel();

      // pipeTo a WritableStream, and an error in a source reaches the reader.
      const written = [];
      await ReadableStream.from(["w1", "w2"]).pipeTo(new WritableStream({ write(c) { written.push(c); } }));
      const failing = new ReadableStream({ start(c) { c.error(new Error("source broke")); } });
      let failure;
      try { await failing.getReader().read(); } catch (e) { failure = e.message; }
      return { lines, fromLeft, first, written, failure };
    }"#)
    .await;
    assert_eq!(
        out,
        json!({
            "lines": ["data: é", "data: two", "last"],
            "fromLeft": [1, 2, 3],
            "first": { "done": false, "value": 1 },
            "written": ["w1", "w2"],
            "failure": "source broke",
        })
    );
}
