//! Plan mode in a real pseudo-terminal: `/plan <task>` plans until the model submits, the
//! review opens by itself with the draft's revision (and again with `/plan`), and Implement
//! approves it and runs the plan.

use crate::tui_common;

use knightcode_testkit::ScriptedReply;
use serde_json::json;

#[test]
fn plan_review_in_the_terminal_implements_the_approved_plan() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call(
            "s1",
            "submit_plan",
            json!({"markdown": "# Plan\n\nTouch notes.txt.\n"}).to_string(),
        ),
        ScriptedReply::text("Implemented the plan."),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("/plan Tidy the notes");
    tui.wait_for_text("Plan revision 1 submitted");

    // The submission opens the review by itself.
    let screen = tui.wait_for_text("Keep planning");
    assert!(screen.contains("Plan revision 1"), "{screen}");
    // Kept planning, `/plan` opens it again.
    tui.send("\x1b");
    tui.wait_for("the review closed", |s| !s.contains("Keep planning"));
    tui.submit("/plan");
    let screen = tui.wait_for_text("Keep planning");
    assert!(screen.contains("Plan revision 1"), "{screen}");
    assert!(screen.contains("Implement"), "{screen}");
    assert!(screen.contains("Exit planning"), "{screen}");
    tui.send("\r");
    tui.wait_for_answer("Implemented the plan.");
    let requests = sandbox.server().requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["content"]
            .to_string()
            .contains("Implement the approved plan (revision 1)"),
        "{last}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// The last message of the `n`th request the mock received, as JSON text.
fn last_message(sandbox: &tui_common::Sandbox, n: usize) -> String {
    let requests = sandbox.server().requests();
    requests[n].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string()
}

#[test]
fn tab_adds_a_note_to_the_approval_in_the_review_picker() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call(
            "s1",
            "submit_plan",
            json!({"markdown": "# Plan\n\nTouch notes.txt.\n"}).to_string(),
        ),
        ScriptedReply::text("Implemented with the note."),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("/plan Tidy the notes");
    let screen = tui.wait_for_text("Keep planning");
    assert!(screen.contains("→ 1. Implement"), "{screen}");
    assert!(screen.contains("tab add a note"), "{screen}");
    assert!(screen.contains("Revise the plan"), "{screen}");
    tui.send("\t");
    tui.wait_for_text("note:");
    tui.send("keep the diff small");
    tui.wait_for_text("note: keep the diff small");
    tui.send("\r");
    tui.wait_for_answer("Implemented with the note.");
    let last = last_message(&sandbox, 1);
    assert!(
        last.contains("Implement the approved plan (revision 1)"),
        "{last}"
    );
    assert!(last.contains("keep the diff small"), "{last}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_typed_revision_request_goes_to_the_model_still_planning() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call(
            "s1",
            "submit_plan",
            json!({"markdown": "# Plan\n\nOne step.\n"}).to_string(),
        ),
        ScriptedReply::tool_call(
            "s2",
            "submit_plan",
            json!({"markdown": "# Plan\n\nTwo steps.\n"}).to_string(),
        ),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("/plan Tidy the notes");
    tui.wait_for_text("Keep planning");
    // Up from the first choice wraps to the typed row.
    tui.send("\x1b[A");
    tui.wait_for_text("→ 5. Revise the plan:");
    tui.send("Also update the README");
    tui.wait_for_text("Revise the plan: Also update the README");
    tui.send("\r");
    let screen = tui.wait_for("the second revision's review", |s| {
        s.contains("Plan revision 2") && s.contains("Keep planning")
    });
    assert!(screen.contains("Two steps."), "{screen}");
    // The request: the feedback, then the reminder that it is still planning.
    let messages = sandbox.server().requests()[1].body["messages"].to_string();
    assert!(messages.contains("Also update the README"), "{messages}");
    assert!(
        last_message(&sandbox, 1).contains("Still planning"),
        "{messages}"
    );
    tui.send("\x1b");
    tui.wait_for("the review closed", |s| !s.contains("Keep planning"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn ask_user_shows_descriptions_and_a_digit_answers() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call(
            "q1",
            "ask_user",
            json!({
                "question": "Which store should the cache use?",
                "options": [
                    {"label": "Redis", "description": "Shared between processes"},
                    {"label": "In memory", "description": "Fastest, lost on restart"}
                ]
            })
            .to_string(),
        ),
        ScriptedReply::text("Going with memory."),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("/plan Add a cache");
    let screen = tui.wait_for_text("Which store should the cache use?");
    assert!(screen.contains("Redis (recommended)"), "{screen}");
    assert!(screen.contains("Fastest, lost on restart"), "{screen}");
    assert!(screen.contains("Type your own answer"), "{screen}");
    tui.send("2");
    tui.wait_for_answer("Going with memory.");
    let last = last_message(&sandbox, 1);
    assert!(last.contains("The user answered: In memory"), "{last}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn slash_completion_offers_plan_unless_an_extension_replaced_it() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("/pla");
    tui.wait_for("/plan in the completion list", |s| {
        s.contains("/plan") && s.contains("Plan first")
    });
    leave(&mut tui);

    // An extension's /plan is the one listed (once).
    std::fs::write(
        sandbox.project.join("plan.ts"),
        r#"export default function (pi) {
  pi.registerCommand("plan", { description: "the extension's own planner", handler: async () => {} });
}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&["-e", "plan.ts"], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("/pla");
    let screen = tui.wait_for_text("the extension's own planner");
    assert!(!screen.contains("Plan first"), "{screen}");
    leave(&mut tui);
}

/// Closes the completion list, clears the editor and exits.
fn leave(tui: &mut tui_common::Tui) {
    tui.send("\x1b");
    tui.wait_for("the completion list closed", |s| !s.contains("→ /plan"));
    tui.send("\x03");
    tui.wait_for("the editor cleared", |s| !s.contains("/pla"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn plan_while_a_turn_runs_is_refused_rather_than_queued() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("the slow answer")
            .with_fault(knightcode_testkit::Fault::StallAfterEvents(1)),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("a long question");
    sandbox
        .server()
        .wait_until_blocking(|a| a.stalls >= 1, tui_common::WATCHDOG)
        .expect("the answer stalls");
    // Alt+Enter would queue a follow-up: an extension command cannot be queued (the
    // reference's words), and the text goes back to the editor.
    tui.send("/plan Tidy the notes");
    tui.send("\x1b\r");
    tui.wait_for_text("Extension command \"/plan\" cannot be queued.");
    tui.wait_for_text("/plan Tidy the notes");
    // Enter runs a command at once, even mid-turn: plan mode refuses to start now.
    tui.send("\r");
    let screen = tui.wait_for_text("Finish or interrupt the current turn first.");
    assert!(!screen.contains("Follow-up"), "nothing queued: {screen}");
    sandbox.server().release_stalls();
    tui.wait_for_answer("the slow answer");
    // The turn ended and no planning run followed it.
    assert_eq!(sandbox.server().requests().len(), 1);
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
