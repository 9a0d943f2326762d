//! Custom commands in the CLI: `agent commands` (the listing), and what
//! `agent run --command NAME` and `/NAME` in `agent chat` share: finding
//! the command and preparing it with the library
//! ([`agentgate_core::Engine::prepare_command`], whose shell lines and
//! `@file` reads go through the permission gate like a model's calls).

use std::path::Path;

use agentgate::{CodingAgent, Workspace};
use agentgate_core::commands::{CommandSource, template_hints};
use agentgate_core::{CancellationToken, Commands, ConfigLoader, PreparedCommand};
use serde::Serialize;

/// One line of `agent commands --json`.
#[derive(Debug, Serialize)]
struct CommandSummary<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtask: Option<bool>,
    /// `config`, `file` or `skill`.
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// The placeholders the template uses (`$1`, `$ARGUMENTS`).
    arguments: Vec<String>,
}

/// `agent commands`: the directory's custom commands, by name, with their
/// description, agent and where they come from (`--json`: an array).
pub fn list(directory: &Path, json: bool) -> Result<String, String> {
    let workspace = Workspace::with_loader(directory, ConfigLoader::new(directory))
        .map_err(|e| e.to_string())?;
    for warning in &workspace.config().warnings {
        eprintln!(
            "agent: warning: {}",
            crate::terminal_text::Untrusted::new(warning)
        );
    }
    let commands = workspace.commands();
    let summaries: Vec<CommandSummary<'_>> = commands
        .sorted()
        .into_iter()
        .map(|c| {
            let (source, path) = match &c.source {
                CommandSource::File(path) => ("file", Some(path.display().to_string())),
                CommandSource::Skill(path) => ("skill", Some(path.display().to_string())),
                _ => ("config", None),
            };
            CommandSummary {
                name: &c.name,
                description: c.description.as_deref(),
                agent: c.agent.as_deref(),
                model: c.model.as_deref(),
                subtask: c.subtask,
                source,
                path,
                arguments: template_hints(&c.template),
            }
        })
        .collect();
    if json {
        return serde_json::to_string_pretty(&summaries)
            .map(|text| text + "\n")
            .map_err(|e| e.to_string());
    }
    if summaries.is_empty() {
        return Ok(
            "no custom commands: add .opencode/commands/NAME.md or a \"command\" entry in opencode.json\n"
                .to_string(),
        );
    }
    let width = summaries.iter().map(|s| s.name.len()).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for s in &summaries {
        let mut line = format!("/{:<width$} ", s.name);
        line.push_str(s.description.unwrap_or(""));
        let mut tags = Vec::new();
        if let Some(agent) = s.agent {
            tags.push(format!("agent {agent}"));
        }
        if s.subtask == Some(true) {
            tags.push("sub-agent".to_string());
        }
        if s.source == "skill" {
            tags.push("skill".to_string());
        }
        if !s.arguments.is_empty() {
            tags.push(s.arguments.join(" "));
        }
        if !tags.is_empty() {
            line.push_str(&format!(" [{}]", tags.join(", ")));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Ok(out)
}

/// The lines `/help` shows for the custom commands.
pub fn help_lines(commands: &Commands) -> Vec<String> {
    commands
        .sorted()
        .into_iter()
        .map(|c| match &c.description {
            Some(d) => format!("  /{}  {d}", c.name),
            None => format!("  /{}", c.name),
        })
        .collect()
}

/// Why a command was not sent.
#[derive(Debug)]
pub struct NotSent {
    /// The message for stderr.
    pub message: String,
    /// A permission was rejected (the hint for `agent run` is --auto).
    pub rejected: bool,
}

/// Finds command `name` and prepares it with `arguments` for the agent's
/// session (its shell lines and file reads are asked through the gate).
pub async fn prepare(
    agent: &CodingAgent,
    commands: &Commands,
    name: &str,
    arguments: &str,
    cancel: CancellationToken,
) -> Result<PreparedCommand, NotSent> {
    let Some(command) = commands.get(name) else {
        let names: Vec<String> = commands
            .sorted()
            .iter()
            .map(|c| format!("/{}", c.name))
            .collect();
        return Err(NotSent {
            message: if names.is_empty() {
                format!(
                    "no command {name:?}: none is defined (add .opencode/commands/{name}.md or a \"command\" entry in opencode.json)"
                )
            } else {
                format!("no command {name:?}; the commands are {}", names.join(", "))
            },
            rejected: false,
        });
    };
    agent
        .engine()
        .prepare_command(&agent.session().id, command, arguments, cancel)
        .await
        .map_err(|e| NotSent {
            rejected: e.rejected(),
            message: e.to_string(),
        })
}
