//! Plan mode in a real pseudo-terminal: `/plan <task>` plans until the model submits, `/plan`
//! opens the review with the draft's revision, and Implement approves it and runs the plan.

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
