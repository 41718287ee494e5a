//! Token usage and cost of a model call.

use crate::wire::JsNumber;
use crate::wire::Tokens;
use crate::wire_struct;

wire_struct! {
    /// Cost in USD per usage category.
    pub struct Cost {
        req "input" input: JsNumber,
        req "output" output: JsNumber,
        req "cacheRead" cache_read: JsNumber,
        req "cacheWrite" cache_write: JsNumber,
        req "total" total: JsNumber,
    }
}

wire_struct! {
    /// Tokens of one model call. `reasoning` is already part of `output`, and
    /// `cacheWrite1h` part of `cacheWrite`.
    pub struct Usage {
        req "input" input: Tokens,
        req "output" output: Tokens,
        req "cacheRead" cache_read: Tokens,
        req "cacheWrite" cache_write: Tokens,
        opt "cacheWrite1h" cache_write_1h: Option<Tokens>,
        opt "reasoning" reasoning: Option<Tokens>,
        req "totalTokens" total_tokens: Tokens,
        req "cost" cost: Cost,
    }
}

impl Usage {
    /// Adds another call's usage to this one (session totals).
    pub fn accumulate(&mut self, other: &Usage) {
        self.input.0 += other.input.0;
        self.output.0 += other.output.0;
        self.cache_read.0 += other.cache_read.0;
        self.cache_write.0 += other.cache_write.0;
        self.total_tokens.0 += other.total_tokens.0;
        self.cost.input.0 += other.cost.input.0;
        self.cost.output.0 += other.cost.output.0;
        self.cost.cache_read.0 += other.cost.cache_read.0;
        self.cost.cache_write.0 += other.cost.cache_write.0;
        self.cost.total.0 += other.cost.total.0;
    }
}
