//! `agent agents` and `agent debug agent NAME`: the project's agents as
//! opencode builds them (built-in, `opencode.json`'s `agent` map, markdown
//! agents under `.opencode/`).

use agentgate_core::{Agent, AgentMode};
use agentgate_permission::is_disabled;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::permission_cli::agents::{environment, find_agent, project_agents};
use crate::permission_cli::{Project, ProjectError};

/// The tool ids `debug agent` reports on: opencode's built-in registry
/// (`invalid`, `question`, `bash`, `read`, `glob`, `grep`, `edit`, `write`,
/// `task`, `webfetch`, `todowrite`, `websearch`, `skill`, `apply_patch`,
/// `lsp`) plus `list`, in this order. Provider-dependent tools
/// (`codesearch`), experimental ones (`batch`, `plan_*`) and MCP tools are not
/// listed. `edit`, `write` and `apply_patch` share the `edit` permission.
pub const TOOL_IDS: [&str; 16] = [
    "bash",
    "edit",
    "glob",
    "grep",
    "list",
    "read",
    "task",
    "todowrite",
    "webfetch",
    "websearch",
    "write",
    "apply_patch",
    "skill",
    "question",
    "lsp",
    "invalid",
];

/// One line of `agent agents --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentSummary {
    /// The agent's name.
    pub name: String,
    /// `primary`, `subagent` or `all`.
    pub mode: AgentMode,
    /// Built in (`true`) or defined by configuration (`false`).
    pub native: bool,
    /// Not offered to users.
    pub hidden: bool,
    /// What the agent is for, if it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl From<&Agent> for AgentSummary {
    fn from(agent: &Agent) -> Self {
        AgentSummary {
            name: agent.name.clone(),
            mode: agent.mode,
            native: agent.native,
            hidden: agent.hidden,
            description: agent.description.clone(),
        }
    }
}

fn mode_name(mode: AgentMode) -> &'static str {
    match mode {
        AgentMode::Primary => "primary",
        AgentMode::Subagent => "subagent",
        AgentMode::All => "all",
    }
}

/// `agent agents`: every agent in opencode's `list()` order (the default
/// agent — `default_agent` from the config, else `build` — first, the rest
/// by name), as a table or as a JSON array of [`AgentSummary`].
pub fn list(project: &Project, json: bool) -> Result<String, ProjectError> {
    let env = environment(&project.ctx.dir, &project.ctx.home);
    let agents = project_agents(project, &env)?;
    let listed = agents.list();
    if json {
        let summaries: Vec<AgentSummary> = listed.iter().map(|a| AgentSummary::from(*a)).collect();
        return pretty(&summaries);
    }
    let width = listed
        .iter()
        .map(|a| a.name.chars().count())
        .chain([4])
        .max()
        .unwrap_or(4);
    let mut out = format!(
        "{:<width$}  {:<8}  {:<6}  {:<6}  DESCRIPTION\n",
        "NAME", "MODE", "ORIGIN", "HIDDEN"
    );
    for agent in listed {
        let description = agent
            .description
            .as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or("");
        let line = format!(
            "{:<width$}  {:<8}  {:<6}  {:<6}  {description}",
            agent.name,
            mode_name(agent.mode),
            if agent.native { "native" } else { "custom" },
            if agent.hidden { "hidden" } else { "" },
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Ok(out)
}

/// `agent debug agent NAME` (opencode §18): the agent as JSON plus
/// `tools: {id: enabled}` for [`TOOL_IDS`], where a tool is enabled unless
/// `disabled(ids, agent.permission)` hides it (the last rule for its
/// permission is `* deny`). Session rules are not included.
pub fn debug_agent(project: &Project, name: &str) -> Result<String, ProjectError> {
    let env = environment(&project.ctx.dir, &project.ctx.home);
    let agents = project_agents(project, &env)?;
    let agent = find_agent(&agents, name, project)?;
    let mut object = match serde_json::to_value(agent) {
        Ok(Value::Object(object)) => object,
        Ok(_) | Err(_) => {
            return Err(ProjectError(format!(
                "cannot encode agent {name:?} as a JSON object"
            )));
        }
    };
    let tools: Map<String, Value> = TOOL_IDS
        .iter()
        .map(|id| {
            (
                (*id).to_string(),
                Value::Bool(!is_disabled(id, &agent.permission)),
            )
        })
        .collect();
    object.insert("tools".to_string(), Value::Object(tools));
    pretty(&object)
}

fn pretty<T: Serialize>(value: &T) -> Result<String, ProjectError> {
    serde_json::to_string_pretty(value)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| ProjectError(format!("cannot encode the output as JSON: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::permission_cli::Context;
    use crate::permission_cli::config::{ConfigFile, parse_text};
    use std::path::PathBuf;

    fn project(json: &str) -> Project {
        let ctx = Context {
            config: None,
            dir: PathBuf::from("/w"),
            home: "/h".into(),
        };
        let config = ConfigFile {
            paths: vec![PathBuf::from("opencode.json")],
            value: parse_text(json, "opencode.json").unwrap(),
        };
        Project::from_config(&ctx, Some(config)).unwrap()
    }

    #[test]
    fn list_puts_the_default_first_then_sorts() {
        let p = project(
            r#"{"default_agent": "plan", "agent": {"aaa": {"mode": "subagent", "description": "first\nsecond"}}}"#,
        );
        let text = list(&p, false).unwrap();
        let names: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "plan",
                "aaa",
                "build",
                "compaction",
                "explore",
                "general",
                "summary",
                "title"
            ]
        );
        assert!(
            text.contains("aaa         subagent  custom          first\n"),
            "{text}"
        );
        let json: Value = serde_json::from_str(&list(&p, true).unwrap()).unwrap();
        assert_eq!(json[0]["name"], "plan");
        assert_eq!(json[1]["native"], false);
        assert_eq!(json[1]["description"], "first\nsecond");
    }

    #[test]
    fn debug_agent_reports_disabled_tools() {
        let p = project(r#"{"agent": {"ro": {"tools": {"write": false, "bash": false}}}}"#);
        let json: Value = serde_json::from_str(&debug_agent(&p, "ro").unwrap()).unwrap();
        assert_eq!(json["name"], "ro");
        assert_eq!(json["tools"]["edit"], false);
        assert_eq!(json["tools"]["write"], false);
        assert_eq!(json["tools"]["apply_patch"], false);
        assert_eq!(json["tools"]["bash"], false);
        assert_eq!(json["tools"]["read"], true);
        // explore denies everything it does not allow, `invalid` included.
        let json: Value = serde_json::from_str(&debug_agent(&p, "explore").unwrap()).unwrap();
        assert_eq!(json["tools"]["invalid"], false);
        assert_eq!(json["tools"]["grep"], true);
        let err = debug_agent(&p, "nope").unwrap_err().0;
        assert!(err.contains("unknown agent \"nope\""), "{err}");
    }
}
