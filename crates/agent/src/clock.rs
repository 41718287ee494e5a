//! Time for the loop: the workspace's one clock (`knightcode-clock`), injected so tests
//! control it.

pub use knightcode_clock::BoxFuture;
pub use knightcode_clock::Clock;
pub use knightcode_clock::SystemClock;
