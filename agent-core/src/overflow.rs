//! When the context is too full to go on (§14.1).

use serde::{Deserialize, Serialize};

use crate::model::ModelLimits;
use crate::usage::Usage;

/// opencode's output budget cap (`OUTPUT_TOKEN_MAX`).
pub const OUTPUT_TOKEN_MAX: u64 = 32_000;

/// Overflow detection and compaction settings (§14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionConfig {
    /// Detect overflow at all (`compaction.auto`, default true).
    pub auto: bool,
    /// Tokens kept free below an input limit (`compaction.reserved`);
    /// default `min(20000, max_output)`.
    pub reserved: Option<u64>,
    /// The output budget cap, default [`OUTPUT_TOKEN_MAX`].
    pub output_token_max: u64,
    /// How many recent user turns compaction keeps verbatim when they fit
    /// the preserve budget (`compaction.tail_turns`, default 2).
    pub tail_turns: u32,
    /// Token budget of the kept tail (`compaction.preserve_recent_tokens`);
    /// default `clamp(usable / 4, 2000, 8000)`.
    pub preserve_recent_tokens: Option<u64>,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            auto: true,
            reserved: None,
            output_token_max: OUTPUT_TOKEN_MAX,
            tail_turns: 2,
            preserve_recent_tokens: None,
        }
    }
}

/// The output budget: `min(limits.output, cap)`, or the cap when the model
/// declares no output limit.
pub fn max_output(limits: &ModelLimits, config: &CompactionConfig) -> u64 {
    match limits.output {
        0 => config.output_token_max,
        output => output.min(config.output_token_max),
    }
}

/// How many tokens the conversation may use: `limits.input − reserved`
/// when the model declares an input limit, else `limits.context −
/// max_output` (never below 0).
pub fn usable(limits: &ModelLimits, config: &CompactionConfig) -> u64 {
    let max_output = max_output(limits, config);
    if limits.input > 0 {
        let reserved = config.reserved.unwrap_or(max_output.min(20_000));
        limits.input.saturating_sub(reserved)
    } else {
        limits.context.saturating_sub(max_output)
    }
}

/// Whether a call that used `usage` filled the context (§14.1):
/// `usage.context_tokens() >= usable(...)`. Never when `auto` is off or the
/// model declares no context limit.
///
/// ```
/// use agent_core::{overflow::{is_overflow, CompactionConfig}, ModelLimits, Usage};
/// let limits = ModelLimits { context: 100_000, input: 0, output: 32_000 };
/// let usage = Usage { input: 68_000, ..Default::default() };
/// assert!(is_overflow(&usage, &limits, &CompactionConfig::default()));
/// ```
pub fn is_overflow(usage: &Usage, limits: &ModelLimits, config: &CompactionConfig) -> bool {
    if !config.auto || limits.context == 0 {
        return false;
    }
    usage.context_tokens() >= usable(limits, config)
}
