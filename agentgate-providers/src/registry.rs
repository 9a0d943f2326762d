//! Model names to clients: `provider/model` → a client built from the
//! environment ([`model_from_env`], [`EnvModelResolver`]), using the one
//! provider table ([`crate::PROVIDERS`]).

use std::sync::Arc;

use agentgate_core::{LanguageModel, ModelRef};

use crate::ProviderError;
use crate::openai_chat::OpenAiCompatible;
use crate::providers::{Api, find_provider};

/// Parses a `provider/model` name (the model part may contain `/`, as
/// OpenRouter ids do).
pub fn parse_model_name(name: &str) -> Result<ModelRef, ProviderError> {
    ModelRef::parse(name).ok_or_else(|| ProviderError::InvalidModelName {
        name: name.to_string(),
    })
}

/// Builds the client for a `provider/model` name from the environment:
/// `anthropic/…` (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`: the host, as
/// the official SDK reads it; a value ending in `/v1` works too), `openai/…`
/// (`OPENAI_API_KEY`, `OPENAI_BASE_URL`: `/v1` included; the Responses API, which every
/// OpenAI model serves and codex models require — use
/// [`OpenAiCompatible::openai`] for Chat Completions), `google/…` or
/// `gemini/…` (`GOOGLE_GENERATIVE_AI_API_KEY` or `GEMINI_API_KEY`),
/// `openrouter/…`
/// (`OPENROUTER_API_KEY`), `ollama/…` (`OLLAMA_HOST`), `vllm/…`
/// (`VLLM_BASE_URL`, `VLLM_API_KEY`), `lmstudio/…` (`LMSTUDIO_BASE_URL`).
///
/// ```
/// // Ollama needs no key, so this works on any machine (no request is made).
/// let model = agentgate_providers::model_from_env("ollama/qwen3:8b").unwrap();
/// assert_eq!(model.info().full_id(), "ollama/qwen3:8b");
/// assert!(agentgate_providers::model_from_env("qwen3").is_err());
/// ```
pub fn model_from_env(name: &str) -> Result<Arc<dyn LanguageModel>, ProviderError> {
    let name = parse_model_name(name)?;
    model_for_ref(&name)
}

/// [`model_from_env`] for an already parsed name.
pub fn model_for_ref(name: &ModelRef) -> Result<Arc<dyn LanguageModel>, ProviderError> {
    let model = name.model_id.clone();
    let Some(provider) = find_provider(&name.provider_id) else {
        return Err(ProviderError::UnknownProvider {
            provider: name.provider_id.clone(),
            known: crate::providers::provider_list(),
        });
    };
    Ok(match provider.api {
        Api::AnthropicMessages => Arc::new(crate::anthropic::Anthropic::from_env(model)?),
        Api::OpenAiResponses => Arc::new(crate::responses::OpenAiResponses::from_env(model)?),
        Api::Gemini => Arc::new(crate::gemini::Gemini::from_env(model)?),
        Api::ChatCompletions => Arc::new(OpenAiCompatible::from_provider(provider, model)?),
    })
}

/// A [`agentgate_core::ModelResolver`] that builds clients from the
/// environment on demand, for sub-agents configured with another model.
/// Names it cannot build (unknown provider, missing key) resolve to `None`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvModelResolver;

impl agentgate_core::ModelResolver for EnvModelResolver {
    fn resolve(&self, model: &ModelRef) -> Option<Arc<dyn LanguageModel>> {
        model_for_ref(model).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_names_are_actionable() {
        let err = parse_model_name("gpt-4.1").unwrap_err();
        assert!(err.to_string().contains("provider/model"));
        let Err(err) = model_from_env("nope/x") else {
            panic!("unknown provider accepted")
        };
        assert!(err.to_string().contains("known providers are"));
        assert!(err.to_string().contains("google (or gemini)"));
    }
}
