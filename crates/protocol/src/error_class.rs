//! The kinds of model-call failure. Pure data: the provider layer decides them where a failure
//! arises and the agent's retry and overflow handling read them.

/// Broad classes of model-call failures, for retries, compaction and user guidance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// Missing, invalid or expired credentials (401/403).
    Auth,
    /// Too many requests right now (429 and friends); transient.
    RateLimit,
    /// Quota, billing or subscription limits; not worth retrying.
    Quota,
    /// The prompt does not fit the model's context window; compaction helps.
    ContextOverflow,
    /// Connection failures, resets, timeouts, truncated streams; transient.
    Network,
    /// The provider is overloaded or failed internally (5xx, 529, mid-stream error events);
    /// transient.
    Overloaded,
    /// The user cancelled the request.
    Aborted,
    /// Anything else (bad request, refusal, unknown stop reason).
    Other,
}

impl ErrorClass {
    /// Whether retrying the same request later may succeed.
    pub fn is_transient(self) -> bool {
        matches!(self, Self::RateLimit | Self::Network | Self::Overloaded)
    }
}
