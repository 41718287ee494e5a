//! A clock the test moves: its timers fire when the test advances time past them, so a
//! test can run through an idle hour in no time, and can wait until the code under test
//! has set the timer it means to fire (no sleeps, no races).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use knightcode_ai::Clock;
use knightcode_ai::clock::BoxFuture;
use tokio::sync::watch;

/// The wall clock reads this (Unix milliseconds) plus the time advanced.
pub const MANUAL_CLOCK_EPOCH_MS: i64 = 1_750_000_000_000;

#[derive(Debug, Default)]
struct Timers {
    now: Duration,
    /// Pending sleeps by id: their deadlines.
    pending: BTreeMap<u64, Duration>,
    next_id: u64,
}

#[derive(Debug)]
struct Shared {
    timers: Mutex<Timers>,
    /// Bumped whenever time moves or a sleep starts or ends.
    changed: watch::Sender<u64>,
}

impl Shared {
    fn change<T>(&self, f: impl FnOnce(&mut Timers) -> T) -> T {
        let out = f(&mut self.timers.lock().unwrap_or_else(PoisonError::into_inner));
        self.changed.send_modify(|v| *v += 1);
        out
    }

    fn read<T>(&self, f: impl FnOnce(&Timers) -> T) -> T {
        f(&self.timers.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Removes a sleep from the pending set however its future ends.
struct Pending {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.shared.change(|t| t.pending.remove(&self.id));
    }
}

/// Time stands still until [`ManualClock::advance`]; `random` is always 0.
#[derive(Debug, Clone)]
pub struct ManualClock {
    shared: Arc<Shared>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl ManualClock {
    pub fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                timers: Mutex::new(Timers::default()),
                changed: watch::channel(0).0,
            }),
        }
    }

    /// Moves time on; every sleep whose deadline has come returns.
    pub fn advance(&self, by: Duration) {
        self.shared.change(|t| t.now += by);
    }

    /// Waits until a sleep at least `min` away is pending, and returns how far away the
    /// nearest such one is (the caller bounds the wait).
    pub async fn next_timer_after(&self, min: Duration) -> Duration {
        let mut changed = self.shared.changed.subscribe();
        loop {
            changed.borrow_and_update();
            let found = self.shared.read(|t| {
                t.pending
                    .values()
                    .map(|deadline| deadline.saturating_sub(t.now))
                    .filter(|wait| *wait >= min)
                    .min()
            });
            if let Some(wait) = found {
                return wait;
            }
            if changed.changed().await.is_err() {
                return min;
            }
        }
    }

    /// How many sleeps are pending.
    pub fn pending_timers(&self) -> usize {
        self.shared.read(|t| t.pending.len())
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        let now = self.shared.read(|t| t.now);
        MANUAL_CLOCK_EPOCH_MS + i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
    }

    fn monotonic(&self) -> Duration {
        self.shared.read(|t| t.now)
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let shared = Arc::clone(&self.shared);
        let (id, deadline) = shared.change(|t| {
            let id = t.next_id;
            t.next_id += 1;
            let deadline = t.now + duration;
            t.pending.insert(id, deadline);
            (id, deadline)
        });
        let mut changed = shared.changed.subscribe();
        let pending = Pending { shared, id };
        Box::pin(async move {
            loop {
                changed.borrow_and_update();
                if pending.shared.read(|t| t.now >= deadline) {
                    return;
                }
                if changed.changed().await.is_err() {
                    return;
                }
            }
        })
    }

    fn random(&self) -> f64 {
        0.0
    }
}
