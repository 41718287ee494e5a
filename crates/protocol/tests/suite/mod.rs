//! One module per subject; see CONTRIBUTING.md ("Where a test goes").

mod forward_compat;
mod roundtrip;
mod rpc;
