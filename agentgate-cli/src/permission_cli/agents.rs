//! The agents' permission layers for `--agent NAME`, built with
//! `agentgate_core` exactly as opencode builds them (§9.2): the agent's
//! built-in rules, the user's `permission` config, the config's
//! `agent.<name>.permission`, and the final tool-output allow.

use agentgate_core::{AgentEnvironment, Agents, agent_defaults::default_permission};
use agentgate_permission::{Action, PermissionConfig, Rule, Ruleset, from_config_with_home};

use super::ProjectError;
use super::config::ConfigFile;
use super::project::Project;

/// The application name used for the data and temporary directories the
/// built-in rules whitelist (`~/.local/share/agent-sdk/tool-output/*`, ...):
/// the one `agent run` uses, so both whitelist the same folders.
pub const APP: &str = crate::workspace::APP;

/// One named layer of rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedLayer {
    /// Layer name, e.g. `agent:build` or `user:opencode.json`.
    pub name: String,
    /// Where the rules came from.
    pub source: Option<String>,
    /// The rules.
    pub rules: Ruleset,
    /// Whether the rules are built in (the agent's defaults and the final
    /// tool-output allow), not written by the user.
    pub builtin: bool,
}

fn layer(name: String, source: Option<String>, rules: Ruleset) -> NamedLayer {
    NamedLayer {
        name,
        source,
        rules,
        builtin: false,
    }
}

fn builtin_layer(name: String, source: &str, rules: Ruleset) -> NamedLayer {
    NamedLayer {
        builtin: true,
        ..layer(name, Some(source.into()), rules)
    }
}

/// The environment the built-in rules mention, for the current directory:
/// its worktree (the nearest folder above with `.git`, as `agent run` and
/// the plan agent's rules see it), the data directory of `agent run`, and
/// the skill folders agents may read.
pub fn environment(dir: &std::path::Path, home: &str) -> AgentEnvironment {
    let loader = agentgate_core::ConfigLoader::new(dir).home(home);
    let worktree = loader.resolved_worktree();
    let mut env = AgentEnvironment::detect(APP, worktree.to_string_lossy());
    env.home = Some(home.to_string());
    // The skill folders `agent run` lets agents read (a configuration that
    // does not load has none here; the command reports its errors itself).
    if let Ok(config) = loader.load() {
        let (skills, _) = agentgate_core::Skills::discover(&loader, &config);
        env.skill_dirs = skills.readable_dirs();
    }
    env
}

/// The agent's own rules: built-in ones, or the defaults for an agent
/// that only the config defines; without the tool-output allow that
/// opencode appends last.
fn own_rules(name: &str, env: &AgentEnvironment) -> Ruleset {
    let builtin = Agents::builtin(env, &PermissionConfig::default());
    let mut base = match builtin.get(name) {
        Some(agent) => agent.permission.clone(),
        None => default_permission(env),
    };
    let tail_rule = Rule::new("external_directory", env.truncate_glob(), Action::Allow);
    if builtin.get(name).is_some() && base.last() == Some(&tail_rule) {
        base.0.pop();
    }
    base
}

/// The layers of agent `name` with the user's config, lowest precedence
/// first; their concatenation is exactly the agent's ruleset.
pub fn agent_layers(
    name: &str,
    project: &Project,
    env: &AgentEnvironment,
) -> Result<Vec<NamedLayer>, ProjectError> {
    let home = env.home.clone().unwrap_or_default();
    let config = project.config.as_ref();
    let user = user_permission(project)?;
    let configs = &project.agents;
    let agents = Agents::from_config(env, &user, configs, project.default_agent.clone());
    let agent = find_agent(&agents, name, project)?;
    let full = &agent.permission;

    let base = own_rules(name, env);
    let user_rules = from_config_with_home(&user, &home);
    let agent_rules = configs
        .get(name)
        .and_then(|c| c.permission.as_ref())
        .map(|p| from_config_with_home(p, &home))
        .unwrap_or_default();

    let source = config.map(ConfigFile::source);
    let file = config.map(ConfigFile::display_name).unwrap_or_default();
    let agent_file = project.agent_source_names(name);
    let mut layers = vec![builtin_layer(format!("agent:{name}"), "built-in", base)];
    if !user_rules.is_empty() {
        layers.push(layer(format!("user:{file}"), source.clone(), user_rules));
    }
    if !agent_rules.is_empty() {
        let agent_source = match project.agent_sources.get(name) {
            Some(files)
                if files.len() == 1
                    && Some(&files[0]) == config.map(ConfigFile::display_name).as_ref() =>
            {
                source
            }
            Some(files) => Some(files.join(", ")),
            None => source,
        };
        layers.push(layer(
            format!("user:{agent_file}:agent.{name}"),
            agent_source,
            agent_rules,
        ));
    }
    let covered: usize = layers.iter().map(|l| l.rules.len()).sum();
    let prefix_matches = full.len() >= covered
        && layers
            .iter()
            .flat_map(|l| l.rules.iter())
            .zip(full.iter())
            .all(|(a, b)| a == b);
    if !prefix_matches {
        // Should not happen; never show layers that would explain wrongly.
        return Ok(vec![layer(
            format!("agent:{name}"),
            Some("built-in and config".into()),
            full.clone(),
        )]);
    }
    let tail: Ruleset = full.iter().skip(covered).cloned().collect();
    if !tail.is_empty() {
        layers.push(builtin_layer(
            format!("agent:{name}:final"),
            "built-in: every agent may read the tool-output directory",
            tail,
        ));
    }
    Ok(layers)
}

/// The user's `permission` config (empty without a config file).
pub fn user_permission(project: &Project) -> Result<PermissionConfig, ProjectError> {
    match &project.config {
        Some(config) => Ok(config.permission()?.unwrap_or_default()),
        None => Ok(PermissionConfig::default()),
    }
}

/// All agents of the project: built-in, then the config's and the markdown
/// ones, as opencode builds them (§9.2).
pub fn project_agents(project: &Project, env: &AgentEnvironment) -> Result<Agents, ProjectError> {
    let user = user_permission(project)?;
    Ok(Agents::from_config(
        env,
        &user,
        &project.agents,
        project.default_agent.clone(),
    ))
}

/// Agent `name`, or an error that lists the known agents (and says when the
/// config disables the one asked for).
pub fn find_agent<'a>(
    agents: &'a Agents,
    name: &str,
    project: &Project,
) -> Result<&'a agentgate_core::Agent, ProjectError> {
    agents.get(name).ok_or_else(|| {
        let known: Vec<&str> = agents.list().iter().map(|a| a.name.as_str()).collect();
        let why = if project.agents.get(name).and_then(|c| c.disable) == Some(true) {
            " (the config disables it)"
        } else {
            ""
        };
        ProjectError(format!(
            "unknown agent {name:?}{why}: expected one of {}",
            known.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission_cli::Context;
    use crate::permission_cli::config::parse_text;
    use std::path::PathBuf;

    fn project(config: Option<ConfigFile>) -> Project {
        let ctx = Context {
            config: None,
            dir: PathBuf::from("/w"),
            home: "/h".into(),
        };
        Project::from_config(&ctx, config).unwrap()
    }

    fn env() -> AgentEnvironment {
        let mut env = AgentEnvironment::new("/d", "/t", "/w");
        env.home = Some("/h".into());
        env
    }

    #[test]
    fn layers_concatenate_to_the_agent_ruleset() {
        let config = ConfigFile {
            paths: vec![PathBuf::from("opencode.json")],
            value: parse_text(
                r#"{"permission": {"bash": {"git *": "allow"}}, "agent": {"plan": {"permission": {"bash": "deny"}}}}"#,
                "opencode.json",
            )
            .unwrap(),
        };
        let layers = agent_layers("plan", &project(Some(config)), &env()).unwrap();
        let names: Vec<&str> = layers.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "agent:plan",
                "user:opencode.json",
                "user:opencode.json:agent.plan",
                "agent:plan:final"
            ]
        );
        assert_eq!(layers[3].rules.len(), 1);
    }

    #[test]
    fn unknown_agent_lists_the_known_ones() {
        let err = agent_layers("bild", &project(None), &env()).unwrap_err().0;
        assert!(
            err.contains("unknown agent \"bild\"") && err.contains("build"),
            "{err}"
        );
    }
}
