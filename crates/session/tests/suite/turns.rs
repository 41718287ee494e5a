//! Turn boundaries (`session-format.md`, "Turn boundaries"): the seed's entries read as the
//! turns they describe, written entries have the seed's shape, and markers never reach context.

use std::path::Path;

use crate::common;

use common::*;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::TURN_END;
use knightcode_protocol::TURN_MARKER;
use knightcode_protocol::TurnEnd;
use knightcode_protocol::TurnError;
use knightcode_protocol::TurnErrorKind;
use knightcode_protocol::TurnStatus;
use knightcode_session::SessionStore;
use knightcode_session::fork_point;
use serde_json::Value;
use serde_json::json;

/// The seed's examples, with a prompt and a reply between them as a run writes them.
const SEED_COMPLETED: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-10-11T13:59:59.000Z","cwd":"/w"}
{"type":"message","id":"prev1234","parentId":null,"timestamp":"2026-10-11T13:59:59.500Z","message":{"role":"user","content":"earlier","timestamp":1791727199500}}
{"type":"custom","id":"turn1234","parentId":"prev1234","timestamp":"2026-10-11T14:00:00.000Z","customType":"knightcode.turn"}
{"type":"message","id":"user1234","parentId":"turn1234","timestamp":"2026-10-11T14:00:01.000Z","message":{"role":"user","content":"Hello","timestamp":1791727201000}}
{"type":"message","id":"reply123","parentId":"user1234","timestamp":"2026-10-11T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Hi!"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1791727202000}}
{"type":"custom","id":"end12345","parentId":"reply123","timestamp":"2026-10-11T14:00:05.000Z","customType":"knightcode.turnEnd","data":{"status":"completed"}}
"#;

const SEED_FAILED_END: &str = r#"{"type":"custom","id":"end54321","parentId":"reply123","timestamp":"2026-10-11T14:00:05.000Z","customType":"knightcode.turnEnd","data":{"status":"failed","error":{"message":"Too many requests","kind":"rateLimit"}}}"#;

fn open(dir: &Path, text: &str) -> (SessionStore, knightcode_session::SessionManager) {
    let file = dir.join("seed.jsonl");
    std::fs::write(&file, text).unwrap();
    let store = store();
    let session = store.open(&file, Path::new("/w")).unwrap();
    (store, session)
}

#[test]
fn the_seed_turn_reads_as_completed_with_its_times_and_stays_out_of_context() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, session) = open(dir.path(), SEED_COMPLETED);
    assert_eq!(
        session.turns(),
        [knightcode_session::Turn {
            id: "turn1234".into(),
            status: TurnStatus::Completed,
            error: None,
            started_at: "2026-10-11T14:00:00.000Z".into(),
            completed_at: Some("2026-10-11T14:00:05.000Z".into()),
        }]
    );
    assert_eq!(
        context_of(&session),
        ["user:earlier", "user:Hello", "assistant:Hi!"],
        "markers never enter model context"
    );
}

#[test]
fn the_seed_failed_end_reads_with_its_message_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let text = SEED_COMPLETED.replace(SEED_COMPLETED.lines().last().unwrap(), SEED_FAILED_END);
    let (_store, session) = open(dir.path(), &text);
    let turn = &session.turns()[0];
    assert_eq!(turn.status, TurnStatus::Failed);
    assert_eq!(
        turn.error,
        Some(TurnError {
            message: "Too many requests".into(),
            kind: TurnErrorKind::RateLimit,
        })
    );
}

#[test]
fn a_plain_string_error_reads_as_kind_other() {
    let data = json!({"status": "failed", "error": "socket hang up"});
    assert_eq!(
        TurnEnd::from_data(Some(&data)),
        Some(TurnEnd::failed("socket hang up", TurnErrorKind::Other))
    );
    let unknown = json!({"status": "failed", "error": {"message": "m", "kind": "cosmic"}});
    assert_eq!(
        TurnEnd::from_data(Some(&unknown)),
        Some(TurnEnd::failed("m", TurnErrorKind::Other))
    );
}

#[test]
fn a_marker_without_a_valid_end_reads_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    // A crash: the file ends after the reply.
    let crashed: String = SEED_COMPLETED
        .lines()
        .take(5)
        .map(|line| format!("{line}\n"))
        .collect();
    let (_store, session) = open(dir.path(), &crashed);
    let turns = session.turns();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].status, TurnStatus::Interrupted);
    assert_eq!(turns[0].completed_at, None);

    // An end whose data is not an end.
    let dir = tempfile::tempdir().unwrap();
    let broken = SEED_COMPLETED.replace(r#""data":{"status":"completed"}"#, r#""data":42"#);
    let (_store, session) = open(dir.path(), &broken);
    assert_eq!(session.turns()[0].status, TurnStatus::Interrupted);
}

#[test]
fn a_new_marker_closes_nothing_and_an_end_belongs_to_the_open_turn() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_turn_marker().unwrap();
    s.append_message(user("killed")).unwrap();
    let second = s.append_turn_marker().unwrap();
    s.append_message(user("q")).unwrap();
    s.append_message(assistant("a")).unwrap();
    s.append_turn_end(&TurnEnd::completed()).unwrap();
    // A stray end without an open turn changes nothing.
    s.append_turn_end(&TurnEnd::interrupted()).unwrap();
    let turns = s.turns();
    assert_eq!(
        turns.iter().map(|t| t.status).collect::<Vec<_>>(),
        [TurnStatus::Interrupted, TurnStatus::Completed]
    );
    assert_eq!(turns[1].id, second);
    assert_eq!(context_of(&s), ["user:killed", "user:q", "assistant:a"]);
}

#[test]
fn written_markers_have_the_seed_shape() {
    let dir = tempfile::tempdir().unwrap();
    let store = store();
    let mut s = store
        .create(dir.path(), Path::new("/w"), Default::default())
        .unwrap();
    let first = s.append_message(user("earlier")).unwrap();
    let marker = s.append_turn_marker().unwrap();
    s.append_message(user("Hello")).unwrap();
    let reply = s.append_message(assistant("Hi!")).unwrap();
    s.append_turn_end(&TurnEnd::failed(
        "Too many requests",
        TurnErrorKind::RateLimit,
    ))
    .unwrap();
    let lines: Vec<Value> = std::fs::read_to_string(s.session_file().unwrap())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let seed_marker: Value = serde_json::from_str(SEED_COMPLETED.lines().nth(2).unwrap()).unwrap();
    let seed_end: Value = serde_json::from_str(SEED_FAILED_END).unwrap();
    let keys = |v: &Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let written_marker = &lines[2];
    assert_eq!(keys(written_marker), keys(&seed_marker));
    assert_eq!(written_marker["customType"], TURN_MARKER);
    assert_eq!(written_marker["id"], marker.as_str());
    assert_eq!(written_marker["parentId"], first.as_str());
    let written_end = &lines[5];
    assert_eq!(keys(written_end), keys(&seed_end));
    assert_eq!(written_end["customType"], TURN_END);
    assert_eq!(written_end["parentId"], reply.as_str());
    // The data byte for byte.
    assert_eq!(
        serde_json::to_string(&written_end["data"]).unwrap(),
        serde_json::to_string(&seed_end["data"]).unwrap()
    );
    assert_eq!(
        serde_json::to_string(&TurnEnd::completed().to_data()).unwrap(),
        r#"{"status":"completed"}"#
    );
    // The seed's lines read as custom entries and write back with the same keys and values.
    for seed in [&seed_marker, &seed_end] {
        let entry: SessionEntry = serde_json::from_value(seed.clone()).unwrap();
        assert!(matches!(entry, SessionEntry::Custom(_)));
        assert_eq!(&serde_json::to_value(&entry).unwrap(), seed);
    }
}

#[test]
fn forking_from_a_prompt_leaves_its_turn_marker_behind() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    let before = s.append_message(user("earlier")).unwrap();
    s.append_turn_marker().unwrap();
    let prompt = s.append_message(user("again")).unwrap();
    let (parent, text) = fork_point(&s, &prompt).unwrap();
    assert_eq!(parent.as_deref(), Some(before.as_str()));
    assert_eq!(text, "again");
}
