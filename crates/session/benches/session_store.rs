#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Session store benchmark: open + build context of large sessions, and append latency.
//!
//! Run with `cargo bench -p knightcode-session --bench session_store`. Each open is measured
//! in a fresh child process so peak RSS (VmHWM) covers exactly one open + context build.
//! Results are medians over several runs; see docs/perf.md.

use std::io::BufWriter;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::MessageEntry;
use knightcode_protocol::Millis;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;
use knightcode_protocol::StopReason;
use knightcode_session::NewSession;
use knightcode_session::SessionStore;

const RUNS: usize = 7;

fn text_of_len(seed: usize, len: usize) -> String {
    let words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "refactor",
        "module",
        "the",
        "and",
        "\"quoted\"",
        "line\n",
    ];
    let mut out = String::with_capacity(len + 16);
    let mut i = seed;
    while out.len() < len {
        out.push_str(words[i % words.len()]);
        out.push(' ');
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    out.truncate(len);
    out
}

fn message(index: usize) -> AgentMessage {
    let text = text_of_len(index, 500);
    if index.is_multiple_of(2) {
        AgentMessage::user(text, Millis(1_700_000_000_000 + index as i64))
    } else {
        AgentMessage::Assistant(Box::new(AssistantMessage {
            content: Blocks(vec![ContentBlock::text(text)]),
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            stop_reason: StopReason::Stop.into(),
            timestamp: Millis(1_700_000_000_000 + index as i64),
            ..AssistantMessage::default()
        }))
    }
}

/// Writes a linear session of `count` message entries (~800 bytes each).
fn generate(path: &Path, count: usize) {
    let file = std::fs::File::create(path).expect("create bench file");
    let mut out = BufWriter::new(file);
    let header = SessionHeader {
        version: Some(3),
        id: "bench".into(),
        timestamp: "2026-01-01T00:00:00.000Z".into(),
        // An existing directory, so that the reference agent agrees to open the file too.
        cwd: "/tmp".into(),
        ..SessionHeader::default()
    };
    writeln!(out, "{}", header.to_json_line().expect("header")).expect("write");
    for index in 0..count {
        let entry = SessionEntry::Message(MessageEntry {
            id: format!("{index:08x}").into(),
            parent_id: index.checked_sub(1).map(|p| format!("{p:08x}").into()),
            timestamp: "2026-01-01T00:00:01.000Z".into(),
            message: message(index),
            extra: Default::default(),
        });
        writeln!(out, "{}", entry.to_json_line().expect("entry")).expect("write");
    }
    out.flush().expect("flush");
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Child mode: open (as owner) + build context once, print `millis rss_kib messages`.
fn measure_open(path: &Path) {
    let store = SessionStore::default();
    let start = Instant::now();
    let session = store.open(path, Path::new("/tmp")).expect("open");
    let context = session.build_context();
    let elapsed = start.elapsed();
    let count = context.messages.len();
    println!(
        "{} {} {}",
        elapsed.as_secs_f64() * 1000.0,
        peak_rss_kib(),
        count
    );
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn bench_open(dir: &Path, count: usize) {
    let path = dir.join(format!("linear-{count}.jsonl"));
    if !path.exists() {
        generate(&path, count);
    }
    let size_mb = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    let exe = std::env::current_exe().expect("current exe");
    let mut times = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..RUNS {
        let output = Command::new(&exe)
            .arg("--measure-open")
            .arg(&path)
            .output()
            .expect("run child");
        let text = String::from_utf8_lossy(&output.stdout);
        let fields: Vec<f64> = text
            .lines()
            .last()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        if fields.len() != 3 || fields[2] as usize != count {
            eprintln!(
                "child failed: {text} {}",
                String::from_utf8_lossy(&output.stderr)
            );
            return;
        }
        times.push(fields[0]);
        rss.push(fields[1] / 1024.0);
    }
    println!(
        "open+context {count:>6} entries ({size_mb:5.1} MB): median {:7.1} ms (min {:.1}), peak RSS median {:6.1} MiB",
        median(&mut times.clone()),
        times.iter().copied().fold(f64::INFINITY, f64::min),
        median(&mut rss)
    );
}

fn bench_append(dir: &Path) {
    let store = SessionStore::default();
    let mut session = store
        .create(
            &dir.join("append"),
            Path::new("/bench"),
            NewSession::default(),
        )
        .expect("create");
    session.append_message(message(0)).expect("append");
    session.append_message(message(1)).expect("append");
    let mut latencies = Vec::with_capacity(10_000);
    for index in 0..10_000 {
        let message = message(index);
        let start = Instant::now();
        session.append_message(message).expect("append");
        latencies.push(start.elapsed().as_secs_f64() * 1e6);
    }
    latencies.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| latencies[((latencies.len() as f64 - 1.0) * p) as usize];
    println!(
        "append (500-char message, lock check + write): p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|a| a == "--stream-typed") {
        use std::io::BufRead;
        let file = std::io::BufReader::new(std::fs::File::open(&args[position + 1]).unwrap());
        let mut entries: Vec<SessionEntry> = Vec::new();
        let start = Instant::now();
        for line in file.lines().skip(1) {
            entries.push(serde_json::from_str(&line.unwrap()).unwrap());
        }
        let t = start.elapsed();
        let base = peak_rss_kib();
        entries.shrink_to_fit();
        println!(
            "stream-typed {t:?} rss {base} KiB entries {} size {}",
            entries.len(),
            std::mem::size_of::<SessionEntry>()
        );
        return;
    }
    if let Some(position) = args.iter().position(|a| a == "--load-only") {
        let start = Instant::now();
        let loaded = knightcode_session::load::load_file(Path::new(&args[position + 1]))
            .unwrap()
            .unwrap();
        println!(
            "load {:?} rss {} KiB entries {}",
            start.elapsed(),
            peak_rss_kib(),
            loaded.entries.len()
        );
        return;
    }
    if let Some(position) = args.iter().position(|a| a == "--breakdown") {
        breakdown(Path::new(&args[position + 1]));
        return;
    }
    if let Some(position) = args.iter().position(|a| a == "--measure-open") {
        measure_open(Path::new(&args[position + 1]));
        return;
    }
    let dir = std::env::var_os("KNIGHTCODE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("knightcode-session-bench"));
    std::fs::create_dir_all(&dir).expect("bench dir");
    bench_open(&dir, 10_000);
    bench_open(&dir, 100_000);
    bench_append(&dir);
    let _ = std::fs::remove_dir_all(dir.join("append"));
}

#[allow(dead_code)]
fn breakdown(path: &Path) {
    let start = Instant::now();
    let bytes = std::fs::read(path).unwrap();
    let read = start.elapsed();
    let start = Instant::now();
    let mut n = 0;
    for line in bytes.split(|b| *b == b'\n') {
        if line.is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(line).unwrap();
        n += v.as_object().map(|o| o.len()).unwrap_or(0);
    }
    let value = start.elapsed();
    let start = Instant::now();
    let mut entries = Vec::new();
    for line in bytes.split(|b| *b == b'\n').skip(1) {
        if line.is_empty() {
            continue;
        }
        let v: SessionEntry = serde_json::from_slice(line).unwrap();
        entries.push(v);
    }
    let typed = start.elapsed();
    println!(
        "read {read:?} value {value:?} typed {typed:?} n={n} entry_size={} msg_size={} asst={}",
        std::mem::size_of::<SessionEntry>(),
        std::mem::size_of::<AgentMessage>(),
        std::mem::size_of::<AssistantMessage>()
    );
}
