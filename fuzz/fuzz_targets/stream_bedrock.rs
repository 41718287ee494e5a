#![no_main]
//! Fuzz target `stream_bedrock`: see crates/fuzzing (`Target::StreamBedrock`).

use std::sync::Mutex;
use std::sync::OnceLock;

use knightcode_fuzzing::Harness;
use knightcode_fuzzing::Target;
use libfuzzer_sys::fuzz_target;

static HARNESS: OnceLock<Mutex<Harness>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let harness = HARNESS.get_or_init(|| Mutex::new(Harness::new()));
    let mut harness = harness.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    harness.run(Target::StreamBedrock, data);
});
