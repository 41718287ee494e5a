//! The reference's example extensions that ask the model themselves from the terminal:
//! `qna` and `handoff` wait behind a `BorderedLoader` (escape cancels it) and then hand
//! the model's answer to the editor or to a new session. The examples come from the npm
//! package at test time (`ext_examples/corpus.rs`).

use super::ext_examples::corpus;
use crate::tui_common;

use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use tui_common::Sandbox;

const ESC: &str = "\x1b";

fn start_with(example: &str, replies: Vec<ScriptedReply>) -> (Sandbox, tui_common::Tui) {
    let sandbox = tui_common::sandbox(replies);
    let path = corpus::corpus().original.join(example);
    let tui = sandbox.spawn(&["-e", path.to_str().unwrap()], 100, 34);
    (sandbox, tui)
}

#[test]
fn qna_extracts_the_questions_behind_a_loader_into_the_editor_and_escape_cancels() {
    let (sandbox, mut tui) = start_with(
        "qna.ts",
        vec![
            ScriptedReply::text("Which database do you use? And on which port?"),
            ScriptedReply::text("Q: Which database do you use?\nA: "),
            ScriptedReply::text("never seen").with_fault(Fault::StallAfterEvents(1)),
        ],
    );
    tui.wait_for_text("mock-model");
    tui.submit("set up the service");
    tui.wait_for_answer("Which database do you use? And on which port?");
    tui.submit("/qna");
    tui.wait_for("the questions in the editor", |s| {
        s.contains("Questions loaded. Edit and submit when ready.")
            && s.contains("Q: Which database do you use?")
    });
    // The extraction got the last answer, under the example's own system prompt.
    let requests = sandbox.server().requests();
    let extraction = requests[1].body.to_string();
    assert!(
        extraction.contains("Which database do you use? And on which port?"),
        "{extraction}"
    );
    assert!(!extraction.contains("set up the service"), "{extraction}");

    // A second extraction that never answers: the loader waits, escape cancels it.
    tui.send("\x03");
    tui.wait_for("an empty editor", |s| !s.contains("Q: Which database"));
    tui.submit("/qna");
    let screen = tui.wait_for("the loader", |s| {
        s.contains("Extracting questions using mock-model...") && s.contains("cancel")
    });
    assert!(
        screen.contains("───"),
        "the loader sits between two rules:\n{screen}"
    );
    tui.send(ESC);
    tui.wait_for("the cancel notice", |s| {
        s.contains("Cancelled") && !s.contains("Extracting questions")
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn handoff_writes_a_prompt_lets_it_be_edited_and_opens_a_new_session_with_it() {
    let (sandbox, mut tui) = start_with(
        "handoff.ts",
        vec![
            ScriptedReply::text("The parser is done; tests are next."),
            ScriptedReply::text("Continue from the finished parser: write its tests."),
            ScriptedReply::text("Writing the lexer tests first."),
        ],
    );
    tui.wait_for_text("mock-model");
    tui.submit("write the parser");
    tui.wait_for_answer("The parser is done; tests are next.");
    tui.submit("/handoff write the tests");
    tui.wait_for("the prompt to edit", |s| {
        s.contains("Edit handoff prompt")
            && s.contains("Continue from the finished parser: write its tests.")
    });
    // The handoff request carries the conversation as text and the goal.
    let request = sandbox.server().requests()[1].body.to_string();
    assert!(request.contains("[User]: write the parser"), "{request}");
    assert!(
        request.contains("[Assistant]: The parser is done; tests are next."),
        "{request}"
    );
    assert!(request.contains("write the tests"), "{request}");
    tui.send(" Start with the lexer.\r");
    // A new session: the old conversation is gone and the prompt waits in the editor.
    let screen = tui.wait_for("the new session with the prompt", |s| {
        s.contains("Handoff ready. Submit when ready.")
            && s.contains("write its tests. Start with the lexer.")
            && !s.contains("The parser is done")
    });
    assert!(!screen.contains("Edit handoff prompt"), "{screen}");
    // Sent, it starts the new session's conversation, which names the old one as its parent.
    tui.send("\r");
    tui.wait_for_answer("Writing the lexer tests first.");
    let request = sandbox.server().requests()[2].body.to_string();
    assert!(request.contains("Start with the lexer."), "{request}");
    assert!(!request.contains("write the parser"), "{request}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let files = sandbox.session_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let old = texts
        .iter()
        .find(|t| t.contains("write the parser"))
        .unwrap();
    let new = texts
        .iter()
        .find(|t| t.contains("Start with the lexer."))
        .unwrap();
    assert!(!old.contains("\"parentSession\""), "{old}");
    assert!(new.contains("\"parentSession\""), "{new}");
}
