//! [`AgentSpec`]: what the engine needs to know of an agent to run a turn
//! for it. The full agent definition (mode, description, markdown source)
//! lives with the agents catalog and converts into this.

use agentgate_permission::Ruleset;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::ModelRef;

/// The parts of an agent the loop uses: name, rules, step limit, system
/// prompt and sampling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AgentSpec {
    /// The agent's name (what a session's `agent` refers to).
    pub name: String,
    /// The agent's rules; session rules are appended after them.
    pub permission: Ruleset,
    /// The step limit (`None`: the engine's default).
    pub steps: Option<u32>,
    /// System prompt sections.
    pub system: Vec<String>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
    /// The model this agent runs on (`None`: the engine's, or the
    /// session's own); for primary and sub-agent sessions alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// Model variant (`low`, `medium`, `high`, ... for reasoning models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Provider options as configured (`reasoningEffort`, `thinking`, ...);
    /// mapped per provider into the request by the engine.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

impl AgentSpec {
    /// An agent with this name, no rules (every permission asks), no step
    /// limit and no system prompt.
    pub fn new(name: impl Into<String>) -> Self {
        AgentSpec {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Sets the rules.
    pub fn with_permission(mut self, permission: Ruleset) -> Self {
        self.permission = permission;
        self
    }

    /// Sets the step limit.
    pub fn with_steps(mut self, steps: u32) -> Self {
        self.steps = Some(steps);
        self
    }

    /// Adds a system prompt section.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system.push(system.into());
        self
    }

    /// Sets the sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the model.
    pub fn with_model(mut self, model: ModelRef) -> Self {
        self.model = Some(model);
        self
    }

    /// Sets the variant.
    pub fn with_variant(mut self, variant: impl Into<String>) -> Self {
        self.variant = Some(variant.into());
        self
    }

    /// Sets a provider option.
    pub fn with_option(mut self, key: impl Into<String>, value: Value) -> Self {
        self.options.insert(key.into(), value);
        self
    }

    /// Sets nucleus sampling.
    pub fn with_top_p(mut self, top_p: f32) -> Self {
        self.top_p = Some(top_p);
        self
    }
}
