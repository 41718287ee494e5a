//! The transcript's cards rendered to text: user prompts, replies with markdown and
//! thinking, tool calls (read, bash, edit diff, errors) collapsed and expanded, user shell
//! commands, notices; and the same cards built from streaming events.

use crate::common::usage;

use knightcode_interactive::transcript::Look;
use knightcode_interactive::transcript::Transcript;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_tui::Theme;
use knightcode_tui::width::visible_width;
use serde_json::json;

fn look() -> Look {
    Look {
        theme: Theme::plain(),
        cwd: "/work/project".into(),
        home: Some("/home/me".into()),
        tools_expanded: false,
        thinking_hidden: false,
        hidden_thinking_label: None,
        mark_wraps: false,
    }
}

fn message(value: serde_json::Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

fn assistant(content: serde_json::Value, stop: &str) -> AgentMessage {
    message(
        json!({"role": "assistant", "content": content, "api": "openai-completions",
                   "provider": "mock", "model": "m", "usage": usage(10, 5), "stopReason": stop,
                   "timestamp": 1}),
    )
}

fn tool_result(
    id: &str,
    name: &str,
    text: &str,
    details: serde_json::Value,
    error: bool,
) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": id, "toolName": name,
                   "content": [{"type": "text", "text": text}], "details": details,
                   "isError": error, "timestamp": 2}),
    )
}

fn conversation() -> Vec<AgentMessage> {
    let long_output: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    vec![
        message(
            json!({"role": "user", "content": "Fix the bug in **main.rs** please", "timestamp": 0}),
        ),
        assistant(
            json!([
                {"type": "thinking", "thinking": "The bug is probably an off-by-one."},
                {"type": "text", "text": "Let me look at `src/main.rs` first.\n\n- read it\n- fix it"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "/work/project/src/main.rs", "offset": 10, "limit": 5}},
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "cargo test"}},
                {"type": "toolCall", "id": "c3", "name": "edit", "arguments": {"path": "src/main.rs", "edits": []}},
                {"type": "toolCall", "id": "c4", "name": "grep", "arguments": {"pattern": "fn main", "path": "/home/me/other", "glob": "*.rs"}}
            ]),
            "toolUse",
        ),
        tool_result(
            "c1",
            "read",
            "fn main() {\n    let x = 1;\n}",
            json!(null),
            false,
        ),
        tool_result("c2", "bash", &long_output, json!(null), false),
        tool_result(
            "c3",
            "edit",
            "Successfully replaced 1 block(s) in src/main.rs.",
            json!({"diff": "  9 fn main() {\n-10     let x = 0;\n+10     let x = 1;\n 11 }"}),
            false,
        ),
        tool_result(
            "c4",
            "grep",
            "No such file or directory: /home/me/other",
            json!(null),
            true,
        ),
        message(
            json!({"role": "bashExecution", "command": "ls", "output": "Cargo.toml\nsrc", "exitCode": 0,
                       "cancelled": false, "truncated": false, "timestamp": 3}),
        ),
        message(
            json!({"role": "bashExecution", "command": "false", "output": "", "exitCode": 1,
                       "cancelled": false, "truncated": false, "excludeFromContext": true, "timestamp": 4}),
        ),
        assistant(
            json!([{"type": "text", "text": "Partial answer"}]),
            "aborted",
        ),
        message(
            json!({"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m",
                       "usage": usage(10, 5), "stopReason": "error", "errorMessage": "429 rate limited", "timestamp": 5}),
        ),
    ]
}

fn render(transcript: &mut Transcript, width: u16) -> String {
    let lines = transcript.render(width);
    for line in &lines {
        assert!(
            visible_width(line) <= usize::from(width),
            "too wide: {line:?}"
        );
    }
    lines.join("\n")
}

#[test]
fn a_conversation_renders_collapsed() {
    let mut transcript = Transcript::new(look());
    transcript.load(&conversation());
    insta::assert_snapshot!(render(&mut transcript, 72));
}

#[test]
fn expanded_tool_output_and_hidden_thinking() {
    let mut transcript = Transcript::new(look());
    transcript.load(&conversation());
    transcript.look.tools_expanded = true;
    transcript.look.thinking_hidden = true;
    transcript.invalidate();
    let text = render(&mut transcript, 72);
    assert!(
        text.contains("line 1\n") || text.contains(" line 1 "),
        "{text}"
    );
    assert!(text.contains("line 30"));
    assert!(
        !text.contains("more lines"),
        "nothing hidden when expanded: {text}"
    );
    assert!(text.contains("Thinking… (ctrl+t to show)"));
    assert!(!text.contains("off-by-one"));
}

#[test]
fn narrow_widths_never_overflow() {
    let mut transcript = Transcript::new(look());
    transcript.load(&conversation());
    for width in [10u16, 20, 33, 50] {
        render(&mut transcript, width);
    }
}

#[test]
fn streaming_events_build_the_same_cards() {
    let mut transcript = Transcript::new(look());
    let events: Vec<AgentEvent> = serde_json::from_value(json!([
        {"type": "message_start", "message": {"role": "user", "content": "hello", "timestamp": 0}},
        {"type": "message_end", "message": {"role": "user", "content": "hello", "timestamp": 0}},
        {"type": "message_start", "message": {"role": "assistant", "content": [], "api": "a", "provider": "p",
            "model": "m", "usage": usage(10, 5), "stopReason": "stop", "timestamp": 1}},
        {"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent": {"type": "text_start", "contentIndex": 0}},
        {"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "Listing "}},
        {"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "files."}},
        {"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent": {"type": "toolcall_start", "contentIndex": 1, "id": "c1", "toolName": "ls"}},
        {"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent": {"type": "toolcall_delta", "contentIndex": 1, "delta": "{\"path\": \"sr"}}
    ]))
    .unwrap();
    for event in &events {
        transcript.apply(event);
    }
    let mid = render(&mut transcript, 60);
    assert!(mid.contains("Listing files."), "{mid}");
    assert!(
        mid.contains("ls sr"),
        "partial arguments show while streaming: {mid}"
    );

    let rest: Vec<AgentEvent> = serde_json::from_value(json!([
        {"type": "message_end", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Listing files."},
            {"type": "toolCall", "id": "c1", "name": "ls", "arguments": {"path": "src"}}],
            "api": "a", "provider": "p", "model": "m", "usage": usage(10, 5), "stopReason": "toolUse", "timestamp": 1}},
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "ls", "args": {"path": "src"}},
        {"type": "tool_execution_update", "toolCallId": "c1", "toolName": "ls", "args": {"path": "src"},
            "partialResult": {"content": [{"type": "text", "text": "main.rs"}]}},
        {"type": "tool_execution_end", "toolCallId": "c1", "toolName": "ls",
            "result": {"content": [{"type": "text", "text": "main.rs\nlib.rs"}]}, "isError": false}
    ]))
    .unwrap();
    for event in &rest {
        transcript.apply(event);
    }
    let streamed = render(&mut transcript, 60);
    insta::assert_snapshot!(streamed);
    assert_eq!(transcript.len(), 3, "user, reply, one tool card");
}

/// A search index kept up to date with the lines `render_into` says it left in place, as
/// the fullscreen screen keeps it, against one built afresh.
#[derive(Default)]
struct Indexed(knightcode_tui::search::SearchIndex);

impl Indexed {
    fn check(&mut self, frame: &[String], kept: usize, step: usize) {
        self.0.sync(frame, kept);
        let mut fresh = knightcode_tui::search::SearchIndex::new();
        fresh.sync(frame, 0);
        for query in ["e", "the", "a l", "bash", "x = 1"] {
            self.0.find(query);
            fresh.find(query);
            let spots = |index: &knightcode_tui::search::SearchIndex| {
                (0..index.len())
                    .map(|i| index.segments(i))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                spots(&self.0),
                spots(&fresh),
                "{query:?} after event {step}"
            );
        }
    }
}

#[test]
fn incremental_frames_match_full_renders_after_every_change() {
    // `incremental` keeps its frame buffer across changes, as the screen does; `full`
    // renders from scratch every time.
    let mut incremental = Transcript::new(look());
    let mut full = Transcript::new(look());
    let mut frame = vec!["header".to_owned()];
    let mut index = Indexed::default();
    // A tool card in the middle finishes after later cards were added.
    let events: Vec<AgentEvent> = serde_json::from_value(json!([
        {"type": "message_start", "message": {"role": "user", "content": "go", "timestamp": 0}},
        {"type": "message_start", "message": {"role": "assistant", "content": [], "api": "a", "provider": "p",
            "model": "m", "usage": usage(10, 5), "stopReason": "stop", "timestamp": 1}},
        {"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "First.\n\nSecond paragraph"}},
        {"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": " grows.\n\n- a list"}},
        {"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent": {"type": "toolcall_start", "contentIndex": 1, "id": "c1", "toolName": "bash"}},
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {"command": "make"}},
        {"type": "message_start", "message": {"role": "user", "content": "later", "timestamp": 2}},
        {"type": "tool_execution_update", "toolCallId": "c1", "toolName": "bash", "args": {"command": "make"},
            "partialResult": {"content": [{"type": "text", "text": "building"}]}},
        {"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash",
            "result": {"content": [{"type": "text", "text": "built\nok"}]}, "isError": false}
    ]))
    .unwrap();
    for (step, event) in events.iter().enumerate() {
        incremental.apply(event);
        full.apply(event);
        let width = if step == events.len() - 1 { 40 } else { 60 };
        let kept = incremental.render_into(width, &mut frame, 1);
        assert_eq!(frame[1..], full.render(width)[..], "after event {step}");
        index.check(&frame, kept, step);
        // What the screen puts under the transcript.
        frame.push("editor".to_owned());
    }
}

#[test]
fn a_streaming_reply_updates_its_end_only_and_matches_a_fresh_render() {
    // A reply streams in small deltas (thinking, then markdown with code blocks that the
    // chunked renderer cuts between); after every delta the kept frame must equal the
    // whole transcript rendered by a new `Transcript` from the same events.
    let text = "# Plan\n\nFirst we read the file.\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n- one\n- two\n\n  more of two\n\nSetext heading\n---\n\nA paragraph that wraps around at a narrow width, twice over.\n\n```python\ndef f(x):\n    return x\n```\n\nDone.";
    let mut events = vec![
        json!({"type": "message_start", "message": {"role": "user", "content": "go", "timestamp": 0}}),
        json!({"type": "message_start", "message": {"role": "assistant", "content": [], "api": "a",
            "provider": "p", "model": "m", "usage": usage(10, 5), "stopReason": "stop", "timestamp": 1}}),
        json!({"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent":
            {"type": "thinking_start", "contentIndex": 0}}),
    ];
    for piece in ["Let me ", "think.\n\nSecond ", "thought."] {
        events.push(
            json!({"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent":
            {"type": "thinking_delta", "contentIndex": 0, "delta": piece}}),
        );
    }
    events.push(
        json!({"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent":
        {"type": "text_start", "contentIndex": 1}}),
    );
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(3) {
        let delta: String = piece.iter().collect();
        events.push(
            json!({"type": "message_update", "usage": usage(10, 5), "assistantMessageEvent":
            {"type": "text_delta", "contentIndex": 1, "delta": delta}}),
        );
    }
    let events: Vec<AgentEvent> = events
        .into_iter()
        .map(|e| serde_json::from_value(e).unwrap())
        .collect();
    let mut streaming = Transcript::new(look());
    let mut frame = vec!["header".to_owned()];
    let mut index = Indexed::default();
    for (step, event) in events.iter().enumerate() {
        streaming.apply(event);
        let kept = streaming.render_into(30, &mut frame, 1);
        index.check(&frame, kept, step);
        let mut fresh = Transcript::new(look());
        for earlier in &events[..=step] {
            fresh.apply(earlier);
        }
        assert_eq!(frame[1..], fresh.render(30)[..], "after event {step}");
        frame.push("editor".to_owned());
    }
    let last = frame[1..].join("\n");
    assert!(last.contains("fn main()"), "{last}");
    assert!(last.contains("Done."), "{last}");
}

#[test]
fn old_history_code_is_plain_and_the_newest_is_highlighted() {
    use knightcode_interactive::transcript::HISTORY_HIGHLIGHT_LINES;
    let code_lines = 20;
    let replies = HISTORY_HIGHLIGHT_LINES / code_lines + 5;
    let mut messages = Vec::new();
    for i in 0..replies {
        messages.push(message(
            json!({"role": "user", "content": format!("q{i}"), "timestamp": 0}),
        ));
        let code: Vec<String> = (0..code_lines)
            .map(|j| format!("fn reply_{i}_line_{j}() {{}}"))
            .collect();
        let text = format!("```rust\n{}\n```", code.join("\n"));
        messages.push(assistant(json!([{"type": "text", "text": text}]), "stop"));
    }
    let mut dark = look();
    dark.theme = Theme::dark();
    let mut transcript = Transcript::new(dark.clone());
    transcript.load(&messages);
    let lines = transcript.render(100);
    let line_of = |needle: &str| {
        lines
            .iter()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}"))
            .clone()
    };
    let plain = dark.theme.md_code_block.paint("fn reply_0_line_3() {}");
    assert!(
        line_of("reply_0_line_3").contains(&plain),
        "oldest code is plain"
    );
    let newest = line_of(&format!("reply_{}_line_3", replies - 1));
    assert!(
        !newest.contains(
            &dark
                .theme
                .md_code_block
                .paint(&format!("fn reply_{}_line_3() {{}}", replies - 1))
        ),
        "newest code is highlighted: {newest:?}"
    );
    // Within the budget, counted from the newest.
    let highlighted = (0..replies)
        .filter(|i| {
            let line = line_of(&format!("reply_{i}_line_3"));
            !line.contains(
                &dark
                    .theme
                    .md_code_block
                    .paint(&format!("fn reply_{i}_line_3() {{}}")),
            )
        })
        .count();
    assert_eq!(highlighted, HISTORY_HIGHLIGHT_LINES / code_lines);
}
