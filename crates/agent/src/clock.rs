//! Time for the loop, injected so tests control it (no hidden global state).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use std::time::Instant;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Wall clock, monotonic clock and timers.
pub trait Clock: Send + Sync + 'static {
    /// Unix time in milliseconds (message timestamps).
    fn now_ms(&self) -> i64;
    /// Time since an arbitrary fixed origin; only differences are meaningful
    /// (`durationMs` of tool executions). Never goes backwards.
    fn monotonic(&self) -> Duration;
    /// Waits for `duration` (auto-retry backoff). The loop races it against the abort token,
    /// so implementations need not be cancellable themselves.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
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
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }

    fn monotonic(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}
