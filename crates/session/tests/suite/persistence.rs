#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! The file on disk: lazy creation, append-only writes, reopen, migrations and repair.

use crate::common;

use std::path::Path;
use std::path::PathBuf;

use common::*;
use knightcode_protocol::Content;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::Usage;
use knightcode_session::LoadWarning;
use knightcode_session::NewCompaction;
use knightcode_session::NewSession;
use knightcode_session::SessionError;
use knightcode_session::list;

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn nothing_is_written_before_the_first_message_and_a_prompt_is_stored_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = store();
    let mut s = store
        .create(dir.path(), Path::new("/proj"), NewSession::default())
        .unwrap();
    s.append_thinking_level_change("high").unwrap();
    assert!(
        jsonl_files(dir.path()).is_empty(),
        "no file before a prompt"
    );
    assert!(!s.is_persisted());
    // The accepted prompt is on disk before any answer: a crash now loses nothing the
    // agent acknowledged (the reference waits for the first reply).
    s.append_message(user("hello")).unwrap();
    assert!(s.is_persisted());
    let files = jsonl_files(dir.path());
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(
        text.lines().count(),
        3,
        "header + 2 entries written at once"
    );
    s.append_message(assistant("hi")).unwrap();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "header + 3 entries");
    assert!(lines[0].starts_with(r#"{"type":"session","version":3,"id":""#));
    assert!(lines[0].contains(r#""cwd":"/proj""#));
    // File name is <iso with : and . replaced>_<id>.jsonl
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.ends_with(&format!("_{}.jsonl", s.session_id())),
        "{name}"
    );
    assert!(name.starts_with("2026-01-02T03-04-05-"), "{name}");
    // Later entries are appended one line each.
    s.append_message(user("again")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&files[0]).unwrap().lines().count(),
        5
    );
}

#[test]
fn every_entry_type_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = store();
    let path;
    let expected: Vec<SessionEntry>;
    {
        let mut s = store
            .create(dir.path(), Path::new("/proj"), NewSession::default())
            .unwrap();
        s.append_message(system(&[("preamble", Some("P"))], &["read"], &[]))
            .unwrap();
        let q = s.append_message(user("q")).unwrap();
        s.append_message(assistant("a")).unwrap();
        s.append_message(tool_result("c", "r")).unwrap();
        s.append_model_change("openai", "gpt-4o").unwrap();
        s.append_thinking_level_change("low").unwrap();
        s.append_usage("cache_warm", "anthropic", "claude", Usage::default(), None)
            .unwrap();
        s.append_context_edit(&q, Some(Content::Text("Q".into())))
            .unwrap();
        s.append_custom_entry("ext", Some(serde_json::json!({"count": 42})))
            .unwrap();
        s.append_custom_message(
            "ext",
            Content::Text("m".into()),
            false,
            Some(serde_json::json!({"k":1})),
        )
        .unwrap();
        s.set_label(&q, Some("start")).unwrap();
        s.set_session_name("named").unwrap();
        s.append_compaction(NewCompaction {
            summary: "sum".into(),
            first_kept_entry_id: Some(q.clone()),
            tokens_before: 1234,
            details: Some(serde_json::json!({"readFiles": [], "modifiedFiles": ["a"]})),
            ..NewCompaction::default()
        })
        .unwrap();
        s.branch_with_summary(Some(&q), "left", None, None, Some(false))
            .unwrap();
        path = s.session_file().unwrap().to_owned();
        expected = s.entries().to_vec();
        s.close();
        assert!(matches!(
            s.append_message(user("late")),
            Err(SessionError::Closed { .. })
        ));
    }
    let reopened = store.open(&path, Path::new("/other")).unwrap();
    assert_eq!(reopened.entries(), &expected[..]);
    assert_eq!(reopened.session_name(), Some("named"));
    assert!(reopened.warnings().is_empty(), "{:?}", reopened.warnings());
    assert_eq!(reopened.cwd(), "/proj", "cwd comes from the header");
    let kinds: Vec<&str> = expected.iter().map(|e| e.tag()).collect();
    for kind in [
        "message",
        "model_change",
        "thinking_level_change",
        "usage",
        "context_edit",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "compaction",
        "branch_summary",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing");
    }
}

#[test]
fn opening_a_missing_path_creates_there_and_an_empty_file_is_initialised() {
    let dir = tempfile::tempdir().unwrap();
    let store = store();
    let missing = dir.path().join("chosen.jsonl");
    let mut s = store.open(&missing, Path::new("/p")).unwrap();
    assert!(!missing.exists());
    s.append_message(user("u")).unwrap();
    assert!(missing.exists());
    s.append_message(assistant("a")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&missing).unwrap().lines().count(),
        3
    );
    drop(s);

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let s = store.open(&empty, Path::new("/p")).unwrap();
    let text = std::fs::read_to_string(&empty).unwrap();
    assert!(text.starts_with(r#"{"type":"session","version":3"#));
    assert!(s.entries().is_empty());
}

#[test]
fn a_file_without_header_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, "{\"type\":\"message\",\"id\":\"x\"}\n").unwrap();
    let error = store().open(&path, Path::new("/p")).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "Session file is not a valid knightcode session: {}",
            path.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"type\":\"message\",\"id\":\"x\"}\n",
        "untouched"
    );
}

fn write_session(dir: &Path, lines: &[&str]) -> PathBuf {
    let path = dir.join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

const HEADER_V3: &str = r#"{"type":"session","version":3,"id":"sid","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

#[test]
fn torn_last_line_is_repaired_at_every_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let store = store();
    let complete = [
        HEADER_V3,
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"second","timestamp":2}}"#,
    ];
    let full = complete.join("\n") + "\n";
    let last_start = full.len() - complete[2].len() - 1;
    for cut in last_start..=full.len() {
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &full.as_bytes()[..cut]).unwrap();
        let _ = std::fs::remove_file(dir.path().join("s.jsonl.torn"));
        let mut s = store
            .open(&path, Path::new("/p"))
            .unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        let kept_last = cut >= full.len() - 1;
        let expected = if kept_last { 2 } else { 1 };
        assert_eq!(s.entries().len(), expected, "cut at {cut}");
        let torn = cut > last_start && !kept_last;
        assert_eq!(
            s.warnings()
                .iter()
                .any(|w| matches!(w, LoadWarning::TornTail { .. })),
            torn,
            "cut at {cut}"
        );
        assert_eq!(
            dir.path().join("s.jsonl.torn").exists(),
            torn,
            "cut bytes set aside at {cut}"
        );
        // Appending after the repair yields a clean file that reopens without warnings.
        s.append_message(user("after")).unwrap();
        drop(s);
        let reopened = store.open(&path, Path::new("/p")).unwrap();
        assert!(
            reopened.warnings().is_empty(),
            "cut {cut}: {:?}",
            reopened.warnings()
        );
        assert_eq!(reopened.entries().len(), expected + 1, "cut {cut}");
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
    }
}

#[test]
fn malformed_middle_lines_are_skipped_and_never_hide_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            HEADER_V3,
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"one","timestamp":1}}"#,
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{"role":"#,
            "not json at all",
            r#"{"type":"message","id":"a3","parentId":"a1","timestamp":"t","message":{"role":"user","content":"three","timestamp":3}}"#,
        ],
    );
    let before = std::fs::read(&path).unwrap();
    let s = store().open(&path, Path::new("/p")).unwrap();
    assert_eq!(s.entries().len(), 2);
    assert_eq!(context_of(&s), ["user:one", "user:three"]);
    let malformed = s
        .warnings()
        .iter()
        .filter(|w| matches!(w, LoadWarning::MalformedLine { .. }))
        .count();
    assert_eq!(malformed, 2);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is not rewritten"
    );
}

#[test]
fn orphans_join_the_entry_before_them_and_cycles_are_broken() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            HEADER_V3,
            r#"{"type":"message","id":"a1","parentId":"a3","timestamp":"t1","message":{"role":"user","content":"1","timestamp":1}}"#,
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"t2","message":{"role":"user","content":"2","timestamp":1}}"#,
            r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"t3","message":{"role":"user","content":"3","timestamp":1}}"#,
            r#"{"type":"message","id":"b1","parentId":"ghost","timestamp":"t4","message":{"role":"user","content":"orphan","timestamp":1}}"#,
        ],
    );
    let mut s = store().open_read_only(&path).unwrap();
    assert!(
        s.warnings()
            .iter()
            .any(|w| matches!(w, LoadWarning::Cycle { .. }))
    );
    assert!(
        s.warnings()
            .iter()
            .any(|w| matches!(w, LoadWarning::Orphan { .. }))
    );
    // b1's parent is lost: it hangs under a3, the entry before it, instead of starting a
    // history of its own.
    assert_eq!(context_of(&s), ["user:2", "user:3", "user:orphan"]);
    s.navigate("a3").unwrap();
    // a1 -> a3 -> a2 -> a1 is cut where the walk from a1 closes the loop (at a2).
    assert_eq!(context_of(&s), ["user:2", "user:3"]);
    assert_eq!(s.forest().roots.len(), 1);
}

#[test]
fn v1_files_migrate_to_v3_with_ids_and_kept_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            r#"{"type":"session","id":"old","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"q1","timestamp":1}}"#,
            r#"{"type":"message","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"ext","content":"hooked","display":true,"timestamp":2}}"#,
            r#"{"type":"message","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"user","content":"q2","timestamp":3}}"#,
            r#"{"type":"compaction","timestamp":"2024-01-01T00:00:04.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":10}"#,
        ],
    );
    let original = std::fs::read(&path).unwrap();
    let store = store();
    // A read-only open migrates in memory and leaves the file alone.
    let read_only = store.open_read_only(&path).unwrap();
    assert_eq!(context_of(&read_only), ["compaction:S", "user:q2"]);
    assert_eq!(std::fs::read(&path).unwrap(), original);
    drop(read_only);

    let s = store.open(&path, Path::new("/p")).unwrap();
    assert_eq!(s.header().version, Some(3));
    let ids: Vec<String> = s.entries().iter().map(|e| e.id().to_owned()).collect();
    assert!(ids.iter().all(|id| id.len() == 8));
    assert_eq!(s.entries()[0].parent_id(), None);
    assert_eq!(s.entries()[1].parent_id(), Some(ids[0].as_str()));
    let SessionEntry::Compaction(compaction) = &s.entries()[3] else {
        panic!()
    };
    assert_eq!(compaction.first_kept_entry_id, ids[2]);
    assert!(!compaction.extra.contains_key("firstKeptEntryIndex"));
    assert_eq!(s.entries()[1].message().unwrap().role(), "custom");
    assert_eq!(context_of(&s), ["compaction:S", "user:q2"]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(r#"{"type":"session","version":3,"id":"old""#));
    assert!(text.contains(r#""role":"custom""#));
    assert!(
        dir.path().join("s.jsonl.pre-v3.bak").exists(),
        "original kept"
    );
    drop(s);
    // Reopening does not migrate again.
    let again = store.open(&path, Path::new("/p")).unwrap();
    assert_eq!(again.entries()[0].id(), ids[0]);
}

#[test]
fn v2_files_rename_hook_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            r#"{"type":"session","version":2,"id":"v2","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"h1","parentId":null,"timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"c","display":false,"timestamp":2}}"#,
        ],
    );
    let s = store().open(&path, Path::new("/p")).unwrap();
    assert_eq!(s.entries()[0].id(), "h1", "v2 ids are kept");
    assert_eq!(context_of(&s), ["custom:c"]);
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains(r#""version":3"#)
    );
}

#[test]
fn fork_and_clone_copy_the_right_entries() {
    let dir = tempfile::tempdir().unwrap();
    let store = store();
    let mut s = store
        .create(dir.path(), Path::new("/p"), NewSession::default())
        .unwrap();
    let q1 = s.append_message(user("q1")).unwrap();
    let a1 = s.append_message(assistant("a1")).unwrap();
    s.set_label(&q1, Some("start")).unwrap();
    let q2 = s.append_message(user("q2")).unwrap();
    s.append_message(assistant("a2")).unwrap();

    // /fork from q2: the new session ends at q2's parent; q2's text goes back to the editor.
    let (fork_leaf, text) = knightcode_session::fork_point(&s, &q2).unwrap();
    assert_eq!(text, "q2");
    assert!(knightcode_session::fork_point(&s, &a1).is_err());
    let fork = store.create_branched(&s, fork_leaf.as_deref()).unwrap();
    assert_eq!(context_of(&fork), ["user:q1", "assistant:a1"]);
    assert_eq!(fork.label(&q1), Some("start"), "labels re-added");
    assert!(matches!(
        fork.entries().last(),
        Some(SessionEntry::Label(_))
    ));
    assert_eq!(
        fork.header().parent_session.as_deref(),
        Some(s.session_file().unwrap().to_str().unwrap())
    );
    assert!(
        fork.is_persisted(),
        "contains an assistant message: written at once"
    );
    assert_eq!(fork.entries()[0].id(), q1, "ids preserved");

    // /clone: copy of the active branch.
    let clone = store.create_branched(&s, s.leaf_id()).unwrap();
    assert_eq!(
        context_of(&clone),
        ["user:q1", "assistant:a1", "user:q2", "assistant:a2"]
    );

    // --fork <file>: every entry verbatim into a new file for another cwd.
    let source = s.session_file().unwrap().to_owned();
    let other = tempfile::tempdir().unwrap();
    let forked = store
        .fork_from(&source, other.path(), Path::new("/q"), None)
        .unwrap();
    assert_eq!(forked.entries(), s.entries());
    assert_eq!(forked.cwd(), "/q");
    assert_ne!(forked.session_id(), s.session_id());
    assert!(matches!(
        store.fork_from(
            &other.path().join("none.jsonl"),
            other.path(),
            Path::new("/q"),
            None
        ),
        Err(SessionError::Io { .. } | SessionError::InvalidForkSource { .. })
    ));
}

#[test]
fn custom_session_ids_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let error = store()
        .create(
            dir.path(),
            Path::new("/p"),
            NewSession {
                session_id: Some("-bad".into()),
                ..NewSession::default()
            },
        )
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("Session id must be non-empty")
    );
}

#[test]
fn listing_reads_without_touching_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = store();
    let mut paths = Vec::new();
    for (i, cwd) in ["/p", "/p", "/other"].iter().enumerate() {
        let mut s = store
            .create(dir.path(), Path::new(cwd), NewSession::default())
            .unwrap();
        s.append_message(user(&format!("question {i}"))).unwrap();
        s.append_message(assistant(&format!("answer {i}"))).unwrap();
        if i == 1 {
            s.set_session_name("second").unwrap();
        }
        paths.push(s.session_file().unwrap().to_owned());
    }
    let all = list::list_sessions(dir.path(), None);
    assert_eq!(all.len(), 3);
    let mine = list::list_sessions(dir.path(), Some(Path::new("/p")));
    assert_eq!(mine.len(), 2);
    let named = mine.iter().find(|i| i.name.is_some()).unwrap();
    assert_eq!(named.name.as_deref(), Some("second"));
    assert_eq!(named.first_message, "question 1");
    assert_eq!(named.message_count, 2);
    assert_eq!(named.all_messages_text, "question 1 answer 1");
    let recent = list::most_recent_session(dir.path(), Some(Path::new("/p"))).unwrap();
    assert!(paths[..2].contains(&recent));
    let id = mine[0].id.clone();
    // The first 13 characters of a v7 id are its timestamp, which the fixed test clock makes
    // the same for every session; a prefix reaching into the random part is unique.
    assert_eq!(
        list::find_session(dir.path(), None, &id[..28]),
        Some(mine[0].path.clone())
    );
}

#[test]
fn large_files_with_damage_load_like_small_ones() {
    // Over 2 MiB, so loading takes the parallel chunked path; damage sits on chunk seams.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut text = String::from(HEADER_V3);
    text.push('\n');
    let filler = "x".repeat(700);
    let mut expected = Vec::new();
    let mut line_no = 1;
    let mut damaged_lines = Vec::new();
    for i in 0..4000 {
        line_no += 1;
        let line = match i {
            1000 => r#"{"type":"message","id":"broken","#.to_owned(),
            2000 => format!(
                r#"{{"type":"custom","customType":"a","id":"t{i}","parentId":null,"timestamp":"t"}} trailing"#
            ),
            3000 => format!(
                r#"{{"type":"custom","customType":"a","id":"u{i}","parentId":null,"timestamp":"t"}}{{"type":"custom"}}"#
            ),
            _ => {
                expected.push(format!("e{i}"));
                format!(
                    r#"{{"type":"message","id":"e{i}","parentId":null,"timestamp":"t","message":{{"role":"user","content":"{filler} \"q\" {i}","timestamp":1}}}}"#
                )
            }
        };
        if matches!(i, 1000 | 2000 | 3000) {
            damaged_lines.push(line_no);
        }
        text.push_str(&line);
        text.push('\n');
    }
    let torn = r#"{"type":"message","id":"torn","par"#;
    text.push_str(torn);
    std::fs::write(&path, &text).unwrap();
    assert!(text.len() > 2 << 20);
    let loaded = knightcode_session::load::load_file(&path).unwrap().unwrap();
    let ids: Vec<&str> = loaded.entries.iter().map(|e| e.id()).collect();
    assert_eq!(ids, expected);
    let malformed: Vec<usize> = loaded
        .warnings
        .iter()
        .filter_map(|w| match w {
            LoadWarning::MalformedLine { line, .. } => Some(*line),
            _ => None,
        })
        .collect();
    assert_eq!(malformed, damaged_lines, "exact line numbers across chunks");
    assert_eq!(
        loaded.warnings.last(),
        Some(&LoadWarning::TornTail {
            line: 4002,
            bytes: torn.len()
        })
    );
    assert!(loaded.torn_tail.is_some());
}

#[test]
fn a_session_of_a_newer_format_is_read_but_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let newer = r#"{"type":"session","version":99,"id":"sid","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;
    let path = write_session(
        dir.path(),
        &[
            newer,
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t1","message":{"role":"user","content":"1","timestamp":1}}"#,
        ],
    );
    let before = std::fs::read(&path).unwrap();
    let error = store()
        .open(&path, dir.path())
        .expect_err("a version-99 session was opened for writing");
    assert_eq!(
        error.to_string(),
        format!(
            "session {} was written by a newer knightcode (session format 99; this build writes 3); it was left unchanged. Update knightcode to continue it",
            path.display()
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Listing and export still read it.
    let s = store().open_read_only(&path).unwrap();
    assert_eq!(context_of(&s), ["user:1"]);
}

#[test]
fn a_folder_given_as_the_session_is_named_as_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("sessions");
    std::fs::create_dir(&folder).unwrap();
    let error = store()
        .open(&folder, dir.path())
        .expect_err("a folder was opened as a session");
    let text = error.to_string();
    assert!(text.contains("is a folder, not a session file"), "{text}");
    assert!(!text.contains("hard link"), "{text}");
}

#[test]
fn a_session_file_deleted_while_open_is_written_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = store();
    let mut s = store
        .create(dir.path(), Path::new("/proj"), NewSession::default())
        .unwrap();
    s.append_message(user("hello")).unwrap();
    s.append_message(assistant("hi")).unwrap();
    let path = jsonl_files(dir.path()).remove(0);
    let before = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();

    s.append_message(user("still there?")).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(
        after.starts_with(&before),
        "everything before, then the new entry"
    );
    assert_eq!(after.lines().count(), before.lines().count() + 1);
    s.append_message(assistant("yes")).unwrap();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        s.entries().len() + 1,
        "the header and every entry"
    );

    // Another file put in its place is never overwritten.
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, "someone else's file\n").unwrap();
    let refused = s.append_message(user("and now?")).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("another file already exists at this path"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "someone else's file\n"
    );
}
