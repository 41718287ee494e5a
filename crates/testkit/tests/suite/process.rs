//! `output_within`: a child's output like `Command::output`, and a child that does not end
//! in time is killed and reported by name instead of hanging the suite.

use std::process::Command;
use std::time::Duration;

use knightcode_testkit::TestkitError;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;

#[test]
fn a_child_that_ends_gives_its_status_and_both_outputs() {
    let out = Command::new("sh")
        .args(["-c", "echo out; echo err >&2; exit 3"])
        .output_within(PROCESS_LIMIT, "a shell that exits 3")
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, b"err\n");
}

#[test]
fn a_child_that_never_ends_is_killed_and_named() {
    let error = Command::new("sh")
        .args(["-c", "echo started; exec sleep 600"])
        .output_within(Duration::from_millis(200), "a shell that sleeps")
        .unwrap_err();
    let TestkitError::TimedOut { what, stdout, .. } = &error else {
        panic!("expected a time-out, got {error:?}");
    };
    assert!(what.starts_with("a shell that sleeps ("), "{what}");
    assert!(what.contains("\"sh\""), "the command line is named: {what}");
    assert_eq!(stdout, "started\n");
    assert!(error.to_string().contains("timed out after"), "{error}");
}

#[test]
fn a_program_that_does_not_exist_is_named() {
    let error = Command::new("knightcode-no-such-program")
        .output_within(PROCESS_LIMIT, "a missing program")
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("could not run a missing program"),
        "{error}"
    );
}
