//! [`Agents`]: the agents of a project — built-in, then configured (§9.2)
//! — and the choice of the default agent (§9.3).

use indexmap::IndexMap;
use serde::Serialize;

use agentgate_permission::{Action, PermissionConfig, Ruleset, decide};

use super::agent::{Agent, AgentMode};
use super::builtin::{builtin_agents, default_permission, finish_permission};
use super::config::{AgentConfig, merge_options};
use super::environment::AgentEnvironment;
use crate::model::ModelRef;

/// Errors choosing the default agent (§9.3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The configured default agent does not exist.
    #[error("default agent {0:?} not found")]
    NotFound(String),
    /// The configured default agent is a sub-agent.
    #[error("default agent {0:?} is a subagent")]
    Subagent(String),
    /// The configured default agent is hidden.
    #[error("default agent {0:?} is hidden")]
    Hidden(String),
    /// No agent can be the default.
    #[error("no primary visible agent found")]
    NoPrimary,
}

/// The agents of a project, in insertion order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agents {
    agents: Vec<Agent>,
    default_agent: Option<String>,
    #[serde(skip)]
    environment: AgentEnvironment,
}

impl Agents {
    /// The built-in agents (§9.2), each ruleset = defaults + own rules + `user`.
    pub fn builtin(env: &AgentEnvironment, user: &PermissionConfig) -> Self {
        Agents::from_config(env, user, &IndexMap::new(), None)
    }

    /// Built-in agents, then the agents of `config` (`agent.<name>` entries,
    /// already normalised) applied as §9.2 describes; `default_agent` as in
    /// opencode's `default_agent` setting.
    pub fn from_config(
        env: &AgentEnvironment,
        user: &PermissionConfig,
        config: &IndexMap<String, AgentConfig>,
        default_agent: Option<String>,
    ) -> Self {
        let defaults = default_permission(env);
        let user = env.expand(user);
        let mut agents = builtin_agents(env, &defaults, &user);
        for (name, cfg) in config {
            if cfg.disable == Some(true) {
                agents.retain(|a| &a.name != name);
                continue;
            }
            let position = match agents.iter().position(|a| &a.name == name) {
                Some(p) => p,
                None => {
                    let permission: Ruleset = defaults.iter().chain(user.iter()).cloned().collect();
                    let mut agent = Agent::native(name, AgentMode::All, None, permission);
                    agent.native = false;
                    agents.push(agent);
                    agents.len() - 1
                }
            };
            let agent = &mut agents[position];
            if let Some(model) = cfg.model.as_deref().and_then(ModelRef::parse) {
                agent.model = Some(model);
            }
            macro_rules! set {
                ($($field:ident),*) => {$(
                    if let Some(v) = &cfg.$field { agent.$field = Some(v.clone()); }
                )*};
            }
            set!(
                variant,
                prompt,
                description,
                temperature,
                top_p,
                color,
                steps
            );
            if let Some(mode) = cfg.mode {
                agent.mode = mode;
            }
            if let Some(hidden) = cfg.hidden {
                agent.hidden = hidden;
            }
            if let Some(display) = &cfg.name {
                agent.name.clone_from(display);
            }
            merge_options(&mut agent.options, &cfg.options);
            if let Some(permission) = &cfg.permission {
                agent.permission.extend(env.expand(permission));
            }
        }
        for agent in &mut agents {
            finish_permission(&mut agent.permission, env);
        }
        Agents {
            agents,
            default_agent,
            environment: env.clone(),
        }
    }

    /// The environment the agents' rules were built for.
    pub fn environment(&self) -> &AgentEnvironment {
        &self.environment
    }

    /// The agent called `name`.
    pub fn get(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// Agents in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = &Agent> {
        self.agents.iter()
    }

    /// Replaces every agent's ruleset with `f(agent)`: for a host that
    /// layers rules of its own into the agents' (the coding agent
    /// builder's permission preset).
    pub fn map_permissions(&mut self, mut f: impl FnMut(&Agent) -> Ruleset) {
        for agent in &mut self.agents {
            agent.permission = f(agent);
        }
    }

    /// opencode's `list()`: the default agent (configured, else `build`)
    /// first, the rest sorted by name.
    pub fn list(&self) -> Vec<&Agent> {
        let first = self.default_agent.as_deref().unwrap_or("build");
        let mut rest: Vec<&Agent> = self.agents.iter().filter(|a| a.name != first).collect();
        rest.sort_by(|a, b| a.name.cmp(&b.name));
        self.get(first).into_iter().chain(rest).collect()
    }

    /// opencode's `defaultInfo()` (§9.3).
    pub fn default_agent(&self) -> Result<&Agent, AgentError> {
        if let Some(name) = &self.default_agent {
            let agent = self
                .get(name)
                .ok_or_else(|| AgentError::NotFound(name.clone()))?;
            if agent.mode == AgentMode::Subagent {
                return Err(AgentError::Subagent(name.clone()));
            }
            if agent.hidden {
                return Err(AgentError::Hidden(name.clone()));
            }
            return Ok(agent);
        }
        self.agents
            .iter()
            .find(|a| a.mode != AgentMode::Subagent && !a.hidden)
            .ok_or(AgentError::NoPrimary)
    }

    /// The sub-agents the task tool may offer a caller whose rules are
    /// `caller`: mode not `primary` and `task` not denied for their name,
    /// sorted by name (§10.2).
    pub fn callable_subagents(&self, caller: &Ruleset) -> Vec<&Agent> {
        let mut out: Vec<&Agent> = self
            .agents
            .iter()
            .filter(|a| a.mode != AgentMode::Primary)
            .filter(|a| decide("task", &a.name, &[caller]) != Action::Deny)
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn user_config_comes_after_builtin_rules_and_agent_config_after_that() {
        let env = AgentEnvironment::new("/d", "/t", "/w");
        let user: PermissionConfig = serde_json::from_str(r#"{"edit": "allow"}"#).unwrap();
        let mut config = IndexMap::new();
        let review: Value = serde_json::from_str(
            r#"{"permission": {"edit": "deny"}, "mode": "subagent", "description": "r"}"#,
        )
        .unwrap();
        config.insert(
            "review".to_string(),
            AgentConfig::from_value(&review, "agent.review").unwrap(),
        );
        let agents = Agents::from_config(&env, &user, &config, None);
        // A global edit allow re-enables editing in plan (opencode pitfall §9.2).
        assert_eq!(
            agents.get("plan").unwrap().decide("edit", "a.rs"),
            Action::Allow
        );
        let review = agents.get("review").unwrap();
        assert_eq!(review.decide("edit", "a.rs"), Action::Deny);
        assert!(!review.native);
        assert_eq!(
            review.permission.last().unwrap().pattern,
            "/d/tool-output/*"
        );
        let names: Vec<_> = agents
            .callable_subagents(&agents.get("build").unwrap().permission)
            .iter()
            .map(|a| a.name.clone())
            .collect();
        assert_eq!(names, ["explore", "general", "review"]);
    }
}
