//! `fs.watch`, `fs.promises.watch` and `fs.watchFile` as extensions use them: real changes
//! to real files, observed through the host's tool API.

use serde_json::Value;
use serde_json::json;

const IMPORTS: &str = r#"
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import { join } from "node:path";
"#;

async fn run(body: &str) -> Value {
    crate::common::run_probe_body(IMPORTS, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_file_reports_a_change_with_its_name_and_close_is_announced() {
    let out = run(r#"async (dir) => {
      const file = join(dir, "trigger.txt");
      fs.writeFileSync(file, "");
      let watcher;
      const change = waitFor("a change of trigger.txt", (done) => {
        watcher = fs.watch(file, (eventType, filename) => done([eventType, filename]));
      });
      fs.writeFileSync(file, "run the tests");
      const seen = await change;
      const closed = waitFor("the watcher's close event", (done) => watcher.on("close", () => done(true)));
      watcher.close();
      return [...seen, await closed];
    }"#)
    .await;
    assert_eq!(out, json!(["change", "trigger.txt", true]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_directory_names_the_entry_that_appeared() {
    let out = run(r#"async (dir) => {
      const sub = join(dir, "inbox");
      fs.mkdirSync(sub);
      const watcher = fs.watch(sub);
      const seen = waitFor("a new entry in inbox", (done) => watcher.on("change", (t, f) => done([t, f])));
      fs.writeFileSync(join(sub, "new.txt"), "x");
      const result = await seen;
      watcher.close();
      return result;
    }"#)
    .await;
    assert_eq!(out, json!(["rename", "new.txt"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_path_throws_nodes_enoent_and_a_throwing_listener_keeps_the_watcher() {
    let out = run(r#"async (dir) => {
      let missing;
      try { fs.watch(join(dir, "nope.txt")); } catch (e) { missing = [e.code, e.syscall, e.message.startsWith("ENOENT: no such file or directory, watch '")]; }
      const file = join(dir, "f.txt");
      fs.writeFileSync(file, "");
      let calls = 0;
      let watcher;
      const second = waitFor("a change after the listener threw", (done) => {
        watcher = fs.watch(file, () => {
          calls += 1;
          if (calls === 1) { fs.appendFileSync(file, "again"); throw new Error("listener failed"); }
          done(calls);
        });
      });
      fs.appendFileSync(file, "first");
      const n = await second;
      watcher.close();
      return [missing, n >= 2];
    }"#)
    .await;
    assert_eq!(out, json!([["ENOENT", "watch", true], true]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promises_watch_iterates_events_and_an_abort_ends_it() {
    let out = run(r#"async (dir) => {
      const file = join(dir, "p.txt");
      fs.writeFileSync(file, "");
      const controller = new AbortController();
      const events = fsp.watch(file, { signal: controller.signal });
      fs.writeFileSync(file, "changed");
      const first = await Promise.race([
        events.next(),
        new Promise((_, reject) => setTimeout(() => reject(new Error("timed out waiting for the first iterated event")), 20000)),
      ]);
      controller.abort();
      let after;
      try { after = await events.next(); } catch (e) { after = e.name; }
      return [first.value.eventType, first.value.filename, after];
    }"#)
    .await;
    assert_eq!(out, json!(["change", "p.txt", "AbortError"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_file_polls_and_reports_the_new_and_old_size() {
    let out = run(r#"async (dir) => {
      const file = join(dir, "polled.txt");
      fs.writeFileSync(file, "");
      const seen = waitFor("a polled change of polled.txt", (done) => {
        fs.watchFile(file, { interval: 20 }, (curr, prev) => done([curr.size, prev.size]));
      });
      fs.writeFileSync(file, "12345");
      const sizes = await seen;
      fs.unwatchFile(file);
      return sizes;
    }"#)
    .await;
    assert_eq!(out, json!([5, 0]));
}
