#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! File history benchmark: what `edit`/`write` pay before they change a file (the backup of
//! its original and the atomic `index.json` write), and a restore.
//!
//! Run with `cargo bench -p knightcode-runtime --bench file_history`. Medians over several
//! runs of many records each; see docs/perf.md.

use std::path::Path;
use std::time::Duration;
use std::time::Instant;

use knightcode_runtime::file_history::FileHistory;

const RUNS: usize = 7;
const RECORDS: usize = 100;

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn file_of(path: &Path, bytes: usize) {
    let line = b"fn main() { println!(\"a line of a source file\"); }\n";
    let mut content = Vec::with_capacity(bytes + line.len());
    while content.len() < bytes {
        content.extend_from_slice(line);
    }
    content.truncate(bytes);
    std::fs::write(path, content).unwrap();
}

/// One run: `RECORDS` turns, each backing the file up once (a new checkpoint per turn, as
/// when every turn edits it), then a second edit of it in the same turn (nothing to copy).
fn run(bytes: usize) -> (Duration, Duration) {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let file = root.path().join("big.rs");
    file_of(&file, bytes);
    let history = FileHistory::new(&agent, "bench-session", true);
    let mut first = Vec::with_capacity(RECORDS);
    let mut again = Vec::with_capacity(RECORDS);
    for turn in 0..RECORDS {
        let checkpoint = format!("{turn:08x}");
        let start = Instant::now();
        history.record(&checkpoint, &file, "call-1");
        first.push(start.elapsed());
        let start = Instant::now();
        history.record(&checkpoint, &file, "call-2");
        again.push(start.elapsed());
    }
    (median(first), median(again))
}

fn restore(bytes: usize) -> Duration {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let file = root.path().join("big.rs");
    file_of(&file, bytes);
    let history = FileHistory::new(&agent, "bench-session", true);
    history.record("00000001", &file, "call-1");
    let plan = history.plan(&["00000001".to_owned()]);
    let mut times = Vec::new();
    for _ in 0..RECORDS {
        std::fs::write(&file, b"changed").unwrap();
        let start = Instant::now();
        let report = history.restore(&plan);
        times.push(start.elapsed());
        assert_eq!(report.restored, 1);
    }
    median(times)
}

fn main() {
    for (label, bytes) in [("10 KB", 10 * 1024), ("1 MB", 1024 * 1024)] {
        let mut firsts = Vec::new();
        let mut agains = Vec::new();
        for _ in 0..RUNS {
            let (first, again) = run(bytes);
            firsts.push(first);
            agains.push(again);
        }
        let restores: Vec<Duration> = (0..RUNS).map(|_| restore(bytes)).collect();
        println!(
            "{label}: backup per edit (first in a turn) {:.3} ms, again in the turn {:.1} µs, restore {:.3} ms (medians of {RUNS} runs of {RECORDS})",
            median(firsts).as_secs_f64() * 1e3,
            median(agains).as_secs_f64() * 1e6,
            median(restores).as_secs_f64() * 1e3,
        );
    }
}
