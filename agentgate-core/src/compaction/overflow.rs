//! When the context is too full to go on (§14.1).

use super::config::CompactionSettings;
use crate::model::ModelLimits;
use crate::usage::Usage;

/// The output budget: `min(limits.output, cap)`, or the cap when the model
/// declares no output limit.
pub fn max_output(limits: &ModelLimits, config: &CompactionSettings) -> u64 {
    match limits.output {
        0 => config.output_token_max,
        output => output.min(config.output_token_max),
    }
}

/// The output cap a request asks for: [`max_output`] when the model
/// declares an output limit (`provider.<id>.models.<model>.limit.output`,
/// or the published one), so `min(limit, 32000)` as opencode sends it;
/// `None` (the server's own default) when it declares none, where opencode
/// would send 32000 — a local server with a small window rejects that.
pub(crate) fn request_output_cap(limits: &ModelLimits, config: &CompactionSettings) -> Option<u32> {
    if limits.output == 0 {
        return None;
    }
    Some(u32::try_from(max_output(limits, config)).unwrap_or(u32::MAX))
}

/// How many tokens the conversation may use: `limits.input − reserved`
/// when the model declares an input limit, else `limits.context −
/// max_output` (never below 0).
pub fn usable(limits: &ModelLimits, config: &CompactionSettings) -> u64 {
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
pub fn is_overflow(usage: &Usage, limits: &ModelLimits, config: &CompactionSettings) -> bool {
    if !config.auto || limits.context == 0 {
        return false;
    }
    usage.context_tokens() >= usable(limits, config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_fills_the_usable_context_overflows() {
        let limits = ModelLimits {
            context: 100_000,
            input: 0,
            output: 32_000,
        };
        let usage = Usage {
            input: 68_000,
            ..Default::default()
        };
        assert!(is_overflow(&usage, &limits, &CompactionSettings::default()));
    }
}
