//! The integration tests of this crate, linked into one test binary (one link of the
//! dependency graph instead of one per file). Shared helpers are plain modules here;
//! the tests live in `suite/`, one module per subject.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
