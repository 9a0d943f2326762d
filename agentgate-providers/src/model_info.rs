//! What is known about well-known models: [`model_info`] (published
//! limits and capabilities, matched by id prefix).

use agentgate_core::{ModelInfo, ModelLimits};

struct Known {
    prefix: &'static str,
    context: u64,
    input: u64,
    output: u64,
    reasoning: bool,
    images: bool,
}

const fn known(prefix: &'static str, context: u64, output: u64) -> Known {
    Known {
        prefix,
        context,
        input: 0,
        output,
        reasoning: false,
        images: true,
    }
}

const fn reasoning(mut k: Known) -> Known {
    k.reasoning = true;
    k
}

const fn with_input(mut k: Known, input: u64) -> Known {
    k.input = input;
    k
}

/// Published limits of well-known models, most specific prefix first.
/// Matched against the last `/` segment of the model id with `.` read as
/// `-` (so OpenRouter's `anthropic/claude-sonnet-4.5` and dated ids such
/// as `claude-sonnet-4-5-20250929` are found).
const KNOWN: &[Known] = &[
    reasoning(known("claude-opus-4-5", 200_000, 64_000)),
    reasoning(known("claude-opus-4", 200_000, 32_000)),
    reasoning(known("claude-sonnet-4", 200_000, 64_000)),
    reasoning(known("claude-haiku-4", 200_000, 64_000)),
    reasoning(known("claude-3-7-sonnet", 200_000, 64_000)),
    known("claude-3-5-haiku", 200_000, 8_192),
    known("claude-3-5-sonnet", 200_000, 8_192),
    reasoning(with_input(known("gpt-5", 400_000, 128_000), 272_000)),
    known("gpt-4-1", 1_047_576, 32_768),
    known("gpt-4o", 128_000, 16_384),
    reasoning(known("o4-mini", 200_000, 100_000)),
    reasoning(known("o3", 200_000, 100_000)),
    reasoning(known("o1", 200_000, 100_000)),
    reasoning(known("gemini-3", 1_048_576, 65_536)),
    reasoning(known("gemini-2-5", 1_048_576, 65_536)),
];

/// The description of `model` served by `provider`: published limits and
/// capabilities for well-known models; for others tool support only, with
/// limits "not declared" (`0`), except Anthropic models, which all have a
/// 200k context (output capped at 8192 unless known).
///
/// Local servers (Ollama, vLLM, LM Studio) decide the context window at
/// load time (Ollama truncates silently beyond `num_ctx`), so declare it
/// with the client's `with_info` when compaction should know it.
///
/// ```
/// let info = agentgate_providers::model_info("anthropic", "claude-sonnet-4-5-20250929");
/// assert_eq!(info.limits.context, 200_000);
/// assert_eq!(info.limits.output, 64_000);
/// assert!(info.capabilities.reasoning);
/// ```
pub fn model_info(provider: &str, model: &str) -> ModelInfo {
    let mut info = ModelInfo::new(provider, model);
    let last = model.rsplit('/').next().unwrap_or(model).replace('.', "-");
    if let Some(k) = KNOWN.iter().find(|k| last.starts_with(k.prefix)) {
        info.limits = ModelLimits {
            context: k.context,
            input: k.input,
            output: k.output,
        };
        info.capabilities.tools = true;
        info.capabilities.reasoning = k.reasoning;
        info.capabilities.images = k.images;
        info.capabilities.temperature = true;
    } else if provider == "anthropic" || last.starts_with("claude") {
        info.limits = ModelLimits {
            context: 200_000,
            input: 0,
            output: 8_192,
        };
        info.capabilities.images = true;
        info.capabilities.temperature = true;
    } else {
        info.capabilities.temperature = true;
    }
    // Whether sampling may be set is a request rule of the model family,
    // which also covers models this table does not list.
    info.capabilities.temperature = crate::families::model_family(provider, model).temperature;
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_models_by_prefix_and_segment() {
        let info = model_info("openrouter", "anthropic/claude-sonnet-4.5");
        assert_eq!(info.limits.output, 64_000);
        let info = model_info("openai", "gpt-5-codex");
        assert_eq!(info.limits.input, 272_000);
        assert!(!info.capabilities.temperature);
        let info = model_info("openai", "gpt-4.1-mini");
        assert_eq!(info.limits.context, 1_047_576);
        let info = model_info("ollama", "qwen3:8b");
        assert_eq!(info.limits, ModelLimits::default());
        assert!(info.capabilities.tools);
        assert!(info.capabilities.temperature);
        // Unlisted OpenAI models follow their family's rule.
        assert!(
            !model_info("openai", "gpt-6-preview")
                .capabilities
                .temperature
        );
    }
}
