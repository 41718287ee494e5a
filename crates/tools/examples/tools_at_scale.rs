#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! grep and find at monorepo scale, side by side with ripgrep and fd (issue 17).
//!
//! ```sh
//! bash scripts/bench/tools.sh            # installs rg/fd, builds, generates, runs, cleans up
//! tools_at_scale generate DIR            # ~520 MB in 32,000 files
//! tools_at_scale run DIR [RUNS]          # the comparison table (rg and fdfind on PATH)
//! ```
//!
//! Our tools are called in-process through the real `Tool` API (argument parsing, walk,
//! search, formatting); rg and fd run as the reference agent runs them, output to a pipe we
//! drain. Runs alternate between ours and theirs so both see the same noise; the page cache
//! is warm (the tree is read once before timing).

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use knightcode_agent::tool::{Tool, ToolContext};
use knightcode_tools::{ToolsConfig, builtin_tools};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TOP_DIRS: usize = 40;
const SUB_DIRS: usize = 20;
const FILES_PER_DIR: usize = 40;
/// A token on a few lines only, so searching for it scans the whole tree.
const RARE: &str = "ZQXJ_RARE_TOKEN";

const WORDS: [&str; 16] = [
    "let", "value", "return", "match", "the", "config", "struct", "impl", "self", "error", "async",
    "await", "buffer", "index", "offset", "string",
];

/// A small deterministic generator (xorshift), so every run builds the same tree.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn generate(root: &Path) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut total = 0_u64;
    let mut files = 0_usize;
    let mut line = String::new();
    // A repository, as a monorepo is: both sides apply .gitignore without extra flags
    // (Debian's fd 8.6 has no --no-require-git).
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "*.log\ntarget/\n").unwrap();
    for top in 0..TOP_DIRS {
        for sub in 0..SUB_DIRS {
            let dir = root.join(format!("pkg{top:02}/mod{sub:02}"));
            std::fs::create_dir_all(&dir).unwrap();
            for index in 0..FILES_PER_DIR {
                // Mostly .ts and .txt sources, one in a hundred a .rs file (the find target).
                let extension = match index {
                    0 if sub.is_multiple_of(5) => "rs",
                    _ if index % 2 == 0 => "ts",
                    _ => "txt",
                };
                let path = dir.join(format!("file{index:02}.{extension}"));
                let mut out = BufWriter::new(std::fs::File::create(&path).unwrap());
                // 1 to ~31 KB per file, ~16 KB on average.
                let target = 1024 + (rng.next() % (30 * 1024)) as usize;
                let mut written = 0;
                let mut number = 0_u64;
                while written < target {
                    line.clear();
                    number += 1;
                    let words = 4 + rng.next() % 10;
                    for _ in 0..words {
                        line.push_str(WORDS[(rng.next() % WORDS.len() as u64) as usize]);
                        line.push(' ');
                    }
                    if rng.next().is_multiple_of(200_000) {
                        line.push_str(RARE);
                    }
                    line.push_str(&number.to_string());
                    line.push('\n');
                    out.write_all(line.as_bytes()).unwrap();
                    written += line.len();
                }
                out.flush().unwrap();
                total += written as u64;
                files += 1;
            }
        }
    }
    println!(
        "generated {files} files, {:.0} MB in {}",
        total as f64 / 1e6,
        root.display()
    );
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

struct Ours {
    runtime: tokio::runtime::Runtime,
    tools: Vec<std::sync::Arc<dyn Tool>>,
}

impl Ours {
    fn call(&self, name: &str, root: &Path, arguments: Value) -> (Duration, String) {
        let tool = self
            .tools
            .iter()
            .find(|tool| tool.definition().name == name)
            .unwrap();
        let context = ToolContext::new("bench", root, CancellationToken::new());
        let started = Instant::now();
        let output = self
            .runtime
            .block_on(tool.execute(arguments, context))
            .unwrap();
        let elapsed = started.elapsed();
        let text = output
            .content
            .iter()
            .filter_map(|block| block.as_text())
            .collect::<Vec<_>>()
            .join("\n");
        (elapsed, text)
    }
}

/// Runs a native tool, draining its output as the reference agent does; returns the time
/// and the number of output lines.
fn native(program: &str, args: &[&str]) -> (Duration, usize) {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {program}: {error}"));
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut output)
        .unwrap();
    child.wait().unwrap();
    let elapsed = started.elapsed();
    (
        elapsed,
        output.iter().filter(|&&byte| byte == b'\n').count(),
    )
}

fn result_rows(text: &str) -> usize {
    text.split("\n\n[").next().unwrap_or("").lines().count()
}

fn run(root: &Path, runs: usize) {
    let ours = Ours {
        runtime: tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
        tools: builtin_tools(ToolsConfig::default()),
    };
    let dir = root.to_str().unwrap();
    // Warm the page cache (and check the native tools are there).
    native("rg", &["-c", "--hidden", "zzzz_nothing", dir]);
    native("fdfind", &["--hidden", "--glob", "*", dir]);

    println!(
        "| call | knightcode: median (min) | native: median (min) | ratio | results (ours / native) |"
    );
    println!("|---|---|---|---|---|");
    type Case<'a> = (&'a str, &'a str, Value, &'a str, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "grep full scan (rare literal)",
            "grep",
            json!({"pattern": RARE}),
            "rg",
            vec![
                "--json",
                "--line-number",
                "--color=never",
                "--hidden",
                "--",
                RARE,
                dir,
            ],
        ),
        (
            "grep full scan (regex `offset 9999\\d$`, no hits)",
            "grep",
            json!({"pattern": "offset 9999\\d$"}),
            "rg",
            vec![
                "--json",
                "--line-number",
                "--color=never",
                "--hidden",
                "--",
                "offset 9999\\d$",
                dir,
            ],
        ),
        (
            "find full scan (`*.rs`)",
            "find",
            json!({"pattern": "*.rs"}),
            "fdfind",
            vec![
                "--glob",
                "--color=never",
                "--hidden",
                "--max-results",
                "1000",
                "--",
                "*.rs",
                dir,
            ],
        ),
        (
            "find full scan (`pkg1*/**/file0*.ts`)",
            "find",
            json!({"pattern": "pkg1*/**/file0*.ts", "limit": 100_000}),
            "fdfind",
            vec![
                "--glob",
                "--color=never",
                "--hidden",
                "--max-results",
                "100000",
                "--full-path",
                "--",
                "**/pkg1*/**/file0*.ts",
                dir,
            ],
        ),
    ];
    for (label, tool, arguments, program, args) in cases {
        let mut mine = Vec::new();
        let mut theirs = Vec::new();
        let mut rows = (0, 0);
        for _ in 0..runs {
            let (elapsed, text) = ours.call(tool, root, arguments.clone());
            mine.push(elapsed);
            rows.0 = result_rows(&text);
            let (elapsed, lines) = native(program, &args);
            theirs.push(elapsed);
            rows.1 = lines;
        }
        let (m, t) = (median(mine.clone()), median(theirs.clone()));
        println!(
            "| {label} | {} ({}) | {program}: {} ({}) | {:.2}x | {} / {} |",
            ms(m),
            ms(*mine.iter().min().unwrap()),
            ms(t),
            ms(*theirs.iter().min().unwrap()),
            m.as_secs_f64() / t.as_secs_f64(),
            rows.0,
            rows.1,
        );
    }

    // First 100 matches of a common word: the walk stops once the first 100 in path order
    // are certain. rg has no "first N in order" mode; `rg --sort path -m` would differ.
    for (label, pattern) in [
        ("grep first 100 matches (`the`)", "the"),
        ("grep first 100 matches (`self \\d+`)", "self \\d+"),
    ] {
        let mut mine = Vec::new();
        let mut rows = 0;
        for _ in 0..runs {
            let (elapsed, text) = ours.call("grep", root, json!({"pattern": pattern}));
            mine.push(elapsed);
            rows = result_rows(&text);
        }
        println!(
            "| {label} | {} ({}) | | | {rows} / |",
            ms(median(mine.clone())),
            ms(*mine.iter().min().unwrap()),
        );
    }
    let mut mine = Vec::new();
    for _ in 0..runs {
        mine.push(ours.call("find", root, json!({"pattern": "*"})).0);
    }
    println!(
        "| find first 1,000 results (`*`) | {} ({}) | | | 1000 / |",
        ms(median(mine.clone())),
        ms(*mine.iter().min().unwrap()),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("generate") => {
            let root = PathBuf::from(args.get(2).expect("generate DIR"));
            std::fs::create_dir_all(&root).unwrap();
            generate(&root);
        }
        Some("run") => {
            let root = PathBuf::from(args.get(2).expect("run DIR [RUNS]"));
            let runs = args.get(3).map_or(7, |runs| runs.parse().unwrap());
            run(&root, runs);
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            if let Some(peak) = status.lines().find(|line| line.starts_with("VmHWM")) {
                println!(
                    "\nknightcode peak RSS over all calls: {}",
                    peak.trim_start_matches("VmHWM:").trim()
                );
            }
        }
        _ => eprintln!("usage: tools_at_scale generate DIR | run DIR [RUNS]"),
    }
}
