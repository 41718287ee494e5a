//! The one-line warming status `/session` shows, in the reference's words.

use std::time::Duration;

use super::CacheWarmingStatus;
use super::Decision;
use super::Phase;
use super::WarmState;
use super::economics::Action;
use super::economics::MINIMUM_EXPECTED_SAVINGS;

fn dollars(value: f64) -> String {
    if value < 0.0 {
        format!("-${:.3}", value.abs())
    } else {
        format!("${value:.3}")
    }
}

fn economics(decision: &Decision) -> String {
    if !decision.economics_available {
        return "cache economics unavailable".to_owned();
    }
    let percent = (decision.continuation_probability * 100.0).round();
    let probability = match decision.phase {
        Phase::Streaming => format!("{percent}% continuation probability while agent is running"),
        Phase::Idle => format!("{percent}% continuation probability"),
    };
    let comparison = match decision.action {
        Action::Warm => ">=",
        Action::Stop => "<",
    };
    format!(
        "{probability}, expected savings {} {comparison} ${MINIMUM_EXPECTED_SAVINGS:.3}",
        dollars(decision.expected_savings)
    )
}

fn decision_time(next: Option<Duration>, now: Duration) -> String {
    let Some(next) = next.filter(|next| *next > now) else {
        return "Decision now".to_owned();
    };
    let remaining = (next - now).as_millis().div_ceil(1000);
    let (hours, minutes, seconds) = (remaining / 3600, remaining % 3600 / 60, remaining % 60);
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours}h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes}m"));
    }
    if seconds > 0 || parts.is_empty() {
        parts.push(format!("{seconds}s"));
    }
    format!("Decision in {}", parts.join(" "))
}

/// `Inactive (…)`, `Stopped (…)`, `Warming cache (…)` or `Decision in 4m 30s (…)`.
pub fn format_status(status: &CacheWarmingStatus) -> String {
    let inactive = || {
        format!(
            "Inactive ({})",
            status.reason.as_deref().unwrap_or("unknown reason")
        )
    };
    // A decision is attached once it was acted on; an inactive status without one never
    // got that far.
    let Some(decision) = &status.decision else {
        return inactive();
    };
    if status.state == WarmState::Inactive
        && !decision.economics_available
        && !status.extension_override
    {
        return inactive();
    }
    let details = if status.extension_override {
        format!("extension override, {}", economics(decision))
    } else {
        format!("{} -> {}", economics(decision), decision.action.as_str())
    };
    match status.state {
        WarmState::Inactive => format!("Stopped ({details})"),
        WarmState::Refreshing => format!("Warming cache ({details})"),
        WarmState::Scheduled => format!(
            "{} ({details})",
            decision_time(status.next_warm_at, status.now)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheduled(next_ms: u64, now_ms: u64, decision: Decision) -> CacheWarmingStatus {
        CacheWarmingStatus {
            state: WarmState::Scheduled,
            reason: None,
            next_warm_at: Some(Duration::from_millis(next_ms)),
            decision: Some(decision),
            extension_override: false,
            now: Duration::from_millis(now_ms),
        }
    }

    fn idle_decision() -> Decision {
        Decision {
            phase: Phase::Idle,
            warm_cost: 0.013,
            miss_cost: 0.621,
            continuation_probability: 0.6,
            expected_savings: 0.36,
            economics_available: true,
            action: Action::Warm,
        }
    }

    #[test]
    fn scheduled_status_counts_down_to_the_decision() {
        assert_eq!(
            format_status(&scheduled(222_000, 0, idle_decision())),
            "Decision in 3m 42s (60% continuation probability, expected savings $0.360 >= $0.050 -> warm)"
        );
        let at = |next, now| {
            let line = format_status(&scheduled(next, now, idle_decision()));
            line[..line.find(" (").unwrap_or(line.len())].to_owned()
        };
        assert_eq!(at(10_000, 10_000), "Decision now");
        assert_eq!(at(3_661_000, 0), "Decision in 1h 1m 1s");
        assert_eq!(at(3_600_000, 0), "Decision in 1h");
        assert_eq!(at(10_001, 10_000), "Decision in 1s");
    }

    #[test]
    fn inactive_and_stopped_statuses() {
        let inactive = CacheWarmingStatus {
            state: WarmState::Inactive,
            reason: Some("cache warming disabled".to_owned()),
            next_warm_at: None,
            decision: None,
            extension_override: false,
            now: Duration::ZERO,
        };
        assert_eq!(
            format_status(&inactive),
            "Inactive (cache warming disabled)"
        );
        let stopped = CacheWarmingStatus {
            decision: Some(Decision {
                action: Action::Stop,
                expected_savings: -0.01,
                ..idle_decision()
            }),
            extension_override: true,
            ..inactive
        };
        assert_eq!(
            format_status(&stopped),
            "Stopped (extension override, 60% continuation probability, expected savings -$0.010 < $0.050)"
        );
    }
}
