#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Session ownership across processes and inside one process (sessions.md "Session ownership").

use crate::common;

use std::io::BufRead;
use std::io::BufReader;
use std::io::Read;
use std::path::Path;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use knightcode_session::LockOptions;
use knightcode_session::SessionError;
use knightcode_session::SessionStore;
use knightcode_session::SystemClock;

const HOLDER_ENV: &str = "KNIGHTCODE_TEST_LOCK_HOLDER";

/// Not a test of its own: the body of the second process. `holder()` re-runs this test
/// binary with only this function selected and the session path in the environment.
#[test]
fn child_process_entry_point() {
    let Ok(path) = std::env::var(HOLDER_ENV) else {
        return;
    };
    let store = SessionStore::default();
    let mut session = store
        .open(Path::new(&path), Path::new("/p"))
        .expect("child opens");
    session
        .append_message(user("from child"))
        .expect("child writes");
    session
        .append_message(assistant("child reply"))
        .expect("child writes");
    println!("\nKNIGHTCODE-HOLDER-LOCKED");
    // Hold the session until the parent closes our stdin.
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
}

/// The owning child process. Its stdout stays open so its last words never hit a closed pipe.
struct Holder {
    child: Child,
    _stdout: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

/// Starts a process that owns `path` and returns once it holds the lock.
fn holder(path: &Path) -> Holder {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            child_entry_test_name().as_str(),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HOLDER_ENV, path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    loop {
        let line = lines.next().expect("child exited before locking").unwrap();
        if line.contains("KNIGHTCODE-HOLDER-LOCKED") {
            break;
        }
    }
    Holder {
        child,
        _stdout: lines,
    }
}

#[test]
fn a_second_process_is_refused_until_the_owner_exits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut holder = holder(&path);
    let child = &mut holder.child;
    let store = store();
    match store.open(&path, Path::new("/p")) {
        Err(SessionError::Locked { pid, .. }) => assert_eq!(pid, child.id()),
        other => panic!("expected Locked, got {other:?}"),
    }
    // A read-only open needs no ownership.
    assert_eq!(store.open_read_only(&path).unwrap().entries().len(), 2);
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert!(
        !dir.path().join("s.jsonl.lock").exists(),
        "released on exit"
    );
    let mut session = store.open(&path, Path::new("/p")).unwrap();
    session.append_message(user("parent")).unwrap();
    assert_eq!(
        context_of(&session),
        ["user:from child", "assistant:child reply", "user:parent"]
    );
}

#[test]
fn a_crashed_owner_is_taken_over_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut holder = holder(&path);
    let child = &mut holder.child;
    child.kill().unwrap(); // SIGKILL: no cleanup runs
    child.wait().unwrap();
    assert!(
        dir.path().join("s.jsonl.lock").exists(),
        "the dead owner's lock is left behind"
    );
    let mut session = store().open(&path, Path::new("/p")).unwrap();
    session.append_message(user("after crash")).unwrap();
    assert_eq!(session.entries().len(), 3);
}

/// Changes fields of the lock record on disk.
fn edit_lock(lock_path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(lock_path).unwrap()).unwrap();
    edit(&mut record);
    std::fs::write(lock_path, record.to_string()).unwrap();
}

/// The record as another machine's stalled owner would leave it: not refreshed for longer
/// than its TTL, and no pid this machine could check.
fn expire_lock(lock_path: &Path) {
    edit_lock(lock_path, |record| {
        record["host"] = serde_json::json!("another-machine");
        record["bootId"] = serde_json::json!("another-boot");
        record["refreshedAt"] = serde_json::json!(0);
    });
}

#[test]
fn a_live_owner_on_this_machine_keeps_its_lock_however_long_it_idles() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let lock_path = dir.path().join("s.jsonl.lock");
    let owner_store = stalled_store();
    let mut owner = owner_store.open(&path, Path::new("/p")).unwrap();
    owner.append_message(user("mine")).unwrap();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lock_path).unwrap()).unwrap();
    assert!(record["bootId"].is_string(), "{record}");
    assert!(record["pidStart"].is_u64(), "{record}");
    // Long past its TTL: the owner still runs, so it still owns the session.
    edit_lock(&lock_path, |record| {
        record["refreshedAt"] = serde_json::json!(0)
    });
    match store().open(&path, Path::new("/p")) {
        Err(SessionError::Locked { pid, .. }) => assert_eq!(pid, std::process::id()),
        other => panic!("expected Locked, got {other:?}"),
    }
    owner.append_message(assistant("still mine")).unwrap();
}

#[test]
fn a_reused_pid_does_not_hold_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let lock_path = dir.path().join("s.jsonl.lock");
    let old_store = stalled_store();
    let mut old = old_store.open(&path, Path::new("/p")).unwrap();
    old.append_message(user("old")).unwrap();
    // The recorded pid runs, but it is another process than the one that took the lock.
    edit_lock(&lock_path, |record| {
        let start = record["pidStart"].as_u64().unwrap();
        record["pidStart"] = serde_json::json!(start + 1);
    });
    let mut new = store().open(&path, Path::new("/p")).unwrap();
    new.append_message(user("new")).unwrap();
    assert!(matches!(
        old.append_message(user("stale")),
        Err(SessionError::OwnershipLost { .. })
    ));
}

/// Two stores model two processes: each has its own ownership registry.
fn stalled_store() -> SessionStore {
    SessionStore::new(
        Arc::new(SystemClock::new()),
        LockOptions {
            ttl: Duration::from_secs(30),
            // Never refreshes during the test: it behaves like a stalled process.
            refresh_interval: Duration::from_secs(3600),
        },
    )
}

#[test]
fn an_expired_lock_is_taken_over_and_the_old_owner_refuses_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let old_store = stalled_store();
    let mut old = old_store.open(&path, Path::new("/p")).unwrap();
    old.append_message(user("old")).unwrap();
    old.append_message(assistant("old reply")).unwrap();

    let new_store = store();
    assert!(matches!(
        new_store.open(&path, Path::new("/p")),
        Err(SessionError::Locked { .. })
    ));
    expire_lock(&dir.path().join("s.jsonl.lock"));
    let mut new = new_store.open(&path, Path::new("/p")).unwrap();
    new.append_message(user("new")).unwrap();

    let before = std::fs::read(&path).unwrap();
    match old.append_message(user("stale write")) {
        Err(error @ SessionError::OwnershipLost { .. }) => {
            assert!(error.to_string().contains("took over"), "{error}");
        }
        other => panic!("expected OwnershipLost, got {other:?}"),
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "nothing written by the old owner"
    );
    assert_eq!(
        old.entries().len(),
        2,
        "the refused entry is not kept in memory either"
    );
    let lock_before = std::fs::read_to_string(dir.path().join("s.jsonl.lock")).unwrap();
    drop(old);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("s.jsonl.lock")).unwrap(),
        lock_before,
        "the old owner never removes the new owner's lock"
    );
    new.append_message(assistant("new reply")).unwrap();
}

#[test]
fn symlinks_share_the_lock_and_hard_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.jsonl");
    let first = store();
    let mut session = first.open(&real, Path::new("/p")).unwrap();
    session.append_message(user("u")).unwrap();
    session.append_message(assistant("a")).unwrap();

    let alias_dir = tempfile::tempdir().unwrap();
    let alias = alias_dir.path().join("alias.jsonl");
    std::os::unix::fs::symlink(&real, &alias).unwrap();
    assert!(
        matches!(
            store().open(&alias, Path::new("/p")),
            Err(SessionError::Locked { .. })
        ),
        "a symlink reaches the same lock"
    );
    drop(session);

    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(&real, &hard).unwrap();
    for path in [&real, &hard] {
        assert!(matches!(
            store().open(path, Path::new("/p")),
            Err(SessionError::HardLinked { .. })
        ));
    }
}

#[test]
fn managers_in_one_process_share_counted_ownership() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let store = store();
    let mut a = store.open(&path, Path::new("/p")).unwrap();
    a.append_message(user("u")).unwrap();
    a.append_message(assistant("a")).unwrap();
    let mut b = store.open(&path, Path::new("/p")).unwrap();
    let other_process = common::store();
    a.close();
    assert!(
        matches!(
            a.append_message(user("x")),
            Err(SessionError::Closed { .. })
        ),
        "close is final"
    );
    assert!(
        matches!(
            other_process.open(&path, Path::new("/p")),
            Err(SessionError::Locked { .. })
        ),
        "still owned through b"
    );
    b.append_message(user("b")).unwrap();
    b.close();
    assert!(
        other_process.open(&path, Path::new("/p")).is_ok(),
        "the last close released it"
    );
}

/// `child_process_entry_point`'s name as the test harness knows it (its module path without the binary's
/// crate name), so that `--exact` runs only it.
fn child_entry_test_name() -> String {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, path)| path);
    format!("{module}::child_process_entry_point")
}
