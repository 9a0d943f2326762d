//! What a remote turn used: the tokens and cost of each of its answers
//! (opencode's `AssistantMessage.tokens` and `cost`, one message per
//! step), summed.

use serde_json::Value;

/// The tokens and cost of a remote turn, every step's summed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct RemoteUsage {
    /// Steps (assistant messages) the turn ran.
    pub steps: u32,
    /// Input tokens neither read from nor written to the cache.
    pub input: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Reasoning tokens, a part of `output`.
    pub reasoning: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write: u64,
    /// What the turn cost in US dollars, from the server model's
    /// configured prices (0 without prices).
    pub cost: f64,
}

impl RemoteUsage {
    /// Whether the server reported any tokens (a turn that got no answer
    /// reports none).
    pub fn has_tokens(&self) -> bool {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
            > 0
    }
}

/// The latest info of each assistant message of a turn, in the order
/// they began.
#[derive(Debug, Default)]
pub(crate) struct UsageTally {
    answers: Vec<(String, Value)>,
}

impl UsageTally {
    /// Records `info` (an assistant message's); `true` when it is a
    /// message not seen before (a step began).
    pub(crate) fn record(&mut self, info: &Value) -> bool {
        let id = info.get("id").and_then(Value::as_str).unwrap_or_default();
        if let Some((_, known)) = self.answers.iter_mut().find(|(seen, _)| seen == id) {
            *known = info.clone();
            return false;
        }
        self.answers.push((id.to_string(), info.clone()));
        true
    }

    /// The sum over every answer.
    pub(crate) fn total(&self) -> RemoteUsage {
        let mut usage = RemoteUsage::default();
        for (_, info) in &self.answers {
            let count = |path: &str| info.pointer(path).and_then(Value::as_u64).unwrap_or(0);
            usage.steps = usage.steps.saturating_add(1);
            usage.input = usage.input.saturating_add(count("/tokens/input"));
            usage.output = usage.output.saturating_add(count("/tokens/output"));
            usage.reasoning = usage.reasoning.saturating_add(count("/tokens/reasoning"));
            usage.cache_read = usage.cache_read.saturating_add(count("/tokens/cache/read"));
            usage.cache_write = usage
                .cache_write
                .saturating_add(count("/tokens/cache/write"));
            let cost = info.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
            if cost.is_finite() && cost > 0.0 {
                usage.cost += cost;
            }
        }
        usage
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_answer_counts_once_at_its_latest_and_the_steps_add_up() {
        let mut tally = UsageTally::default();
        assert!(tally.record(&json!({"id": "msg_1", "tokens": {"input": 0, "output": 0}})));
        assert!(!tally.record(&json!({"id": "msg_1", "cost": 0.5,
            "tokens": {"input": 100, "output": 10, "reasoning": 2, "cache": {"read": 50, "write": 0}}})));
        assert!(tally.record(&json!({"id": "msg_2", "cost": 0.25,
            "tokens": {"input": 20, "output": 5, "cache": {"read": 0, "write": 7}}})));
        let total = tally.total();
        assert_eq!(total.steps, 2);
        assert_eq!((total.input, total.output, total.reasoning), (120, 15, 2));
        assert_eq!((total.cache_read, total.cache_write), (50, 7));
        assert!((total.cost - 0.75).abs() < 1e-12);
        assert!(total.has_tokens());
    }

    #[test]
    fn huge_counts_saturate_instead_of_overflowing() {
        let mut tally = UsageTally::default();
        tally.record(&json!({"id": "a", "tokens": {"input": u64::MAX}}));
        tally.record(&json!({"id": "b", "tokens": {"input": u64::MAX, "output": u64::MAX}}));
        let total = tally.total();
        assert_eq!(total.input, u64::MAX);
        assert!(total.has_tokens());
    }

    #[test]
    fn a_hostile_cost_or_missing_tokens_count_as_nothing() {
        let mut tally = UsageTally::default();
        tally.record(&json!({"id": "msg_1", "cost": -5.0, "tokens": "lots"}));
        let total = tally.total();
        assert_eq!(total.steps, 1);
        assert!(!total.has_tokens());
        assert_eq!(total.cost, 0.0);
    }
}
