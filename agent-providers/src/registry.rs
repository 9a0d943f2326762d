//! Model names and limits: `provider/model` → a client built from the
//! environment ([`model_from_env`], [`EnvModelResolver`]), and the
//! [`ModelInfo`] of well-known models ([`model_info`]).

use std::sync::Arc;

use agent_core::{LanguageModel, ModelCapabilities, ModelInfo, ModelLimits, ModelRef};

use crate::ProviderError;
use crate::openai::OpenAiCompatible;

/// The provider ids [`model_from_env`] knows.
pub const PROVIDERS: &[&str] = &[
    "anthropic",
    "openai",
    "openrouter",
    "ollama",
    "vllm",
    "lmstudio",
];

struct Known {
    prefix: &'static str,
    context: u64,
    input: u64,
    output: u64,
    reasoning: bool,
    images: bool,
    temperature: bool,
}

const fn known(prefix: &'static str, context: u64, output: u64) -> Known {
    Known {
        prefix,
        context,
        input: 0,
        output,
        reasoning: false,
        images: true,
        temperature: true,
    }
}

const fn reasoning(mut k: Known) -> Known {
    k.reasoning = true;
    k
}

const fn no_temperature(mut k: Known) -> Known {
    k.temperature = false;
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
    no_temperature(reasoning(with_input(
        known("gpt-5", 400_000, 128_000),
        272_000,
    ))),
    known("gpt-4-1", 1_047_576, 32_768),
    known("gpt-4o", 128_000, 16_384),
    no_temperature(reasoning(known("o4-mini", 200_000, 100_000))),
    no_temperature(reasoning(known("o3", 200_000, 100_000))),
    no_temperature(reasoning(known("o1", 200_000, 100_000))),
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
/// let info = agent_providers::model_info("anthropic", "claude-sonnet-4-5-20250929");
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
        info.capabilities = ModelCapabilities {
            tools: true,
            reasoning: k.reasoning,
            images: k.images,
            temperature: k.temperature,
        };
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
    info
}

/// Parses a `provider/model` name (the model part may contain `/`, as
/// OpenRouter ids do).
pub fn parse_model_name(name: &str) -> Result<ModelRef, ProviderError> {
    ModelRef::parse(name).ok_or_else(|| ProviderError::InvalidModelName {
        name: name.to_string(),
    })
}

/// Builds the client for a `provider/model` name from the environment:
/// `anthropic/…` (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`), `openai/…`
/// (`OPENAI_API_KEY`, `OPENAI_BASE_URL`; the Responses API, which every
/// OpenAI model serves and codex models require — use
/// [`OpenAiCompatible::openai`] for Chat Completions), `google/…` or
/// `gemini/…` (`GOOGLE_GENERATIVE_AI_API_KEY` or `GEMINI_API_KEY`),
/// `openrouter/…`
/// (`OPENROUTER_API_KEY`), `ollama/…` (`OLLAMA_HOST`), `vllm/…`
/// (`VLLM_BASE_URL`, `VLLM_API_KEY`), `lmstudio/…` (`LMSTUDIO_BASE_URL`).
///
/// ```
/// // Ollama needs no key, so this works on any machine (no request is made).
/// let model = agent_providers::model_from_env("ollama/qwen3:8b").unwrap();
/// assert_eq!(model.info().full_id(), "ollama/qwen3:8b");
/// assert!(agent_providers::model_from_env("qwen3").is_err());
/// ```
pub fn model_from_env(name: &str) -> Result<Arc<dyn LanguageModel>, ProviderError> {
    let name = parse_model_name(name)?;
    model_for_ref(&name)
}

/// [`model_from_env`] for an already parsed name.
pub fn model_for_ref(name: &ModelRef) -> Result<Arc<dyn LanguageModel>, ProviderError> {
    let model = name.model_id.clone();
    Ok(match name.provider_id.as_str() {
        "anthropic" => Arc::new(crate::anthropic::Anthropic::from_env(model)?),
        "openai" => Arc::new(crate::responses::OpenAiResponses::from_env(model)?),
        "google" | "gemini" => Arc::new(crate::gemini::Gemini::from_env(model)?),
        "openrouter" => Arc::new(OpenAiCompatible::openrouter(model)?),
        "ollama" => Arc::new(OpenAiCompatible::ollama(model)),
        "vllm" => Arc::new(OpenAiCompatible::vllm(model)),
        "lmstudio" => Arc::new(OpenAiCompatible::lmstudio(model)),
        other => {
            return Err(ProviderError::UnknownProvider {
                provider: other.to_string(),
            });
        }
    })
}

/// A [`agent_core::ModelResolver`] that builds clients from the
/// environment on demand, for sub-agents configured with another model.
/// Names it cannot build (unknown provider, missing key) resolve to `None`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvModelResolver;

impl agent_core::ModelResolver for EnvModelResolver {
    fn resolve(&self, model: &ModelRef) -> Option<Arc<dyn LanguageModel>> {
        model_for_ref(model).ok()
    }
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
    }

    #[test]
    fn bad_names_are_actionable() {
        let err = parse_model_name("gpt-4.1").unwrap_err();
        assert!(err.to_string().contains("provider/model"));
        let Err(err) = model_from_env("nope/x") else {
            panic!("unknown provider accepted")
        };
        assert!(err.to_string().contains("known providers are"));
    }
}
