#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The interactive mode in a real pseudo-terminal against the scripted model: typing a
//! prompt, streaming text and tool calls, steering, aborting, resuming from the picker,
//! branching from /tree and resizing.

mod tui_common;

use knightcode_testkit::Chunking;
use knightcode_testkit::ScriptedReply;
use tui_common::Sandbox;
use tui_common::read_jsonl;

#[test]
fn a_prompt_streams_text_and_a_tool_call_then_exits_cleanly() {
    let sandbox = Sandbox::new(vec![
        ScriptedReply::default()
            .with_text("Let me read **the notes**.")
            .with_tool_call("call_1", "read", r#"{"path":"notes.txt"}"#)
            .with_chunking(Chunking::chars(3)),
        ScriptedReply::text("The notes say alpha, beta, gamma.").with_chunking(Chunking::chars(4)),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("what do the notes say?");
    tui.wait_for_text("The notes say alpha, beta, gamma.");
    let screen = tui.wait_for_text("read notes.txt");
    assert!(screen.contains("what do the notes say?"), "{screen}");
    assert!(
        screen.contains("Let me read the notes."),
        "markdown bold rendered: {screen}"
    );
    assert!(screen.contains("alpha"), "tool output shown: {screen}");
    // Ctrl+D on an empty editor quits; the transcript stays and a resume hint follows.
    tui.send("\x04");
    let code = tui.wait_exit();
    assert_eq!(code, 0);
    let history = tui.history().join("\n");
    assert!(
        history.contains("Resume this session with: knightcode --session"),
        "{history}"
    );
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1);
    let entries = read_jsonl(&files[0]);
    assert!(entries.iter().any(|e| e["message"]["role"] == "toolResult"));
}
