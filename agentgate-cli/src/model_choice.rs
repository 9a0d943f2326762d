//! Which model a command runs on: `--model`, else the config's `model`,
//! else the first provider whose key is in the environment, else the
//! offline demo model (announced by the caller).

use std::sync::Arc;
use std::time::Duration;

use agentgate_core::demo::{DEMO_MODEL, DEMO_PROVIDER, DemoModel};
use agentgate_core::{Config, LanguageModel, ModelRef};
use agentgate_providers::{ConfigModelResolver, model_from_config, parse_model_name};

/// The model used when only a provider's key is set, per key variable.
pub const DEFAULT_MODELS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-5"),
    ("GEMINI_API_KEY", "google/gemini-2.5-pro"),
    ("GOOGLE_GENERATIVE_AI_API_KEY", "google/gemini-2.5-pro"),
];

/// The stderr line announcing the demo model.
pub const DEMO_NOTICE: &str = "agent: no provider configured and no API key set (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY): using the offline demo model (its session asks before running commands)";

/// The chosen model and where the choice came from.
pub struct ModelChoice {
    /// The model to run on.
    pub model: Arc<dyn LanguageModel>,
    /// `provider/model`.
    pub name: String,
    /// Whether it is the offline demo model.
    pub demo: bool,
    /// Resolves other names (agents' own models) the same way.
    pub resolver: Arc<ConfigModelResolver>,
}

impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelChoice")
            .field("name", &self.name)
            .field("demo", &self.demo)
            .finish_non_exhaustive()
    }
}

/// Builds the model named `name` (`provider/model`) with the config's
/// provider entries and the environment.
pub fn named_model(name: &str, config: &Config) -> Result<Arc<dyn LanguageModel>, String> {
    let reference: ModelRef = parse_model_name(name).map_err(|e| e.to_string())?;
    model_from_config(&reference, &config.providers).map_err(|e| format!("model {name}: {e}"))
}

/// Chooses the model (see the module docs); `env` reads environment
/// variables (tests pass their own).
pub fn choose_model(
    explicit: Option<&str>,
    config: &Config,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ModelChoice, String> {
    let resolver = Arc::new(ConfigModelResolver::new(config.providers.clone()));
    let name = explicit
        .map(str::to_string)
        .or_else(|| config.model.clone())
        .or_else(|| {
            DEFAULT_MODELS
                .iter()
                .find(|(var, _)| env(var).is_some_and(|v| !v.trim().is_empty()))
                .map(|(_, model)| model.to_string())
        });
    match name {
        Some(name) => Ok(ModelChoice {
            model: named_model(&name, config)?,
            name,
            demo: false,
            resolver,
        }),
        None => Ok(ModelChoice {
            model: Arc::new(DemoModel::new().with_word_delay(demo_word_delay(&env))),
            name: format!("{}/{}", DEMO_PROVIDER, DEMO_MODEL),
            demo: true,
            resolver,
        }),
    }
}

/// The demo model's pause between words: 8 ms, so its answer streams like a
/// real model's, or `AGENT_DEMO_WORD_DELAY_MS` (0 in the CLI's own tests and
/// for recordings).
fn demo_word_delay(env: &impl Fn(&str) -> Option<String>) -> Duration {
    env("AGENT_DEMO_WORD_DELAY_MS")
        .and_then(|ms| ms.trim().parse().ok())
        .map_or(Duration::from_millis(8), Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_configured_means_the_demo_and_a_key_means_its_provider() {
        let config = Config::default();
        let demo = choose_model(None, &config, |_| None).unwrap();
        assert!(demo.demo);
        let keyed = choose_model(None, &config, |v| {
            (v == "ANTHROPIC_API_KEY").then(|| "k".to_string())
        });
        // The client reads the key itself; without it in the real
        // environment the name is still chosen from the variable.
        match keyed {
            Ok(choice) => assert_eq!(choice.name, "anthropic/claude-sonnet-4-5"),
            Err(message) => assert!(message.contains("ANTHROPIC_API_KEY"), "{message}"),
        }
        let err = choose_model(Some("nonsense"), &config, |_| None).unwrap_err();
        assert!(err.contains("provider/model"), "{err}");
    }
}
