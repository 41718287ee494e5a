//! The arithmetic of cache warming: how long a prompt-cache entry lives, when to refresh
//! it, whether a refresh can be sent at all, and whether it pays.

use std::time::Duration;

use knightcode_ai::CacheRetention;
use knightcode_ai::Model;
use knightcode_ai::StreamOptions;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::Tokens;
use knightcode_protocol::Usage;

/// A refresh is sent only when it is expected to save at least this many dollars.
pub const MINIMUM_EXPECTED_SAVINGS: f64 = 0.05;
/// The chance that a real request comes before the entry expires while the user is idle
/// (the reference's measured constant; per-session estimates did no better).
pub const IDLE_CONTINUATION_PROBABILITY: f64 = 0.15;
/// Margin kept before expiry: a refresh sent later would likely write the cache anew.
const EXPIRY_MARGIN: Duration = Duration::from_secs(10);
/// Anthropic's documented lifetimes (5 minutes, 1 hour), for its models when the catalog
/// (generated from a reference version without `promptCache`) gives none.
const ANTHROPIC_LIFETIMES: (u64, u64) = (300, 3600);

/// When to refresh an entry that lives `ttl`: at 90 % of it, keeping at least ten seconds
/// of margin; `None` when the entry lives too briefly to refresh.
pub fn refresh_delay(ttl: Duration) -> Option<Duration> {
    if ttl <= EXPIRY_MARGIN {
        return None;
    }
    let ninety = ttl.mul_f64(0.9);
    let delay = ninety.min(ttl - EXPIRY_MARGIN);
    Some(Duration::from_millis(delay.as_millis().max(1) as u64))
}

/// The lifetime of the entry a request with `retention` writes: the model's `promptCache`
/// tier (seconds), Anthropic's documented lifetimes for its models without one, `None`
/// when caching is off or the lifetime is unknown.
pub fn cache_lifetime(model: &Model, retention: CacheRetention) -> Option<Duration> {
    let tier = match retention {
        CacheRetention::None => return None,
        CacheRetention::Short => "short",
        CacheRetention::Long => "long",
    };
    let seconds = match &model.prompt_cache {
        Some(declared) => declared.get(tier)?.as_f64()?,
        None if model.provider == "anthropic" && model.api == "anthropic-messages" => {
            let (short, long) = ANTHROPIC_LIFETIMES;
            (if tier == "short" { short } else { long }) as f64
        }
        None => return None,
    };
    (seconds.is_finite() && seconds > 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// Whether replaying the request with a one-token output cap leaves its cache entry as it
/// was. Anthropic's budget thinking derives the budget from `max_tokens`, and the budget is
/// part of what its cache is keyed on (the replay could also think for thousands of
/// tokens); models that think adaptively (the provider's own rule) are safe.
pub fn replayable(model: &Model, options: &StreamOptions) -> bool {
    if options.thinking == ThinkingLevel::Off
        || !model.reasoning
        || model.api != "anthropic-messages"
    {
        return true;
    }
    let flag = |key: &str| model.compat_bool(key).unwrap_or(false);
    flag("forceAdaptiveThinking") || flag("supportsMidConvoEffort")
}

/// Whether the agent run that sent the request is still going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Streaming,
    Idle,
}

/// Warm or stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Warm,
    Stop,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Warm => "warm",
            Self::Stop => "stop",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "warm" => Some(Self::Warm),
            "stop" => Some(Self::Stop),
            _ => None,
        }
    }
}

/// The inputs and outcome of one warm-or-stop decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub phase: Phase,
    /// A cache read of the prompt plus one output token.
    pub warm_cost: f64,
    /// What the next real request costs extra when the entry is gone.
    pub miss_cost: f64,
    pub continuation_probability: f64,
    /// `continuation_probability × miss_cost − warm_cost`.
    pub expected_savings: f64,
    /// False when the prompt size or the model's prices are unknown.
    pub economics_available: bool,
    pub action: Action,
}

fn price(model: &Model, usage: Usage) -> f64 {
    let mut usage = usage;
    knightcode_ai::calculate_cost(&model.cost, &mut usage);
    usage.cost.total.0
}

/// The decision for a prompt of `prompt_tokens` in `phase`.
pub fn evaluate(model: &Model, prompt_tokens: u64, phase: Phase) -> Decision {
    let tokens = Tokens(prompt_tokens);
    let hit = price(
        model,
        Usage {
            cache_read: tokens,
            ..Usage::default()
        },
    );
    let miss = if model.cost.cache_write > 0.0 {
        Usage {
            cache_write: tokens,
            ..Usage::default()
        }
    } else {
        Usage {
            input: tokens,
            ..Usage::default()
        }
    };
    let miss = price(model, miss);
    let warm_cost = price(
        model,
        Usage {
            cache_read: tokens,
            output: Tokens(1),
            ..Usage::default()
        },
    );
    let miss_cost = (miss - hit).max(0.0);
    let continuation_probability = match phase {
        Phase::Streaming => 1.0,
        Phase::Idle => IDLE_CONTINUATION_PROBABILITY,
    };
    let expected_savings = continuation_probability * miss_cost - warm_cost;
    Decision {
        phase,
        warm_cost,
        miss_cost,
        continuation_probability,
        expected_savings,
        economics_available: prompt_tokens > 0 && (hit > 0.0 || miss > 0.0),
        action: if expected_savings >= MINIMUM_EXPECTED_SAVINGS {
            Action::Warm
        } else {
            Action::Stop
        },
    }
}

#[cfg(test)]
mod tests {
    use knightcode_ai::Api;
    use knightcode_ai::ModelCost;
    use serde_json::json;

    use super::*;

    fn sonnet() -> Model {
        let mut model = Model::new(
            "anthropic",
            "claude-sonnet-4-5",
            Api::AnthropicMessages,
            "https://api.anthropic.com",
        );
        model.reasoning = true;
        model.cost = ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: Vec::new(),
        };
        model
    }

    #[test]
    fn refreshes_at_ninety_percent_keeping_ten_seconds() {
        assert_eq!(
            refresh_delay(Duration::from_secs(300)),
            Some(Duration::from_secs(270))
        );
        assert_eq!(
            refresh_delay(Duration::from_secs(3600)),
            Some(Duration::from_secs(3240))
        );
        // 90 % of 60 s leaves only 6 s: ten seconds win.
        assert_eq!(
            refresh_delay(Duration::from_secs(60)),
            Some(Duration::from_secs(50))
        );
        assert_eq!(refresh_delay(Duration::from_secs(10)), None);
    }

    #[test]
    fn lifetimes_come_from_the_model_or_anthropics_documented_ones() {
        let mut model = sonnet();
        assert_eq!(
            cache_lifetime(&model, CacheRetention::Short),
            Some(Duration::from_secs(300))
        );
        assert_eq!(
            cache_lifetime(&model, CacheRetention::Long),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(cache_lifetime(&model, CacheRetention::None), None);
        model.prompt_cache = Some(json!({"short": 600}));
        assert_eq!(
            cache_lifetime(&model, CacheRetention::Short),
            Some(Duration::from_secs(600))
        );
        // Declared without a long tier: no lifetime, as given.
        assert_eq!(cache_lifetime(&model, CacheRetention::Long), None);
        let other = Model::new("mock", "m", Api::OpenAiResponses, "http://x");
        assert_eq!(cache_lifetime(&other, CacheRetention::Short), None);
    }

    #[test]
    fn budget_thinking_on_anthropic_cannot_be_replayed() {
        let mut model = sonnet();
        let mut options = StreamOptions {
            thinking: ThinkingLevel::Medium,
            ..StreamOptions::default()
        };
        assert!(!replayable(&model, &options));
        model.compat = Some(serde_json::Map::from_iter([(
            "forceAdaptiveThinking".to_owned(),
            json!(true),
        )]));
        assert!(replayable(&model, &options));
        model.compat = None;
        options.thinking = ThinkingLevel::Off;
        assert!(replayable(&model, &options));
    }

    #[test]
    fn warms_when_the_expected_saving_reaches_five_cents() {
        let model = sonnet();
        let streaming = evaluate(&model, 100_000, Phase::Streaming);
        assert!((streaming.warm_cost - (0.03 + 0.000_015)).abs() < 1e-12);
        assert!((streaming.miss_cost - 0.345).abs() < 1e-12);
        assert_eq!(streaming.action, Action::Warm);
        let idle = evaluate(&model, 100_000, Phase::Idle);
        // 0.15 × 0.345 − 0.030015 ≈ 0.0217: below the threshold.
        assert_eq!(idle.action, Action::Stop);
        assert!(idle.economics_available);
        let empty = evaluate(&model, 0, Phase::Idle);
        assert!(!empty.economics_available);
        assert_eq!(empty.action, Action::Stop);
    }
}
