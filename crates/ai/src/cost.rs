//! Cost of a model call (messages.md §2).

use knightcode_protocol::JsNumber;
use knightcode_protocol::Usage;

use crate::model::ModelCost;

/// Fills `usage.cost` from the model's per-million prices.
///
/// The rate set is the base prices, or the tier with the highest `inputTokensAbove` below the
/// prompt size (input + cache read + cache write). One-hour cache writes are billed at twice
/// the input price instead of the cache-write price.
pub fn calculate_cost(cost: &ModelCost, usage: &mut Usage) {
    let prompt = usage.input.0 + usage.cache_read.0 + usage.cache_write.0;
    let mut rates = (cost.input, cost.output, cost.cache_read, cost.cache_write);
    let mut threshold: Option<u64> = None;
    for tier in &cost.tiers {
        if tier.input_tokens_above < prompt && threshold.is_none_or(|t| tier.input_tokens_above > t)
        {
            threshold = Some(tier.input_tokens_above);
            rates = (tier.input, tier.output, tier.cache_read, tier.cache_write);
        }
    }
    let (input, output, cache_read, cache_write) = rates;
    let long_write = usage.cache_write_1h.map_or(0, |t| t.0) as f64;
    let short_write = usage.cache_write.0 as f64 - long_write;
    let c = &mut usage.cost;
    c.input = JsNumber(input / 1_000_000.0 * usage.input.0 as f64);
    c.output = JsNumber(output / 1_000_000.0 * usage.output.0 as f64);
    c.cache_read = JsNumber(cache_read / 1_000_000.0 * usage.cache_read.0 as f64);
    c.cache_write = JsNumber((cache_write * short_write + input * 2.0 * long_write) / 1_000_000.0);
    c.total = JsNumber(c.input.0 + c.output.0 + c.cache_read.0 + c.cache_write.0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CostTier;
    use knightcode_protocol::Tokens;

    #[test]
    fn base_and_tiers() {
        let mut cost = ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: vec![],
        };
        let mut usage = Usage {
            input: Tokens(1000),
            output: Tokens(100),
            cache_read: Tokens(2000),
            cache_write: Tokens(400),
            cache_write_1h: Some(Tokens(100)),
            ..Usage::default()
        };
        calculate_cost(&cost, &mut usage);
        assert_eq!(usage.cost.input.0, 0.003);
        assert_eq!(usage.cost.output.0, 0.0015);
        assert!((usage.cost.cache_write.0 - (3.75 * 300.0 + 6.0 * 100.0) / 1e6).abs() < 1e-15);
        cost.tiers = vec![CostTier {
            input_tokens_above: 3000,
            input: 6.0,
            output: 22.5,
            cache_read: 0.6,
            cache_write: 7.5,
        }];
        calculate_cost(&cost, &mut usage);
        assert_eq!(usage.cost.input.0, 0.006);
        let total = usage.cost.input.0
            + usage.cost.output.0
            + usage.cost.cache_read.0
            + usage.cost.cache_write.0;
        assert_eq!(usage.cost.total.0, total);
    }
}
