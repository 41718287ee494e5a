//! The one clock of KnightCode: wall time (message and entry timestamps), monotonic time
//! (durations), timers (retry backoff, idle timeouts, read pacing) and a jitter source.
//! Everything that reads time takes a [`Clock`], so tests pin it; nothing reads the system
//! clock behind the caller's back.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher as _;
use std::pin::Pin;
use std::time::Duration;
use std::time::Instant;
use std::time::SystemTime;
use std::time::UNIX_EPOCH;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Wall clock, monotonic clock, timers and jitter.
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    /// Unix time in milliseconds.
    fn now_ms(&self) -> i64;
    /// Time since an arbitrary fixed origin; only differences mean anything. Never goes
    /// backwards.
    fn monotonic(&self) -> Duration;
    /// Waits for `duration`. Callers race it against their cancellation, so it need not
    /// be cancellable itself.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
    /// A number in `[0, 1)` (retry jitter).
    fn random(&self) -> f64;
}

/// The real clock: system time, `Instant` and tokio timers.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }

    fn monotonic(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }

    fn random(&self) -> f64 {
        // Each RandomState is freshly seeded, which is plenty for backoff jitter.
        let bits = RandomState::new().hash_one(0u8);
        (bits >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_time_does_not_go_back_and_random_is_in_range() {
        let clock = SystemClock::new();
        let a = clock.monotonic();
        let b = clock.monotonic();
        assert!(b >= a);
        for _ in 0..100 {
            let r = clock.random();
            assert!((0.0..1.0).contains(&r), "{r}");
        }
        assert!(clock.now_ms() > 1_600_000_000_000);
    }

    #[tokio::test(start_paused = true)]
    async fn sleep_waits_for_the_duration() {
        let clock = SystemClock::new();
        let started = tokio::time::Instant::now();
        clock.sleep(Duration::from_secs(5)).await;
        assert!(started.elapsed() >= Duration::from_secs(5));
    }
}
