//! Token accounting: [`Usage`].

use serde::{Deserialize, Serialize};

/// Tokens used by one model call.
///
/// Providers normalise their counts to this shape: `input` **excludes**
/// cached tokens (OpenAI and Gemini report prompt tokens including the
/// cached ones, so their adapters subtract `cache_read`; Anthropic already
/// reports them apart), and `output` **includes** `reasoning` (which is
/// reported separately for information only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens that were neither read from nor written to the cache.
    pub input: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Reasoning ("thinking") tokens, a subset of `output`.
    pub reasoning: u64,
    /// Input tokens served from the provider's prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's prompt cache.
    pub cache_write: u64,
    /// The provider's own total, when it reports one (0 otherwise).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub total: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// The token count that decides context overflow (§14.1): the
    /// provider's total when non-zero, else input + output + cache read +
    /// cache write (reasoning is part of output and not counted again).
    pub fn context_tokens(&self) -> u64 {
        if self.total != 0 {
            self.total
        } else {
            // Counts come from provider JSON: saturate rather than overflow.
            self.input
                .saturating_add(self.output)
                .saturating_add(self.cache_read)
                .saturating_add(self.cache_write)
        }
    }

    /// Adds another call's usage to this one (for per-turn totals).
    pub fn accumulate(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.total = self.total.saturating_add(other.total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_provider_counts_saturate_instead_of_panicking() {
        let mut usage = Usage {
            input: u64::MAX,
            output: 1,
            ..Default::default()
        };
        assert_eq!(usage.context_tokens(), u64::MAX);
        usage.accumulate(&Usage {
            input: 5,
            ..Default::default()
        });
        assert_eq!(usage.input, u64::MAX);
    }
}
