//! Why a provider client could not be built: [`ProviderError`].
//!
//! Failures of a model call itself are [`agentgate_core::ModelError`]s.

/// Why a model client could not be created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The API key variable is not set (or empty).
    #[error(
        "no API key for {provider}: set the {variable} environment variable, or `provider.{provider}.options.apiKey` in opencode.json"
    )]
    MissingApiKey {
        /// The provider that needs it.
        provider: String,
        /// The environment variable that was read.
        variable: String,
    },
    /// The model name is not `provider/model`.
    #[error(
        "model name {name:?} is not of the form provider/model (for example anthropic/claude-sonnet-4-5 or ollama/qwen3:8b)"
    )]
    InvalidModelName {
        /// The name given.
        name: String,
    },
    /// A `provider.<id>.options` value has the wrong form (a timeout that
    /// is not a number of milliseconds or `false`).
    #[error("config: {message}")]
    InvalidOption {
        /// Which key, what was expected and what was found.
        message: String,
    },
    /// A provider with no model catalogue of its own (a configured
    /// OpenAI-compatible server, Ollama, vLLM, LM Studio) lists its models
    /// under `provider.<id>.models`, and the model asked for is not one of
    /// them (as opencode, which reports the model as not found).
    #[error(
        "not listed under `provider.{provider}.models` ({listed}): add \"{model}\" there or choose a listed model with the `model` key or --model"
    )]
    UnlistedModel {
        /// The provider id.
        provider: String,
        /// The model id asked for.
        model: String,
        /// The models the entry lists, for the message.
        listed: String,
    },
    /// No client is known for this provider id.
    #[error("unknown provider {provider:?}: known providers are {known}")]
    UnknownProvider {
        /// The provider id given.
        provider: String,
        /// The providers that are known, as a list for the message.
        known: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_key_names_the_variable() {
        let error = ProviderError::MissingApiKey {
            provider: "anthropic".into(),
            variable: "ANTHROPIC_API_KEY".into(),
        };
        assert_eq!(
            error.to_string(),
            "no API key for anthropic: set the ANTHROPIC_API_KEY environment variable, or `provider.anthropic.options.apiKey` in opencode.json"
        );
    }
}
