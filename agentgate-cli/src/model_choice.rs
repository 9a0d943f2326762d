//! Which model a command runs on: `--model`, else the config's `model`,
//! else the first provider whose key is in the environment, else the
//! offline demo model (announced by the caller).

use std::sync::Arc;
use std::time::Duration;

use agentgate::Workspace;
use agentgate_core::LanguageModel;
use agentgate_core::demo::{DEMO_MODEL, DEMO_PROVIDER, DemoModel};

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
}

impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelChoice")
            .field("name", &self.name)
            .field("demo", &self.demo)
            .finish_non_exhaustive()
    }
}

/// Chooses the model (see the module docs) as the library does
/// ([`Workspace::model_name`], [`Workspace::model`]), with the demo model
/// where the library would say there is none; `env` reads environment
/// variables (tests pass their own).
pub fn choose_model(
    explicit: Option<&str>,
    workspace: &Workspace,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ModelChoice, String> {
    let name = explicit
        .map(str::to_string)
        .or_else(|| workspace.model_name_with(&env));
    match name {
        Some(name) => Ok(ModelChoice {
            model: workspace.model(&name).map_err(|e| e.to_string())?,
            name,
            demo: false,
        }),
        None => Ok(ModelChoice {
            model: Arc::new(DemoModel::new().with_word_delay(demo_word_delay(&env))),
            name: format!("{}/{}", DEMO_PROVIDER, DEMO_MODEL),
            demo: true,
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
        let dir = std::env::temp_dir().join(format!("agent-model-choice-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let loader = agentgate_core::ConfigLoader::new(&dir)
            .home(&dir)
            .env(|_| None);
        let config = Workspace::with_loader(&dir, loader).unwrap();
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
