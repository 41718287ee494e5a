//! `/undo` in a real pseudo-terminal: the list of the branch's user messages with the files
//! an undo would restore, the restore question, files put back and the message text back in
//! the editor; escape at the question changes nothing; `/tree` asks the same question.

use crate::tui_common;

use knightcode_testkit::ScriptedReply;
use tui_common::Sandbox;

fn write_call(id: &str, path: &str, content: &str) -> ScriptedReply {
    let args = serde_json::json!({ "path": path, "content": content });
    ScriptedReply::tool_call(id, "write", args.to_string())
}

const ORIGINAL: &[u8] = b"kept\r\nbytes";

fn sandbox() -> Sandbox {
    let sandbox = tui_common::sandbox(vec![
        write_call("w1", "a.txt", "turn one\n"),
        ScriptedReply::text("first answer"),
        write_call("w2", "a.txt", "turn two\n"),
        write_call("w3", "made/b.txt", "made\n"),
        ScriptedReply::text("second answer"),
    ]);
    std::fs::write(sandbox.project.join("a.txt"), ORIGINAL).unwrap();
    sandbox
}

fn two_turns(tui: &mut tui_common::Tui) {
    tui.wait_for_text("mock-model");
    tui.submit("first question");
    tui.wait_for_answer("first answer");
    tui.submit("second question");
    tui.wait_for_answer("second answer");
}

#[test]
fn undo_lists_messages_asks_about_files_and_restores_them() {
    let sandbox = sandbox();
    let mut tui = sandbox.spawn(&[], 100, 40);
    two_turns(&mut tui);

    tui.submit("/undo");
    let screen = tui.wait_for_text("Undo to Message");
    // Oldest first, newest at the bottom, each with what an undo to it restores.
    let first = screen.find("first question").unwrap();
    let second = screen.rfind("second question").unwrap();
    assert!(first < second, "{screen}");
    // Both undo the second turn's two files (the first turn's a.txt is one of them).
    assert_eq!(screen.matches("restores 2 files").count(), 2, "{screen}");
    // Up to the first message, enter.
    tui.send("\x1b[A");
    tui.send("\r");
    let screen = tui.wait_for_text("Restore files?");
    assert!(screen.contains("Conversation only"), "{screen}");
    assert!(screen.contains("Conversation and 2 files"), "{screen}");
    tui.send("\x1b[B");
    tui.send("\r");
    let screen = tui.wait_for("the notice and the message back in the editor", |s| {
        s.contains("Restored 2 files")
            && s.split("branch from here.")
                .nth(1)
                .is_some_and(|editor| editor.contains("first question"))
    });
    assert!(!screen.contains("second answer"), "{screen}");
    assert_eq!(
        std::fs::read(sandbox.project.join("a.txt")).unwrap(),
        ORIGINAL
    );
    assert!(!sandbox.project.join("made/b.txt").exists());
    tui.send("\x03");
    tui.wait_for("an empty editor", |s| !s.contains("> first question"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn escape_at_the_restore_question_cancels_and_tree_asks_it_too() {
    let sandbox = sandbox();
    let mut tui = sandbox.spawn(&[], 100, 40);
    two_turns(&mut tui);

    tui.submit("/undo");
    tui.wait_for_text("Undo to Message");
    tui.send("\r");
    tui.wait_for_text("Restore files?");
    tui.send("\x1b");
    tui.wait_for("the question gone", |s| !s.contains("Restore files?"));
    // Nothing moved: the files and the conversation are as they were.
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("a.txt")).unwrap(),
        "turn two\n"
    );
    assert!(tui.screen().contains("second answer"));

    // /tree to the second question, no summary, conversation only: the files stay.
    tui.submit("/tree");
    tui.wait_for_text("second question");
    tui.send("second question");
    tui.wait_for_text("(1/1)");
    tui.send("\r");
    tui.wait_for_text("Summarize the branch you are leaving?");
    tui.send("\r");
    let screen = tui.wait_for_text("Restore files?");
    assert!(screen.contains("Conversation and 2 files"), "{screen}");
    tui.send("\r");
    tui.wait_for("the message back in the editor", |s| {
        s.split("branch from here.")
            .nth(1)
            .is_some_and(|editor| editor.contains("second question"))
    });
    assert!(sandbox.project.join("made/b.txt").exists());
    tui.send("\x03");
    tui.wait_for("an empty editor", |s| !s.contains("> second question"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
