//! What the built-in catalog costs a start: building the model registry (no `models.json`)
//! and listing the models a start can use, with one provider's key set (what a start without
//! `--model` does), and with every model parsed (what `--model PATTERN` and `--list-models`
//! do); each with the resident memory it adds, measured in a fresh child process.
//!
//! Run with `cargo bench -p knightcode-ai --bench catalog`. Prints medians.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::time::Duration;
use std::time::Instant;

use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::MapEnv;
use knightcode_ai::ModelRegistry;

const ROUNDS: usize = 41;
const CASES: [&str; 3] = ["load", "one-key", "all"];

/// The process's resident memory (Linux), in bytes.
fn resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<usize>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// One start's worth of catalog work; returns how many models it produced.
fn run(case: &str, dir: &std::path::Path) -> usize {
    let registry = ModelRegistry::load(dir);
    let storage = AuthStorage::empty(dir);
    let env = MapEnv::new([("ANTHROPIC_API_KEY", "sk-ant-api03-x")]);
    let keys = HashMap::new();
    let auth = AuthContext {
        storage: &storage,
        env: &env,
        runtime_keys: &keys,
    };
    match case {
        "one-key" => registry.available(&auth).len(),
        "all" => registry.models().len(),
        _ => 0,
    }
}

fn main() {
    let dir = std::env::temp_dir().join(format!("kc-catalog-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A child measures one first-time run: the memory a start would add.
    if let Ok(case) = std::env::var("KC_CATALOG_CASE") {
        let before = resident();
        let start = Instant::now();
        let models = run(&case, &dir);
        let elapsed = start.elapsed();
        println!(
            "{models} {} {}",
            elapsed.as_nanos(),
            resident().saturating_sub(before)
        );
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for case in CASES {
        let mut times: Vec<Duration> = Vec::new();
        let mut memory: Vec<usize> = Vec::new();
        let mut models = 0;
        for _ in 0..ROUNDS {
            let out = std::process::Command::new(&exe)
                .env("KC_CATALOG_CASE", case)
                .output()
                .unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            let fields: Vec<usize> = text
                .split_whitespace()
                .map(|f| f.parse().unwrap())
                .collect();
            models = fields[0];
            times.push(Duration::from_nanos(fields[1] as u64));
            memory.push(fields[2]);
        }
        times.sort();
        memory.sort();
        println!(
            "{case:8} {models:4} models: {:.3} ms, +{:.2} MiB resident (first run in a fresh process, median of {ROUNDS})",
            times[ROUNDS / 2].as_secs_f64() * 1000.0,
            memory[ROUNDS / 2] as f64 / (1024.0 * 1024.0)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
