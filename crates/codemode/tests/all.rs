//! The codemode crate's integration tests (one binary; subjects under `suite/`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
