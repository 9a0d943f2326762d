//! [`Agent`]: an agent's full definition, and its [`AgentMode`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use agentgate_permission::{Action, Ruleset, decide};

use crate::agent_spec::AgentSpec;
use crate::model::ModelRef;

/// Where an agent can be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentMode {
    /// Selectable by the user as the session's agent.
    Primary,
    /// Only callable through the task tool.
    Subagent,
    /// Both.
    All,
}

/// An agent: a named configuration with its own permission rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    /// Unique name (`build`, `plan`, `team/reviewer` ...).
    pub name: String,
    /// What the agent is for; shown to the model in the task tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where the agent can be used.
    pub mode: AgentMode,
    /// Whether the agent is built in.
    pub native: bool,
    /// Hidden agents are not offered to users.
    #[serde(default)]
    pub hidden: bool,
    /// The agent's permission rules (last match wins).
    pub permission: Ruleset,
    /// The model to use; `None` inherits the caller's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// Model variant (reasoning effort and similar), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The agent's own system prompt; `None` uses the provider prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// UI color.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Step limit for one prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// Provider options passed through unchanged.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

impl Agent {
    pub(super) fn native(
        name: &str,
        mode: AgentMode,
        description: Option<&str>,
        permission: Ruleset,
    ) -> Self {
        Agent {
            name: name.to_string(),
            description: description.map(str::to_string),
            mode,
            native: true,
            hidden: false,
            permission,
            model: None,
            variant: None,
            prompt: None,
            temperature: None,
            top_p: None,
            color: None,
            steps: None,
            options: Map::new(),
        }
    }

    /// What this agent's own rules decide for `permission` and `pattern`
    /// (session rules and approvals not included).
    pub fn decide(&self, permission: &str, pattern: &str) -> Action {
        decide(permission, pattern, &[&self.permission])
    }
}

impl From<&Agent> for AgentSpec {
    /// The part of an agent the loop needs: name, rules, step limit, prompt,
    /// model, sampling, variant and options.
    fn from(agent: &Agent) -> Self {
        AgentSpec {
            name: agent.name.clone(),
            permission: agent.permission.clone(),
            steps: agent.steps,
            system: agent.prompt.iter().cloned().collect(),
            temperature: agent.temperature.map(|t| t as f32),
            top_p: agent.top_p.map(|t| t as f32),
            model: agent.model.clone(),
            variant: agent.variant.clone(),
            options: agent.options.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::{AgentEnvironment, Agents};
    use agentgate_permission::PermissionConfig;

    #[test]
    fn agent_becomes_a_loop_spec() {
        let env = AgentEnvironment::new("/d", "/t", "/w");
        let agents = Agents::builtin(&env, &PermissionConfig::default());
        let title = agents.get("title").unwrap();
        let spec = AgentSpec::from(title);
        assert_eq!(spec.name, "title");
        assert_eq!(spec.permission, title.permission);
        assert_eq!(spec.temperature, Some(0.5));
    }
}
