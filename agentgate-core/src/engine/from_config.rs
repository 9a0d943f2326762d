//! [`EngineBuilder::from_config`]: a loaded configuration and the host's
//! inputs mapped to an engine builder, with no IO — the agents (built-in,
//! configured, markdown) under a [`PermissionPreset`], the system prompts
//! (instructions, the global folder, skills, the host's sections), the loop
//! settings (the `retry` key), session titles (`small_model`), the `task`
//! tool and the configuration's hooks.
//!
//! Loading the configuration, discovering skills, detecting the agent
//! environment and creating sessions are IO: the caller does them
//! (agentgate's `CodingAgent` is that caller) and passes the results in.

use std::path::PathBuf;
use std::sync::Arc;

use super::builder::EngineBuilder;
use super::permission_preset::PermissionPreset;
use super::retry::RetryPolicy;
use super::settings::LoopSettings;
use super::task_tool::TaskSettings;
use super::title_setting::{SessionTitles, TITLE_AGENT};
use crate::agents::{AgentEnvironment, Agents};
use crate::config::Config;
use crate::model::{LanguageModel, ModelRef, ModelResolver};
use crate::prompts::SystemPrompts;
use crate::skills::Skills;

/// Why a configuration does not map to an engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineSetupError {
    /// The configuration's `retry` key is not a retry policy.
    #[error("config key \"retry\": {0} (see docs/agent-loop.md, \"Retries\")")]
    Retry(String),
}

/// What the configuration does not say and [`EngineBuilder::from_config`]
/// needs: the model, the environment the agents' rules refer to, and the
/// results of the IO the caller did (skills found, the global folder).
///
/// ```
/// use agentgate_core::{AgentEnvironment, EngineSetup, PermissionPreset};
/// # let model: std::sync::Arc<dyn agentgate_core::LanguageModel> =
/// #     std::sync::Arc::new(agentgate_core::testing::ScriptedModel::new(Vec::new()));
/// let setup = EngineSetup::new(model, AgentEnvironment::new("/data", "/tmp/app", "/work/project"))
///     .preset(PermissionPreset::AskBeforeSideEffects)
///     .system_section("Answer in French.");
/// # let _ = setup;
/// ```
#[derive(Clone)]
pub struct EngineSetup {
    model: Arc<dyn LanguageModel>,
    environment: AgentEnvironment,
    resolver: Option<Arc<dyn ModelResolver>>,
    skills: Skills,
    global_dir: Option<PathBuf>,
    preset: PermissionPreset,
    sections: Vec<String>,
}

impl std::fmt::Debug for EngineSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineSetup")
            .field("environment", &self.environment)
            .field("global_dir", &self.global_dir)
            .field("preset", &self.preset)
            .field("sections", &self.sections.len())
            .finish_non_exhaustive()
    }
}

impl EngineSetup {
    /// The engine runs on `model`; the agents' rules refer to
    /// `environment` (its worktree is the engine's).
    pub fn new(model: Arc<dyn LanguageModel>, environment: AgentEnvironment) -> Self {
        EngineSetup {
            model,
            environment,
            resolver: None,
            skills: Skills::default(),
            global_dir: None,
            preset: PermissionPreset::default(),
            sections: Vec::new(),
        }
    }

    /// Resolves the other models named: agents' own `model`, `small_model`
    /// for titles (without one, every session runs on the engine's model
    /// and titles are off unless only the `title` agent names a model).
    pub fn resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// The skills to offer: listed in the system prompt, their folders
    /// readable without an ask (default: none).
    pub fn skills(mut self, skills: Skills) -> Self {
        self.skills = skills;
        self
    }

    /// The user's global configuration folder, whose `AGENTS.md` joins the
    /// system prompt ([`ConfigLoader::resolved_global_dir`](crate::ConfigLoader::resolved_global_dir)).
    pub fn global_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.global_dir = Some(dir.into());
        self
    }

    /// Layers a named set of permission defaults into every agent (default:
    /// [`PermissionPreset::OpencodeDefaults`]).
    pub fn preset(mut self, preset: PermissionPreset) -> Self {
        self.preset = preset;
        self
    }

    /// Appends a section to the system prompt's second part, after the
    /// instruction files (MCP servers' instructions, or the host's own).
    pub fn system_section(mut self, section: impl Into<String>) -> Self {
        self.sections.push(section.into());
        self
    }
}

impl EngineBuilder {
    /// The engine a configuration describes, as opencode assembles it
    /// (§3, §9, §10): the built-in and configured agents with
    /// `setup`'s preset, the `task` tool over them, the system prompts,
    /// the `retry` key's policy, titles when `small_model` (or the `title`
    /// agent's own `model`) is served, and the configuration's `hooks`
    /// commands as [`ShellHook`](crate::ShellHook)s. No IO: the same
    /// inputs give the same builder. Tools, the gate, the store and
    /// anything else are set on the result.
    ///
    /// ```
    /// use agentgate_core::{AgentEnvironment, Config, EngineBuilder, EngineSetup};
    /// # let model: std::sync::Arc<dyn agentgate_core::LanguageModel> =
    /// #     std::sync::Arc::new(agentgate_core::testing::ScriptedModel::new(Vec::new()));
    /// let mut config = Config::default();
    /// config.value.insert("retry".into(), serde_json::json!({"max_retries": 2}));
    /// let environment = AgentEnvironment::new("/data", "/tmp/app", "/work/project");
    /// let builder = EngineBuilder::from_config(&config, EngineSetup::new(model, environment))?;
    /// assert_eq!(builder.loop_settings().retry.max_retries, Some(2));
    /// assert_eq!(builder.catalog().map(|a| a.default_agent().is_ok()), Some(true));
    /// # Ok::<(), agentgate_core::EngineSetupError>(())
    /// ```
    pub fn from_config(config: &Config, setup: EngineSetup) -> Result<Self, EngineSetupError> {
        let EngineSetup {
            model,
            environment,
            resolver,
            skills,
            global_dir,
            preset,
            sections,
        } = setup;
        let environment = with_skill_dirs(environment, &skills);
        let worktree = PathBuf::from(&environment.worktree);
        let permission = config.permission.clone().unwrap_or_default();
        let mut agents = Agents::from_config(
            &environment,
            &permission,
            &config.agents,
            config.default_agent.clone(),
        );
        preset.apply(&mut agents, &environment);
        let titles = configured_titles(config, &agents, resolver.as_ref());
        let prompts = system_prompts(config, global_dir, skills, sections);
        let mut builder = EngineBuilder::new(model)
            .config(loop_settings(config)?)
            .agents(agents)
            .task_tool(TaskSettings::default())
            .worktree(worktree)
            .system_prompts(prompts)
            .session_titles(titles);
        if let Some(resolver) = resolver {
            builder = builder.model_resolver(resolver);
        }
        for hook in &config.hooks {
            builder = builder.hook(Arc::new(hook.to_hook()));
        }
        Ok(builder)
    }
}

/// How the agent's system prompts are assembled: the configuration's
/// instructions, the global folder, the skills and the host's sections.
fn system_prompts(
    config: &Config,
    global_dir: Option<PathBuf>,
    skills: Skills,
    sections: Vec<String>,
) -> SystemPrompts {
    let mut prompts = SystemPrompts::default()
        .with_instructions(config.instructions.clone())
        .with_skills(skills);
    for section in sections {
        prompts = prompts.with_section(section);
    }
    if let Some(global) = global_dir {
        prompts = prompts.with_global_dir(global);
    }
    prompts
}

/// `environment` with the folders of `skills` readable without an ask.
fn with_skill_dirs(mut environment: AgentEnvironment, skills: &Skills) -> AgentEnvironment {
    for dir in skills.readable_dirs() {
        if !environment.skill_dirs.contains(&dir) {
            environment.skill_dirs.push(dir);
        }
    }
    environment
}

/// Titles on with the configuration's `small_model` when the resolver
/// serves it, or with the prompt's model when only the `title` agent's
/// own `model` is configured (which the engine prefers); off without
/// either, or without a `title` agent.
fn configured_titles(
    config: &Config,
    agents: &Agents,
    resolver: Option<&Arc<dyn ModelResolver>>,
) -> SessionTitles {
    let Some(title_agent) = agents.get(TITLE_AGENT) else {
        return SessionTitles::Off;
    };
    let small = config
        .small_model
        .as_deref()
        .and_then(ModelRef::parse)
        .and_then(|reference| resolver.and_then(|r| r.resolve(&reference)));
    match small {
        Some(model) => SessionTitles::Model(model),
        None if title_agent.model.is_some() => SessionTitles::SessionModel,
        None => SessionTitles::Off,
    }
}

/// The loop settings of the configuration: its `retry` key's policy, else
/// the default.
fn loop_settings(config: &Config) -> Result<LoopSettings, EngineSetupError> {
    let retry = match config.value.get("retry") {
        Some(value) => RetryPolicy::from_config(value, "retry").map_err(EngineSetupError::Retry)?,
        None => RetryPolicy::default(),
    };
    Ok(LoopSettings {
        retry,
        ..LoopSettings::default()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::testing::ScriptedModel;
    use serde_json::json;

    fn setup() -> EngineSetup {
        let model: Arc<dyn LanguageModel> = Arc::new(ScriptedModel::new(Vec::new()));
        EngineSetup::new(model, AgentEnvironment::new("/d", "/t", "/w"))
    }

    fn config(value: serde_json::Value) -> Config {
        let mut config = Config::default();
        if let serde_json::Value::Object(map) = value {
            config.value = map;
        }
        config
    }

    #[test]
    fn no_configuration_gives_the_built_in_agents_and_default_loop() {
        let builder = EngineBuilder::from_config(&Config::default(), setup()).unwrap();
        let agents = builder.catalog().unwrap();
        assert_eq!(agents.default_agent().unwrap().name, "build");
        assert!(agents.get("plan").is_some());
        assert_eq!(
            builder.loop_settings().retry,
            RetryPolicy::default(),
            "no retry key: the default policy"
        );
    }

    #[test]
    fn the_retry_key_becomes_the_policy_and_a_bad_one_names_the_key() {
        let builder =
            EngineBuilder::from_config(&config(json!({"retry": {"max_retries": 1}})), setup())
                .unwrap();
        assert_eq!(builder.loop_settings().retry.max_retries, Some(1));
        let error = EngineBuilder::from_config(&config(json!({"retry": 7})), setup())
            .err()
            .unwrap();
        assert!(error.to_string().contains("\"retry\""), "{error}");
    }

    #[test]
    fn the_preset_reaches_every_agent() {
        let builder = EngineBuilder::from_config(
            &Config::default(),
            setup().preset(PermissionPreset::AskBeforeSideEffects),
        )
        .unwrap();
        let build = builder.catalog().unwrap().get("build").unwrap();
        let rules = [&build.permission];
        let action = |p: &str| agentgate_permission::evaluate(p, "x", &rules).action;
        assert_eq!(action("edit"), agentgate_permission::Action::Ask);
        assert_eq!(action("grep"), agentgate_permission::Action::Allow);
    }

    #[test]
    fn titles_are_off_without_a_served_small_model() {
        let builder = EngineBuilder::from_config(
            &Config {
                small_model: Some("x/small".into()),
                ..Config::default()
            },
            setup(),
        )
        .unwrap();
        assert!(matches!(builder.titles(), SessionTitles::Off));
    }

    #[test]
    fn skill_folders_become_readable_in_the_environment() {
        let environment =
            with_skill_dirs(AgentEnvironment::new("/d", "/t", "/w"), &Skills::default());
        assert!(environment.skill_dirs.is_empty());
    }
}
