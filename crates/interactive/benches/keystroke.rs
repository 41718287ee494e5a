#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
//! The interactive app's frame work in-process, without a terminal: `cargo bench -p
//! knightcode-interactive --bench keystroke`. With a transcript of 200 question/answer pairs
//! (50-line Markdown answers with a highlighted code block, ~10,000 rendered lines):
//!
//! * keystroke: `Editor::handle_key` + `Screen::render` + `Renderer::render` into a buffer,
//!   the work the app does between reading a key and writing the frame;
//! * streaming: a reply arriving at ~1,000 tokens/s (4-character deltas) drawn at the app's
//!   frame rate (one frame per 16 deltas), with an empty and with the long transcript; the
//!   share of one core is the frame work over the stream's duration at that rate.
//!
//! Prints medians; these machines are noisy. `scripts/bench/tui.py` measures the same through
//! the real binary in a pseudo-terminal.

use std::hint::black_box;
use std::time::{Duration, Instant};

use knightcode_interactive::app::Screen;
use knightcode_interactive::footer::FooterData;
use knightcode_interactive::transcript::{Look, Transcript};
use knightcode_protocol::{AgentEvent, AgentMessage};
use knightcode_tui::{Editor, Key, KeyCode, Keybindings, Renderer, Theme};
use serde_json::json;

const PAIRS: usize = 200;
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const KEYS: usize = 2_000;
/// Deltas between two frames: 16 ms at 1,000 deltas per second.
const DELTAS_PER_FRAME: usize = 16;
const DELTA_CHARS: usize = 4;
/// Characters streamed per second at ~1,000 tokens/s (4 characters a token).
const CHARS_PER_SECOND: f64 = 4_000.0;
const TYPED: &str = "the quick brown fox jumps over the lazy dog while we measure every frame ";

fn usage() -> serde_json::Value {
    json!({"input": 1234, "output": 900, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2134,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

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

/// The reply `scripts/bench/tui.py` streams: Markdown sections with a list and a code block.
fn stream_text(chars: usize) -> String {
    let mut parts = vec!["STREAMBEGIN starts the answer.".to_owned()];
    let mut size = 0;
    let mut n = 0;
    while size < chars {
        let list: Vec<String> = (0..4)
            .map(|j| format!("- point {j}: frames are coalesced while text streams in"))
            .collect();
        let code: Vec<String> = (0..3)
            .map(|j| format!("def f_{n}_{j}(x):\n    return x * {j}"))
            .collect();
        let block = [
            format!("### Section {n}"),
            format!(
                "The answer goes on with section {n}, which says why the renderer keeps the lines \
                 of finished cards and only redraws what changed at the bottom of the screen."
            ),
            list.join("\n"),
            format!("```python\n{}\n```", code.join("\n")),
        ]
        .join("\n\n");
        size += block.len() + 2;
        parts.push(block);
        n += 1;
    }
    parts.push("That is all, STREAMEND".to_owned());
    parts.join("\n\n")
}

fn message(value: serde_json::Value) -> AgentMessage {
    serde_json::from_value(value).expect("a valid message")
}

fn assistant(text: &str) -> AgentMessage {
    let content: Vec<serde_json::Value> = if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    };
    message(
        json!({"role": "assistant", "content": content, "api": "openai-completions",
                   "provider": "mock", "model": "mock-model", "usage": usage(),
                   "stopReason": "stop", "timestamp": 1_796_030_733_869_u64}),
    )
}

fn history() -> Vec<AgentMessage> {
    (0..PAIRS)
        .flat_map(|i| {
            [
                message(json!({"role": "user", "content": [{"type": "text",
                    "text": format!("Question {i}: how does part {i} of the decoder work?")}],
                    "timestamp": 1_796_030_733_869_u64})),
                assistant(&reply_markdown(i)),
            ]
        })
        .collect()
}

fn screen(messages: &[AgentMessage]) -> Screen {
    let theme = Theme::dark();
    let look = Look {
        theme: theme.clone(),
        cwd: "/home/user/project".to_owned(),
        home: Some("/home/user".to_owned()),
        tools_expanded: false,
        thinking_hidden: false,
        hidden_thinking_label: None,
        mark_wraps: false,
    };
    let mut transcript = Transcript::new(look);
    transcript.load(messages);
    let editor = Editor::new(&theme);
    let footer = FooterData {
        cwd: "~/project".to_owned(),
        git_branch: Some("main".to_owned()),
        context_window: 128_000,
        provider: "mock".to_owned(),
        model: "mock-model".to_owned(),
        ..FooterData::default()
    };
    Screen::new(theme, transcript, editor, footer, HEIGHT)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn quantile(times: &mut [Duration], q: usize) -> Duration {
    times.sort();
    times[(times.len() * q / 100).min(times.len() - 1)]
}

/// The lines of a frame, whether `Screen::render` hands out its own buffer or a fresh `Vec`.
fn as_lines<L: std::ops::Deref<Target = [String]>>(lines: &L) -> &[String] {
    lines
}

/// Frees what a frame leaves behind: the lines, when they were a fresh `Vec`.
fn release<T>(value: T) {
    drop(value);
}

/// One frame as the app draws it: the screen's lines, then the diff against the last frame.
fn frame(screen: &mut Screen, renderer: &mut Renderer, out: &mut Vec<u8>) -> usize {
    let lines = screen.render(WIDTH);
    out.clear();
    renderer.render(black_box(as_lines(&lines)), out);
    as_lines(&lines).len()
}

fn keystroke(messages: &[AgentMessage]) {
    let start = Instant::now();
    let mut screen = screen(messages);
    let built = start.elapsed();
    let mut renderer = Renderer::new(WIDTH, HEIGHT);
    renderer.set_show_hardware_cursor(true);
    let mut out = Vec::with_capacity(1 << 20);
    let start = Instant::now();
    let lines = frame(&mut screen, &mut renderer, &mut out);
    let first = start.elapsed();
    println!(
        "first frame, {lines} lines: {:.1} ms ({:.1} ms building the cards, {} bytes)",
        ms(first),
        ms(built),
        out.len()
    );

    let bindings = Keybindings::defaults();
    let (mut total, mut key_t, mut screen_t, mut diff_t) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut bytes = 0;
    for (i, c) in TYPED.chars().cycle().take(KEYS).enumerate() {
        // Keep the editor to one or two rows, as while typing a prompt.
        let key = if i % 150 == 149 {
            Key::ctrl('u')
        } else {
            Key::plain(KeyCode::Char(c))
        };
        let t0 = Instant::now();
        screen.editor.handle_key(&key, &bindings);
        let t1 = Instant::now();
        let lines = screen.render(WIDTH);
        let t2 = Instant::now();
        out.clear();
        renderer.render(black_box(as_lines(&lines)), &mut out);
        let t3 = Instant::now();
        release(black_box(lines));
        let t4 = Instant::now();
        key_t.push(t1 - t0);
        screen_t.push(t2 - t1);
        diff_t.push(t3 - t2);
        total.push(t4 - t0);
        bytes += out.len();
    }
    println!(
        "keystroke: median {:.3} ms, p90 {:.3} ms (handle_key {:.3}, Screen::render {:.3}, \
         Renderer::render {:.3}; {} bytes/frame)",
        ms(quantile(&mut total, 50)),
        ms(quantile(&mut total, 90)),
        ms(quantile(&mut key_t, 50)),
        ms(quantile(&mut screen_t, 50)),
        ms(quantile(&mut diff_t, 50)),
        bytes / KEYS
    );
}

fn event(value: serde_json::Value) -> AgentEvent {
    serde_json::from_value(value).expect("a valid event")
}

fn streaming(name: &str, messages: &[AgentMessage], seconds: f64) {
    let mut screen = screen(messages);
    let mut renderer = Renderer::new(WIDTH, HEIGHT);
    let mut out = Vec::with_capacity(1 << 20);
    frame(&mut screen, &mut renderer, &mut out);
    let text = stream_text((seconds * CHARS_PER_SECOND) as usize);
    let deltas: Vec<AgentEvent> = text
        .as_bytes()
        .chunks(DELTA_CHARS)
        .map(|piece| {
            event(json!({"type": "message_update", "usage": usage(),
                "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0,
                    "delta": String::from_utf8_lossy(piece)}}))
        })
        .collect();
    screen.transcript.apply(&AgentEvent::MessageStart {
        message: assistant(""),
    });
    screen
        .transcript
        .apply(&event(json!({"type": "message_update", "usage": usage(),
        "assistantMessageEvent": {"type": "text_start", "contentIndex": 0}})));
    let mut times = Vec::new();
    let mut bytes = 0;
    let start = Instant::now();
    for batch in deltas.chunks(DELTAS_PER_FRAME) {
        let t0 = Instant::now();
        for delta in batch {
            screen.transcript.apply(delta);
        }
        frame(&mut screen, &mut renderer, &mut out);
        times.push(t0.elapsed());
        bytes += out.len();
    }
    let busy = start.elapsed();
    let streamed = text.len() as f64 / CHARS_PER_SECOND;
    let frames = times.len();
    let last = times[frames - 1];
    println!(
        "streaming, {name}: {:.1} % of a core at 1,000 tokens/s ({frames} frames over {streamed:.1} s; \
         frame median {:.3} ms, p90 {:.3} ms, last {:.3} ms; {} bytes/frame)",
        ms(busy) / 10.0 / streamed,
        ms(quantile(&mut times, 50)),
        ms(quantile(&mut times, 90)),
        ms(last),
        bytes / frames
    );
}

fn main() {
    let messages = history();
    keystroke(&messages);
    streaming("empty transcript", &[], 10.0);
    streaming("10,000-line transcript", &messages, 10.0);
}
