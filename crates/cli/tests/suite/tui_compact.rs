//! `/compact` in a real pseudo-terminal: the working row while the summary is written, the
//! summary card afterwards (collapsed, ctrl+o expands it), the footer's context figure, and
//! escape cancelling a compaction; `/tree` summarising the branch it leaves.

use crate::common::usage;
use crate::tui_common;

use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use tui_common::Sandbox;
use tui_common::read_jsonl;

const SUMMARY: &str = "## Goal\nKeep the parser tests green\n\n## Progress\n### Done\n- [x] first step\n- [x] second step\n- [x] third step\n\n## Next Steps\n1. FINAL-STEP";

fn sandbox(summary: ScriptedReply) -> Sandbox {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("first answer"),
        ScriptedReply::text("second answer"),
        summary,
        // A response with usage: the footer has a figure again.
        ScriptedReply::text("third answer").with_usage(usage(2_000, 10)),
    ]);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"compaction": {"keepRecentTokens": 5}}"#,
    )
    .unwrap();
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
fn compact_shows_progress_then_the_summary_card_and_the_footer_follows() {
    let sandbox = sandbox(ScriptedReply::text(SUMMARY).with_fault(Fault::StallAfterEvents(1)));
    let mut tui = sandbox.spawn(&[], 100, 40);
    two_turns(&mut tui);
    let before = tui.wait_for("the footer's context figure", |s| {
        s.contains("%/128k (auto)")
    });
    assert!(!before.contains("?/128k"), "{before}");

    tui.submit("/compact focus on the tests");
    sandbox
        .server()
        .wait_until_blocking(|a| a.stalls >= 1, tui_common::WATCHDOG)
        .expect("the summary request stalls");
    tui.wait_for_text("Compacting conversation…");
    sandbox.server().release_stalls();
    let screen = tui.wait_for_text("tokens of earlier conversation summarised");
    assert!(screen.contains("Keep the parser tests green"), "{screen}");
    assert!(screen.contains("ctrl+o to expand"), "{screen}");
    assert!(!screen.contains("FINAL-STEP"), "collapsed: {screen}");
    let screen = tui.wait_for("the unknown context after compaction", |s| {
        s.contains("?/128k (auto)") && !s.contains("Compacting conversation…")
    });
    assert!(
        screen.contains("second answer"),
        "the transcript stays: {screen}"
    );

    tui.send("\x0f");
    tui.wait_for_text("FINAL-STEP");

    let summary_request = sandbox.server().requests()[2].body.to_string();
    assert!(
        summary_request.contains("Additional focus: focus on the tests"),
        "{summary_request}"
    );
    // The next prompt continues from the summary and gives the footer a figure again.
    tui.submit("third question");
    tui.wait_for_text("third answer");
    tui.wait_for("a context figure again", |s| {
        s.contains("%/128k (auto)") && !s.contains("?/128k")
    });
    let next = sandbox.server().requests()[3].body.to_string();
    assert!(next.contains("Keep the parser tests green"), "{next}");
    assert!(!next.contains("first question"), "{next}");

    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let entries = read_jsonl(&sandbox.session_files()[0]);
    assert!(entries.iter().any(|e| e["type"] == "compaction"));
}

#[test]
fn escape_cancels_a_compaction_and_the_session_stays_as_it_was() {
    let sandbox = sandbox(ScriptedReply::text(SUMMARY).with_fault(Fault::StallAfterEvents(1)));
    let mut tui = sandbox.spawn(&[], 100, 40);
    two_turns(&mut tui);
    tui.submit("/compact");
    sandbox
        .server()
        .wait_until_blocking(|a| a.stalls >= 1, tui_common::WATCHDOG)
        .expect("the summary request stalls");
    tui.wait_for_text("Compacting conversation…");
    tui.send("\x1b");
    let screen = tui.wait_for("the cancel notice", |s| {
        s.contains("Compaction cancelled.") && !s.contains("Compacting conversation…")
    });
    assert!(!screen.contains("summarised"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let entries = read_jsonl(&sandbox.session_files()[0]);
    assert!(!entries.iter().any(|e| e["type"] == "compaction"));
}

#[test]
fn compact_on_a_new_session_says_there_is_nothing_to_compact() {
    let sandbox = tui_common::sandbox(Vec::new());
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/compact");
    tui.wait_for_text("Nothing to compact (session too small)");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn tree_can_summarize_the_branch_it_leaves() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("first answer"),
        ScriptedReply::text("second answer"),
        ScriptedReply::text("## Goal\nBRANCH-WORK-SUMMARISED"),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    two_turns(&mut tui);
    tui.submit("/tree");
    tui.wait_for_text("second question");
    tui.send("second question");
    tui.wait_for_text("(1/1)");
    tui.send("\r");
    tui.wait_for_text("Summarize the branch you are leaving?");
    // Down to "Summarize with custom prompt", type a focus.
    tui.send("\x1b[B");
    tui.send("\x1b[B");
    tui.send("\r");
    tui.wait_for_text("Focus for the summary");
    tui.send("the answers");
    tui.send("\r");
    // The card, and the left prompt back in the editor (below the transcript's rule).
    let screen = tui.wait_for(
        "the branch summary card and the prompt in the editor",
        |s| {
            s.contains("Summary of the branch left behind")
                && !s.contains("Summarizing the branch")
                && s.split("branch from here.")
                    .nth(1)
                    .is_some_and(|editor| editor.contains("second question"))
        },
    );
    assert!(screen.contains("BRANCH-WORK-SUMMARISED"), "{screen}");
    assert!(!screen.contains("second answer"), "{screen}");
    let request = sandbox.server().requests()[2].body.to_string();
    assert!(
        request.contains("Additional focus: the answers"),
        "{request}"
    );
    // Ctrl+C clears the editor, then ctrl+d quits.
    tui.send("\x03");
    tui.wait_for("an empty editor", |s| !s.contains("> second question"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let entries = read_jsonl(&sandbox.session_files()[0]);
    assert!(entries.iter().any(|e| e["type"] == "branch_summary"));
}
