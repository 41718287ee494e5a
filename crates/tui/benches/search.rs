#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
//! The fullscreen transcript search's index over ~10,000 rendered lines: `cargo bench -p
//! knightcode-tui --bench search`. The lines are the 200 Markdown answers of
//! `scripts/bench/tui.py`'s session (heading, list, highlighted code, prose) rendered at
//! 120 columns, with a question line before each. Times:
//!
//! * indexing every line (what a search opened for the first time in a process reads);
//! * the first key of a query (`t`, tens of thousands of matches) and a longer query, on
//!   an index that is up to date;
//! * the last 40 lines read again (a streaming reply's frame while the search is open).
//!
//! Prints medians; these machines are noisy. `scripts/bench/tui.py --scenarios search
//! --tui-mode fullscreen` times the keys through the real binary.

use std::hint::black_box;
use std::time::{Duration, Instant};

use knightcode_tui::Component as _;
use knightcode_tui::Theme;
use knightcode_tui::markdown::Markdown;
use knightcode_tui::search::SearchIndex;

const PAIRS: usize = 200;
const WIDTH: u16 = 120;
const RUNS: usize = 50;

/// The same answers as `scripts/bench/tui.py` writes into its session file.
fn reply_markdown(i: usize) -> String {
    let mut lines = vec![
        format!("## Part {i}: how the stream decoder keeps its state"),
        String::new(),
    ];
    lines.extend((0..8).map(|j| {
        format!("- step {j}: the decoder keeps a small buffer and hands out `token_{j}` as soon as it is complete")
    }));
    lines.extend([String::new(), "```rust".to_owned()]);
    lines.extend(
        (0..20).map(|j| {
            format!("fn step_{i}_{j}(input: &str) -> usize {{ input.len() * {j} + {i} }}")
        }),
    );
    lines.extend(["```".to_owned(), String::new()]);
    lines.extend((0..8).map(|j| {
        format!("Paragraph line {j} of part {i} explains **why** the buffer is reused: fewer allocations, less copying.")
    }));
    lines.extend([
        String::new(),
        format!("> Note {i}: nothing here is real; it only has the shape of an answer."),
        String::new(),
        "Done.".to_owned(),
    ]);
    lines.join("\n")
}

fn transcript() -> Vec<String> {
    let theme = Theme::dark();
    let mut lines = Vec::new();
    for i in 0..PAIRS {
        lines.push(String::new());
        lines.push(format!(
            "\x1b[48;5;236m Question {i}: how does part {i} of the decoder work?\x1b[0m"
        ));
        lines.push(String::new());
        let mut reply = Markdown::new(reply_markdown(i), theme.clone()).with_padding(1, 0);
        lines.extend(reply.render(WIDTH));
    }
    lines
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let lines = transcript();
    let bytes: usize = lines.iter().map(String::len).sum();
    println!("{} lines, {} KB", lines.len(), bytes / 1024);

    let mut index_all = Vec::new();
    let mut index = SearchIndex::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut fresh = SearchIndex::new();
        fresh.sync(black_box(&lines), 0);
        index_all.push(start.elapsed());
        index = fresh;
    }
    println!(
        "index every line:            median {:.3} ms",
        median(index_all)
    );

    for query in ["t", "the buffer"] {
        let mut times = Vec::new();
        let mut found = 0;
        for _ in 0..RUNS {
            index.find("");
            let start = Instant::now();
            index.find(black_box(query));
            // What a frame asks of it: the matches in view and the one picked.
            let picked = index.first_at_or_after(lines.len() / 2);
            let in_view = index.in_lines(lines.len() / 2, lines.len() / 2 + 40);
            for i in in_view.chain(picked) {
                black_box(index.segments(i));
            }
            times.push(start.elapsed());
            found = index.len();
        }
        println!(
            "find {query:<12} {found:>6} matches: median {:.3} ms",
            median(times)
        );
    }

    let mut tail = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        index.sync(black_box(&lines), lines.len() - 40);
        index.find("t");
        tail.push(start.elapsed());
        index.find("");
    }
    println!(
        "last 40 lines again + find t: median {:.3} ms",
        median(tail)
    );
}
