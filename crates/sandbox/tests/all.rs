//! The sandbox crate's one test binary; see CONTRIBUTING.md ("Where a test goes").
#![allow(clippy::unwrap_used)]

mod suite;
