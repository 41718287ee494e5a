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
