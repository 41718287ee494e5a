#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
//! Frame times of the differential renderer with a long transcript: `cargo bench -p
//! knightcode-tui --bench render`. Prints medians; these machines are noisy.

use std::hint::black_box;
use std::time::{Duration, Instant};

use knightcode_tui::{CURSOR_MARKER, Renderer};

const TRANSCRIPT: usize = 10_000;
const FRAMES: usize = 2_000;
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

/// Transcript lines of the kinds the app draws: plain prose, styled labels, code.
fn transcript() -> Vec<String> {
    (0..TRANSCRIPT)
        .map(|i| match i % 4 {
            0 => format!("\x1b[1m\x1b[36massistant\x1b[0m line {i} of a long answer"),
            1 => format!("  the quick brown fox jumps over the lazy dog, again and again ({i})"),
            2 => format!("\x1b[48;5;236m  let value_{i} = compute(\"日本語\", {i});\x1b[0m"),
            _ => String::new(),
        })
        .collect()
}

fn editor_and_footer(lines: &mut Vec<String>, text: &str) {
    lines.push("─".repeat(usize::from(WIDTH)));
    lines.push(format!("> {text}{CURSOR_MARKER}"));
    lines.push("─".repeat(usize::from(WIDTH)));
    lines.push("\x1b[2m~/project (main) • session\x1b[0m".to_owned());
    lines.push("\x1b[2m↑12k ↓3.4k $0.123 12.3%/200k      claude-sonnet • high\x1b[0m".to_owned());
}

/// Frame times and bytes of one scenario.
#[derive(Default)]
struct Samples {
    times: Vec<Duration>,
    bytes: usize,
}

impl Samples {
    fn frame(&mut self, renderer: &mut Renderer, lines: &[String], out: &mut Vec<u8>) {
        out.clear();
        let start = Instant::now();
        let stats = renderer.render(black_box(lines), out);
        self.times.push(start.elapsed());
        self.bytes += stats.bytes;
        black_box(out);
    }

    fn report(mut self, name: &str) {
        self.times.sort();
        let at = |q: usize| self.times[self.times.len() * q / 100].as_secs_f64() * 1e6;
        println!(
            "{name:<36} median {:>9.2} µs   p90 {:>9.2} µs   {:>7} bytes/frame",
            at(50),
            at(90),
            self.bytes / self.times.len()
        );
    }
}

/// A keystroke in the editor: one line near the bottom changes.
fn keystroke() {
    let mut renderer = Renderer::new(WIDTH, HEIGHT);
    renderer.set_show_hardware_cursor(true);
    let mut lines = transcript();
    editor_and_footer(&mut lines, "");
    let editor = lines.len() - 4;
    let mut out = Vec::with_capacity(1 << 20);
    renderer.render(&lines, &mut out);
    let mut text = String::new();
    let mut samples = Samples::default();
    for i in 0..FRAMES {
        text.push(char::from(b'a' + (i % 26) as u8));
        if text.len() > 100 {
            text.clear();
        }
        lines[editor] = format!("> {text}{CURSOR_MARKER}");
        samples.frame(&mut renderer, &lines, &mut out);
    }
    samples.report("keystroke (10k-line transcript)");
}

/// Streaming: the last transcript line grows; every 20 words it wraps onto a new line,
/// pushing the editor and footer down.
fn streaming() {
    let mut renderer = Renderer::new(WIDTH, HEIGHT);
    let mut transcript = transcript();
    let mut lines = Vec::new();
    let mut out = Vec::with_capacity(1 << 20);
    let build = |transcript: &[String], lines: &mut Vec<String>| {
        // The app keeps its lines and only replaces what changed; the tail is rebuilt.
        lines.truncate(transcript.len() - 1);
        for line in &transcript[lines.len()..] {
            lines.push(line.clone());
        }
        editor_and_footer(lines, "");
    };
    build(&transcript, &mut lines);
    renderer.render(&lines, &mut out);
    let mut samples = Samples::default();
    for i in 0..FRAMES {
        if i % 20 == 0 {
            transcript.push(String::from("  streamed"));
        } else if let Some(last) = transcript.last_mut() {
            last.push_str(" word");
        }
        build(&transcript, &mut lines);
        samples.frame(&mut renderer, &lines, &mut out);
    }
    samples.report("streaming (10k-line transcript)");
}

/// For scale: a full redraw of the whole transcript (width change).
fn full_redraw() {
    let mut lines = transcript();
    editor_and_footer(&mut lines, "");
    let mut renderer = Renderer::new(WIDTH, HEIGHT);
    let mut out = Vec::with_capacity(1 << 20);
    renderer.render(&lines, &mut out);
    let mut samples = Samples::default();
    for i in 0..50 {
        renderer.resize(WIDTH - (i % 2) as u16, HEIGHT);
        samples.frame(&mut renderer, &lines, &mut out);
    }
    samples.report("full redraw (10k lines)");
}

fn main() {
    keystroke();
    streaming();
    full_redraw();
}
