//! Which agent `--agent NAME` (and chat's `/agent NAME`) runs: a primary
//! agent as named; a sub-agent or a hidden agent falls back to the default
//! agent with a warning, as `opencode run` does; an unknown name is an
//! error that lists the choices.

use agentgate::Workspace;
use agentgate_core::{AgentEnvironment, AgentMode, Agents};

use crate::workspace::APP;

/// The workspace's agents, as `agent run` builds them.
fn agents(workspace: &Workspace) -> Agents {
    let config = workspace.config();
    let worktree = workspace.loader().resolved_worktree();
    let environment = AgentEnvironment::detect(APP, worktree.to_string_lossy());
    let permission = config.permission.clone().unwrap_or_default();
    Agents::from_config(
        &environment,
        &permission,
        &config.agents,
        config.default_agent.clone(),
    )
}

/// The names a user may choose, primary and visible, in the catalog's
/// order.
pub fn choices(workspace: &Workspace) -> Vec<String> {
    agents(workspace)
        .list()
        .into_iter()
        .filter(|a| a.mode != AgentMode::Subagent && !a.hidden)
        .map(|a| a.name.clone())
        .collect()
}

/// The agent to run for `--agent name`: `Ok(Some(name))` for a primary
/// agent, `Ok(None)` (the default agent) after a warning on stderr for a
/// sub-agent or hidden agent, an error naming the choices for an unknown
/// one.
pub fn choose(workspace: &Workspace, name: &str) -> Result<Option<String>, String> {
    let agents = agents(workspace);
    let Some(agent) = agents.get(name) else {
        return Err(format!(
            "no agent {name:?}: choose one of {} (`agent agents` lists them)",
            choices(workspace).join(", ")
        ));
    };
    let why = if agent.mode == AgentMode::Subagent {
        "is a sub-agent, not a primary agent"
    } else if agent.hidden {
        "is a hidden agent the engine runs itself"
    } else {
        return Ok(Some(agent.name.clone()));
    };
    eprintln!(
        "agent: warning: agent \"{}\" {why}; falling back to the default agent",
        crate::terminal_text::Untrusted::new(name)
    );
    Ok(None)
}
