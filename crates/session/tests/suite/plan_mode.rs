//! Plan mode snapshots (`session-format.md`, "Plan mode snapshots"): the seed's snapshot
//! reads as its state and round-trips byte for byte, written snapshots have its shape, the
//! latest on the selected branch wins (also before a compaction), and malformed state is
//! refused rather than dropped.

use std::path::Path;

use crate::common;

use common::*;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::plan::MalformedPlanState;
use knightcode_protocol::plan::PlanDraft;
use knightcode_protocol::plan::PlanMode;
use knightcode_protocol::plan::PlanState;
use knightcode_session::NewCompaction;
use serde_json::json;

/// The seed's snapshot.
const SEED_SNAPSHOT: &str = r##"{"type":"custom","id":"plan1234","parentId":"prev1234","timestamp":"2024-12-03T14:20:00.000Z","customType":"plan-mode","data":{"mode":"off","draft":{"revision":2,"markdown":"# Changes\n..."},"approved":2}}"##;

fn seed_state() -> PlanState {
    PlanState {
        mode: PlanMode::Off,
        draft: Some(PlanDraft {
            revision: 2,
            markdown: "# Changes\n...".into(),
        }),
        approved: Some(2),
    }
}

#[test]
fn the_seed_snapshot_reads_as_its_state_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seed.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","id":"prev1234","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Plan it","timestamp":1733234401000}}"#,
        SEED_SNAPSHOT,
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let store = store();
    let session = store.open(&file, Path::new("/w")).unwrap();
    assert_eq!(session.plan_state(), Ok(Some(seed_state())));
    assert_eq!(
        context_of(&session),
        ["user:Plan it"],
        "never model context"
    );
    // Written back with every key and value (in the order pi writes a custom entry's keys).
    let entry: SessionEntry = serde_json::from_str(SEED_SNAPSHOT).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&entry).unwrap()).unwrap();
    let seed: serde_json::Value = serde_json::from_str(SEED_SNAPSHOT).unwrap();
    assert_eq!(written, seed);
}

#[test]
fn a_written_snapshot_has_the_seed_shape() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(user("Plan it")).unwrap();
    s.append_plan_state(&seed_state()).unwrap();
    let Some(SessionEntry::Custom(custom)) = s.leaf_entry() else {
        panic!("no custom entry");
    };
    assert_eq!(custom.custom_type, "plan-mode");
    assert_eq!(
        serde_json::to_string(custom.data.as_ref().unwrap()).unwrap(),
        r##"{"mode":"off","draft":{"revision":2,"markdown":"# Changes\n..."},"approved":2}"##
    );
    let planning = PlanState {
        mode: PlanMode::Planning,
        ..PlanState::default()
    };
    assert_eq!(planning.to_data(), json!({"mode": "planning"}));
}

#[test]
fn the_latest_snapshot_on_the_selected_branch_wins() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    assert_eq!(s.plan_state(), Ok(None), "never planned");
    let q1 = s.append_message(user("q1")).unwrap();
    let planning = PlanState {
        mode: PlanMode::Planning,
        ..PlanState::default()
    };
    s.append_plan_state(&planning).unwrap();
    let fork = s.append_message(user("q2")).unwrap();
    let submitted = PlanState {
        mode: PlanMode::Planning,
        draft: Some(PlanDraft {
            revision: 1,
            markdown: "# One".into(),
        }),
        approved: None,
    };
    s.append_plan_state(&submitted).unwrap();
    assert_eq!(s.plan_state(), Ok(Some(submitted.clone())));

    // Another branch from q2 does not see the draft made after it.
    s.navigate(&fork).unwrap();
    assert_eq!(s.plan_state(), Ok(Some(planning.clone())));
    s.append_message(user("other")).unwrap();
    assert_eq!(s.plan_state(), Ok(Some(planning)));
    // Before the first snapshot: off.
    s.navigate(&q1).unwrap();
    assert_eq!(s.plan_state(), Ok(None));
    assert_eq!(
        s.plan_state_at(Some(&fork)).unwrap().unwrap().mode,
        PlanMode::Planning
    );
}

#[test]
fn a_snapshot_before_a_compaction_still_counts() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(user("q1")).unwrap();
    let state = PlanState {
        mode: PlanMode::Planning,
        draft: Some(PlanDraft {
            revision: 3,
            markdown: "# Three".into(),
        }),
        approved: None,
    };
    s.append_plan_state(&state).unwrap();
    s.append_message(assistant("a1")).unwrap();
    let q2 = s.append_message(user("q2")).unwrap();
    s.append_message(assistant("a2")).unwrap();
    s.append_compaction(NewCompaction {
        summary: "sum".into(),
        first_kept_entry_id: Some(q2),
        tokens_before: 10,
        ..NewCompaction::default()
    })
    .unwrap();
    s.append_message(user("q3")).unwrap();
    assert_eq!(
        context_of(&s),
        [
            "system[]",
            "compaction:sum",
            "user:q2",
            "assistant:a2",
            "user:q3"
        ]
    );
    assert_eq!(
        s.plan_state(),
        Ok(Some(state)),
        "omitted from context, not from state"
    );
}

#[test]
fn malformed_snapshots_are_refused() {
    let cases = [
        (json!("planning"), MalformedPlanState::NotAnObject),
        (json!({"mode": "thinking"}), MalformedPlanState::Mode),
        (
            json!({"mode": "off", "draft": {"revision": 0, "markdown": "x"}}),
            MalformedPlanState::Draft,
        ),
        (
            json!({"mode": "off", "draft": {"revision": 1}}),
            MalformedPlanState::Draft,
        ),
        (
            json!({"mode": "off", "approved": "1"}),
            MalformedPlanState::Approved,
        ),
        (
            json!({"mode": "off", "draft": {"revision": 2, "markdown": "x"}, "approved": 1}),
            MalformedPlanState::ApprovedNotDraft {
                approved: 1,
                draft: Some(2),
            },
        ),
        (
            json!({"mode": "off", "approved": 1}),
            MalformedPlanState::ApprovedNotDraft {
                approved: 1,
                draft: None,
            },
        ),
        (
            json!({"mode": "planning", "draft": {"revision": 1, "markdown": "x"}, "approved": 1}),
            MalformedPlanState::ApprovedWhilePlanning,
        ),
    ];
    for (data, expected) in cases {
        assert_eq!(PlanState::from_data(Some(&data)), Err(expected), "{data}");
    }
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(user("q1")).unwrap();
    s.append_plan_state(&PlanState::default()).unwrap();
    s.append_custom_entry(
        "plan-mode",
        Some(json!({"mode": "planning", "approved": 4})),
    )
    .unwrap();
    assert!(
        s.plan_state().is_err(),
        "the latest one decides, and it is malformed"
    );
}
