//! Replays every committed fuzz input (`fuzz/seeds/<target>/` and the crash reproducers in
//! `fuzz/regressions/<target>/`) through the targets' entry points, so a fixed crash stays
//! fixed on stable without cargo-fuzz.

use std::path::Path;
use std::path::PathBuf;

use knightcode_fuzzing::Harness;
use knightcode_fuzzing::Target;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(kind: &str, target: Target) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target.name());
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_target_has_a_binary_and_seeds() {
    for target in Target::ALL {
        let binary = fuzz_dir()
            .join("fuzz_targets")
            .join(format!("{}.rs", target.name()));
        assert!(binary.is_file(), "{} has no fuzz target", binary.display());
        assert!(
            !inputs("seeds", target).is_empty(),
            "{} has no committed seeds",
            target.name()
        );
    }
}

#[test]
fn committed_inputs_replay_without_a_panic() {
    let mut harness = Harness::new();
    let mut count = 0;
    for target in Target::ALL {
        for kind in ["seeds", "regressions"] {
            for path in inputs(kind, target) {
                let data = std::fs::read(&path).unwrap_or_default();
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    harness.run(target, &data);
                }));
                assert!(
                    outcome.is_ok(),
                    "{} panics on {}",
                    target.name(),
                    path.display()
                );
                count += 1;
            }
        }
    }
    assert!(count >= Target::ALL.len(), "only {count} inputs replayed");
}
