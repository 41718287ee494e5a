//! Prompt-cache warming (`cacheWarming`): before the cache entry a session request wrote
//! expires, the same request is sent again with a one-token output cap, when the expected
//! saving (the price of a cache miss × the chance the user continues) is worth the refresh.
//!
//! Three parts: [`CacheWarming`] is the state (one run at a time, replaced by every real
//! request), fed by [`WarmingProvider`] (the agent's provider: it sees every real request)
//! and by the session actor (the run settled, the model or the conversation changed, the
//! setting changed); [`task::drive`] is the timer and the refresh, a task the actor starts
//! and stops, whose usage records go back to the actor, the session file's one writer. All
//! time is the session's [`Clock`], so a test runs an idle hour without waiting for it.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use knightcode_agent::Clock;
use knightcode_ai::CancellationToken;
use knightcode_ai::EventStream;
use knightcode_ai::Model;
use knightcode_ai::Provider;
use knightcode_ai::StreamRequest;
use knightcode_protocol::AgentMessage;
use tokio::sync::watch;

pub mod economics;
mod status;
pub(crate) mod task;

pub use economics::Action;
pub use economics::Decision;
pub use economics::Phase;
pub use status::format_status;

/// Streaming warming never goes on longer than this after the real request.
const STREAMING_LIMIT: Duration = Duration::from_secs(60 * 60);
/// Idle warming stops sooner: the chance of a continuation is less certain with age.
const IDLE_LIMIT: Duration = Duration::from_secs(30 * 60);

/// `cacheWarming`: never, while a run streams (its long tool calls), or also while idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheWarmingMode {
    Off,
    Streaming,
    Idle,
}

impl CacheWarmingMode {
    pub const ALL: [Self; 3] = [Self::Off, Self::Streaming, Self::Idle];

    /// The settings spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Streaming => "streaming",
            Self::Idle => "idle",
        }
    }
}

/// What the warmer is doing, for `/session`.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheWarmingStatus {
    pub state: WarmState,
    /// Why nothing is scheduled.
    pub reason: Option<String>,
    /// When the next decision falls due (the session clock's monotonic time).
    pub next_warm_at: Option<Duration>,
    /// The pending decision, or the one that stopped warming.
    pub decision: Option<Decision>,
    /// An extension changed the decision.
    pub extension_override: bool,
    /// The clock's monotonic time when this was taken.
    pub now: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmState {
    Inactive,
    /// A refresh is timed.
    Scheduled,
    /// A refresh is being decided or sent.
    Refreshing,
}

/// A refresh's usage, for the session file (`usage` entry of kind `cache_warm`).
#[derive(Debug, Clone, PartialEq)]
pub struct CacheWarmUsage {
    pub provider: String,
    pub model: String,
    pub usage: knightcode_protocol::Usage,
    /// `extension override` when an extension decided this refresh.
    pub note: Option<String>,
}

/// The request being kept warm and its timing.
struct Run {
    generation: u64,
    request: StreamRequest,
    ttl: Duration,
    delay: Duration,
    started_at: Duration,
    next_warm_at: Duration,
    /// The latest a refresh may go out: half the planned margin before expiry is kept for a
    /// late timer and the request's own trip; later, it would likely write the cache anew.
    refresh_deadline_at: Duration,
    phase: Phase,
    refreshing: bool,
    extension_override: bool,
    /// Ends the refresh in flight when the run is replaced or stopped.
    cancel: CancellationToken,
}

struct State {
    mode: CacheWarmingMode,
    run: Option<Run>,
    /// The status while no run is active.
    inactive: (String, Option<Decision>, bool),
    /// Prompt size of the last real response (input, cache reads and writes).
    prompt_tokens: u64,
    generation: u64,
}

struct Inner {
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
    /// Bumped on every change the timer task must see.
    changed: watch::Sender<u64>,
}

/// The session's cache warmer; clones share it.
#[derive(Clone)]
pub struct CacheWarming {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CacheWarming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheWarming").finish_non_exhaustive()
    }
}

/// What the timer task needs for one refresh.
pub(crate) struct Refresh {
    pub(crate) generation: u64,
    pub(crate) decision: Decision,
}

impl CacheWarming {
    pub fn new(clock: Arc<dyn Clock>, mode: CacheWarmingMode) -> Self {
        Self {
            inner: Arc::new(Inner {
                clock,
                state: Mutex::new(State {
                    mode,
                    run: None,
                    inactive: ("waiting for first request".to_owned(), None, false),
                    prompt_tokens: 0,
                    generation: 0,
                }),
                changed: watch::channel(0).0,
            }),
        }
    }

    fn now(&self) -> Duration {
        self.inner.clock.monotonic()
    }

    fn with_state<T>(&self, change: impl FnOnce(&mut State, Duration) -> T) -> T {
        let now = self.now();
        let out = {
            let mut state = self
                .inner
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            change(&mut state, now)
        };
        self.inner.changed.send_modify(|version| *version += 1);
        out
    }

    fn read<T>(&self, read: impl FnOnce(&State) -> T) -> T {
        read(
            &self
                .inner
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Changes as they happen (a status display, a test waiting for a state).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    pub fn mode(&self) -> CacheWarmingMode {
        self.read(|state| state.mode)
    }

    /// A real request went out: keep the entry it writes warm, replacing any earlier run.
    pub fn start(&self, request: &StreamRequest) {
        if self.mode() == CacheWarmingMode::Off {
            self.with_state(|state, _| state.stop("cache warming disabled", None, false));
            return;
        }
        let retention = request.options.cache_retention();
        let refusal = if !economics::replayable(&request.model, &request.options) {
            Some("request cannot be replayed safely")
        } else if retention == knightcode_ai::CacheRetention::None {
            Some("request disabled prompt caching")
        } else {
            None
        };
        let timing = economics::cache_lifetime(&request.model, retention)
            .and_then(|ttl| Some((ttl, economics::refresh_delay(ttl)?)));
        let (Some((ttl, delay)), None) = (timing, refusal) else {
            let reason = refusal.unwrap_or("cache lifetime unavailable");
            self.with_state(|state, _| state.stop(reason, None, false));
            return;
        };
        // Only a request worth keeping is copied (its messages are shared, its tools are
        // not), and outside the lock.
        let request = request.clone();
        self.with_state(|state, now| {
            state.clear_run();
            state.generation += 1;
            state.run = Some(Run {
                generation: state.generation,
                request,
                ttl,
                delay,
                started_at: now,
                next_warm_at: now,
                refresh_deadline_at: now,
                phase: Phase::Streaming,
                refreshing: false,
                extension_override: false,
                cancel: CancellationToken::new(),
            });
            state.schedule(now);
        });
    }

    /// A real response arrived: its prompt size prices the next decision.
    pub fn note_prompt_tokens(&self, tokens: u64) {
        self.with_state(|state, _| state.prompt_tokens = tokens);
    }

    /// The agent run ended: streaming-only warming stops, idle warming goes on within its
    /// shorter limit.
    pub fn settled(&self) {
        self.with_state(|state, now| {
            let Some(run) = &mut state.run else {
                return;
            };
            if state.mode == CacheWarmingMode::Streaming {
                return state.stop("agent run settled", None, false);
            }
            run.phase = Phase::Idle;
            let deadline = run.started_at + IDLE_LIMIT;
            if run.next_warm_at > deadline || now >= deadline {
                state.stop("30-minute idle safety limit reached", None, false);
            }
        });
    }

    /// The setting changed.
    pub fn set_mode(&self, mode: CacheWarmingMode) {
        if self.mode() == mode {
            return;
        }
        self.with_state(|state, _| {
            state.mode = mode;
            if let Some(reason) = state.mode_stop_reason() {
                state.stop(reason, None, false);
            }
        });
    }

    /// The session's model and conversation now: warming stops unless they still extend
    /// the warmed request (same model, its messages a prefix of the conversation). Compared
    /// by identity, so a conversation an extension's `context` handler rewrote for the
    /// request does not count as current.
    pub fn check_context(&self, model: &Model, messages: &[Arc<AgentMessage>]) {
        let current = self.read(|state| {
            state.run.as_ref().is_none_or(|run| {
                let sent = &run.request.context.messages;
                run.request.model.provider == model.provider
                    && run.request.model.id == model.id
                    && sent.len() <= messages.len()
                    && sent.iter().zip(messages).all(|(a, b)| Arc::ptr_eq(a, b))
            })
        });
        if !current {
            self.with_state(|state, _| state.stop("conversation context changed", None, false));
        }
    }

    /// The session ended or was replaced.
    pub fn cancel(&self) {
        self.with_state(|state, _| state.stop("inactive", None, false));
    }

    pub fn status(&self) -> CacheWarmingStatus {
        let now = self.now();
        self.read(|state| {
            let inactive = |reason: &str| CacheWarmingStatus {
                state: WarmState::Inactive,
                reason: Some(reason.to_owned()),
                next_warm_at: None,
                decision: None,
                extension_override: false,
                now,
            };
            if state.mode == CacheWarmingMode::Off {
                return inactive("cache warming disabled");
            }
            let Some(run) = &state.run else {
                let (reason, decision, extension_override) = &state.inactive;
                return CacheWarmingStatus {
                    decision: *decision,
                    extension_override: *extension_override,
                    ..inactive(reason)
                };
            };
            let decision = economics::evaluate(&run.request.model, state.prompt_tokens, run.phase);
            if !decision.economics_available && !run.refreshing {
                return inactive("cache economics unavailable");
            }
            CacheWarmingStatus {
                state: if run.refreshing {
                    WarmState::Refreshing
                } else {
                    WarmState::Scheduled
                },
                reason: None,
                next_warm_at: Some(run.next_warm_at),
                decision: Some(decision),
                extension_override: run.extension_override,
                now,
            }
        })
    }

    /// The run's generation and how long until its refresh falls due, if one is timed.
    pub(crate) fn due(&self) -> Option<(u64, Duration)> {
        let now = self.now();
        self.read(|state| {
            let run = state.run.as_ref().filter(|run| !run.refreshing)?;
            Some((run.generation, run.next_warm_at.saturating_sub(now)))
        })
    }

    /// The timer fired: the decision to put to the extensions, unless the run is gone or
    /// it is too late to refresh.
    pub(crate) fn begin_refresh(&self, generation: u64) -> Option<Refresh> {
        self.with_state(|state, now| {
            let prompt_tokens = state.prompt_tokens;
            let run = state.current(generation)?;
            if now > run.refresh_deadline_at {
                state.stop("cache refresh deadline missed", None, false);
                return None;
            }
            run.refreshing = true;
            let decision = economics::evaluate(&run.request.model, prompt_tokens, run.phase);
            Some(Refresh {
                generation,
                decision,
            })
        })
    }

    /// After the extensions' word: the request to send and its cancellation, or `None`
    /// when warming stopped (by the decision, or because things changed meanwhile).
    pub(crate) fn confirm(
        &self,
        refresh: &Refresh,
        action: Action,
    ) -> Option<(StreamRequest, CancellationToken, bool)> {
        self.with_state(|state, now| {
            let run = state.current(refresh.generation)?;
            if now > run.refresh_deadline_at {
                state.stop("cache refresh deadline missed", None, false);
                return None;
            }
            let overridden = action != refresh.decision.action;
            if action == Action::Stop {
                let reason = if overridden {
                    "stopped by extension"
                } else if refresh.decision.economics_available {
                    "expected savings below threshold"
                } else {
                    "cache economics unavailable"
                };
                state.stop(reason, Some(refresh.decision), overridden);
                return None;
            }
            run.extension_override = overridden;
            let mut request = run.request.clone();
            request.options.max_tokens = Some(1);
            request.options.retry.max_retries = 0;
            Some((request, run.cancel.clone(), overridden))
        })
    }

    /// Whether `generation` is still the run being kept warm.
    pub(crate) fn is_current(&self, generation: u64) -> bool {
        self.read(|state| {
            state
                .run
                .as_ref()
                .is_some_and(|r| r.generation == generation)
        })
    }

    /// The refresh ended (sent or failed): time the next one.
    pub(crate) fn finish_refresh(&self, generation: u64) {
        self.with_state(|state, now| {
            if let Some(run) = state.current(generation) {
                run.refreshing = false;
                state.schedule(now);
            }
        });
    }
}

impl State {
    fn current(&mut self, generation: u64) -> Option<&mut Run> {
        if let Some(reason) = self.mode_stop_reason() {
            self.stop(reason, None, false);
            return None;
        }
        self.run.as_mut().filter(|run| run.generation == generation)
    }

    fn mode_stop_reason(&self) -> Option<&'static str> {
        match (self.mode, self.run.as_ref().map(|run| run.phase)) {
            (_, None) => None,
            (CacheWarmingMode::Off, _) => Some("cache warming disabled"),
            (CacheWarmingMode::Streaming, Some(Phase::Idle)) => Some("agent run settled"),
            _ => None,
        }
    }

    fn clear_run(&mut self) {
        if let Some(run) = self.run.take() {
            run.cancel.cancel();
        }
    }

    fn stop(&mut self, reason: &str, decision: Option<Decision>, extension_override: bool) {
        self.clear_run();
        self.inactive = (reason.to_owned(), decision, extension_override);
    }

    fn schedule(&mut self, now: Duration) {
        let Some(run) = &mut self.run else {
            return;
        };
        run.extension_override = false;
        run.next_warm_at = now + run.delay;
        run.refresh_deadline_at = run.next_warm_at + (run.ttl - run.delay) / 2;
        let (limit, reason) = match run.phase {
            Phase::Idle => (IDLE_LIMIT, "30-minute idle safety limit reached"),
            Phase::Streaming => (STREAMING_LIMIT, "one-hour safety limit reached"),
        };
        let deadline = run.started_at + limit;
        if run.next_warm_at > deadline || now >= deadline {
            self.stop(reason, None, false);
        }
    }
}

/// The agent's provider: every real request it sends starts (or restarts) warming. Warm
/// requests go to the inner provider, so they never restart it.
pub(crate) struct WarmingProvider {
    pub(crate) inner: Arc<dyn Provider>,
    pub(crate) warming: CacheWarming,
}

impl Provider for WarmingProvider {
    fn stream(&self, request: &StreamRequest, cancel: CancellationToken) -> EventStream {
        self.warming.start(request);
        self.inner.stream(request, cancel)
    }
}
