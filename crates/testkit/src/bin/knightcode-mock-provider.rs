//! Placeholder; the real binary follows.
fn main() {}
