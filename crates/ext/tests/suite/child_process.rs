//! `child_process.spawn` as live children: a pid at once, output streamed while the child
//! runs, stdin written after it started, signals and process groups, Node's errors.

use serde_json::Value;
use serde_json::json;

const IMPORTS: &str = r#"
import { spawn } from "node:child_process";
"#;

async fn run(body: &str) -> Value {
    crate::common::run_probe_body(IMPORTS, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_talks_over_its_pipes_while_it_runs() {
    // The child prints, then waits for a line that is only written once its first output
    // has arrived: a buffered spawn (run to the end, then report) would hang here.
    let out = run(r#"async (dir) => {
      const child = spawn("sh", ["-c", 'echo ready; read line; echo "got $line"; echo oops >&2; exit 3'], { cwd: dir });
      const events = [];
      const pid = child.pid;
      const spawned = waitFor("the spawn event", (done) => child.on("spawn", () => done(true)));
      let stdout = "";
      const ready = waitFor("the child's first line", (done) => child.stdout.on("data", (chunk) => {
        stdout += chunk.toString();
        if (stdout.includes("ready")) done(true);
      }));
      let stderr = "";
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (text) => { stderr += text; });
      child.on("exit", (code, signal) => events.push(["exit", code, signal]));
      const closed = waitFor("the close event", (done) => child.on("close", (code, signal) => done(["close", code, signal])));
      await spawned;
      await ready;
      child.stdin.write("ping\n");
      events.push(await closed);
      return { pidIsNumber: Number.isInteger(pid) && pid > 0, stdout, stderr, events, exitCode: child.exitCode, killed: child.killed };
    }"#)
    .await;
    assert_eq!(
        out,
        json!({
            "pidIsNumber": true,
            "stdout": "ready\ngot ping\n",
            "stderr": "oops\n",
            "events": [["exit", 3, null], ["close", 3, null]],
            "exitCode": 3,
            "killed": false,
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_ends_a_running_child_with_its_signal_and_says_false_once_it_has_exited() {
    let out = run(r#"async (dir) => {
      const child = spawn("sleep", ["30"]);
      await waitFor("the spawn event", (done) => child.on("spawn", () => done(true)));
      const closed = waitFor("the close event", (done) => child.on("close", (code, signal) => done([code, signal])));
      const sent = child.kill();
      const ended = await closed;
      const again = child.kill("SIGKILL");
      let probe;
      try { process.kill(child.pid, 0); probe = "alive"; } catch (e) { probe = e.code; }
      return { sent, ended, again, killed: child.killed, signalCode: child.signalCode, probe };
    }"#)
    .await;
    assert_eq!(
        out,
        json!({
            "sent": true,
            "ended": [null, "SIGTERM"],
            "again": false,
            "killed": true,
            "signalCode": "SIGTERM",
            "probe": "ESRCH",
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_child_leads_a_process_group_that_can_be_signalled_whole() {
    // pi-processes stops a background command's whole group with process.kill(-pid).
    let out = run(r#"async (dir) => {
      const child = spawn("sh", ["-c", "sleep 30 & echo started; wait"], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
      child.unref();
      await waitFor("the child's first line", (done) => child.stdout.on("data", () => done(true)));
      const alive = process.kill(-child.pid, 0);
      const closed = waitFor("the close event", (done) => child.on("close", (code, signal) => done([code, signal])));
      process.kill(-child.pid, "SIGKILL");
      return { alive, stdin: child.stdin, ended: await closed };
    }"#)
    .await;
    assert_eq!(
        out,
        json!({ "alive": true, "stdin": null, "ended": [null, "SIGKILL"] })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_program_is_an_enoent_error_event_not_a_throw() {
    let out = run(r#"async (dir) => {
      const child = spawn("kc-no-such-program", ["x"]);
      const error = await waitFor("the error event", (done) => child.on("error", done));
      let unknown;
      try { process.kill(process.pid, "SIGNOPE"); } catch (e) { unknown = [e.name, e.code]; }
      return { pid: child.pid === undefined, code: error.code, syscall: error.syscall, path: error.path, message: error.message, unknown };
    }"#)
    .await;
    assert_eq!(
        out,
        json!({
            "pid": true,
            "code": "ENOENT",
            "syscall": "spawn kc-no-such-program",
            "path": "kc-no-such-program",
            "message": "spawn kc-no-such-program ENOENT",
            "unknown": ["TypeError", "ERR_UNKNOWN_SIGNAL"],
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_megabyte_of_output_arrives_whole_and_stdin_end_gives_the_child_eof() {
    let out = run(r#"async (dir) => {
      const child = spawn("sh", ["-c", "head -c 1048576 /dev/zero | tr '\\0' a; wc -c"]);
      let length = 0;
      let last = "";
      child.stdout.on("data", (chunk) => { length += chunk.length; last = chunk.toString().slice(-12); });
      child.stdin.end("four");
      const code = await waitFor("the close event", (done) => child.on("close", done));
      return { length, last: last.trim(), code };
    }"#)
    .await;
    // 1 MiB of "a", then wc's count of the 4 bytes stdin gave it before its end.
    assert_eq!(out["code"], json!(0));
    assert_eq!(out["length"], json!(1_048_576 + 2));
    assert!(out["last"].as_str().unwrap().ends_with('4'), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeout_option_kills_the_child_with_its_kill_signal() {
    let out = run(r#"async (dir) => {
      // SIGUSR2, not SIGINT: a shell's background job starts with SIGINT ignored and its
      // children inherit that (Node resets it in the child; std's spawn does not).
      const child = spawn("sleep", ["30"], { timeout: 50, killSignal: "SIGUSR2" });
      return await waitFor("the close event", (done) => child.on("close", (code, signal) => done([code, signal, child.killed])));
    }"#)
    .await;
    assert_eq!(out, json!([null, "SIGUSR2", true]));
}
