//! Time and randomness, injected so tests control them (no hidden global state).

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::time::Duration;
use std::time::SystemTime;
use std::time::UNIX_EPOCH;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Wall clock, timers and a jitter source for the provider layer.
pub trait Clock: Send + Sync + 'static {
    /// Unix time in milliseconds (message timestamps, HTTP-date retry delays).
    fn now_ms(&self) -> i64;
    /// Waits for `duration` (provider retry backoff).
    fn sleep(&self, duration: Duration) -> BoxFuture<()>;
    /// A number in `[0, 1)` for retry jitter.
    fn random(&self) -> f64;
}

/// The real clock: system time and tokio timers.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<()> {
        Box::pin(tokio::time::sleep(duration))
    }

    fn random(&self) -> f64 {
        // Each RandomState is freshly seeded, which is plenty for backoff jitter.
        let bits = RandomState::new().hash_one(0u8);
        (bits >> 11) as f64 / (1u64 << 53) as f64
    }
}
