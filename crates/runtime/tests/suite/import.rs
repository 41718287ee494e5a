//! `/import`: a session file copied into the session folder, checked first.

use knightcode_runtime::export::import_file;
use knightcode_session::SessionStore;

fn fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi/simple/session.jsonl")
}

#[test]
fn a_session_is_copied_in_under_its_name_then_with_a_suffix() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let store = SessionStore::default();
    let first = import_file(&store, &sessions, &fixture()).unwrap();
    assert_eq!(first, sessions.join("session.jsonl"));
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(fixture()).unwrap()
    );
    let second = import_file(&store, &sessions, &fixture()).unwrap();
    assert_eq!(second, sessions.join("session-1.jsonl"));
    // A file already in the folder is opened where it is.
    assert_eq!(import_file(&store, &sessions, &first).unwrap(), first);
}

#[test]
fn bad_files_are_refused_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let store = SessionStore::default();
    let missing = dir.path().join("missing.jsonl");
    let error = import_file(&store, &sessions, &missing)
        .unwrap_err()
        .to_string();
    assert_eq!(error, format!("File not found: {}", missing.display()));

    let foreign = dir.path().join("notes.jsonl");
    std::fs::write(&foreign, "{\"role\":\"user\"}\n").unwrap();
    let error = import_file(&store, &sessions, &foreign)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(&format!("Cannot import {}", foreign.display())),
        "{error}"
    );
    assert!(error.contains("not a valid knightcode session"), "{error}");
    assert!(error.ends_with("Nothing was copied."), "{error}");

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    assert!(import_file(&store, &sessions, &empty).is_err());

    let text = dir.path().join("session.txt");
    std::fs::copy(fixture(), &text).unwrap();
    let error = import_file(&store, &sessions, &text)
        .unwrap_err()
        .to_string();
    assert!(error.contains("sessions are .jsonl files"), "{error}");
    assert!(!sessions.exists() || std::fs::read_dir(&sessions).unwrap().next().is_none());
}
